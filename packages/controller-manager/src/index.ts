// The health, metrics and logging helpers live below both managers, in @reconcile/runtime; re-exported here.
export {
  type ApiServerMetricsSeam,
  type HealthCheck,
  type HealthResponse,
  healthResponse,
  type JsonLoggerOptions,
  jsonLogger,
  type KubeletMetricsSeam,
  LeaderElectionLostError,
  pingCheck,
  prometheusApiServerMetrics,
  prometheusKubeletMetrics,
  prometheusLeaderElectionMetrics,
  prometheusRestClientMetrics,
  prometheusSchedulerMetrics,
  prometheusWorkqueueMetrics,
  runningManagedControllersGauge,
  type SchedulerMetricsSeam,
} from "@reconcile/runtime";
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
  type LeaderElectionOptions,
} from "./controller-manager.js";
export { isControllerEnabled, parseControllersFlag, UnknownControllerError } from "./controllers-flag.js";
export {
  type ClusterSigning,
  type ControllerDescriptorsOptions,
  csrApprovingControllerDescriptor,
  csrCleanerControllerDescriptor,
  deploymentControllerDescriptor,
  endpointSliceControllerDescriptor,
  endpointsControllerDescriptor,
  type NodeLifecycleSettings,
  newControllerDescriptors,
  newCSRSigningControllerDescriptor,
  newNodeLifecycleControllerDescriptor,
  newRootCACertPublisherDescriptor,
  newServiceAccountTokenControllerDescriptor,
  nodeLifecycleControllerDescriptor,
  replicaSetControllerDescriptor,
  taintEvictionControllerDescriptor,
} from "./default-controllers.js";
export { prometheusJobMetrics } from "./job-metrics.js";
export { prometheusNodeLifecycleMetrics, prometheusTaintEvictionMetrics } from "./node-lifecycle-metrics.js";
