export {
  type NodeLifecycleMetrics,
  noopNodeLifecycleMetrics,
  noopTaintEvictionMetrics,
  type TaintEvictionMetrics,
} from "./metrics.js";
export {
  computeZoneState,
  NodeLifecycleController,
  type NodeLifecycleControllerOptions,
  nodeDisruptionExclusionLabel,
  nodeLeaseNamespace,
  nodeLifecycleControllerName,
  type ZoneState,
} from "./node-lifecycle-controller.js";
export {
  evictionRateLimiterBurst,
  RateLimitedTimedQueue,
  type TimedValue,
  type TimedValueAction,
} from "./rate-limited-timed-queue.js";
export {
  deletionByTaintManagerReason,
  TaintEvictionController,
  type TaintEvictionControllerOptions,
  taintEvictionControllerName,
  taintManagerEvictionReason,
} from "./taint-eviction-controller.js";
export {
  getMatchingTolerations,
  getMinTolerationTimeMs,
  matchTaint,
  notReadyTaintTemplate,
  taintExists,
  taintNodeDiskPressure,
  taintNodeMemoryPressure,
  taintNodeNetworkUnavailable,
  taintNodeNotReady,
  taintNodePIDPressure,
  taintNodeUnreachable,
  taintNodeUnschedulable,
  toleratesTaint,
  unreachableTaintTemplate,
} from "./taints.js";
export { TimedWorkerQueue } from "./timed-workers.js";
export { labelTopologyRegion, labelTopologyZone, zoneKeyOf } from "./zones.js";
