export { HorizontalController, type HorizontalControllerOptions } from "./horizontal.js";
export { MetricReplicas, type MetricReplicasOptions } from "./metric-replicas.js";
export {
  boundsWithBehavior,
  boundsWithRules,
  type ConditionUpdate,
  ScalingHistory,
  scaleDownLimit,
  scaleUpLimit,
} from "./normalize.js";
export {
  calculatePodRequests,
  defaultReplicaCalculatorSettings,
  groupPods,
  metricUsageRatio,
  type PodMetric,
  type PodMetricsInfo,
  podMetricsInfo,
  type ReplicaCalculatorSettings,
  type ResourceReplicas,
  rawResourceReplicas,
  resourceReplicas,
  resourceUtilizationRatio,
} from "./replica-calculator.js";
export { setCondition } from "./status.js";
