import { readFileSync } from "node:fs";
import type http from "node:http";
import type https from "node:https";
import type { KubeConfigLike } from "../http/http-client.js";
import type {
  KubeConfigCluster,
  KubeConfigContext,
  KubeConfigDocument,
  KubeConfigUser,
  Named,
} from "./document.js";
import { type ExecCredentialOptions, ExecCredentialProvider } from "./exec-credential.js";
import { proxyFor, tunnelingAgent } from "./proxy.js";

/** How long a token read from a file is used before the file is read again (client-go's). */
const tokenFileTtlMs = 60_000;

/**
 * A loaded kubeconfig, as client-go's `clientcmd` applies one: the current
 * context's cluster (server, CA, `tls-server-name`, `insecure-skip-tls-verify`,
 * `proxy-url`) and user (token, token file re-read every minute, basic auth,
 * client certificate and key, exec credential plugin, `as`/`as-groups`
 * impersonation). Build one with `loadKubeConfig`, `inClusterConfig` or
 * `fromKubeConfig`; hand it to `HttpClient`.
 */
export class KubeConfig implements KubeConfigLike {
  readonly clusters: readonly Named<KubeConfigCluster>[];
  readonly users: readonly Named<KubeConfigUser>[];
  readonly contexts: readonly Named<KubeConfigContext>[];
  #currentContext: string;
  readonly #execOptions: ExecCredentialOptions;
  readonly #exec = new Map<string, ExecCredentialProvider>();
  readonly #files = new Map<string, { text: Buffer; readAt: number }>();
  #agent: { key: string; agent: http.Agent | undefined } | undefined;

  constructor(document: KubeConfigDocument, options: { exec?: ExecCredentialOptions | undefined } = {}) {
    this.clusters = document.clusters;
    this.users = document.users;
    this.contexts = document.contexts;
    this.#currentContext = document.currentContext;
    this.#execOptions = options.exec ?? {};
  }

  getContexts(): readonly { readonly name: string; readonly namespace?: string | undefined }[] {
    return this.contexts.map(({ name, value }) => ({ name, namespace: value.namespace }));
  }

  getCurrentContext(): string {
    return this.#currentContext;
  }

  /** Switches the current context; throws naming the contexts there are if `name` is not one. */
  setCurrentContext(name: string): void {
    if (!this.contexts.some((context) => context.name === name)) {
      const known = this.contexts.map((context) => context.name);
      throw new TypeError(
        `the kubeconfig has no context ${JSON.stringify(name)} (it has ${known.length === 0 ? "none" : known.join(", ")})`,
      );
    }
    this.#currentContext = name;
  }

  getContextObject(name: string): KubeConfigContext | null {
    return this.contexts.find((context) => context.name === name)?.value ?? null;
  }

  getCurrentCluster(): (KubeConfigCluster & { name: string }) | null {
    const context = this.getContextObject(this.#currentContext);
    const cluster = this.clusters.find((entry) => entry.name === context?.cluster);
    return cluster === undefined ? null : { ...cluster.value, name: cluster.name };
  }

  getCurrentUser(): (KubeConfigUser & { name: string }) | null {
    const context = this.getContextObject(this.#currentContext);
    const user = this.users.find((entry) => entry.name === context?.user);
    return user === undefined ? null : { ...user.value, name: user.name };
  }

  /** Sets the TLS material, credentials, impersonation headers and proxy agent of one request. */
  async applyToHTTPSOptions(options: https.RequestOptions): Promise<void> {
    const cluster = this.getCurrentCluster();
    if (cluster === null) throw new TypeError(this.#noCluster());
    const user = this.getCurrentUser();
    const headers = (options.headers ??= {}) as Record<string, string | string[]>;
    if (cluster["insecure-skip-tls-verify"] === true) options.rejectUnauthorized = false;
    const ca = this.#bytes(
      cluster["certificate-authority-data"],
      cluster["certificate-authority"],
      "certificate-authority",
    );
    if (ca !== undefined) options.ca = ca;
    if (cluster["tls-server-name"]) options.servername = cluster["tls-server-name"];
    const agent = this.#proxyAgent(cluster);
    if (agent !== undefined) options.agent = agent;
    if (user === null) return;
    const cert = this.#bytes(
      user["client-certificate-data"],
      user["client-certificate"],
      "client-certificate",
    );
    const key = this.#bytes(user["client-key-data"], user["client-key"], "client-key");
    if (cert !== undefined) options.cert = cert;
    if (key !== undefined) options.key = key;
    const token = this.#token(user);
    if (token !== undefined) headers.Authorization = `Bearer ${token}`;
    else if (user.username !== undefined) {
      options.auth = `${user.username}:${user.password ?? ""}`;
    }
    if (user.exec !== undefined) {
      const credential = await this.#execProvider(user.name, user.exec, cluster).credential();
      if (credential.token !== undefined) headers.Authorization = `Bearer ${credential.token}`;
      if (credential.clientCertificateData !== undefined) {
        options.cert = credential.clientCertificateData;
        options.key = credential.clientKeyData;
      }
    }
    if (user["auth-provider"] !== undefined && token === undefined && user.exec === undefined) {
      throw new TypeError(
        `the kubeconfig's user ${JSON.stringify(user.name)} uses auth-provider ${JSON.stringify(user["auth-provider"].name)}, which is not supported (client-go dropped it too): use an exec credential plugin instead (kubelogin, gke-gcloud-auth-plugin, aws eks get-token)`,
      );
    }
    if (user.as) headers["Impersonate-User"] = user.as;
    if (user["as-groups"]?.length) headers["Impersonate-Group"] = user["as-groups"];
  }

  /** The server answered 401: forget the exec plugin's credential, so the next request asks the plugin again. */
  invalidateCredentials(): void {
    for (const provider of this.#exec.values()) provider.invalidate();
  }

  #noCluster(): string {
    const context = this.getContextObject(this.#currentContext);
    if (this.#currentContext === "") return "the kubeconfig has no current context";
    if (context === null) return `the kubeconfig has no context ${JSON.stringify(this.#currentContext)}`;
    return `the kubeconfig has no cluster ${JSON.stringify(context.cluster)} (named by context ${JSON.stringify(this.#currentContext)})`;
  }

  /** Inline base64 data, else the file's bytes (read once). */
  #bytes(data: string | undefined, file: string | undefined, field: string): Buffer | undefined {
    if (data) return Buffer.from(data, "base64");
    if (!file) return undefined;
    let cached = this.#files.get(file);
    if (cached === undefined) {
      cached = { text: readField(file, field), readAt: Date.now() };
      this.#files.set(file, cached);
    }
    return cached.text;
  }

  /** The bearer token: the token file's (re-read every minute) when it can be read, else `token`. */
  #token(user: KubeConfigUser): string | undefined {
    const file = user.tokenFile;
    if (file) {
      const now = Date.now();
      let cached = this.#files.get(file);
      if (cached === undefined || now - cached.readAt >= tokenFileTtlMs) {
        try {
          cached = { text: readFileSync(file), readAt: now };
          this.#files.set(file, cached);
        } catch (error) {
          if (cached === undefined && !user.token)
            throw new TypeError(`cannot read tokenFile ${file}: ${(error as Error).message}`);
        }
      }
      const fromFile = cached?.text.toString("utf8").trim();
      if (fromFile) return fromFile;
    }
    return user.token || undefined;
  }

  #execProvider(name: string, config: NonNullable<KubeConfigUser["exec"]>, cluster: KubeConfigCluster) {
    let provider = this.#exec.get(name);
    if (provider === undefined) {
      provider = new ExecCredentialProvider(config, cluster, this.#execOptions);
      this.#exec.set(name, provider);
    }
    return provider;
  }

  #proxyAgent(cluster: KubeConfigCluster): http.Agent | undefined {
    const server = new URL(cluster.server);
    const proxy = proxyFor(server, cluster["proxy-url"]);
    const key = `${server.protocol}${proxy?.href ?? ""}`;
    if (this.#agent?.key !== key) {
      this.#agent?.agent?.destroy();
      this.#agent = {
        key,
        agent: proxy === undefined ? undefined : tunnelingAgent(proxy, server.protocol === "https:"),
      };
    }
    return this.#agent.agent;
  }
}

function readField(file: string, field: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    throw new TypeError(`cannot read ${field} ${file}: ${(error as Error).message}`);
  }
}
