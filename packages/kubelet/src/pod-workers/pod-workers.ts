import { errorMessage } from "@reconcile/api";
import { type Clock, realClock } from "@reconcile/clock";
import { type EventRecorder, type Logger, noopEventRecorder, noopLogger } from "@reconcile/controller";
import { podRef } from "../pod-ref.js";
import type {
  ConfigPod,
  KillPodOptions,
  PodStatusCache,
  PodStatusFunc,
  PodSyncer,
  PodWorkerState,
  PodWorkerSync,
  PodWorkersMetrics,
  PodWorkersOptions,
  PodWorkQueue,
  RunnablePodWorkers,
  RunningPod,
  SyncPodType,
  UpdatePodOptions,
} from "./types.js";

/** Creates the kubelet's pod workers (`newPodWorkers`). */
export function newPodWorkers<S, R extends RunningPod = RunningPod>(
  options: PodWorkersOptions<S, R>,
): RunnablePodWorkers<R> {
  return new DefaultPodWorkers(options);
}

/**
 * Kills a pod and resolves once its containers are stopped (upstream's
 * `eviction.KillPodFunc`); `gracePeriodOverride` in seconds.
 */
export type KillPodFunc = (
  pod: ConfigPod,
  isEvicted: boolean,
  gracePeriodOverride?: number | undefined,
  statusFn?: PodStatusFunc | undefined,
) => Promise<void>;

/**
 * Returns a function that kills a pod through the workers and resolves once
 * its containers are stopped (`killPodNow`, injected into eviction and
 * preemption). It rejects with "timeout waiting to kill pod", after recording
 * an `ExceededGracePeriod` warning, if that takes longer than
 * max(10 s, 1.5 × the grace period).
 */
export function killPodNow(
  podWorkers: Pick<RunnablePodWorkers, "updatePod">,
  recorder: EventRecorder = noopEventRecorder,
  clock: Clock = realClock,
): KillPodFunc {
  return (pod, isEvicted, gracePeriodOverride, statusFn) => {
    const gracePeriod = gracePeriodOverride ?? pod.spec?.terminationGracePeriodSeconds ?? 0;
    // integer seconds, as upstream's int64 arithmetic
    const timeoutSeconds = Math.max(10, gracePeriod + Math.trunc(gracePeriod / 2));
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const timer = clock.setTimeout(() => {
        if (settled) return;
        settled = true;
        recorder.event(
          podRef(pod),
          "Warning",
          "ExceededGracePeriod",
          "Container runtime did not kill the pod within specified grace period.",
        );
        reject(new Error("timeout waiting to kill pod"));
      }, timeoutSeconds * 1000);
      podWorkers.updatePod({
        pod,
        updateType: "kill",
        killPodOptions: {
          onCompleted: () => {
            if (settled) return;
            settled = true;
            clock.clearTimeout(timer);
            resolve();
          },
          evict: isEvicted,
          podStatusFunc: statusFn,
          podTerminationGracePeriodSecondsOverride: gracePeriodOverride,
        },
      });
    });
  };
}

/**
 * The grace period (seconds) a terminating pod gets: the smallest of the one
 * already granted, the API server's `deletionGracePeriodSeconds` and the
 * kill's override, else the pod's `terminationGracePeriodSeconds`, and never
 * below 1 (`calculateEffectiveGracePeriod`). `shortened` says it is smaller
 * than the one already granted, so an in-flight termination must restart.
 */
export function calculateEffectiveGracePeriod(
  currentGracePeriod: number,
  pod: ConfigPod,
  options: KillPodOptions | undefined,
): { gracePeriod: number; shortened: boolean } {
  let gracePeriod = currentGracePeriod;
  // the API server's value is the bedrock truth
  const deletionGracePeriod = pod.metadata?.deletionGracePeriodSeconds;
  if (deletionGracePeriod != null && (gracePeriod === 0 || deletionGracePeriod < gracePeriod)) {
    gracePeriod = deletionGracePeriod;
  }
  // other parts of the kubelet (eviction) may ask for a faster termination
  const override = options?.podTerminationGracePeriodSecondsOverride;
  if (override != null && (gracePeriod === 0 || override < gracePeriod)) {
    gracePeriod = override;
  }
  const specGracePeriod = pod.spec?.terminationGracePeriodSeconds;
  if (gracePeriod === 0 && specGracePeriod != null) gracePeriod = specGracePeriod;
  if (gracePeriod < 1) gracePeriod = 1;
  return { gracePeriod, shortened: currentGracePeriod !== 0 && currentGracePeriod !== gracePeriod };
}

/** Upstream's `NetworkNotReadyErrorMsg`: a sync failing with it is retried after about a second. */
export const networkNotReadyErrorMessage = "network is not ready";

/** The annotation naming a pod's config source; anything but "api" is a static pod. */
export const configSourceAnnotationKey = "kubernetes.io/config.source";

/** Whether a pod came from a static source (a file or URL), not the API server (`IsStaticPod`). */
export function isStaticPod(pod: ConfigPod): boolean {
  const source = pod.metadata?.annotations?.[configSourceAnnotationKey];
  return source !== undefined && source !== "api";
}

const workerResyncIntervalJitterFactor = 0.5;
const workerBackOffPeriodJitterFactor = 0.5;
const backOffOnTransientErrorPeriodMs = 1000;

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

/** @internal hooks for tests: called after each wake-up of a worker, before it takes its update. */
export interface PodWorkersTestHooks {
  workerWake?: ((uid: string) => void | Promise<void>) | undefined;
}

/** @internal exported for tests; use {@link newPodWorkers}. */
export class DefaultPodWorkers<S, R extends RunningPod = RunningPod> implements RunnablePodWorkers<R> {
  readonly #podSyncer: PodSyncer<S, R>;
  readonly #podCache: PodStatusCache<S>;
  readonly #isPodStatusTerminal: (status: S) => boolean;
  readonly #workQueue: PodWorkQueue;
  readonly #resyncIntervalMs: number;
  readonly #backOffPeriodMs: number;
  readonly #recorder: EventRecorder;
  readonly #logger: Logger;
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #metrics: PodWorkersMetrics;
  readonly #hooks: PodWorkersTestHooks;

  /** True once `syncKnownPods` has run: every pod that should exist has been sent. */
  #podsSynced = false;
  readonly #podUpdates = new Map<string, WorkerChannel>();
  readonly #podSyncStatuses = new Map<string, PodSyncStatus<R>>();
  readonly #startedStaticPodsByFullname = new Map<string, string>();
  readonly #waitingToStartStaticPodsByFullname = new Map<string, string[]>();
  readonly #workerLoops = new Set<Promise<void>>();
  readonly #stop = new AbortController();

  constructor(options: PodWorkersOptions<S, R>, hooks: PodWorkersTestHooks = {}) {
    this.#podSyncer = options.podSyncer;
    this.#podCache = options.podCache;
    this.#isPodStatusTerminal = options.isPodStatusTerminal;
    this.#workQueue = options.workQueue;
    this.#resyncIntervalMs = validDuration(options.resyncIntervalMs, 60_000, "resyncIntervalMs");
    this.#backOffPeriodMs = validDuration(options.backOffPeriodMs, 10_000, "backOffPeriodMs");
    this.#recorder = options.recorder ?? noopEventRecorder;
    this.#logger = options.logger ?? noopLogger;
    this.#clock = options.clock ?? realClock;
    this.#random = options.random ?? Math.random;
    this.#metrics = options.metrics ?? {};
    this.#hooks = hooks;
  }

  async run({ signal }: { signal: AbortSignal }): Promise<void> {
    if (!signal.aborted) {
      await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
    }
    this.#stop.abort();
    for (const status of this.#podSyncStatuses.values()) status.abort?.abort();
    for (const channel of this.#podUpdates.values()) channel.close();
    while (this.#workerLoops.size > 0) await Promise.all([...this.#workerLoops]);
  }

  // ---- queries --------------------------------------------------------------------------------

  isPodKnownTerminated(uid: string): boolean {
    const status = this.#podSyncStatuses.get(uid);
    return status !== undefined && isTerminated(status);
  }

  couldHaveRunningContainers(uid: string): boolean {
    const status = this.#podSyncStatuses.get(uid);
    // once synced, a pod without status is known not to be running
    return status !== undefined ? !isTerminated(status) : !this.#podsSynced;
  }

  shouldPodBeFinished(uid: string): boolean {
    const status = this.#podSyncStatuses.get(uid);
    return status !== undefined ? status.finished : this.#podsSynced;
  }

  isPodTerminationRequested(uid: string): boolean {
    const status = this.#podSyncStatuses.get(uid);
    return status !== undefined && isTerminationRequested(status);
  }

  shouldPodContainersBeTerminating(uid: string): boolean {
    const status = this.#podSyncStatuses.get(uid);
    // true only once the worker has seen the termination: syncPod will not run again
    return status !== undefined ? status.startedTerminating : this.#podsSynced;
  }

  shouldPodRuntimeBeRemoved(uid: string): boolean {
    const status = this.#podSyncStatuses.get(uid);
    return status !== undefined ? isTerminated(status) : this.#podsSynced;
  }

  shouldPodContentBeRemoved(uid: string): boolean {
    const status = this.#podSyncStatuses.get(uid);
    if (status === undefined) return this.#podsSynced;
    return status.evicted || (status.deleted && isTerminated(status));
  }

  isPodForMirrorPodTerminatingByFullName(podFullName: string): boolean {
    const uid = this.#startedStaticPodsByFullname.get(podFullName);
    if (uid === undefined) return false;
    const status = this.#podSyncStatuses.get(uid);
    return status !== undefined && isTerminationRequested(status) && !isTerminated(status);
  }

  // ---- updatePod ------------------------------------------------------------------------------

  updatePod(input: UpdatePodOptions<R>): void {
    if (this.#stop.signal.aborted) return;
    const options: UpdatePodOptions<R> = { ...input };
    const identity = this.#identify(options);
    if (identity === undefined) return;
    const { uid, isRuntimePod } = identity;
    const now = this.#clock.now();
    const { status, firstTime } = this.#syncStatusOf(identity, options, now);

    // Once a runtime pod is observed it must be driven to completion; if a
    // real pod is known, its spec is used instead.
    let pod: ConfigPod;
    if (isRuntimePod) {
      status.observedRuntime = true;
      const known = status.pendingUpdate?.pod ?? status.activeUpdate?.pod;
      if (known !== undefined) {
        pod = known;
        options.pod = known;
        options.runningPod = undefined;
      } else {
        pod = runningPodToApiPod(options.runningPod!);
      }
    } else {
      pod = options.pod!;
    }

    // A create for a UID already terminating means the UID was reused (static
    // pods with a fixed UID): it starts again only after the old instance has
    // finished and syncKnownPods has forgotten it.
    if (!firstTime && isTerminationRequested(status) && options.updateType === "create") {
      status.restartRequested = true;
      return;
    }
    // a finished UID cannot re-enter until housekeeping forgets it
    if (status.finished) return;

    const becameTerminating = this.#requestTermination(status, pod, options, isRuntimePod, now);
    const kill = this.#settleKillOptions(status, pod, options, isRuntimePod);
    if (kill === "ignore") return;

    const channel = this.#channelOf(uid, status, pod);
    // keep the oldest start time, to measure the longest wait
    const pendingStart = status.pendingUpdate?.startTime;
    if (pendingStart !== undefined && (options.startTime === undefined || pendingStart < options.startTime)) {
      options.startTime = pendingStart;
    }
    status.pendingUpdate = options;
    status.working = true;
    channel.send();

    if ((becameTerminating || kill === "shortened") && status.abort !== undefined) {
      status.abort.abort();
    }
  }

  /**
   * The UID, name and namespace an update is for: its pod's, or its running
   * pod's when it has no config pod (which can only be killed). Undefined,
   * logged, for an update that can do nothing.
   */
  #identify(
    options: UpdatePodOptions<R>,
  ): { uid: string; name: string; namespace: string; isRuntimePod: boolean } | undefined {
    let identity: { uid: string; name: string; namespace: string; isRuntimePod: boolean };
    if (options.pod === undefined) {
      const runningPod = options.runningPod;
      if (runningPod === undefined) {
        this.#logger.error(
          { updateType: options.updateType },
          "Pod update has neither a pod nor a running pod",
        );
        return undefined;
      }
      if (options.updateType !== "kill") {
        this.#logger.info(
          {
            pod: `${runningPod.namespace}/${runningPod.name}`,
            podUID: runningPod.id,
            updateType: options.updateType,
          },
          "Pod update is ignored, runtime pods can only be killed",
        );
        return undefined;
      }
      identity = {
        uid: runningPod.id,
        name: runningPod.name,
        namespace: runningPod.namespace,
        isRuntimePod: true,
      };
    } else {
      options.runningPod = undefined;
      const { uid = "", name = "", namespace = "" } = options.pod.metadata ?? {};
      identity = { uid, name, namespace, isRuntimePod: false };
    }
    if (identity.uid === "") {
      this.#logger.error(
        { pod: `${identity.namespace}/${identity.name}`, updateType: options.updateType },
        "Pod update has no UID, ignored",
      );
      return undefined;
    }
    return identity;
  }

  /** The UID's sync status, made on its first update. */
  #syncStatusOf(
    identity: { uid: string; name: string; namespace: string },
    options: UpdatePodOptions<R>,
    now: number,
  ): { status: PodSyncStatus<R>; firstTime: boolean } {
    const existing = this.#podSyncStatuses.get(identity.uid);
    if (existing !== undefined) return { status: existing, firstTime: false };
    const status = newPodSyncStatus<R>(now, buildPodFullName(identity.name, identity.namespace));
    // After a kubelet restart a terminal pod whose containers are all gone has
    // already been through termination: it must not count as active for
    // admission, yet still gets its syncTerminatedPod (upstream issue 105523).
    const phase = options.pod?.status?.phase;
    if (phase === "Failed" || phase === "Succeeded") {
      const cached = this.#podCache.get(identity.uid);
      if (cached !== undefined && this.#isPodStatusTerminal(cached)) {
        status.terminatingAt = now;
        status.terminatedAt = now;
        status.startedTerminating = true;
      }
    }
    this.#podSyncStatuses.set(identity.uid, status);
    return { status, firstTime: true };
  }

  /** Whether this update starts the pod's termination: a runtime pod, a deleted or finished pod, or a kill. */
  #requestTermination(
    status: PodSyncStatus<R>,
    pod: ConfigPod,
    options: UpdatePodOptions<R>,
    isRuntimePod: boolean,
    now: number,
  ): boolean {
    if (isTerminationRequested(status)) return false;
    const phase = pod.status?.phase;
    const finished = phase === "Failed" || phase === "Succeeded";
    if (isRuntimePod || pod.metadata?.deletionTimestamp != null) {
      status.deleted = true;
    } else if (!finished) {
      if (options.updateType !== "kill") return false;
      if (options.killPodOptions?.evict) status.evicted = true;
    }
    status.terminatingAt = now;
    return true;
  }

  /**
   * Once terminating, every update is a kill and the grace period only
   * shrinks; kill options mean nothing to a pod that is not terminating.
   * "ignore": a runtime pod's kill seen through a stale runtime cache after
   * termination, which waits for the worker to finish; "shortened": the grace
   * period was shortened.
   */
  #settleKillOptions(
    status: PodSyncStatus<R>,
    pod: ConfigPod,
    options: UpdatePodOptions<R>,
    isRuntimePod: boolean,
  ): "ignore" | "shortened" | "unchanged" {
    if (isTerminated(status)) {
      if (isRuntimePod) return "ignore";
      this.#notifyCompleted(options.killPodOptions?.onCompleted);
      options.killPodOptions = undefined;
      return "unchanged";
    }
    if (!isTerminationRequested(status)) {
      if (options.killPodOptions !== undefined) {
        this.#notifyCompleted(options.killPodOptions.onCompleted);
        options.killPodOptions = undefined;
      }
      return "unchanged";
    }
    const killPodOptions: KillPodOptions = { ...options.killPodOptions };
    if (killPodOptions.onCompleted) status.notifyPostTerminating.push(killPodOptions.onCompleted);
    if (killPodOptions.podStatusFunc) status.statusPostTerminating.push(killPodOptions.podStatusFunc);
    const { gracePeriod, shortened } = calculateEffectiveGracePeriod(status.gracePeriod, pod, killPodOptions);
    status.gracePeriod = gracePeriod;
    // every later update carries the kill, so the terminating sync never recomputes it
    killPodOptions.podTerminationGracePeriodSecondsOverride = gracePeriod;
    options.killPodOptions = killPodOptions;
    return shortened ? "shortened" : "unchanged";
  }

  /** The UID's update channel, and its worker started on the first update (static pods queue by full name). */
  #channelOf(uid: string, status: PodSyncStatus<R>, pod: ConfigPod): WorkerChannel {
    let channel = this.#podUpdates.get(uid);
    if (channel !== undefined) return channel;
    channel = new WorkerChannel();
    this.#podUpdates.set(uid, channel);
    // static pods start in the order updatePod first saw them
    if (isStaticPod(pod)) {
      const waiting = this.#waitingToStartStaticPodsByFullname.get(status.fullname);
      if (waiting) waiting.push(uid);
      else this.#waitingToStartStaticPodsByFullname.set(status.fullname, [uid]);
    }
    this.#startWorker(uid, channel);
    return channel;
  }

  // ---- syncKnownPods --------------------------------------------------------------------------

  syncKnownPods(desiredPods: readonly ConfigPod[]): Map<string, PodWorkerSync> {
    const workers = new Map<string, PodWorkerSync>();
    const known = new Set<string>();
    for (const pod of desiredPods) known.add(pod.metadata?.uid ?? "");

    this.#podsSynced = true;
    for (const [uid, status] of this.#podSyncStatuses) {
      // Forget a UID that is no longer desired (bounding what is kept for
      // deleted pods) or that was re-created while terminating (so it can start
      // again soon); the caller sends a fresh create for a desired pod it does
      // not get back.
      const orphan = !known.has(uid);
      if ((status.restartRequested || orphan) && this.#removeTerminatedWorker(uid, status, orphan)) continue;

      const sync: PodWorkerSync = { state: workType(status), orphan, hasConfig: false, static: false };
      const configPod =
        status.activeUpdate !== undefined ? status.activeUpdate.pod : status.pendingUpdate?.pod;
      if (configPod !== undefined) {
        sync.hasConfig = true;
        sync.static = isStaticPod(configPod);
      }
      workers.set(uid, sync);
    }
    return workers;
  }

  // ---- internals, exposed to tests --------------------------------------------------------------

  /** @internal the live state of a UID */
  inspectStatus(uid: string): PodSyncStatus<R> | undefined {
    return this.#podSyncStatuses.get(uid);
  }

  /** @internal every UID with state */
  inspectUIDs(): string[] {
    return [...this.#podSyncStatuses.keys()];
  }

  /** @internal UIDs with a live worker channel */
  inspectChannels(): string[] {
    return [...this.#podUpdates.keys()];
  }

  /** @internal started static pods by full name */
  inspectStartedStaticPods(): Map<string, string> {
    return new Map(this.#startedStaticPodsByFullname);
  }

  /** @internal static pods waiting to start, by full name */
  inspectWaitingStaticPods(): Map<string, string[]> {
    return new Map([...this.#waitingToStartStaticPodsByFullname].map(([k, v]) => [k, [...v]]));
  }

  // ---- the worker -----------------------------------------------------------------------------

  #startWorker(uid: string, channel: WorkerChannel): void {
    const loop = this.#podWorkerLoop(uid, channel).catch((error: unknown) => {
      // a defect in the loop itself: keep the process alive and say so
      this.#logger.error({ podUID: uid, err: errorMessage(error) }, "Pod worker stopped unexpectedly");
    });
    this.#workerLoops.add(loop);
    void loop.finally(() => this.#workerLoops.delete(loop));
  }

  /**
   * Drives one UID through its phases, one update at a time: wait to start
   * (one started static pod per full name), sync, terminating, terminated.
   * Failed syncs are retried when the kubelet sends the next update, which its
   * sync loop does once the work queue says the backoff has passed; phase
   * transitions requeue themselves at once.
   */
  async #podWorkerLoop(uid: string, channel: WorkerChannel): Promise<void> {
    let lastSyncTime = 0;
    while (await channel.receive()) {
      if (this.#hooks.workerWake) await this.#hooks.workerWake(uid);
      // a stop ends the worker even with an update pending
      if (this.#stop.signal.aborted) return;
      const start = this.#startPodSync(uid);
      if (start === undefined) continue;
      if (!start.canEverStart) {
        this.#observeDuration("terminated", start.update.startTime);
        return;
      }
      if (!start.canStart) continue;
      const { signal, workType: work, update } = start;

      let isTerminal = false;
      let failure: { error: unknown } | undefined;
      let status: S | undefined;
      try {
        // Unless only a runtime pod is known, wait for the cache to be at least as
        // new as the previous sync, so a sync never acts on older state.
        if (update.runningPod === undefined) {
          try {
            status = await this.#podCache.getNewerThan(uid, lastSyncTime, this.#stop.signal);
          } catch (error) {
            if (!this.#stop.signal.aborted) {
              this.#recorder.event(
                podRef(update.pod!),
                "Warning",
                "FailedSync",
                `error determining status: ${errorMessage(error)}`,
              );
            }
            throw error;
          }
        }
        try {
          if (work === "terminated") {
            await this.#podSyncer.syncTerminatedPod(signal, update.pod!, status as S);
          } else if (work === "terminating") {
            const gracePeriod = update.killPodOptions?.podTerminationGracePeriodSecondsOverride;
            const podStatusFn = this.#acknowledgeTerminating(uid);
            if (update.runningPod !== undefined) {
              await this.#podSyncer.syncTerminatingRuntimePod(signal, update.runningPod);
            } else {
              await this.#podSyncer.syncTerminatingPod(
                signal,
                update.pod!,
                status as S,
                gracePeriod,
                podStatusFn,
              );
            }
          } else {
            isTerminal = await this.#podSyncer.syncPod(
              signal,
              update.updateType,
              update.pod!,
              update.mirrorPod,
              status as S,
            );
          }
        } finally {
          lastSyncTime = this.#clock.now();
          this.#podCache.syncEnded?.(uid);
        }
      } catch (error) {
        failure = { error };
      }

      const podUID = uid;
      let phaseTransition = false;
      if (failure !== undefined) {
        if (signal.aborted) {
          // a newer update (or the stop) cancelled this sync; that update is already pending
          this.#logger.debug({ podUID, workType: work }, "Sync exited after cancellation");
        } else {
          this.#logger.error(
            { podUID, workType: work, err: errorMessage(failure.error) },
            "Error syncing pod, skipping",
          );
        }
      } else if (work === "terminated") {
        this.#completeTerminated(uid);
        this.#observeDuration("terminated", update.startTime);
        return;
      } else if (work === "terminating") {
        // a runtime pod has no config to clean up after: it is done
        if (update.runningPod !== undefined) {
          this.#completeTerminatingRuntimePod(uid);
          this.#observeDuration(update.updateType, update.startTime);
          return;
        }
        this.#completeTerminating(uid);
        phaseTransition = true;
      } else if (isTerminal) {
        this.#completeSync(uid);
        phaseTransition = true;
      }
      this.#completeWork(uid, phaseTransition, failure?.error);
      this.#observeDuration(update.updateType, update.startTime);
    }
  }

  /**
   * Takes the pending update (`startPodSync`) and decides whether the pod is
   * started or may start. Returns undefined when there was nothing to do.
   */
  #startPodSync(uid: string):
    | {
        signal: AbortSignal;
        workType: PodWorkerState;
        update: UpdatePodOptions<R>;
        canStart: boolean;
        canEverStart: boolean;
      }
    | undefined {
    const status = this.#podSyncStatuses.get(uid);
    if (status === undefined) return undefined; // forgotten: the channel is closed, the loop ends
    if (status.pendingUpdate === undefined) {
      status.working = false;
      return undefined;
    }

    // the work type is derived from the state now, not from the update
    const work = workType(status);
    const update = status.pendingUpdate;
    status.pendingUpdate = undefined;
    this.#podUpdates.get(uid)?.drain();

    if (status.abort === undefined || status.abort.signal.aborted) status.abort = new AbortController();
    const signal = status.abort.signal;

    if (status.startedAt !== 0) {
      mergeLastUpdate(status, update);
      return { signal, workType: work, update, canStart: true, canEverStart: true };
    }
    // a runtime pod "starts" straight into terminating
    if (update.runningPod !== undefined && work === "terminating") {
      mergeLastUpdate(status, update);
      return { signal, workType: work, update, canStart: true, canEverStart: true };
    }
    if (update.pod === undefined) {
      mergeLastUpdate(status, update);
      return { signal, workType: work, update, canStart: false, canEverStart: false };
    }

    const { canStart, canEverStart } = this.#allowPodStart(update.pod);
    if (!canEverStart) {
      this.#cleanupUnstartedPod(uid, status);
      return { signal, workType: work, update, canStart, canEverStart };
    }
    if (!canStart) {
      // the only path that does not start the pod: the update waits for the next try
      status.pendingUpdate = update;
      status.working = false;
      return { signal, workType: work, update, canStart, canEverStart };
    }
    status.startedAt = this.#clock.now();
    mergeLastUpdate(status, update);
    try {
      this.#metrics.observeContainersPerPod?.(update.pod.spec?.containers?.length ?? 0);
    } catch (error) {
      this.#logger.error({ err: errorMessage(error) }, "Recording a pod worker metric threw");
    }
    return { signal, workType: work, update, canStart: true, canEverStart: true };
  }

  /** {@link allowPodStart} on this instance's state; a static pod that must wait is retried after the backoff. */
  #allowPodStart(pod: ConfigPod): { canStart: boolean; canEverStart: boolean } {
    const uid = pod.metadata?.uid ?? "";
    const verdict = allowPodStart(pod, {
      podSyncStatuses: this.#podSyncStatuses,
      startedStaticPodsByFullname: this.#startedStaticPodsByFullname,
      waitingToStartStaticPodsByFullname: this.#waitingToStartStaticPodsByFullname,
    });
    if (!verdict.canEverStart && !this.#podSyncStatuses.has(uid)) {
      this.#logger.error({ podUID: uid }, "Pod sync status does not exist, the worker should not be running");
    }
    if (verdict.canEverStart && !verdict.canStart) {
      this.#workQueue.enqueue(uid, this.#jitter(this.#backOffPeriodMs, workerBackOffPeriodJitterFactor));
    }
    return verdict;
  }

  /** A pod told to terminate before it could start finishes without any sync (`cleanupUnstartedPod`). */
  #cleanupUnstartedPod(uid: string, status: PodSyncStatus<R>): void {
    this.#cleanupPodUpdates(uid);
    status.finished = true;
    status.working = false;
    status.terminatedAt = this.#clock.now();
    this.#releaseStaticPodSlot(uid, status);
  }

  /** Marks that the worker has seen the termination; returns the latest kill's status function. */
  #acknowledgeTerminating(uid: string): PodStatusFunc | undefined {
    const status = this.#podSyncStatuses.get(uid);
    if (status === undefined) return undefined;
    if (status.terminatingAt !== 0) status.startedTerminating = true;
    return status.statusPostTerminating.at(-1);
  }

  /** syncPod reported the pod terminal: move to terminating at once (`completeSync`). */
  #completeSync(uid: string): void {
    const status = this.#podSyncStatuses.get(uid);
    if (status === undefined) return;
    if (status.terminatingAt === 0) status.terminatingAt = this.#clock.now();
    status.startedTerminating = true;
    this.#requeueLastPodUpdate(uid, status);
  }

  /** All containers stopped: the pod is terminated, kills waiting on it complete (`completeTerminating`). */
  #completeTerminating(uid: string): void {
    const status = this.#podSyncStatuses.get(uid);
    if (status === undefined) return;
    status.terminatedAt = this.#clock.now();
    const notify = status.notifyPostTerminating;
    status.notifyPostTerminating = [];
    status.statusPostTerminating = [];
    this.#requeueLastPodUpdate(uid, status);
    for (const onCompleted of notify) this.#notifyCompleted(onCompleted);
  }

  /** A runtime pod's containers are stopped: nothing is kept (`completeTerminatingRuntimePod`). */
  #completeTerminatingRuntimePod(uid: string): void {
    this.#cleanupPodUpdates(uid);
    const status = this.#podSyncStatuses.get(uid);
    if (status === undefined) return;
    status.terminatedAt = this.#clock.now();
    status.finished = true;
    status.working = false;
    this.#releaseStaticPodSlot(uid, status);
    this.#podSyncStatuses.delete(uid);
  }

  /** syncTerminatedPod succeeded: the pod is finished and its worker ends (`completeTerminated`). */
  #completeTerminated(uid: string): void {
    this.#cleanupPodUpdates(uid);
    const status = this.#podSyncStatuses.get(uid);
    if (status === undefined) return;
    status.finished = true;
    status.working = false;
    this.#releaseStaticPodSlot(uid, status);
  }

  /**
   * Schedules the pod's next sync in the work queue — at once after a phase
   * transition, after the jittered resync interval on success, after about a
   * second when the network is not ready, after the jittered backoff on any
   * other error — then runs any pending update (`completeWork`).
   */
  #completeWork(uid: string, phaseTransition: boolean, syncError: unknown): void {
    if (phaseTransition) {
      this.#workQueue.enqueue(uid, 0);
    } else if (syncError === undefined) {
      this.#workQueue.enqueue(uid, this.#jitter(this.#resyncIntervalMs, workerResyncIntervalJitterFactor));
    } else if (errorMessage(syncError).includes(networkNotReadyErrorMessage)) {
      this.#workQueue.enqueue(
        uid,
        this.#jitter(backOffOnTransientErrorPeriodMs, workerBackOffPeriodJitterFactor),
      );
    } else {
      this.#workQueue.enqueue(uid, this.#jitter(this.#backOffPeriodMs, workerBackOffPeriodJitterFactor));
    }

    const status = this.#podSyncStatuses.get(uid);
    if (status === undefined) return;
    if (status.pendingUpdate !== undefined) this.#podUpdates.get(uid)?.send();
    else status.working = false;
  }

  /**
   * Forgets a finished worker so its UID may be used again; drives an orphaned
   * one towards termination instead (`removeTerminatedWorker`). True when removed.
   */
  #removeTerminatedWorker(uid: string, status: PodSyncStatus<R>, orphaned: boolean): boolean {
    if (!status.finished) {
      if (!orphaned) return false;
      // no config will tell us more about an orphan: the worker drives it to the end
      status.deleted = true;
      if (status.startedAt !== 0 || status.observedRuntime) {
        if (!isTerminationRequested(status)) {
          status.terminatingAt = this.#clock.now();
          const activePod = status.activeUpdate?.pod;
          status.gracePeriod =
            activePod !== undefined
              ? calculateEffectiveGracePeriod(status.gracePeriod, activePod, undefined).gracePeriod
              : 1;
        }
        this.#requeueLastPodUpdate(uid, status);
        return false;
      }
      // never started and never seen running: nothing to tear down
    }
    this.#podSyncStatuses.delete(uid);
    this.#cleanupPodUpdates(uid);
    this.#releaseStaticPodSlot(uid, status);
    return true;
  }

  /** Replays the last update when nothing is pending, to run the next phase at once (`requeueLastPodUpdate`). */
  #requeueLastPodUpdate(uid: string, status: PodSyncStatus<R>): void {
    if (status.pendingUpdate !== undefined || status.activeUpdate === undefined) return;
    status.pendingUpdate = { ...status.activeUpdate };
    status.working = true;
    this.#podUpdates.get(uid)?.send();
  }

  /** Closes the UID's channel so its worker ends (`cleanupPodUpdates`). */
  #cleanupPodUpdates(uid: string): void {
    this.#podUpdates.get(uid)?.close();
    this.#podUpdates.delete(uid);
  }

  #releaseStaticPodSlot(uid: string, status: PodSyncStatus<R>): void {
    if (this.#startedStaticPodsByFullname.get(status.fullname) === uid) {
      this.#startedStaticPodsByFullname.delete(status.fullname);
    }
  }

  /** Calls a kill's completion callback; a throwing callback is logged, never breaks a worker. */
  #notifyCompleted(onCompleted: (() => void) | undefined): void {
    if (onCompleted === undefined) return;
    try {
      onCompleted();
    } catch (error) {
      this.#logger.error({ err: errorMessage(error) }, "Kill completion callback threw");
    }
  }

  /** Observes how long the worker took to act on an update, when its start time is known. */
  #observeDuration(operationType: SyncPodType | "terminated", startTime: number | undefined): void {
    if (startTime === undefined || startTime === 0) return;
    try {
      this.#metrics.observePodWorkerDuration?.(operationType, (this.#clock.now() - startTime) / 1000);
    } catch (error) {
      this.#logger.error({ err: errorMessage(error) }, "Recording a pod worker metric threw");
    }
  }

  /** `wait.Jitter`: d plus up to `factor`·d. */
  #jitter(durationMs: number, factor: number): number {
    return durationMs + this.#random() * factor * durationMs;
  }
}

/**
 * A channel of capacity one carrying "there is an update" to a worker: a send
 * never blocks and is dropped when one is already waiting.
 */
class WorkerChannel {
  #signaled = false;
  #closed = false;
  #wake: (() => void) | undefined;

  send(): void {
    if (this.#closed || this.#signaled) return;
    this.#signaled = true;
    this.#notify();
  }

  /** Empties the channel without waking anyone. */
  drain(): void {
    this.#signaled = false;
  }

  close(): void {
    this.#closed = true;
    this.#notify();
  }

  /** Resolves true with the next signal, false once closed and empty (Go's `range` over a channel). */
  async receive(): Promise<boolean> {
    for (;;) {
      if (this.#signaled) {
        this.#signaled = false;
        return true;
      }
      if (this.#closed) return false;
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
    }
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}

/** The pod workers' bookkeeping of static pods, by full name. @internal exported for tests */
export interface StaticPodStarts {
  readonly podSyncStatuses: ReadonlyMap<
    string,
    Pick<PodSyncStatus, "fullname" | "terminatingAt" | "terminatedAt">
  >;
  readonly startedStaticPodsByFullname: Map<string, string>;
  readonly waitingToStartStaticPodsByFullname: Map<string, string[]>;
}

/**
 * Whether the pod may start now, and whether it ever can (`allowPodStart`).
 * Only static pods wait: one started UID per full name, the others in the
 * order they arrived, skipping waiters already gone or terminating. A pod
 * allowed to start is recorded as the started one for its name.
 * @internal exported for tests
 */
export function allowPodStart(
  pod: ConfigPod,
  state: StaticPodStarts,
): { canStart: boolean; canEverStart: boolean } {
  if (!isStaticPod(pod)) return { canStart: true, canEverStart: true };
  const uid = pod.metadata?.uid ?? "";
  const status = state.podSyncStatuses.get(uid);
  if (status === undefined || status.terminatingAt !== 0) return { canStart: false, canEverStart: false };
  if (!allowStaticPodStart(status.fullname, uid, state)) return { canStart: false, canEverStart: true };
  return { canStart: true, canEverStart: true };
}

function allowStaticPodStart(fullname: string, uid: string, state: StaticPodStarts): boolean {
  const startedUID = state.startedStaticPodsByFullname.get(fullname);
  if (startedUID !== undefined) return startedUID === uid;

  let waiting = state.waitingToStartStaticPodsByFullname.get(fullname) ?? [];
  for (let i = 0; i < waiting.length; i++) {
    const waitingUID = waiting[i]!;
    const status = state.podSyncStatuses.get(waitingUID);
    // skip waiters that are gone or already terminating
    if (status === undefined || status.terminatingAt !== 0 || status.terminatedAt !== 0) continue;
    if (waitingUID !== uid) {
      state.waitingToStartStaticPodsByFullname.set(fullname, waiting.slice(i));
      return false;
    }
    waiting = waiting.slice(i + 1);
    break;
  }
  if (waiting.length > 0) state.waitingToStartStaticPodsByFullname.set(fullname, waiting);
  else state.waitingToStartStaticPodsByFullname.delete(fullname);
  state.startedStaticPodsByFullname.set(fullname, uid);
  return true;
}

function newPodSyncStatus<R extends RunningPod>(now: number, fullname: string): PodSyncStatus<R> {
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

function isTerminationRequested(status: PodSyncStatus<RunningPod>): boolean {
  return status.terminatingAt !== 0;
}

function isTerminated(status: PodSyncStatus<RunningPod>): boolean {
  return status.terminatedAt !== 0;
}

/** The phase the next sync runs in (`WorkType`), derived from state, not from the update. */
function workType(status: PodSyncStatus<RunningPod>): PodWorkerState {
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
function mergeLastUpdate<R extends RunningPod>(status: PodSyncStatus<R>, other: UpdatePodOptions<R>): void {
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
function buildPodFullName(name: string, namespace: string): string {
  return `${name}_${namespace}`;
}

/** The minimal pod a runtime pod stands for (`ToAPIPod`). */
function runningPodToApiPod(runningPod: RunningPod): ConfigPod {
  return {
    metadata: { uid: runningPod.id, name: runningPod.name, namespace: runningPod.namespace },
    spec: { containers: [] },
  };
}

function validDuration(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < 0) {
    throw new RangeError(`${name} must be a finite number of milliseconds ≥ 0, got ${value}`);
  }
  return value;
}
