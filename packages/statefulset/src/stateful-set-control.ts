import {
  type ControllerRevision,
  type DeepReadonly,
  getScaledValueFromIntOrPercent,
  isNotFound,
  labelSelectorAsSelector,
  type Pod,
  type StatefulSet,
} from "@reconcile/api";
import {
  type ControllerRevisionHistory,
  equalRevision,
  findEqualRevisions,
  nextRevision,
  slowStartBatch,
  sortControllerRevisions,
} from "@reconcile/controller";
import type { StatefulSetStatus } from "kubernetes-types/apps/v1.js";
import type { StatefulPodControl } from "./stateful-pod-control.js";
import {
  allowsBurst,
  applyRevision,
  endOrdinal,
  getOrdinal,
  identityMatches,
  isCreated,
  isFailed,
  isPending,
  isRunningAndAvailable,
  isRunningAndReady,
  isSucceeded,
  isTerminating,
  isUnavailable,
  newRevision,
  newVersionedStatefulSetPod,
  podInOrdinalRange,
  podRevision,
  startOrdinal,
  storageMatches,
} from "./stateful-set-utils.js";

type Set = DeepReadonly<StatefulSet>;
type Revision = DeepReadonly<ControllerRevision>;
type AnyPod = Pod | DeepReadonly<Pod>;

/** What one pass over a set decided: the status to write, and the revisions it settled on. */
export interface StatefulSetUpdate {
  status: StatefulSetStatus;
  current: Revision;
  update: Revision;
  /** The pass stopped on an error after computing `status` (write the status, then retry). */
  error?: unknown;
}

/** Options of {@link StatefulSetControl}. */
export interface StatefulSetControlOptions {
  podControl: StatefulPodControl;
  history: ControllerRevisionHistory;
  now: () => number;
  /** Honour `rollingUpdate.maxUnavailable` (the MaxUnavailableStatefulSet feature). */
  maxUnavailable: boolean;
}

/**
 * One pass of the StatefulSet's control loop (upstream
 * `defaultStatefulSetControl.UpdateStatefulSet`): settle the current and
 * update revisions, create missing members in ordinal order, restore drifted
 * identities, remove condemned members from the highest ordinal down, and
 * replace members at an old revision from the highest ordinal down to the
 * partition. OrderedReady waits on each member; Parallel does not.
 */
export class StatefulSetControl {
  readonly #pods: StatefulPodControl;
  readonly #history: ControllerRevisionHistory;
  readonly #now: () => number;
  readonly #maxUnavailable: boolean;

  constructor(options: StatefulSetControlOptions) {
    this.#pods = options.podControl;
    this.#history = options.history;
    this.#now = options.now;
    this.#maxUnavailable = options.maxUnavailable;
  }

  /** The set's revisions from the cache: owned ones and orphans its selector matches. */
  listRevisions(set: Set): Revision[] {
    return this.#history.list(set, labelSelectorAsSelector(set.spec?.selector));
  }

  async update(set: Set, pods: readonly AnyPod[], signal?: AbortSignal): Promise<StatefulSetUpdate> {
    const revisions = sortControllerRevisions(this.listRevisions(set));
    const { current, update, collisionCount } = await this.#revisions(set, revisions, signal);
    let result: StatefulSetUpdate;
    try {
      result = await this.#updateStatefulSet(set, current, update, collisionCount, pods, signal);
    } finally {
      await this.#truncateHistory(set, pods, revisions, current, update, signal);
    }
    return result;
  }

  /**
   * The update revision is the set's template now: the latest revision if it
   * holds that template, an older equal one renumbered to the top (a
   * rollback), or a new one. The current revision is the status's, or the
   * update revision for a new set (upstream `getStatefulSetRevisions`).
   */
  async #revisions(set: Set, sorted: Revision[], signal: AbortSignal | undefined) {
    const collisionCount = { value: set.status?.collisionCount ?? 0 };
    const candidate = newRevision(set, nextRevision(sorted), collisionCount.value);
    const equal = findEqualRevisions(sorted, candidate);
    let update: Revision;
    const latest = sorted[sorted.length - 1];
    if (equal.length > 0 && equalRevision(latest, equal[equal.length - 1])) update = latest!;
    else if (equal.length > 0)
      update = await this.#history.update(equal[equal.length - 1]!, candidate.revision, { signal });
    else update = await this.#history.create(set, candidate, collisionCount, { signal });
    const current = sorted.find((r) => r.metadata?.name === set.status?.currentRevision) ?? update;
    return { current, update, collisionCount: collisionCount.value };
  }

  async #updateStatefulSet(
    set: Set,
    current: Revision,
    update: Revision,
    collisionCount: number,
    pods: readonly AnyPod[],
    signal: AbortSignal | undefined,
  ): Promise<StatefulSetUpdate> {
    const currentSet = applyRevision(set, current);
    const updateSet = applyRevision(set, update);
    const minReady = set.spec?.minReadySeconds ?? 0;
    const now = this.#now();
    const status: StatefulSetStatus = {
      observedGeneration: set.metadata?.generation ?? 0,
      currentRevision: current.metadata?.name ?? "",
      updateRevision: update.metadata?.name ?? "",
      collisionCount,
      replicas: 0,
    };
    const recount = (...lists: (readonly (AnyPod | undefined)[])[]) =>
      countReplicas(status, minReady, now, current, update, lists);
    recount(pods);
    const result = (error?: unknown): StatefulSetUpdate => ({ status, current, update, error });

    const start = startOrdinal(set);
    const replicas: AnyPod[] = new Array(Math.max(0, endOrdinal(set) - start + 1));
    const condemned: AnyPod[] = [];
    for (const pod of pods) {
      if (podInOrdinalRange(pod, set)) replicas[getOrdinal(pod) - start] = pod;
      else if (getOrdinal(pod) >= 0) condemned.push(pod);
    }
    for (let i = 0; i < replicas.length; i++) {
      replicas[i] ??= newVersionedStatefulSetPod(
        currentSet,
        updateSet,
        current.metadata?.name ?? "",
        update.metadata?.name ?? "",
        start + i,
      );
    }
    condemned.sort((a, b) => getOrdinal(b) - getOrdinal(a));
    const firstUnavailable =
      replicas.find((pod) => isUnavailable(pod, minReady, now)) ??
      [...condemned].reverse().find((pod) => isUnavailable(pod, minReady, now));

    if (set.metadata?.deletionTimestamp != null) return result();
    const monotonic = !allowsBurst(set);
    const stop = (error?: unknown) => {
      recount(replicas, condemned);
      return result(error);
    };

    let outcome = await runForAll(replicas, monotonic, (i) =>
      this.#processReplica(set, updateSet, monotonic, replicas, i, now, signal),
    );
    if (outcome.exit) return stop(outcome.error);
    outcome = await runForAll(condemned, monotonic, async (i) => {
      if (!(await this.#pods.claimsMatchRetentionPolicy(updateSet, condemned[i]!)))
        await this.#pods.updateClaimsForRetentionPolicy(updateSet, condemned[i]!, signal);
      return false;
    });
    if (outcome.exit) return stop(outcome.error);
    outcome = await runForAll(condemned, monotonic, (i) =>
      this.#processCondemned(set, firstUnavailable, monotonic, condemned, i, now, signal),
    );
    if (outcome.exit) return stop(outcome.error);
    recount(replicas, condemned);

    if (set.spec?.updateStrategy?.type === "OnDelete") return result();
    try {
      if (this.#maxUnavailable)
        await this.#rollWithMaxUnavailable(set, replicas, update, status, now, signal);
      else await this.#rollOneAtATime(set, replicas, update, status, now, signal);
    } catch (error) {
      return result(error);
    }
    return result();
  }

  /** Returns true when this pass must stop at this member (upstream `processReplica`). */
  async #processReplica(
    set: Set,
    updateSet: StatefulSet,
    monotonic: boolean,
    replicas: AnyPod[],
    i: number,
    now: number,
    signal: AbortSignal | undefined,
  ): Promise<boolean> {
    const pod = replicas[i]!;
    // A finished member (evicted, or its node rebooted) is replaced, whatever its exit code.
    if (isFailed(pod) || isSucceeded(pod)) {
      if (!isTerminating(pod)) await this.#pods.deleteStatefulPod(set, pod, signal);
      return true;
    }
    if (!isCreated(pod)) {
      await this.#pods.createStatefulPod(set, pod as Pod, signal);
      if (monotonic) return true;
    }
    if (isPending(pod)) await this.#pods.createMissingClaims(set, pod, signal);
    const minReady = set.spec?.minReadySeconds ?? 0;
    if (
      monotonic &&
      (isTerminating(pod) || !isRunningAndReady(pod) || !isRunningAndAvailable(pod, minReady, now))
    )
      return true;
    const retentionMatches = await this.#pods.claimsMatchRetentionPolicy(updateSet, pod).catch(() => true);
    if (identityMatches(set, pod) && storageMatches(set, pod) && retentionMatches) return false;
    await this.#pods.updateStatefulPod(updateSet, pod, signal);
    return false;
  }

  /** Deletes a member past the last ordinal, once those before it are healthy (upstream `processCondemned`). */
  async #processCondemned(
    set: Set,
    firstUnavailable: AnyPod | undefined,
    monotonic: boolean,
    condemned: AnyPod[],
    i: number,
    now: number,
    signal: AbortSignal | undefined,
  ): Promise<boolean> {
    const pod = condemned[i]!;
    if (isTerminating(pod)) return monotonic;
    const minReady = set.spec?.minReadySeconds ?? 0;
    if (monotonic && pod !== firstUnavailable) {
      if (!isRunningAndReady(pod) || !isRunningAndAvailable(pod, minReady, now)) return true;
    }
    await this.#pods.deleteStatefulPod(set, pod, signal);
    return true;
  }

  /** Replaces the highest member at an old revision, after every higher one is available again. */
  async #rollOneAtATime(
    set: Set,
    replicas: AnyPod[],
    update: Revision,
    status: StatefulSetStatus,
    now: number,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const partition = set.spec?.updateStrategy?.rollingUpdate?.partition ?? 0;
    const minReady = set.spec?.minReadySeconds ?? 0;
    for (let target = replicas.length - 1; target >= partition; target--) {
      const pod = replicas[target]!;
      if (podRevision(pod) !== update.metadata?.name && !isTerminating(pod)) {
        await this.#deleteForUpdate(set, pod, signal);
        status.currentReplicas = (status.currentReplicas ?? 0) - 1;
        return;
      }
      if (isUnavailable(pod, minReady, now)) return;
    }
  }

  /** Replaces up to `maxUnavailable` members at once, fewer by those already unavailable. */
  async #rollWithMaxUnavailable(
    set: Set,
    replicas: AnyPod[],
    update: Revision,
    status: StatefulSetStatus,
    now: number,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const rolling = set.spec?.updateStrategy?.rollingUpdate;
    const partition = rolling?.partition ?? 0;
    const minReady = set.spec?.minReadySeconds ?? 0;
    const maxUnavailable = Math.max(
      1,
      getScaledValueFromIntOrPercent(rolling?.maxUnavailable ?? 1, replicas.length, false),
    );
    const unavailable = replicas.filter((pod) => isUnavailable(pod, minReady, now)).length;
    if (unavailable > maxUnavailable) return;
    let budget = maxUnavailable - unavailable;
    for (let target = replicas.length - 1; target >= partition && budget > 0; target--) {
      const pod = replicas[target]!;
      if (podRevision(pod) === update.metadata?.name || isTerminating(pod)) continue;
      await this.#deleteForUpdate(set, pod, signal);
      budget--;
      status.currentReplicas = (status.currentReplicas ?? 0) - 1;
    }
  }

  async #deleteForUpdate(set: Set, pod: AnyPod, signal: AbortSignal | undefined): Promise<void> {
    try {
      await this.#pods.deleteStatefulPod(set, pod, signal);
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  /**
   * Deletes the oldest revisions beyond `revisionHistoryLimit` that no pod,
   * nor the current or update revision, uses (upstream `truncateHistory`).
   */
  async #truncateHistory(
    set: Set,
    pods: readonly AnyPod[],
    sorted: Revision[],
    current: Revision,
    update: Revision,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const live = new Set<string>([current.metadata?.name ?? "", update.metadata?.name ?? ""]);
    for (const pod of pods) live.add(podRevision(pod));
    const history = sorted.filter((revision) => !live.has(revision.metadata?.name ?? ""));
    const limit = set.spec?.revisionHistoryLimit ?? 10;
    if (limit < 0 || history.length <= limit) return;
    for (const revision of history.slice(0, history.length - limit))
      await this.#history.delete(revision, { signal });
  }
}

/** Counts replicas into `status` (upstream `updateStatus` over `computeReplicaStatus`). */
function countReplicas(
  status: StatefulSetStatus,
  minReady: number,
  now: number,
  current: Revision,
  update: Revision,
  lists: readonly (readonly (AnyPod | undefined)[])[],
): void {
  let [replicas, ready, available, currentReplicas, updated] = [0, 0, 0, 0, 0];
  for (const list of lists) {
    for (const pod of list) {
      if (pod === undefined) continue;
      const created = isCreated(pod);
      if (created) replicas++;
      if (isRunningAndReady(pod)) {
        ready++;
        if (isRunningAndAvailable(pod, minReady, now)) available++;
      }
      if (created && !isTerminating(pod)) {
        const revision = podRevision(pod);
        if (revision === current.metadata?.name) currentReplicas++;
        if (revision === update.metadata?.name) updated++;
      }
    }
  }
  status.replicas = replicas;
  status.readyReplicas = ready;
  status.availableReplicas = available;
  status.currentReplicas = currentReplicas;
  status.updatedReplicas = updated;
}

/**
 * Runs `fn` over every index: in order, stopping at the first that says
 * stop, when monotonic; otherwise all at once in doubling batches.
 */
async function runForAll(
  items: readonly unknown[],
  monotonic: boolean,
  fn: (i: number) => Promise<boolean>,
): Promise<{ exit: boolean; error?: unknown }> {
  if (monotonic) {
    for (let i = 0; i < items.length; i++) {
      try {
        if (await fn(i)) return { exit: true };
      } catch (error) {
        return { exit: true, error };
      }
    }
    return { exit: false };
  }
  const { error } = await slowStartBatch(items.length, 1, async (i) => {
    await fn(i);
  });
  return error === undefined ? { exit: false } : { exit: true, error };
}
