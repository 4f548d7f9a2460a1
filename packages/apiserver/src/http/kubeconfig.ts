export interface KubeconfigOptions {
  /** The server URL, e.g. `http://127.0.0.1:6443`. */
  server: string;
  /** A bearer token for the user entry. Default: none. */
  token?: string | undefined;
  /** The context's namespace. Default `default`. */
  namespace?: string | undefined;
  /** The name of the cluster, user and context. Default `reconcile`. */
  name?: string | undefined;
  /**
   * The CA (PEM) that signed an `https://` server's certificate, written as
   * `certificate-authority-data` so that clients verify the server. Default: none.
   */
  certificateAuthority?: string | undefined;
  /** A client certificate and key (PEM) for the user entry, in place of the token. Default: none. */
  clientCertificate?: { cert: string; key: string } | undefined;
}

/**
 * A kubeconfig (YAML) for a running server, for kubectl or any client. With a
 * CA it carries `certificate-authority-data`; without one it sets
 * `insecure-skip-tls-verify`, because `@kubernetes/client-node` refuses plain
 * `http://` servers without it (kubectl ignores it for http).
 */
export function kubeconfigFor(options: KubeconfigOptions): string {
  const name = options.name ?? "reconcile";
  const quote = (value: string) => JSON.stringify(value);
  const lines = [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    `- name: ${quote(name)}`,
    "  cluster:",
    `    server: ${quote(options.server)}`,
    options.certificateAuthority === undefined
      ? "    insecure-skip-tls-verify: true"
      : `    certificate-authority-data: ${Buffer.from(options.certificateAuthority).toString("base64")}`,
    "users:",
    `- name: ${quote(name)}`,
    userLines(options),
    "contexts:",
    `- name: ${quote(name)}`,
    "  context:",
    `    cluster: ${quote(name)}`,
    `    user: ${quote(name)}`,
    `    namespace: ${quote(options.namespace ?? "default")}`,
    `current-context: ${quote(name)}`,
    "",
  ];
  return lines.join("\n");
}

function userLines(options: KubeconfigOptions): string {
  const certificate = options.clientCertificate;
  if (certificate !== undefined)
    return [
      "  user:",
      `    client-certificate-data: ${Buffer.from(certificate.cert).toString("base64")}`,
      `    client-key-data: ${Buffer.from(certificate.key).toString("base64")}`,
    ].join("\n");
  return options.token === undefined ? "  user: {}" : `  user:\n    token: ${JSON.stringify(options.token)}`;
}
