import type {
  ConfigPod,
  KillPodOptions,
  PodStatusFunc,
  PodWorkerState,
  RunningPod,
  UpdatePodOptions,
} from "./types.js";

// The state the pod workers keep per UID (upstream's podSyncStatus) and what reads and merges it.

/**
 * Per-UID state (`podSyncStatus`). Times are ms since the epoch, 0 when unset.
 * @internal exported for tests
 */
export interface PodSyncStatus<R extends RunningPod = RunningPod> {
  /** Aborts the current sync; replaced once aborted (upstream's ctx/cancelFn). */
  abort: AbortController | undefined;
  /** `name_namespace`. */
  fullname: string;
  /** An update is pending or being worked on. */
  working: boolean;
  /** The latest update not yet consumed by the worker; a newer one replaces it. */
  pendingUpdate: UpdatePodOptions<R> | undefined;
  /** The last state handed to a sync, accumulated (pod, mirror pod, kill options). */
  activeUpdate: UpdatePodOptions<R> | undefined;
  syncedAt: number;
  startedAt: number;
  terminatingAt: number;
  terminatedAt: number;
  /** Seconds, set once termination is requested; only shrinks. */
  gracePeriod: number;
  notifyPostTerminating: (() => void)[];
  statusPostTerminating: PodStatusFunc[];
  startedTerminating: boolean;
  deleted: boolean;
  evicted: boolean;
  finished: boolean;
  restartRequested: boolean;
  observedRuntime: boolean;
}

export function newPodSyncStatus<R extends RunningPod>(now: number, fullname: string): PodSyncStatus<R> {
  return {
    abort: undefined,
    fullname,
    working: false,
    pendingUpdate: undefined,
    activeUpdate: undefined,
    syncedAt: now,
    startedAt: 0,
    terminatingAt: 0,
    terminatedAt: 0,
    gracePeriod: 0,
    notifyPostTerminating: [],
    statusPostTerminating: [],
    startedTerminating: false,
    deleted: false,
    evicted: false,
    finished: false,
    restartRequested: false,
    observedRuntime: false,
  };
}

export function isTerminationRequested(status: PodSyncStatus<RunningPod>): boolean {
  return status.terminatingAt !== 0;
}

export function isTerminated(status: PodSyncStatus<RunningPod>): boolean {
  return status.terminatedAt !== 0;
}

/** The phase the next sync runs in (`WorkType`), derived from state, not from the update. */
export function workType(status: PodSyncStatus<RunningPod>): PodWorkerState {
  if (isTerminated(status)) return "terminated";
  if (isTerminationRequested(status)) return "terminating";
  return "sync";
}

/**
 * Records the state a sync is about to act on (`mergeLastUpdate`): the pod
 * (a runtime-only update never replaces a known pod), the mirror pod when
 * given, the kill's eviction and grace period. The update type is not kept:
 * a replayed update is a `sync`.
 */
export function mergeLastUpdate<R extends RunningPod>(
  status: PodSyncStatus<R>,
  other: UpdatePodOptions<R>,
): void {
  const active: UpdatePodOptions<R> = status.activeUpdate ?? { updateType: "sync" };
  status.activeUpdate = active;
  if (active.pod === undefined || other.runningPod === undefined) active.pod = other.pod;
  active.runningPod = other.runningPod;
  if (other.mirrorPod !== undefined) active.mirrorPod = other.mirrorPod;
  if (other.killPodOptions !== undefined) {
    const killPodOptions: KillPodOptions = {};
    if (other.killPodOptions.evict) killPodOptions.evict = true;
    const override = other.killPodOptions.podTerminationGracePeriodSecondsOverride;
    if (override !== undefined) killPodOptions.podTerminationGracePeriodSecondsOverride = override;
    active.killPodOptions = killPodOptions;
  }
}

/** The pod's full name as the kubelet keys static pods: `name_namespace`. */
export function buildPodFullName(name: string, namespace: string): string {
  return `${name}_${namespace}`;
}

/** The minimal pod a runtime pod stands for (`ToAPIPod`). */
export function runningPodToApiPod(runningPod: RunningPod): ConfigPod {
  return {
    metadata: { uid: runningPod.id, name: runningPod.name, namespace: runningPod.namespace },
    spec: { containers: [] },
  };
}
