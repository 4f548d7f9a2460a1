import { ReconcileError } from "@reconcile/api";
import { HttpClient, type HttpClientOptions, type KubeConfigLike } from "./http-client.js";

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
 * What {@link loadKubeConfig} returns: `@kubernetes/client-node`'s
 * `KubeConfig`, typed by the part reconcile uses, so that these declarations
 * do not import that optional package (nor its `@types/ws`). Cast it to the
 * package's `KubeConfig` for the rest.
 */
export interface LoadedKubeConfig extends KubeConfigLike {
  getContexts(): readonly { readonly name: string; readonly namespace?: string | undefined }[];
  setCurrentContext(name: string): void;
}

/**
 * Loads a kubeconfig with `@kubernetes/client-node`'s `KubeConfig`, which also
 * brings its authenticators (tokens, token files, client certificates, exec
 * plugins, OIDC). That package is an optional peer dependency, imported on
 * first use: programs that use only the in-process client never install or
 * load it, and a program that loads a kubeconfig without it gets an error
 * naming it (code `"client.missing-peer-dependency"`).
 */
export async function loadKubeConfig(options: LoadKubeConfigOptions = {}): Promise<LoadedKubeConfig> {
  const { KubeConfig } = await importClientNode();
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

const clientNode = "@kubernetes/client-node";

/**
 * Imports `@kubernetes/client-node`, turning its absence into an error that
 * says what to install. `load` is replaceable for tests.
 */
export async function importClientNode(
  load: () => Promise<typeof import("@kubernetes/client-node")> = () => import("@kubernetes/client-node"),
): Promise<typeof import("@kubernetes/client-node")> {
  try {
    return await load();
  } catch (error) {
    if (!isPackageNotFound(error, clientNode)) throw error;
    throw new ReconcileError(
      "client.missing-peer-dependency",
      `loading a kubeconfig needs ${clientNode}, an optional peer dependency of @reconcile/client that is not installed: run \`npm install ${clientNode}\``,
      { cause: error },
    );
  }
}

function isPackageNotFound(error: unknown, name: string): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return (
    (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") &&
    typeof message === "string" &&
    message.includes(`'${name}'`)
  );
}
