export { type Clock, realClock } from "./clock.js";
export { DelayingQueue } from "./delaying-queue.js";
export type { DelayingInterface, QueueInterface, RateLimitingInterface } from "./interfaces.js";
export {
  type CounterMetric,
  type GaugeMetric,
  type HistogramMetric,
  type MetricsProvider,
  noopMetricsProvider,
  type SettableGaugeMetric,
  type SummaryMetric,
} from "./metrics.js";
export { type ParallelizeOptions, parallelizeUntil } from "./parallelize.js";
export { type GetResult, Queue, type QueueOptions, type QueueSnapshot } from "./queue.js";
export {
  BucketRateLimiter,
  type BucketRateLimiterOptions,
  type DefaultControllerRateLimiterOptions,
  defaultControllerRateLimiter,
  ItemExponentialFailureRateLimiter,
  type ItemExponentialFailureRateLimiterOptions,
  ItemFastSlowRateLimiter,
  type ItemFastSlowRateLimiterOptions,
  type LegacyItemExponentialFailureRateLimiterOptions,
  type LegacyItemFastSlowRateLimiterOptions,
  type LegacyWithMaxWaitRateLimiterOptions,
  MaxOfRateLimiter,
  type MaxOfRateLimiterOptions,
  type RateLimiter,
  WithMaxWaitRateLimiter,
  type WithMaxWaitRateLimiterOptions,
} from "./rate-limiters.js";
export { RateLimitingQueue, type RateLimitingQueueOptions } from "./rate-limiting-queue.js";
export { TokenBucket, type TokenBucketOptions } from "./token-bucket.js";
