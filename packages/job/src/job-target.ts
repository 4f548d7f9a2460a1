import type { DeepReadonly, Job } from "@reconcile/api";
import { messages, reasons } from "./job-conditions.js";
import { failJobMessage, matchSuccessPolicy } from "./job-policies.js";
import { isComplete, type JobState, pastBackoffLimitOnFailure } from "./job-state.js";

// When a Job has reached its end (upstream syncJob's choice of finishedCondition):
// a podFailurePolicy FailJob match, too many failures, the active deadline,
// its successPolicy, or its completions.

/** The Job's FailureTarget or SuccessCriteriaMet, if it has reached one; `event` for a new failure. */
export function terminalTarget(
  job: DeepReadonly<Job>,
  state: JobState,
  now: number,
):
  | { type: "FailureTarget" | "SuccessCriteriaMet"; reason: string; message: string; event: boolean }
  | undefined {
  for (const type of ["FailureTarget", "SuccessCriteriaMet"] as const) {
    const existing = job.status?.conditions?.find((c) => c.type === type && c.status === "True");
    if (existing !== undefined)
      return { type, reason: existing.reason ?? "", message: existing.message ?? "", event: false };
  }
  const failJob = failJobMessage(job, state.pods);
  if (failJob !== undefined)
    return { type: "FailureTarget", reason: reasons.podFailurePolicy, message: failJob, event: true };
  const failedIndexes = state.failedIndexes;
  if (failedIndexes !== undefined && failedIndexes.size > 0) {
    const maxFailed = job.spec?.maxFailedIndexes;
    if (maxFailed != null && failedIndexes.size > maxFailed)
      return {
        type: "FailureTarget",
        reason: reasons.maxFailedIndexesExceeded,
        message: messages.maxFailedIndexesExceeded,
        event: true,
      };
    if (failedIndexes.size + state.completedIndexes.size >= (state.completions ?? 0))
      return {
        type: "FailureTarget",
        reason: reasons.failedIndexes,
        message: messages.failedIndexes,
        event: true,
      };
  }
  if (state.failed > (job.spec?.backoffLimit ?? 6) || pastBackoffLimitOnFailure(state))
    return {
      type: "FailureTarget",
      reason: reasons.backoffLimitExceeded,
      message: messages.backoffLimitExceeded,
      event: true,
    };
  const deadline = job.spec?.activeDeadlineSeconds;
  const start = job.status?.startTime;
  if (
    deadline != null &&
    start != null &&
    job.spec?.suspend !== true &&
    now - Date.parse(start) >= deadline * 1000
  )
    return {
      type: "FailureTarget",
      reason: reasons.deadlineExceeded,
      message: messages.deadlineExceeded,
      event: true,
    };
  const policy = state.indexed ? matchSuccessPolicy(job, state.completedIndexes) : undefined;
  if (policy !== undefined)
    return { type: "SuccessCriteriaMet", reason: reasons.successPolicy, message: policy, event: false };
  if (isComplete(state))
    return {
      type: "SuccessCriteriaMet",
      reason: reasons.completionsReached,
      message: messages.completionsReached,
      event: false,
    };
  return undefined;
}
