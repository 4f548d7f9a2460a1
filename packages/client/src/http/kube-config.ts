import { type LoadKubeConfigOptions, loadKubeConfig } from "../kubeconfig/load.js";
import { HttpClient, type HttpClientOptions } from "./http-client.js";

/** Loads a kubeconfig (see `loadKubeConfig`) and builds an {@link HttpClient} on it. */
export async function createHttpClient(
  options: Omit<HttpClientOptions, "kubeConfig"> &
    LoadKubeConfigOptions & { kubeConfig?: HttpClientOptions["kubeConfig"] } = {},
): Promise<HttpClient> {
  const { path, yaml, context, exec, env, serviceAccountDir, home, kubeConfig, ...rest } = options;
  return new HttpClient({
    ...rest,
    kubeConfig:
      kubeConfig ?? (await loadKubeConfig({ path, yaml, context, exec, env, serviceAccountDir, home })),
  });
}
