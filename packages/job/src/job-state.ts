import {
  type DeepReadonly,
  isPodActive,
  isPodReady,
  isPodTerminating,
  type Job,
  type Pod,
} from "@reconcile/api";
import { formatIndexes, parseIndexes } from "./indexes.js";
import { hasTrackingFinalizer, isFinished, jobIndexFailureCountAnnotation, podIndex } from "./job-pods.js";
import { matchPodFailurePolicy, onlyReplaceFailedPods } from "./job-policies.js";

// What one sync of a Job sees (upstream's syncJobCtx): its pods sorted into
// active, terminating and newly finished ones, the counts including pods
// finished but not yet counted, and the Indexed Job's completed indexes.

export interface JobState {
  job: DeepReadonly<Job>;
  pods: readonly DeepReadonly<Pod>[];
  active: DeepReadonly<Pod>[];
  ready: number;
  terminating: number;
  /** Pods being deleted that have not finished (their phase not yet terminal). */
  terminatingPods: DeepReadonly<Pod>[];
  /** Finished pods with the tracking finalizer not yet in `uncountedTerminatedPods`. */
  newlyFinished: DeepReadonly<Pod>[];
  /** Failed pods a podFailurePolicy `Ignore` rule matches: their finalizer goes, they are not counted. */
  ignored: DeepReadonly<Pod>[];
  /** UIDs finished and not yet moved into `succeeded`/`failed` (the status's, plus the newly finished). */
  uncountedSucceeded: Set<string>;
  uncountedFailed: Set<string>;
  /** Counted plus uncounted: what the Job has achieved so far. */
  succeeded: number;
  failed: number;
  /** Indexed Jobs: the indexes with a succeeded pod, counted or not. */
  completedIndexes: Set<number>;
  /** Indexed Jobs with `backoffLimitPerIndex`: the indexes that failed for good. */
  failedIndexes: Set<number> | undefined;
  /** The same: each index's counted failures so far (a replacement pod carries its count). */
  indexFailures: Map<number, number>;
  indexed: boolean;
  completions: number | undefined;
  parallelism: number;
}

/** Sorts a Job's pods; `expectingRemoval` holds UIDs whose finalizer removal is in flight. */
export function jobState(
  job: DeepReadonly<Job>,
  pods: readonly DeepReadonly<Pod>[],
  expectingRemoval: ReadonlySet<string>,
): JobState {
  const status = job.status;
  const indexed = job.spec?.completionMode === "Indexed";
  const completions = job.spec?.completions ?? undefined;
  const uncountedSucceeded = new Set(status?.uncountedTerminatedPods?.succeeded ?? []);
  const uncountedFailed = new Set(status?.uncountedTerminatedPods?.failed ?? []);
  const completedIndexes = indexed
    ? parseIndexes(status?.completedIndexes, completions ?? 0)
    : new Set<number>();
  const perIndex = indexed && job.spec?.backoffLimitPerIndex != null;
  const failedIndexes = perIndex ? parseIndexes(status?.failedIndexes ?? "", completions ?? 0) : undefined;
  const state: JobState = {
    job,
    pods,
    active: [],
    ready: 0,
    terminating: 0,
    terminatingPods: [],
    newlyFinished: [],
    ignored: [],
    uncountedSucceeded,
    uncountedFailed,
    succeeded: 0,
    failed: 0,
    completedIndexes,
    failedIndexes,
    indexFailures: new Map(),
    indexed,
    completions,
    parallelism: job.spec?.parallelism ?? 1,
  };
  // Once the Job is finishing, its pods being deleted count as failed whatever the policy, so their
  // finalizers go (upstream's canRemoveFinalizer with a finishedCondition).
  const finishing = (status?.conditions ?? []).some(
    (c) => c.status === "True" && (c.type === "FailureTarget" || c.type === "SuccessCriteriaMet"),
  );
  const onlyFailed = onlyReplaceFailedPods(job) && !finishing;
  if (perIndex) countIndexFailures(state);
  for (const pod of pods) {
    const uid = pod.metadata?.uid ?? "";
    if (isPodActive(pod)) {
      state.active.push(pod);
      if (isPodReady(pod)) state.ready++;
    } else if (isPodTerminating(pod)) {
      state.terminating++;
      state.terminatingPods.push(pod);
    }
    const succeeded = pod.status?.phase === "Succeeded";
    if (succeeded && indexed && uncountedSucceeded.has(uid)) {
      const index = podIndex(pod, completions ?? 0);
      if (index !== undefined) completedIndexes.add(index);
    }
    if (!hasTrackingFinalizer(pod) || !isFinished(pod, onlyFailed) || expectingRemoval.has(uid)) continue;
    if (uncountedSucceeded.has(uid) || uncountedFailed.has(uid)) continue;
    const policy = succeeded ? undefined : matchPodFailurePolicy(job.spec?.podFailurePolicy, pod, perIndex);
    if (policy !== undefined && !policy.count) {
      state.ignored.push(pod);
      continue;
    }
    if (policy !== undefined && failedIndexes !== undefined) {
      const index = podIndex(pod, completions ?? 0);
      const limit = job.spec?.backoffLimitPerIndex ?? 0;
      if (
        index !== undefined &&
        (policy.action === "FailIndex" || (state.indexFailures.get(index) ?? 0) > limit)
      )
        failedIndexes.add(index);
    }
    state.newlyFinished.push(pod);
    if (succeeded) {
      uncountedSucceeded.add(uid);
      const index = indexed ? podIndex(pod, completions ?? 0) : undefined;
      if (index !== undefined) completedIndexes.add(index);
    } else uncountedFailed.add(uid);
  }
  state.succeeded = (status?.succeeded ?? 0) + uncountedSucceeded.size;
  state.failed = (status?.failed ?? 0) + uncountedFailed.size;
  return state;
}

/**
 * Each index's counted failures (upstream's index failure counts): a failed
 * pod brings the count its annotation carries plus one, the highest wins.
 */
function countIndexFailures(state: JobState): void {
  for (const pod of state.pods) {
    if (pod.status?.phase !== "Failed") continue;
    const index = podIndex(pod, state.completions ?? 0);
    if (index === undefined) continue;
    const policy = matchPodFailurePolicy(state.job.spec?.podFailurePolicy, pod, true);
    if (!policy.count) continue;
    const count = Number(pod.metadata?.annotations?.[jobIndexFailureCountAnnotation] ?? 0) + 1;
    if (count > (state.indexFailures.get(index) ?? 0)) state.indexFailures.set(index, count);
  }
}

/** Whether the Job has what it asked for (upstream's `complete` of syncJob). */
export function isComplete(state: JobState): boolean {
  if (state.indexed) return state.completedIndexes.size >= (state.completions ?? 0);
  if (state.completions === undefined) return state.succeeded > 0 && state.active.length === 0;
  return state.succeeded >= state.completions;
}

/** Restarts of the active pods' containers for a Job with restartPolicy OnFailure (`pastBackoffLimitOnFailure`). */
export function pastBackoffLimitOnFailure(state: JobState): boolean {
  const job = state.job;
  if (job.spec?.template?.spec?.restartPolicy !== "OnFailure") return false;
  let restarts = 0;
  for (const pod of state.active) {
    for (const status of [
      ...(pod.status?.initContainerStatuses ?? []),
      ...(pod.status?.containerStatuses ?? []),
    ])
      restarts += status.restartCount;
  }
  const limit = job.spec?.backoffLimit ?? 6;
  return limit === 0 ? restarts > 0 : restarts >= limit;
}

/**
 * How many pods should be running now (upstream's `wantActive` of manageJob).
 * Where only failed pods are replaced, terminating ones still take their place.
 */
export function wantActive(state: JobState): number {
  const { completions, parallelism } = state;
  if (state.indexed) {
    const done = state.completedIndexes.size + (state.failedIndexes?.size ?? 0);
    return Math.max(0, Math.min(parallelism, (completions ?? 0) - done));
  }
  if (completions === undefined) return state.succeeded > 0 ? state.active.length : parallelism;
  return Math.max(0, Math.min(parallelism, completions - state.succeeded));
}

/**
 * Indexed Jobs: the lowest indexes with neither a success nor an active pod
 * (nor, where only failed pods are replaced, a terminating one), at most `count`.
 */
export function indexesToCreate(state: JobState, count: number): number[] {
  const taken = new Set([...state.completedIndexes, ...(state.failedIndexes ?? [])]);
  const holding = onlyReplaceFailedPods(state.job)
    ? [...state.active, ...state.terminatingPods]
    : state.active;
  for (const pod of holding) {
    const index = podIndex(pod, state.completions ?? 0);
    if (index !== undefined) taken.add(index);
  }
  const result: number[] = [];
  for (let i = 0; i < (state.completions ?? 0) && result.length < count; i++)
    if (!taken.has(i)) result.push(i);
  return result;
}

/**
 * Active pods to delete when there are too many: for an Indexed Job first
 * the duplicates and out-of-range ones, then not-ready before ready, newest first.
 */
export function podsToDelete(state: JobState, count: number): DeepReadonly<Pod>[] {
  const seen = new Set<number>();
  const ranked = [...state.active].sort((a, b) => {
    const readyOrder = Number(isPodReady(a)) - Number(isPodReady(b));
    if (readyOrder !== 0) return readyOrder;
    return (b.metadata?.creationTimestamp ?? "").localeCompare(a.metadata?.creationTimestamp ?? "");
  });
  if (!state.indexed) return ranked.slice(0, count);
  const surplus: DeepReadonly<Pod>[] = [];
  const keep: DeepReadonly<Pod>[] = [];
  for (const pod of [...state.active].reverse()) {
    const index = podIndex(pod, state.completions ?? 0);
    if (index === undefined || seen.has(index) || state.completedIndexes.has(index)) surplus.push(pod);
    else {
      seen.add(index);
      keep.push(pod);
    }
  }
  return [...surplus, ...ranked.filter((p) => keep.includes(p))].slice(0, count);
}

export function completedIndexesText(state: JobState): string | undefined {
  if (!state.indexed) return undefined;
  return formatIndexes(state.completedIndexes);
}
