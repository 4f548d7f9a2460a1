export type {
  ExecConfig,
  KubeConfigCluster,
  KubeConfigContext,
  KubeConfigDocument,
  KubeConfigUser,
} from "../kubeconfig/document.js";
export { KubeConfig } from "../kubeconfig/kube-config.js";
export {
  type ClientNodeKubeConfig,
  fromKubeConfig,
  inClusterConfig,
  type LoadedKubeConfig,
  type LoadKubeConfigOptions,
  loadKubeConfig,
} from "../kubeconfig/load.js";
export {
  HttpClient,
  type HttpClientOptions,
  type HttpRequest,
  type KubeConfigLike,
  type RequestRateLimiter,
  type RestClientMetrics,
} from "./http-client.js";
export { createHttpClient } from "./kube-config.js";
export { loopbackHostAllowed } from "./loopback-host.js";
export { type TokenBucketOptions, TokenBucketRateLimiter } from "./token-bucket.js";
export { parseWatchStream, type WatchStreamOptions } from "./watch-stream.js";
