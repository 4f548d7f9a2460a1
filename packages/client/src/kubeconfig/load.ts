import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, join } from "node:path";
import {
  type ExecConfig,
  type KubeConfigDocument,
  type KubeConfigUser,
  mergeKubeConfigs,
  parseKubeConfig,
  readKubeConfigFile,
} from "./document.js";
import type { ExecCredentialOptions } from "./exec-credential.js";
import { KubeConfig } from "./kube-config.js";

export interface LoadKubeConfigOptions {
  /**
   * A kubeconfig file to read (kubectl's `--kubeconfig`). Default: the files
   * of `KUBECONFIG` merged as client-go merges them, else `~/.kube/config`,
   * else the in-cluster ServiceAccount.
   */
  path?: string | undefined;
  /** A kubeconfig document (YAML or JSON) to use instead of a file. */
  yaml?: string | undefined;
  /** The context to use instead of the file's `current-context` (kubectl's `--context`). */
  context?: string | undefined;
  /** How exec credential plugins run (for tests). */
  exec?: ExecCredentialOptions | undefined;
  /** Where the environment comes from. Default: `process.env`. */
  env?: NodeJS.ProcessEnv | undefined;
  /** The ServiceAccount directory of in-cluster configuration. Default: `/var/run/secrets/kubernetes.io/serviceaccount`. */
  serviceAccountDir?: string | undefined;
  /** The home directory holding `.kube/config`. Default: `os.homedir()`. */
  home?: string | undefined;
}

/** What {@link loadKubeConfig} returns. */
export type LoadedKubeConfig = KubeConfig;

const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";

/**
 * Loads a kubeconfig by client-go's loading rules (`clientcmd`): an explicit
 * path or document; else every file of `KUBECONFIG` (missing ones skipped,
 * the first to name a cluster, user or context wins it); else
 * `~/.kube/config`; else, in a pod, the in-cluster configuration. No
 * dependency beyond `yaml`; `@kubernetes/client-node` is not needed.
 */
export async function loadKubeConfig(options: LoadKubeConfigOptions = {}): Promise<KubeConfig> {
  const env = options.env ?? process.env;
  let document: KubeConfigDocument | undefined;
  if (options.yaml !== undefined) document = parseKubeConfig(options.yaml, process.cwd());
  else if (options.path !== undefined) document = readKubeConfigFile(options.path);
  else {
    const files = (env.KUBECONFIG ?? "")
      .split(delimiter)
      .filter((path, i, all) => path !== "" && all.indexOf(path) === i);
    if (files.length > 0) {
      document = mergeKubeConfigs(files.filter((path) => existsSync(path)).map(readKubeConfigFile));
    } else {
      const home = join(options.home ?? homedir(), ".kube", "config");
      if (existsSync(home)) document = readKubeConfigFile(home);
    }
  }
  const empty = document === undefined || (document.contexts.length === 0 && document.clusters.length === 0);
  if (empty && options.yaml === undefined && options.path === undefined && env.KUBERNETES_SERVICE_HOST) {
    return inClusterConfig({ env, serviceAccountDir: options.serviceAccountDir });
  }
  if (document === undefined) {
    throw new TypeError(
      "no kubeconfig: KUBECONFIG is not set, ~/.kube/config does not exist, and this is not a pod (KUBERNETES_SERVICE_HOST is not set)",
    );
  }
  const config = new KubeConfig(document, { exec: options.exec });
  if (options.context !== undefined) config.setCurrentContext(options.context);
  return config;
}

/**
 * client-go's `rest.InClusterConfig`: `https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT`,
 * the ServiceAccount's CA, its token file (re-read every minute, so a rotated
 * projected token is picked up) and its namespace as the default.
 */
export function inClusterConfig(
  options: { env?: NodeJS.ProcessEnv | undefined; serviceAccountDir?: string | undefined } = {},
): KubeConfig {
  const env = options.env ?? process.env;
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) {
    throw new TypeError(
      "unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined",
    );
  }
  const dir = options.serviceAccountDir ?? serviceAccountDir;
  const tokenFile = join(dir, "token");
  try {
    readFileSync(tokenFile);
  } catch (error) {
    throw new TypeError(`unable to load in-cluster configuration: ${(error as Error).message}`);
  }
  let namespace = "default";
  try {
    namespace = readFileSync(join(dir, "namespace"), "utf8").trim() || "default";
  } catch {
    // client-go's default namespace when the file is absent
  }
  const server = `https://${host.includes(":") ? `[${host}]` : host}:${port}`;
  const ca = join(dir, "ca.crt");
  return new KubeConfig({
    clusters: [
      { name: "in-cluster", value: { server, ...(existsSync(ca) ? { "certificate-authority": ca } : {}) } },
    ],
    users: [{ name: "in-cluster", value: { tokenFile } }],
    contexts: [{ name: "in-cluster", value: { cluster: "in-cluster", user: "in-cluster", namespace } }],
    currentContext: "in-cluster",
  });
}

/** The part of `@kubernetes/client-node`'s `KubeConfig` that {@link fromKubeConfig} reads. */
export interface ClientNodeKubeConfig {
  readonly clusters: readonly {
    name: string;
    server: string;
    caData?: string | undefined;
    caFile?: string | undefined;
    skipTLSVerify?: boolean | undefined;
    tlsServerName?: string | undefined;
    proxyUrl?: string | undefined;
  }[];
  readonly users: readonly {
    name: string;
    token?: string | undefined;
    username?: string | undefined;
    password?: string | undefined;
    certData?: string | undefined;
    certFile?: string | undefined;
    keyData?: string | undefined;
    keyFile?: string | undefined;
    exec?: unknown;
    authProvider?: unknown;
    impersonateUser?: string | undefined;
  }[];
  readonly contexts: readonly {
    name: string;
    cluster: string;
    user?: string;
    namespace?: string | undefined;
  }[];
  readonly currentContext: string;
}

/** A {@link KubeConfig} from `@kubernetes/client-node`'s `KubeConfig` (already loaded by it), applied by our code. */
export function fromKubeConfig(kc: ClientNodeKubeConfig): KubeConfig {
  return new KubeConfig({
    clusters: kc.clusters.map((c) => ({
      name: c.name,
      value: {
        server: c.server,
        "certificate-authority-data": c.caData,
        "certificate-authority": c.caFile,
        "insecure-skip-tls-verify": c.skipTLSVerify,
        "tls-server-name": c.tlsServerName,
        "proxy-url": c.proxyUrl,
      },
    })),
    users: kc.users.map((u) => ({
      name: u.name,
      value: {
        token: u.token,
        username: u.username,
        password: u.password,
        "client-certificate-data": u.certData,
        "client-certificate": u.certFile,
        "client-key-data": u.keyData,
        "client-key": u.keyFile,
        exec: u.exec as ExecConfig | undefined,
        "auth-provider": u.authProvider as KubeConfigUser["auth-provider"],
        as: u.impersonateUser,
      },
    })),
    contexts: kc.contexts.map((c) => ({
      name: c.name,
      value: { cluster: c.cluster, user: c.user, namespace: c.namespace },
    })),
    currentContext: kc.currentContext,
  });
}
