export {
  type AffinityTerm,
  hasPodAffinity,
  type NamespaceLister,
  type PodAffinityTerms,
  podAffinityTerms,
  termMatches,
  type WeightedAffinityTerm,
} from "./affinity-terms.js";
export { type Binder, ClientBinder, newBinding } from "./binder.js";
export { SchedulerCache } from "./cache.js";
export { DecisionLog, maxNodesPerDecision, type SchedulingDecision } from "./decisions.js";
export {
  type Diagnosis,
  FitError,
  fitErrorMessage,
  NoNodesAvailableError,
  truncateMessage,
} from "./fit-error.js";
export {
  type ClusterEvent,
  type Code,
  type CycleState,
  cloneCycleState,
  defaultNormalizeScore,
  isRejected,
  maxNodeScore,
  type Plugin,
  type Status,
  skipStatus,
  successStatus,
  unresolvable,
  unschedulable,
} from "./framework.js";
export { type HostPort, hostPortsOf, NodeInfo, type PodInfo, podInfo } from "./node-info.js";
export * from "./plugins/index.js";
export { milliValue, parseQuantity, QuantityError, value } from "./quantity.js";
export {
  defaultMemoryRequest,
  defaultMilliCPURequest,
  emptyResource,
  nodeAllocatable,
  podRequests,
  type Resource,
} from "./resources.js";
export {
  defaultSchedulerName,
  type ScheduleResult,
  Scheduler,
  type SchedulerMetrics,
  type SchedulerOptions,
} from "./scheduler.js";
export {
  type PendingPods,
  type QueuedPodInfo,
  SchedulingQueue,
  type SchedulingQueueOptions,
} from "./scheduling-queue.js";
