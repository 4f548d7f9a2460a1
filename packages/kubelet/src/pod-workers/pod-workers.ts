import { setMaxListeners } from "node:events";
import { errorMessage } from "@reconcile/api";
import { type Clock, realClock } from "@reconcile/clock";
import { type EventRecorder, type Logger, noopEventRecorder, noopLogger } from "@reconcile/controller";
import { podRef } from "../pod-ref.js";
import { calculateEffectiveGracePeriod } from "./kill-pod.js";
import { PodStates } from "./pod-states.js";
import {
  buildPodFullName,
  isTerminated,
  isTerminationRequested,
  mergeLastUpdate,
  newPodSyncStatus,
  type PodSyncStatus,
  runningPodToApiPod,
  workType,
} from "./pod-sync-status.js";
import { identifyUpdate, requestTermination } from "./pod-updates.js";
import { allowPodStart, isStaticPod } from "./static-pod-starts.js";
import type {
  ConfigPod,
  KillPodOptions,
  PodStatusCache,
  PodSyncer,
  PodWorkerState,
  PodWorkerSync,
  PodWorkersMetrics,
  PodWorkersOptions,
  PodWorkerView,
  PodWorkQueue,
  RunnablePodWorkers,
  RunningPod,
  SyncPodType,
  UpdatePodOptions,
} from "./types.js";
import { WorkerChannel } from "./worker-channel.js";

/** Creates the kubelet's pod workers (`newPodWorkers`). */
export function newPodWorkers<S, R extends RunningPod = RunningPod>(
  options: PodWorkersOptions<S, R>,
): RunnablePodWorkers<R> {
  return new DefaultPodWorkers(options);
}

export const networkNotReadyErrorMessage = "network is not ready";

const workerResyncIntervalJitterFactor = 0.5;
const workerBackOffPeriodJitterFactor = 0.5;
const backOffOnTransientErrorPeriodMs = 1000;

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

  /** Every UID's state, channel and static-pod slot. */
  readonly #states: PodStates<R>;
  readonly #workerLoops = new Set<Promise<void>>();
  readonly #stop = new AbortController();

  constructor(options: PodWorkersOptions<S, R>, hooks: PodWorkersTestHooks = {}) {
    // Every pod worker waiting on the PLEG listens to this one signal.
    setMaxListeners(0, this.#stop.signal);
    this.#podSyncer = options.podSyncer;
    this.#podCache = options.podCache;
    this.#isPodStatusTerminal = options.isPodStatusTerminal;
    this.#workQueue = options.workQueue;
    this.#resyncIntervalMs = validDuration(options.resyncIntervalMs, 60_000, "resyncIntervalMs");
    this.#backOffPeriodMs = validDuration(options.backOffPeriodMs, 10_000, "backOffPeriodMs");
    this.#recorder = options.recorder ?? noopEventRecorder;
    this.#logger = options.logger ?? noopLogger;
    this.#clock = options.clock ?? realClock;
    this.#states = new PodStates(this.#clock);
    this.#random = options.random ?? Math.random;
    this.#metrics = options.metrics ?? {};
    this.#hooks = hooks;
  }

  async run({ signal }: { signal: AbortSignal }): Promise<void> {
    if (!signal.aborted) {
      await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
    }
    this.#stop.abort();
    for (const status of this.#states.statuses.values()) status.abort?.abort();
    for (const channel of this.#states.channels.values()) channel.close();
    while (this.#workerLoops.size > 0) await Promise.all([...this.#workerLoops]);
  }

  // ---- queries: the states answer them --------------------------------------------------------

  isPodKnownTerminated(uid: string): boolean {
    return this.#states.isPodKnownTerminated(uid);
  }

  couldHaveRunningContainers(uid: string): boolean {
    return this.#states.couldHaveRunningContainers(uid);
  }

  shouldPodBeFinished(uid: string): boolean {
    return this.#states.shouldPodBeFinished(uid);
  }

  isPodTerminationRequested(uid: string): boolean {
    return this.#states.isPodTerminationRequested(uid);
  }

  shouldPodContainersBeTerminating(uid: string): boolean {
    return this.#states.shouldPodContainersBeTerminating(uid);
  }

  shouldPodRuntimeBeRemoved(uid: string): boolean {
    return this.#states.shouldPodRuntimeBeRemoved(uid);
  }

  shouldPodContentBeRemoved(uid: string): boolean {
    return this.#states.shouldPodContentBeRemoved(uid);
  }

  isPodForMirrorPodTerminatingByFullName(podFullName: string): boolean {
    return this.#states.isPodForMirrorPodTerminatingByFullName(podFullName);
  }

  workerViews(): PodWorkerView[] {
    return this.#states.workerViews();
  }

  // ---- updatePod ------------------------------------------------------------------------------

  updatePod(input: UpdatePodOptions<R>): void {
    if (this.#stop.signal.aborted) return;
    const options: UpdatePodOptions<R> = { ...input };
    const identity = identifyUpdate(options, this.#logger);
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

    const becameTerminating = requestTermination(status, pod, options, isRuntimePod, now);
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

  /** The UID's sync status, made on its first update. */
  #syncStatusOf(
    identity: { uid: string; name: string; namespace: string },
    options: UpdatePodOptions<R>,
    now: number,
  ): { status: PodSyncStatus<R>; firstTime: boolean } {
    const existing = this.#states.statuses.get(identity.uid);
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
    this.#states.statuses.set(identity.uid, status);
    return { status, firstTime: true };
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
    let channel = this.#states.channels.get(uid);
    if (channel !== undefined) return channel;
    channel = new WorkerChannel();
    this.#states.channels.set(uid, channel);
    // static pods start in the order updatePod first saw them
    if (isStaticPod(pod)) {
      const waiting = this.#states.waitingToStartStaticPodsByFullname.get(status.fullname);
      if (waiting) waiting.push(uid);
      else this.#states.waitingToStartStaticPodsByFullname.set(status.fullname, [uid]);
    }
    this.#startWorker(uid, channel);
    return channel;
  }

  // ---- syncKnownPods --------------------------------------------------------------------------

  syncKnownPods(desiredPods: readonly ConfigPod[]): Map<string, PodWorkerSync> {
    const workers = new Map<string, PodWorkerSync>();
    const known = new Set<string>();
    for (const pod of desiredPods) known.add(pod.metadata?.uid ?? "");

    this.#states.synced = true;
    for (const [uid, status] of this.#states.statuses) {
      // Forget a UID that is no longer desired (bounding what is kept for
      // deleted pods) or that was re-created while terminating (so it can start
      // again soon); the caller sends a fresh create for a desired pod it does
      // not get back.
      const orphan = !known.has(uid);
      if ((status.restartRequested || orphan) && this.#states.removeTerminatedWorker(uid, status, orphan))
        continue;

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
    return this.#states.statuses.get(uid);
  }

  /** @internal every UID with state */
  inspectUIDs(): string[] {
    return [...this.#states.statuses.keys()];
  }

  /** @internal UIDs with a live worker channel */
  inspectChannels(): string[] {
    return [...this.#states.channels.keys()];
  }

  /** @internal started static pods by full name */
  inspectStartedStaticPods(): Map<string, string> {
    return new Map(this.#states.startedStaticPodsByFullname);
  }

  /** @internal static pods waiting to start, by full name */
  inspectWaitingStaticPods(): Map<string, string[]> {
    return new Map([...this.#states.waitingToStartStaticPodsByFullname].map(([k, v]) => [k, [...v]]));
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
            const podStatusFn = this.#states.acknowledgeTerminating(uid);
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
        this.#states.completeTerminated(uid);
        this.#observeDuration("terminated", update.startTime);
        return;
      } else if (work === "terminating") {
        // a runtime pod has no config to clean up after: it is done
        if (update.runningPod !== undefined) {
          this.#states.completeTerminatingRuntimePod(uid);
          this.#observeDuration(update.updateType, update.startTime);
          return;
        }
        for (const onCompleted of this.#states.completeTerminating(uid)) this.#notifyCompleted(onCompleted);
        phaseTransition = true;
      } else if (isTerminal) {
        this.#states.completeSync(uid);
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
    const status = this.#states.statuses.get(uid);
    if (status === undefined) return undefined; // forgotten: the channel is closed, the loop ends
    if (status.pendingUpdate === undefined) {
      status.working = false;
      return undefined;
    }

    // the work type is derived from the state now, not from the update
    const work = workType(status);
    const update = status.pendingUpdate;
    status.pendingUpdate = undefined;
    this.#states.channels.get(uid)?.drain();

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
      this.#states.cleanupUnstartedPod(uid, status);
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
      podSyncStatuses: this.#states.statuses,
      startedStaticPodsByFullname: this.#states.startedStaticPodsByFullname,
      waitingToStartStaticPodsByFullname: this.#states.waitingToStartStaticPodsByFullname,
    });
    if (!verdict.canEverStart && !this.#states.statuses.has(uid)) {
      this.#logger.error({ podUID: uid }, "Pod sync status does not exist, the worker should not be running");
    }
    if (verdict.canEverStart && !verdict.canStart) {
      this.#workQueue.enqueue(uid, this.#jitter(this.#backOffPeriodMs, workerBackOffPeriodJitterFactor));
    }
    return verdict;
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

    const status = this.#states.statuses.get(uid);
    if (status === undefined) return;
    if (status.pendingUpdate !== undefined) this.#states.channels.get(uid)?.send();
    else status.working = false;
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

function validDuration(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < 0) {
    throw new RangeError(`${name} must be a finite number of milliseconds ≥ 0, got ${value}`);
  }
  return value;
}
