export {
  HttpClient,
  type HttpClientOptions,
  type HttpRequest,
  type KubeConfigLike,
  type RequestRateLimiter,
  type RestClientMetrics,
} from "./http-client.js";
export {
  createHttpClient,
  type LoadedKubeConfig,
  type LoadKubeConfigOptions,
  loadKubeConfig,
} from "./kube-config.js";
export { type TokenBucketOptions, TokenBucketRateLimiter } from "./token-bucket.js";
export { parseWatchStream, type WatchStreamOptions } from "./watch-stream.js";
