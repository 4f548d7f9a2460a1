import type { DeepReadonly } from "@reconcile/api";
import type { Clock } from "@reconcile/clock";
import type { EventRecorder, Logger } from "@reconcile/controller";
import type { Pod, PodStatus } from "kubernetes-types/core/v1.js";

/**
 * Why a pod is being synced (kubelet `SyncPodType`): `sync` is a periodic or
 * PLEG-driven resync, `update` a change of the pod in config, `create` its
 * first sighting, `kill` a request to stop it.
 */
export type SyncPodType = "sync" | "update" | "create" | "kill";

/**
 * The pod worker's view of a pod (`PodWorkerState`): set up and running
 * (`sync`), containers being torn down (`terminating`), or stopped with
 * cleanup to do (`terminated`).
 */
export type PodWorkerState = "sync" | "terminating" | "terminated";

/** A pod as the workers receive it from config (an informer's cache, a static manifest). */
export type ConfigPod = DeepReadonly<Pod>;

/**
 * A pod found in the container runtime with no config behind it (upstream's
 * `kubecontainer.Pod` when passed as `RunningPod`). The workers read only
 * these three fields; runtimes pass their own richer object through.
 */
export interface RunningPod {
  /** The pod's UID. */
  readonly id: string;
  readonly name: string;
  readonly namespace: string;
}

/**
 * Overrides the pod status written when a pod is killed (`PodStatusFunc`).
 * It edits the status it is given, which the syncer has populated from the
 * latest state.
 */
export type PodStatusFunc = (podStatus: PodStatus) => void;

/** Options of an update whose type is `kill` (`KillPodOptions`). */
export interface KillPodOptions {
  /**
   * Called once when the kill completes: `syncTerminatingPod` returned without
   * error, or the pod was already terminated, or the options were not valid
   * for the pod's state. Upstream's `CompletedCh`, closed at the same moments.
   */
  onCompleted?: (() => void) | undefined;
  /**
   * An eviction by the kubelet: once evicted, more of the pod's resources are
   * reaped eagerly (`ShouldPodContentBeRemoved` turns true).
   */
  evict?: boolean | undefined;
  /**
   * Applied to the pod's status when it is killed. When several kills arrive,
   * the latest function wins (a preemption later turned into an eviction).
   */
  podStatusFunc?: PodStatusFunc | undefined;
  /** Grace period in seconds for this kill; grace periods only ever shrink. */
  podTerminationGracePeriodSecondsOverride?: number | undefined;
}

/** One change to a pod, passed to {@link PodWorkers.updatePod} (`UpdatePodOptions`). */
export interface UpdatePodOptions<R extends RunningPod = RunningPod> {
  /** The type of update. */
  updateType: SyncPodType;
  /**
   * When this update was created (ms since the epoch), for the pod worker
   * duration metric. When several updates coalesce the earliest is kept.
   */
  startTime?: number | undefined;
  /** The pod to sync. Required unless `runningPod` is given. */
  pod?: ConfigPod | undefined;
  /** The mirror pod, when `pod` is a static pod. */
  mirrorPod?: ConfigPod | undefined;
  /**
   * A runtime pod no longer present in config. Only meaningful with
   * `updateType: "kill"` and no `pod`; ignored when `pod` is set.
   */
  runningPod?: R | undefined;
  /** How to kill the pod; meaningful for `kill` and while the pod terminates. */
  killPodOptions?: KillPodOptions | undefined;
}

/** One worker's summary, as returned by {@link PodWorkers.syncKnownPods} (`PodWorkerSync`). */
export interface PodWorkerSync {
  state: PodWorkerState;
  /** The pod was not in the desired set passed to `syncKnownPods`. */
  orphan: boolean;
  /** The worker has seen a pod spec for this UID (not only a runtime pod). */
  hasConfig: boolean;
  /** The worker has config and the pod came from a static source. */
  static: boolean;
}

/**
 * The kubelet's per-pod workers (`PodWorkers`): one worker per pod UID drives
 * that pod through sync → terminating → terminated → finished, never two
 * syncs of a UID at once. Other kubelet subsystems ask it what they may do
 * with a pod through the query methods.
 */
export interface PodWorkers<R extends RunningPod = RunningPod> {
  /**
   * Notifies the pod's worker of a change. Never blocks: the latest update
   * replaces any not yet consumed, but a kill, once recorded, is never lost.
   * After the pod has terminated further updates are ignored until
   * `syncKnownPods` forgets the UID; a pod that terminated is never restarted.
   */
  updatePod(options: UpdatePodOptions<R>): void;
  /** Every worker's work type and times now, for a debugging view. */
  workerViews(): PodWorkerView[];
  /**
   * Removes the workers of pods that are not in `desiredPods` and have
   * finished, starts terminating workers whose pod is no longer desired, and
   * from the first call on answers the query methods for unknown UIDs as
   * "already cleaned up". Returns the state of every worker kept; the caller
   * must send a fresh `create` for any desired pod missing from the result.
   */
  syncKnownPods(desiredPods: readonly ConfigPod[]): Map<string, PodWorkerSync>;

  /**
   * True once `syncTerminatingPod` has completed for the UID. For filtering the
   * desired set (admission); subsystems use the `shouldPod*` methods.
   */
  isPodKnownTerminated(uid: string): boolean;
  /**
   * True before the first `syncKnownPods`, and from the worker's first sight of
   * the pod until its containers are known to be stopped.
   */
  couldHaveRunningContainers(uid: string): boolean;
  /**
   * True once `syncTerminatedPod` has completed; for unknown UIDs, true once
   * `syncKnownPods` has run.
   */
  shouldPodBeFinished(uid: string): boolean;
  /** True from the moment termination is requested until the worker is forgotten. */
  isPodTerminationRequested(uid: string): boolean;
  /**
   * True once the worker has started terminating the pod's containers; for
   * unknown UIDs, true once `syncKnownPods` has run.
   */
  shouldPodContainersBeTerminating(uid: string): boolean;
  /**
   * True once all containers are stopped, so resources used by running
   * containers may be torn down; for unknown UIDs, true once `syncKnownPods` has run.
   */
  shouldPodRuntimeBeRemoved(uid: string): boolean;
  /**
   * True when all of the pod's content may be removed: it was evicted, or it
   * was deleted and has terminated; for unknown UIDs, true once `syncKnownPods` has run.
   */
  shouldPodContentBeRemoved(uid: string): boolean;
  /**
   * True while the started static pod with this full name (`name_namespace`)
   * is terminating and has not yet terminated; guards orphaned mirror pod cleanup.
   */
  isPodForMirrorPodTerminatingByFullName(podFullName: string): boolean;
}

/** The workers with their lifetime: what `newPodWorkers` returns. */
export interface RunnablePodWorkers<R extends RunningPod = RunningPod> extends PodWorkers<R> {
  /**
   * Resolves once `signal` has aborted and every worker has fully stopped:
   * in-flight syncs are aborted and awaited, and later updates are ignored.
   * Workers process updates from construction on; `run` only bounds their life.
   */
  run(options: { signal: AbortSignal }): Promise<void>;
}

/** Options of `newPodWorkers`. */
export interface PodWorkersOptions<S, R extends RunningPod = RunningPod> {
  /** The lifecycle operations the workers call. Required. */
  podSyncer: PodSyncer<S, R>;
  /** Where each sync reads the runtime's pod status. Required. */
  podCache: PodStatusCache<S>;
  /**
   * Whether a cached runtime status has no running container and no ready
   * sandbox (`isPodStatusCacheTerminal`). A terminal-phase pod seen for the
   * first time with such a status skips straight to `syncTerminatedPod`, as
   * after a kubelet restart. Required.
   */
  isPodStatusTerminal: (status: S) => boolean;
  /** Receives each pod's next resync after every sync. Required. */
  workQueue: PodWorkQueue;
  /** Resync after a successful sync, jittered up to +50% (kubelet `syncFrequency`). Default 60,000 ms. */
  resyncIntervalMs?: number | undefined;
  /** Retry after a failed sync, jittered up to +50%. Default 10,000 ms. */
  backOffPeriodMs?: number | undefined;
  /** Records `FailedSync` when a pod's status cannot be determined. Default: records nothing. */
  recorder?: EventRecorder | undefined;
  /** Where sync errors are logged. Default: no logging. */
  logger?: Logger | undefined;
  /** Time of every state transition and of the queue's delays. Default `realClock`. */
  clock?: Clock | undefined;
  /** The jitter source, a number in [0, 1). Default `Math.random`. */
  random?: (() => number) | undefined;
  /** Where the workers' metrics go. Default: recorded nowhere. */
  metrics?: PodWorkersMetrics | undefined;
}

/**
 * The pod workers' metrics, with the kubelet's names for an adapter to use
 * (`kubelet_pod_worker_duration_seconds`, `kubelet_containers_per_pod_count`).
 */
export interface PodWorkersMetrics {
  /**
   * Seconds from an update's `startTime` until the worker finished acting on
   * it, by operation: the update type (`create`, `update`, `sync`, `kill`), or
   * `terminated` once the pod is finished.
   */
  observePodWorkerDuration?(operationType: SyncPodType | "terminated", seconds: number): void;
  /** The number of containers of each pod the workers start. */
  observeContainersPerPod?(count: number): void;
}

/**
 * The lifecycle operations the workers drive (`podSyncer`). A pod is synced
 * until it reaches a terminal phase (`syncPod` resolves `true`) or something
 * decides it must stop; then `syncTerminatingPod` runs until it resolves,
 * then `syncTerminatedPod` until it resolves, and the pod is finished.
 *
 * Every method receives an `AbortSignal` that aborts when a newer update
 * makes the running call moot (termination requested, a shorter grace
 * period) or the workers stop; it should then reject promptly (upstream
 * returns `context.Canceled`), unless it already finished its work. A
 * rejection or a thrown error schedules a retry after a backoff.
 * Implementations are called for many pods at once, one call per UID at a time.
 *
 * `S` is the runtime's pod status type (upstream's `kubecontainer.PodStatus`),
 * as read from the {@link PodStatusCache}.
 */
export interface PodSyncer<S = unknown, R extends RunningPod = RunningPod> {
  /**
   * Configures the pod and starts or restarts its containers. Resolves `true`
   * once the pod has reached a terminal phase (Succeeded or Failed).
   */
  syncPod(
    signal: AbortSignal,
    updateType: SyncPodType,
    pod: ConfigPod,
    mirrorPod: ConfigPod | undefined,
    podStatus: S,
  ): Promise<boolean>;
  /**
   * Stops the pod's containers within `gracePeriod` seconds and records their
   * final status, applying `podStatusFn` when a kill supplied one. Called again,
   * with ever shorter grace periods, until it resolves.
   */
  syncTerminatingPod(
    signal: AbortSignal,
    pod: ConfigPod,
    podStatus: S,
    gracePeriod: number | undefined,
    podStatusFn: PodStatusFunc | undefined,
  ): Promise<void>;
  /**
   * Stops the containers of a runtime pod that has no config. Resolves only
   * once all of them are known to be stopped.
   */
  syncTerminatingRuntimePod(signal: AbortSignal, runningPod: R): Promise<void>;
  /**
   * Releases what must go right after the containers stopped (volumes,
   * devices) and writes the final status. Once it resolves the pod is finished
   * on this node.
   */
  syncTerminatedPod(signal: AbortSignal, pod: ConfigPod, podStatus: S): Promise<void>;
}

/**
 * The runtime pod status cache the workers read before each sync
 * (`kubecontainer.Cache`, kept fresh by PLEG).
 */
export interface PodStatusCache<S> {
  /**
   * The cached status of a pod, or `undefined` when the runtime has none
   * (upstream's `Get` returning an error).
   */
  get(uid: string): S | undefined;
  /**
   * Resolves with the pod's status once the cache holds one at least as new
   * as `minTime` (ms since the epoch); blocks until the next refresh otherwise,
   * so a worker never syncs on state older than its previous sync. Rejects if
   * the status cannot be determined or `signal` aborts.
   */
  getNewerThan(uid: string, minTime: number, signal: AbortSignal): Promise<S>;
  /**
   * Called once a sync of the pod has ended and its time is recorded: a cache
   * holding changes that sync caused may take them in now, rather than at its
   * next refresh (the kubelet's PLEG does, so the pod's next sync need not
   * wait a turn of the event loop). Optional.
   */
  syncEnded?(uid: string): void;
}

/**
 * The queue of pods due for a resync (`pkg/kubelet/util/queue.WorkQueue`).
 * The workers enqueue each pod after a sync; the kubelet's sync loop drains
 * it every second and turns the UIDs into `sync` updates.
 */
export interface PodWorkQueue {
  /** Schedules `uid` for `delayMs` from now, replacing any earlier schedule for it. */
  enqueue(uid: string, delayMs: number): void;
  /** Removes and returns every UID whose time has come. */
  getWork(): string[];
}

/** A pod worker as a debugging view shows it: its work type and its times in the clock's ms. */
export interface PodWorkerView {
  uid: string;
  /** `name_namespace`. */
  fullname: string;
  state: PodWorkerState;
  /** An update is pending or being worked on. */
  working: boolean;
  /** The worker has started the pod (a static pod may wait for its name's slot). */
  started: boolean;
  startedAt?: number;
  terminatingAt?: number;
  terminatedAt?: number;
  gracePeriodSeconds?: number;
  /** The worker is done with the pod. */
  finished: boolean;
}
