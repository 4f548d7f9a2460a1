import type { Clock } from "@reconcile/clock";
import { calculateEffectiveGracePeriod } from "./kill-pod.js";
import { isTerminated, isTerminationRequested, type PodSyncStatus, workType } from "./pod-sync-status.js";
import type { PodStatusFunc, PodWorkerView, RunningPod } from "./types.js";
import type { WorkerChannel } from "./worker-channel.js";

/**
 * What the pod workers know of every UID (the maps of upstream's `podWorkers`
 * struct: `podSyncStatuses`, `podUpdates`, the static pods started and
 * waiting) and the phase transitions that change it: a sync reported the pod
 * terminal, its containers stopped, it was cleaned up, its worker forgotten.
 * Each transition that leads to another phase replays the last update on the
 * UID's channel, so its worker runs that phase at once.
 */
export class PodStates<R extends RunningPod> {
  readonly statuses = new Map<string, PodSyncStatus<R>>();
  /** Each started worker's channel, by UID (`podUpdates`). */
  readonly channels = new Map<string, WorkerChannel>();
  readonly startedStaticPodsByFullname = new Map<string, string>();
  readonly waitingToStartStaticPodsByFullname = new Map<string, string[]>();
  /** True once `syncKnownPods` has run: every pod that should exist has been sent. */
  synced = false;
  readonly #clock: Clock;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  isPodKnownTerminated(uid: string): boolean {
    const status = this.statuses.get(uid);
    return status !== undefined && isTerminated(status);
  }

  couldHaveRunningContainers(uid: string): boolean {
    const status = this.statuses.get(uid);
    // once synced, a pod without status is known not to be running
    return status !== undefined ? !isTerminated(status) : !this.synced;
  }

  shouldPodBeFinished(uid: string): boolean {
    const status = this.statuses.get(uid);
    return status !== undefined ? status.finished : this.synced;
  }

  isPodTerminationRequested(uid: string): boolean {
    const status = this.statuses.get(uid);
    return status !== undefined && isTerminationRequested(status);
  }

  shouldPodContainersBeTerminating(uid: string): boolean {
    const status = this.statuses.get(uid);
    // true only once the worker has seen the termination: syncPod will not run again
    return status !== undefined ? status.startedTerminating : this.synced;
  }

  shouldPodRuntimeBeRemoved(uid: string): boolean {
    const status = this.statuses.get(uid);
    return status !== undefined ? isTerminated(status) : this.synced;
  }

  shouldPodContentBeRemoved(uid: string): boolean {
    const status = this.statuses.get(uid);
    if (status === undefined) return this.synced;
    return status.evicted || (status.deleted && isTerminated(status));
  }

  isPodForMirrorPodTerminatingByFullName(podFullName: string): boolean {
    const uid = this.startedStaticPodsByFullname.get(podFullName);
    if (uid === undefined) return false;
    const status = this.statuses.get(uid);
    return status !== undefined && isTerminationRequested(status) && !isTerminated(status);
  }

  /** Every worker's phase now (for a debugging view), by UID. */
  workerViews(): PodWorkerView[] {
    const out: PodWorkerView[] = [];
    for (const [uid, status] of this.statuses) {
      out.push({
        uid,
        fullname: status.fullname,
        state: workType(status),
        working: status.working,
        started: status.startedAt > 0,
        ...(status.startedAt > 0 ? { startedAt: status.startedAt } : {}),
        ...(status.terminatingAt > 0 ? { terminatingAt: status.terminatingAt } : {}),
        ...(status.terminatedAt > 0 ? { terminatedAt: status.terminatedAt } : {}),
        ...(status.gracePeriod > 0 ? { gracePeriodSeconds: status.gracePeriod } : {}),
        finished: status.finished,
      });
    }
    return out;
  }

  /** A pod told to terminate before it could start finishes without any sync (`cleanupUnstartedPod`). */
  cleanupUnstartedPod(uid: string, status: PodSyncStatus<R>): void {
    this.cleanupPodUpdates(uid);
    status.finished = true;
    status.working = false;
    status.terminatedAt = this.#clock.now();
    this.releaseStaticPodSlot(uid, status);
  }
  /** Marks that the worker has seen the termination; returns the latest kill's status function. */
  acknowledgeTerminating(uid: string): PodStatusFunc | undefined {
    const status = this.statuses.get(uid);
    if (status === undefined) return undefined;
    if (status.terminatingAt !== 0) status.startedTerminating = true;
    return status.statusPostTerminating.at(-1);
  }
  /** syncPod reported the pod terminal: move to terminating at once (`completeSync`). */
  completeSync(uid: string): void {
    const status = this.statuses.get(uid);
    if (status === undefined) return;
    if (status.terminatingAt === 0) status.terminatingAt = this.#clock.now();
    status.startedTerminating = true;
    this.requeueLastPodUpdate(uid, status);
  }
  /** All containers stopped: the pod is terminated, kills waiting on it complete (`completeTerminating`). */
  completeTerminating(uid: string): (() => void)[] {
    const status = this.statuses.get(uid);
    if (status === undefined) return [];
    status.terminatedAt = this.#clock.now();
    const notify = status.notifyPostTerminating;
    status.notifyPostTerminating = [];
    status.statusPostTerminating = [];
    this.requeueLastPodUpdate(uid, status);
    return notify;
  }
  /** A runtime pod's containers are stopped: nothing is kept (`completeTerminatingRuntimePod`). */
  completeTerminatingRuntimePod(uid: string): void {
    this.cleanupPodUpdates(uid);
    const status = this.statuses.get(uid);
    if (status === undefined) return;
    status.terminatedAt = this.#clock.now();
    status.finished = true;
    status.working = false;
    this.releaseStaticPodSlot(uid, status);
    this.statuses.delete(uid);
  }
  /** syncTerminatedPod succeeded: the pod is finished and its worker ends (`completeTerminated`). */
  completeTerminated(uid: string): void {
    this.cleanupPodUpdates(uid);
    const status = this.statuses.get(uid);
    if (status === undefined) return;
    status.finished = true;
    status.working = false;
    this.releaseStaticPodSlot(uid, status);
  }
  /**
   * Forgets a finished worker so its UID may be used again; drives an orphaned
   * one towards termination instead (`removeTerminatedWorker`). True when removed.
   */
  removeTerminatedWorker(uid: string, status: PodSyncStatus<R>, orphaned: boolean): boolean {
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
        this.requeueLastPodUpdate(uid, status);
        return false;
      }
      // never started and never seen running: nothing to tear down
    }
    this.statuses.delete(uid);
    this.cleanupPodUpdates(uid);
    this.releaseStaticPodSlot(uid, status);
    return true;
  }
  /** Replays the last update when nothing is pending, to run the next phase at once (`requeueLastPodUpdate`). */
  requeueLastPodUpdate(uid: string, status: PodSyncStatus<R>): void {
    if (status.pendingUpdate !== undefined || status.activeUpdate === undefined) return;
    status.pendingUpdate = { ...status.activeUpdate };
    status.working = true;
    this.channels.get(uid)?.send();
  }
  /** Closes the UID's channel so its worker ends (`cleanupPodUpdates`). */
  cleanupPodUpdates(uid: string): void {
    this.channels.get(uid)?.close();
    this.channels.delete(uid);
  }
  releaseStaticPodSlot(uid: string, status: PodSyncStatus<R>): void {
    if (this.startedStaticPodsByFullname.get(status.fullname) === uid) {
      this.startedStaticPodsByFullname.delete(status.fullname);
    }
  }
}
