export { calculateEffectiveGracePeriod, type KillPodFunc, killPodNow } from "./kill-pod.js";
export { networkNotReadyErrorMessage, newPodWorkers } from "./pod-workers.js";
export { configSourceAnnotationKey, isStaticPod } from "./static-pod-starts.js";
export type {
  ConfigPod,
  KillPodOptions,
  PodStatusCache,
  PodStatusFunc,
  PodSyncer,
  PodWorkerState,
  PodWorkerSync,
  PodWorkers,
  PodWorkersMetrics,
  PodWorkersOptions,
  PodWorkerView,
  PodWorkQueue,
  RunnablePodWorkers,
  RunningPod,
  SyncPodType,
  UpdatePodOptions,
} from "./types.js";
export { BasicWorkQueue } from "./work-queue.js";
