import { type DeepReadonly, getPodReadyCondition, isPodActive, type Pod } from "@reconcile/api";

/** The annotation that tells a ReplicaSet which of its pods to delete first (lower first). */
export const podDeletionCostAnnotation = "controller.kubernetes.io/pod-deletion-cost";

/** Options of the rank-aware deletion order. */
export interface PodDeletionOrderOptions {
  /** "Now" for the logarithmic buckets, in ms since the epoch. Default: none (plain time order). */
  now?: number | undefined;
  /** Compare ready and creation times in log2 buckets with the uid tie-break (`LogarithmicScaleDown`). Default true. */
  logarithmicScaleDown?: boolean | undefined;
  /** Honour the pod-deletion-cost annotation (`PodDeletionCost`). Default true. */
  podDeletionCost?: boolean | undefined;
}

/**
 * Sorts pods into the order a ReplicaSet deletes them, first to go first
 * (upstream `ActivePodsWithRanks`): unassigned before assigned; Pending before
 * Unknown before Running; not ready before ready; lower pod-deletion-cost
 * first; higher rank (more related pods on the same node) first; more
 * recently ready first; more restarts first; newer first. With logarithmic
 * scale-down (the default), ready and creation times are compared in
 * power-of-two buckets of their age and pods in the same bucket are ordered
 * by uid, so scale-down spreads over pods of similar age.
 *
 * `ranks[i]` is the rank of `pods[i]`. Returns a new array; the input is not changed.
 */
export function sortActivePodsWithRanks<P extends Pod | DeepReadonly<Pod>>(
  pods: readonly P[],
  ranks: readonly number[],
  options: PodDeletionOrderOptions = {},
): P[] {
  if (ranks.length !== pods.length) {
    throw new RangeError(
      `sortActivePodsWithRanks: ${pods.length} pods but ${ranks.length} ranks; give one rank per pod`,
    );
  }
  const facts = pods.map((pod, i) => rankFacts(pod, ranks[i]!, options));
  facts.sort((a, b) => (rankedLess(a, b, options) ? -1 : rankedLess(b, a, options) ? 1 : 0));
  return facts.map((fact) => fact.pod);
}

/** Whether `a` goes before `b` in {@link sortActivePodsWithRanks}'s order (upstream `ActivePodsWithRanks.Less`). */
export function activePodsWithRanksLess(
  a: { pod: Pod | DeepReadonly<Pod>; rank: number },
  b: { pod: Pod | DeepReadonly<Pod>; rank: number },
  options: PodDeletionOrderOptions = {},
): boolean {
  return rankedLess(rankFacts(a.pod, a.rank, options), rankFacts(b.pod, b.rank, options), options);
}

/**
 * The legacy deletion order without ranks (upstream `ActivePods`): unassigned,
 * phase, readiness, more recently ready, more restarts, newer. Returns a new array.
 */
export function sortActivePods<P extends Pod | DeepReadonly<Pod>>(pods: readonly P[]): P[] {
  const facts = pods.map((pod) => rankFacts(pod, 0, {}));
  facts.sort((a, b) => (activeLess(a, b) ? -1 : activeLess(b, a) ? 1 : 0));
  return facts.map((fact) => fact.pod);
}

/**
 * Ranks each pod of `podsToRank` by how many active pods of `relatedPods` run
 * on its node (upstream `getPodsRankedByRelatedPodsOnSameNode`). Unscheduled
 * pods share the node "" and so count each other.
 */
export function rankPodsByRelatedPodsOnSameNode(
  podsToRank: readonly (Pod | DeepReadonly<Pod>)[],
  relatedPods: readonly (Pod | DeepReadonly<Pod>)[],
): number[] {
  const podsOnNode = new Map<string, number>();
  for (const pod of relatedPods) {
    if (!isPodActive(pod)) continue;
    const node = pod.spec?.nodeName ?? "";
    podsOnNode.set(node, (podsOnNode.get(node) ?? 0) + 1);
  }
  return podsToRank.map((pod) => podsOnNode.get(pod.spec?.nodeName ?? "") ?? 0);
}

/**
 * Parses the pod-deletion-cost annotation (upstream
 * `GetDeletionCostFromPodAnnotations`): absent is 0; otherwise a base-10
 * int32 that starts with `-` or a digit 1-9, or is exactly "0" (so "+10" and
 * "008" are invalid, while "-0" and "-008" parse, as upstream). Throws a
 * `RangeError` naming the value when it is invalid.
 */
export function getDeletionCostFromPodAnnotations(
  annotations: Readonly<Record<string, string>> | undefined,
): number {
  const value = annotations?.[podDeletionCostAnnotation];
  if (value === undefined) return 0;
  if (!/^(0|-[0-9]+|[1-9][0-9]*)$/.test(value)) {
    throw new RangeError(`invalid ${podDeletionCostAnnotation} annotation ${JSON.stringify(value)}`);
  }
  const cost = Number(value);
  if (cost < -2147483648 || cost > 2147483647) {
    throw new RangeError(
      `invalid ${podDeletionCostAnnotation} annotation ${JSON.stringify(value)}: out of int32 range`,
    );
  }
  return cost === 0 ? 0 : cost; // "-0" is 0, not -0
}

interface RankFacts<P> {
  pod: P;
  rank: number;
  uid: string;
  unassigned: boolean;
  phaseOrdinal: number;
  ready: boolean;
  /** ms since the epoch; undefined is Go's zero time. */
  readyTime: number | undefined;
  readyBucket: number;
  deletionCost: number;
  restarts: number;
  createdAt: number | undefined;
  createdBucket: number;
}

function rankFacts<P extends Pod | DeepReadonly<Pod>>(
  pod: P,
  rank: number,
  options: PodDeletionOrderOptions,
): RankFacts<P> {
  const readyCondition = getPodReadyCondition(pod as DeepReadonly<Pod>);
  const ready = readyCondition?.status === "True";
  // podReadyTime: the Ready condition's transition time, only for ready pods.
  const readyTime = ready ? parseTime(readyCondition?.lastTransitionTime) : undefined;
  const createdAt = parseTime(pod.metadata?.creationTimestamp);
  let deletionCost = 0;
  if (options.podDeletionCost ?? true) {
    try {
      deletionCost = getDeletionCostFromPodAnnotations(pod.metadata?.annotations);
    } catch {
      // An invalid cost counts as 0, as upstream ignores the parse error here.
    }
  }
  let restarts = 0;
  for (const status of pod.status?.containerStatuses ?? []) {
    restarts = Math.max(restarts, status.restartCount ?? 0);
  }
  return {
    pod,
    rank,
    uid: pod.metadata?.uid ?? "",
    unassigned: (pod.spec?.nodeName ?? "") === "",
    phaseOrdinal: phaseOrdinal(pod.status?.phase),
    ready,
    readyTime,
    readyBucket: log2Bucket(options.now, readyTime),
    deletionCost,
    restarts,
    createdAt,
    createdBucket: log2Bucket(options.now, createdAt),
  };
}

function rankedLess<P>(a: RankFacts<P>, b: RankFacts<P>, options: PodDeletionOrderOptions): boolean {
  // 1. Unassigned < assigned.
  if (a.unassigned !== b.unassigned) return a.unassigned;
  // 2. Pending < Unknown < Running.
  if (a.phaseOrdinal !== b.phaseOrdinal) return a.phaseOrdinal < b.phaseOrdinal;
  // 3. Not ready < ready.
  if (a.ready !== b.ready) return !a.ready;
  // 4. Lower pod-deletion-cost < higher (zero when the feature is off).
  if (a.deletionCost !== b.deletionCost) return a.deletionCost < b.deletionCost;
  // 5. Doubled up (more related pods on the node) < not doubled up.
  if (a.rank !== b.rank) return a.rank > b.rank;
  const logarithmic = (options.logarithmicScaleDown ?? true) && options.now !== undefined;
  // 6. Both ready: ready for a shorter time < longer.
  if (a.ready && b.ready && a.readyTime !== b.readyTime) {
    if (!logarithmic || a.readyTime === undefined || b.readyTime === undefined) {
      return afterOrZero(a.readyTime, b.readyTime);
    }
    if (a.readyBucket === b.readyBucket) return a.uid < b.uid;
    return a.readyBucket < b.readyBucket;
  }
  // 7. More restarts < fewer.
  if (a.restarts !== b.restarts) return a.restarts > b.restarts;
  // 8. Empty creation time < newer < older.
  if (a.createdAt !== b.createdAt) {
    if (!logarithmic || a.createdAt === undefined || b.createdAt === undefined) {
      return afterOrZero(a.createdAt, b.createdAt);
    }
    if (a.createdBucket === b.createdBucket) return a.uid < b.uid;
    return a.createdBucket < b.createdBucket;
  }
  return false;
}

function activeLess<P>(a: RankFacts<P>, b: RankFacts<P>): boolean {
  if (a.unassigned !== b.unassigned) return a.unassigned;
  if (a.phaseOrdinal !== b.phaseOrdinal) return a.phaseOrdinal < b.phaseOrdinal;
  if (a.ready !== b.ready) return !a.ready;
  if (a.ready && b.ready && a.readyTime !== b.readyTime) return afterOrZero(a.readyTime, b.readyTime);
  if (a.restarts !== b.restarts) return a.restarts > b.restarts;
  if (a.createdAt !== b.createdAt) return afterOrZero(a.createdAt, b.createdAt);
  return false;
}

// podPhaseToOrdinal: anything other than Unknown and Running counts as Pending.
function phaseOrdinal(phase: string | undefined): number {
  if (phase === "Running") return 2;
  if (phase === "Unknown") return 1;
  return 0;
}

// A zero time sorts as the newest.
function afterOrZero(t1: number | undefined, t2: number | undefined): boolean {
  if (t1 === undefined || t2 === undefined) return t1 === undefined;
  return t1 > t2;
}

function parseTime(value: string | undefined): number | undefined {
  if (value === undefined || value === "") return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

// floor(log2(now - t)) with the age in nanoseconds, -1 when the age is not
// positive (upstream logarithmicRankDiff). The integer bit length keeps exact
// powers of two in the right bucket.
function log2Bucket(now: number | undefined, t: number | undefined): number {
  if (now === undefined || t === undefined) return -1;
  const ageMs = now - t;
  if (ageMs <= 0) return -1;
  const ageNs = BigInt(Math.round(ageMs * 1_000_000));
  return ageNs.toString(2).length - 1;
}
