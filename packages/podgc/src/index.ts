export {
  defaultTerminatedPodThreshold,
  gcCheckPeriodMs,
  PodGCController,
  type PodGCControllerOptions,
  quarantineMs,
} from "./pod-gc-controller.js";
