export {
  type ControllerManagerFlags,
  FlagError,
  parseControllerManagerFlags,
  runControllerManagerCommand,
  usage,
} from "./command.js";
export {
  type ControllerContext,
  type ControllerDescriptor,
  ControllerDescriptors,
  type RunnableController,
} from "./controller-descriptors.js";
export {
  ControllerManager,
  type ControllerManagerOptions,
  LeaderElectionLostError,
  type LeaderElectionOptions,
} from "./controller-manager.js";
export { isControllerEnabled, parseControllersFlag, UnknownControllerError } from "./controllers-flag.js";
export {
  type ControllerDescriptorsOptions,
  deploymentControllerDescriptor,
  endpointSliceControllerDescriptor,
  endpointsControllerDescriptor,
  type NodeLifecycleSettings,
  newControllerDescriptors,
  newNodeLifecycleControllerDescriptor,
  nodeLifecycleControllerDescriptor,
  replicaSetControllerDescriptor,
  taintEvictionControllerDescriptor,
} from "./default-controllers.js";
export { type HealthCheck, type HealthResponse, healthResponse, pingCheck } from "./health.js";
export { type JsonLoggerOptions, jsonLogger } from "./json-logger.js";
export {
  type ApiServerMetricsSeam,
  type KubeletMetricsSeam,
  prometheusApiServerMetrics,
  prometheusKubeletMetrics,
  prometheusLeaderElectionMetrics,
  prometheusRestClientMetrics,
  prometheusSchedulerMetrics,
  prometheusWorkqueueMetrics,
  runningManagedControllersGauge,
  type SchedulerMetricsSeam,
} from "./metrics.js";
export { prometheusNodeLifecycleMetrics, prometheusTaintEvictionMetrics } from "./node-lifecycle-metrics.js";
