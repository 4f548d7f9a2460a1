import { type DeepReadonly, type Pod, rfc3339 } from "@reconcile/api";
import type { Job, JobCondition, JobStatus } from "kubernetes-types/batch/v1.js";
import { finishTime } from "./job-pods.js";

// A Job's conditions and reasons as upstream's job controller writes them,
// and the exponential delay between a Job's failed pods.

export const reasons = {
  completionsReached: "CompletionsReached",
  backoffLimitExceeded: "BackoffLimitExceeded",
  deadlineExceeded: "DeadlineExceeded",
  suspended: "JobSuspended",
  resumed: "JobResumed",
  podFailurePolicy: "PodFailurePolicy",
  successPolicy: "SuccessPolicy",
  maxFailedIndexesExceeded: "MaxFailedIndexesExceeded",
  failedIndexes: "FailedIndexes",
} as const;

export const messages = {
  completionsReached: "Reached expected number of succeeded pods",
  backoffLimitExceeded: "Job has reached the specified backoff limit",
  deadlineExceeded: "Job was active longer than specified deadline",
  suspended: "Job suspended",
  resumed: "Job resumed",
  maxFailedIndexesExceeded: "Job has exceeded the specified maximal number of failed indexes",
  failedIndexes: "Job has failed indexes",
} as const;

/** The first delay before a failed pod is replaced (`DefaultJobPodFailureBackOff`). */
export const podFailureBackoffMs = 10_000;
/** The longest (`MaxJobPodFailureBackOff`). */
export const maxPodFailureBackoffMs = 600_000;

type ConditionType = "Complete" | "Failed" | "FailureTarget" | "SuccessCriteriaMet" | "Suspended";

type WithStatus = { status?: Job["status"] } | DeepReadonly<{ status?: Job["status"] }>;

export function findCondition(job: WithStatus, type: ConditionType): DeepReadonly<JobCondition> | undefined {
  return job.status?.conditions?.find((c) => c.type === type);
}

export function isConditionTrue(job: WithStatus, type: ConditionType): boolean {
  return findCondition(job, type)?.status === "True";
}

/** Whether the Job has finished: Complete or Failed (`IsJobFinished`). */
export function isJobFinished(job: WithStatus): boolean {
  return isConditionTrue(job, "Complete") || isConditionTrue(job, "Failed");
}

/**
 * Sets a condition in `conditions` (upstream `ensureJobConditionStatus`): a
 * new one is appended; an existing one changes only when its status does,
 * and then takes the new reason, message and times. True if anything changed.
 */
export function setCondition(
  conditions: JobCondition[],
  type: ConditionType,
  status: "True" | "False",
  reason: string,
  message: string,
  now: number,
): boolean {
  const existing = conditions.find((c) => c.type === type);
  const time = rfc3339(now);
  if (existing === undefined) {
    // A False condition that never was True is not written.
    if (status === "False") return false;
    conditions.push({ type, status, lastProbeTime: time, lastTransitionTime: time, reason, message });
    return true;
  }
  if (existing.status === status) return false;
  Object.assign(existing, { status, lastProbeTime: time, lastTransitionTime: time, reason, message });
  return true;
}

/** The delay before the next pod after `failures` failures in a row: 10 s doubling, at most 10 min. */
export function failureBackoffMs(failures: number): number {
  if (failures <= 0) return 0;
  return Math.min(podFailureBackoffMs * 2 ** (failures - 1), maxPodFailureBackoffMs);
}

/** As Go encodes JobStatus: zero counts and empty lists left out, `ready`/`terminating` (pointers) kept. */
export function encodeStatus(status: JobStatus): void {
  const uncounted = (status.uncountedTerminatedPods ??= {});
  if (uncounted.succeeded?.length === 0) delete uncounted.succeeded;
  if (uncounted.failed?.length === 0) delete uncounted.failed;
  for (const field of ["active", "succeeded", "failed"] as const)
    if (status[field] === 0) delete status[field];
  if (status.conditions?.length === 0) delete status.conditions;
}

/** A status as the server would store it, for comparing: empty lists left out. */
export function normalise(status: DeepReadonly<JobStatus> | undefined): unknown {
  return JSON.parse(JSON.stringify(status ?? {}), (_, value) =>
    Array.isArray(value) && value.length === 0 ? undefined : value,
  );
}

/** A Job's failures since its last success, and when the last one finished: the delay before its next pod. */
export interface BackoffRecord {
  failures: number;
  lastFailure: number;
  /** Pods already counted (a sync that runs again sees the same ones). */
  seen: Set<string>;
}

export function newBackoffRecord(): BackoffRecord {
  return { failures: 0, lastFailure: 0, seen: new Set() };
}

/** Counts newly finished pods in finish order: a success resets the failures. */
export function recordFinished(
  record: BackoffRecord,
  finished: readonly DeepReadonly<Pod>[],
  now: number,
): void {
  const sorted = [...finished].sort((a, b) => finishTime(a, now) - finishTime(b, now));
  for (const pod of sorted) {
    const uid = pod.metadata?.uid ?? "";
    if (record.seen.has(uid)) continue;
    record.seen.add(uid);
    if (pod.status?.phase === "Succeeded") record.failures = 0;
    else {
      record.failures++;
      record.lastFailure = Math.max(record.lastFailure, finishTime(pod, now));
    }
  }
}
