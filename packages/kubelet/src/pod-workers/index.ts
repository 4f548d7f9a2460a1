export {
  calculateEffectiveGracePeriod,
  configSourceAnnotationKey,
  isStaticPod,
  type KillPodFunc,
  killPodNow,
  networkNotReadyErrorMessage,
  newPodWorkers,
} from "./pod-workers.js";
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
  PodWorkQueue,
  RunnablePodWorkers,
  RunningPod,
  SyncPodType,
  UpdatePodOptions,
} from "./types.js";
export { BasicWorkQueue } from "./work-queue.js";
