export { formatIndexes, parseIndexes } from "./indexes.js";
export {
  failureBackoffMs,
  isJobFinished,
  maxPodFailureBackoffMs,
  messages as jobConditionMessages,
  podFailureBackoffMs,
  reasons as jobConditionReasons,
} from "./job-conditions.js";
export {
  JobController,
  type JobControllerOptions,
  jobControllerName,
  jobPodsIndex,
  managedByJobController,
} from "./job-controller.js";
export type {
  JobCompletionMode,
  JobMetrics,
  JobPodCreationReason,
  JobSyncAction,
} from "./job-metrics.js";
export {
  jobCompletionIndexAnnotation,
  jobCompletionIndexEnvName,
  jobTrackingFinalizer,
  podTemplateFor,
} from "./job-pods.js";
export { TTLAfterFinishedController, type TTLAfterFinishedControllerOptions } from "./ttl-after-finished.js";
