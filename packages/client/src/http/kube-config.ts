import type { KubeConfig } from "@kubernetes/client-node";
import { HttpClient, type HttpClientOptions } from "./http-client.js";

export interface LoadKubeConfigOptions {
  /**
   * A kubeconfig file to read. Default: `KUBECONFIG` (its files merged, as
   * kubectl merges them), else `~/.kube/config`, else the in-cluster service
   * account (`/var/run/secrets/kubernetes.io/serviceaccount`).
   */
  path?: string | undefined;
  /** A kubeconfig document (YAML or JSON) to use instead of a file. */
  yaml?: string | undefined;
  /** The context to use instead of the file's `current-context`. */
  context?: string | undefined;
}

/**
 * Loads a kubeconfig with `@kubernetes/client-node`'s `KubeConfig`, which also
 * brings its authenticators (tokens, token files, client certificates, exec
 * plugins, OIDC). The library is imported on first use, so programs that use
 * only the in-process client never load it.
 */
export async function loadKubeConfig(options: LoadKubeConfigOptions = {}): Promise<KubeConfig> {
  const { KubeConfig } = await import("@kubernetes/client-node");
  const kubeConfig = new KubeConfig();
  if (options.yaml !== undefined) kubeConfig.loadFromString(options.yaml);
  else if (options.path !== undefined) kubeConfig.loadFromFile(options.path);
  else kubeConfig.loadFromDefault();
  if (options.context !== undefined) {
    if (kubeConfig.getContextObject(options.context) === null) {
      const known = kubeConfig.getContexts().map((c) => c.name);
      throw new TypeError(
        `the kubeconfig has no context ${JSON.stringify(options.context)} (it has ${known.length === 0 ? "none" : known.join(", ")})`,
      );
    }
    kubeConfig.setCurrentContext(options.context);
  }
  return kubeConfig;
}

/** Loads a kubeconfig (see {@link loadKubeConfig}) and builds an {@link HttpClient} on it. */
export async function createHttpClient(
  options: Omit<HttpClientOptions, "kubeConfig"> &
    LoadKubeConfigOptions & { kubeConfig?: HttpClientOptions["kubeConfig"] } = {},
): Promise<HttpClient> {
  const { path, yaml, context, kubeConfig, ...rest } = options;
  return new HttpClient({
    ...rest,
    kubeConfig: kubeConfig ?? (await loadKubeConfig({ path, yaml, context })),
  });
}
