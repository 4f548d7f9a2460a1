import type { DeepReadonly, Job } from "@reconcile/api";
import type { JobStatus } from "kubernetes-types/batch/v1.js";
import { isJobFinished } from "./job-conditions.js";
import { onlyReplaceFailedPods } from "./job-policies.js";
import type { JobState } from "./job-state.js";

// The Job controller's metrics seam (upstream pkg/controller/job/metrics,
// subsystem `job_controller`): no-op unless given; `prometheusJobMetrics` of
// @reconcile/controller-manager maps it to upstream's families.

export type JobCompletionMode = "NonIndexed" | "Indexed";
/** What a sync did: upstream's `JobSyncAction*`. */
export type JobSyncAction = "reconciling" | "tracking" | "pods_created" | "pods_deleted";
/** Why a pod was created: upstream's `PodCreateNew`, `PodRecreateTerminatingOrFailed`, `PodRecreateFailed`. */
export type JobPodCreationReason = "new" | "recreate_terminating_or_failed" | "recreate_failed";

export interface JobMetrics {
  /** `job_controller_job_sync_duration_seconds` and `job_controller_job_syncs_total`. */
  jobSync(mode: JobCompletionMode, result: "success" | "error", action: JobSyncAction, seconds: number): void;
  /** `job_controller_jobs_finished_total`, with the terminal condition's reason. */
  jobFinished(mode: JobCompletionMode, result: "succeeded" | "failed", reason: string): void;
  /** `job_controller_job_pods_finished_total`: pods counted into `succeeded`/`failed`. */
  podsFinished(mode: JobCompletionMode, result: "succeeded" | "failed", count: number): void;
  /** `job_controller_job_pods_creation_total`. */
  podsCreated(reason: JobPodCreationReason, status: "succeeded" | "failed", count: number): void;
  /** `job_controller_terminated_pods_tracking_finalizer_total`: the finalizer added (with a pod) or removed. */
  trackingFinalizer(event: "add" | "delete", count: number): void;
}

/** What one sync did, filled in as it goes, for its `action` label. */
export interface SyncOutcome {
  created: boolean;
  deleted: boolean;
  tracked: boolean;
}

export function syncAction(outcome: SyncOutcome): JobSyncAction {
  if (outcome.created) return "pods_created";
  if (outcome.deleted) return "pods_deleted";
  return outcome.tracked ? "tracking" : "reconciling";
}

export function completionModeOf(job: DeepReadonly<Job>): JobCompletionMode {
  return job.spec?.completionMode === "Indexed" ? "Indexed" : "NonIndexed";
}

/** Pods created (upstream `job_pods_creation_total`), each with its tracking finalizer. */
export function recordCreations(
  metrics: JobMetrics | undefined,
  outcome: SyncOutcome | undefined,
  state: JobState,
  succeeded: number,
  failed: number,
): void {
  if (outcome !== undefined && succeeded > 0) outcome.created = true;
  if (metrics === undefined) return;
  const reason: JobPodCreationReason =
    state.failed === 0
      ? "new"
      : onlyReplaceFailedPods(state.job)
        ? "recreate_failed"
        : "recreate_terminating_or_failed";
  if (succeeded > 0) metrics.podsCreated(reason, "succeeded", succeeded);
  if (failed > 0) metrics.podsCreated(reason, "failed", failed);
  if (succeeded > 0) metrics.trackingFinalizer("add", succeeded);
}

/** Pods counted and the Job finished, once the status saying so is written. */
export function recordWritten(
  metrics: JobMetrics | undefined,
  job: DeepReadonly<Job>,
  status: JobStatus,
  counted: { succeeded: Set<string>; failed: Set<string> },
): void {
  if (metrics === undefined) return;
  const mode = completionModeOf(job);
  if (counted.succeeded.size > 0) metrics.podsFinished(mode, "succeeded", counted.succeeded.size);
  if (counted.failed.size > 0) metrics.podsFinished(mode, "failed", counted.failed.size);
  if (isJobFinished(job)) return;
  const finished = status.conditions?.find(
    (c) => (c.type === "Complete" || c.type === "Failed") && c.status === "True",
  );
  if (finished !== undefined)
    metrics.jobFinished(mode, finished.type === "Complete" ? "succeeded" : "failed", finished.reason ?? "");
}
