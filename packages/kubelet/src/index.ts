/** The PersistentVolumeClaim descriptor, defined in `@reconcile/api` and re-exported where it was first published. */
export { persistentVolumeClaims } from "@reconcile/api";
export {
  type AdmissionFailure,
  type Allocatable,
  admitPod,
  admitPodWithUsage,
  podRequests,
} from "./admission.js";
export { attachInPod, type ExecAnswer, execInPod } from "./exec.js";
export { Kubelet, type KubeletMetrics, type KubeletOptions } from "./kubelet.js";
export { formatPod, runLifecycleHandler } from "./lifecycle.js";
export { type ContainerLogOptions, type ContainerLogResult, readContainerLogs } from "./logs.js";
export { type KubeletView, kubeletView } from "./machinery.js";
export { NodeFilesystem, normalisePath } from "./node-filesystem.js";
export { microTime, NodeLease, type NodeLeaseOptions, nodeLeaseNamespace } from "./node-lease.js";
export { NodeSimulator, type NodeSimulatorOptions, podCIDROf } from "./node-simulator.js";
export { defaultNodeResources, type NodeResources, NodeStatusManager } from "./node-status.js";
export { type NodeThreadKubeletOptions, NodeThreads, type NodeThreadsOptions } from "./node-threads.js";
export {
  isRuntimePodStatusTerminal,
  Pleg,
  type PodLifecycleEvent,
  type PodLifecycleEventType,
  type RuntimePodStatus,
} from "./pleg.js";
export { computePodActions, type PodActions } from "./pod-actions.js";
export { generateAPIPodStatus, getPhase, qosClassOf } from "./pod-status.js";
export * from "./pod-workers/index.js";
export { type PortForwardAnswer, type PortStream, portForwardInPod } from "./port-forward.js";
export {
  collectResourceMetrics,
  defaultResourceUsage,
  type ResourceUsageDefaults,
  resourceMetricsProvider,
} from "./resource-usage.js";
export {
  type ContainerBehaviour,
  defaultContainerBehaviour,
  simulationAnnotationPrefix,
} from "./runtime/container-behaviour.js";
export type {
  ContainerConfig,
  ContainerRecord,
  ContainerRuntime,
  ContainerState,
  ExecOptions,
  ExecResult,
  ExecSession,
  HttpGetRequest,
  ImageRecord,
  LogLine,
  Mount,
  PodSandbox,
  PodSandboxConfig,
  ProbeAnswer,
  ProbeType,
  PulledImage,
  RuntimeEvent,
  SandboxState,
} from "./runtime/runtime.js";
export { RuntimeError } from "./runtime/runtime.js";
export {
  type ContainerIdentity,
  SimulatedRuntime,
  type SimulatedRuntimeOptions,
} from "./runtime/simulated-runtime.js";
export {
  type ManifestURLRead,
  maxManifestBytes,
  readStaticPodsFromURL,
} from "./static-pod-url.js";
export {
  applyStaticPodDefaults,
  configHashAnnotationKey,
  configMirrorAnnotationKey,
  isMirrorPod,
  mirrorPodOf,
  readStaticPods,
} from "./static-pods.js";
export { StatusManager } from "./status-manager.js";
export {
  podAttachAndMountTimeoutMs,
  VolumeManager,
  type VolumeManagerOptions,
  VolumeMountError,
} from "./volume-manager.js";
