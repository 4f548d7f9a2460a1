import { type DeepReadonly, labelSelectorAsSelector, type Pod } from "@reconcile/api";
import type { PodDisruptionBudget } from "kubernetes-types/policy/v1.js";
import {
  type Diagnosis,
  fitErrorMessage,
  type PreemptionCandidate,
  type PreemptionOutcome,
} from "../fit-error.js";
import { type CycleState, cloneCycleState, type Plugin, type Status } from "../framework.js";
import type { NodeInfo, PodInfo } from "../node-info.js";
import { runFiltersWithNominatedPods } from "../nominator.js";

// DefaultPreemption's PostFilter (upstream plugins/defaultpreemption and
// framework/preemption): when no node fits, find the nodes where evicting
// lower-priority pods would let the pod in, keep as many of those pods as
// still fit (PodDisruptionBudgets respected first), pick the node whose
// victims matter least, and name them. The scheduler then evicts the victims
// and nominates the node.

/** The text upstream's `PodReasonPreemptionByScheduler` condition carries. */
export const preemptionByScheduler = "PreemptionByScheduler";

/** `MinCandidateNodesPercentage` and `MinCandidateNodesAbsolute` of DefaultPreemptionArgs. */
export const minCandidateNodesPercentage = 10;
export const minCandidateNodesAbsolute = 100;

export type { PreemptionCandidate, PreemptionOutcome };

export interface PreemptionContext {
  pod: DeepReadonly<Pod>;
  allNodes: readonly NodeInfo[];
  /** The statuses of the nodes the cycle filtered; a node without one was left out by a PreFilter. */
  diagnosis: Diagnosis;
  filters: readonly Plugin[];
  state: CycleState;
  pdbs: readonly DeepReadonly<PodDisruptionBudget>[];
  /** Now, for pods without a start time. */
  now: number;
  /** A number in [0, 1), for the node to start the dry run at. */
  random: () => number;
  /** The pods nominated to a node, which filters count there when they matter at least as much. */
  nominatedOn: (nodeName: string) => readonly PodInfo[];
}

const priorityOf = (pod: DeepReadonly<Pod>) => pod.spec?.priority ?? 0;
const startTimeOf = (pod: DeepReadonly<Pod>, now: number) => {
  const started = pod.status?.startTime ? Date.parse(pod.status.startTime) : Number.NaN;
  return Number.isNaN(started) ? now : started;
};

/** `MoreImportantPod`: higher priority, then the earlier start. */
function moreImportant(a: DeepReadonly<Pod>, b: DeepReadonly<Pod>, now: number): number {
  const byPriority = priorityOf(b) - priorityOf(a);
  return byPriority !== 0 ? byPriority : startTimeOf(a, now) - startTimeOf(b, now);
}

/** A pod the scheduler already evicts: terminating, with its DisruptionTarget condition. */
function terminatingByPreemption(pod: DeepReadonly<Pod>): boolean {
  return (
    pod.metadata?.deletionTimestamp != null &&
    (pod.status?.conditions ?? []).some(
      (condition) =>
        condition.type === "DisruptionTarget" &&
        condition.status === "True" &&
        condition.reason === preemptionByScheduler,
    )
  );
}

/** `PodEligibleToPreemptOthers`: why the pod may not preempt now, or undefined. */
function ineligibility(context: PreemptionContext): string | undefined {
  const { pod, allNodes, diagnosis } = context;
  if (pod.spec?.preemptionPolicy === "Never") return "not eligible due to preemptionPolicy=Never.";
  const nominated = pod.status?.nominatedNodeName;
  if (!nominated) return undefined;
  // A nominated node the filters rule out for good is worth preempting on again.
  if (diagnosis.nodeToStatus.get(nominated)?.code === "UnschedulableAndUnresolvable") return undefined;
  const nodeInfo = allNodes.find((info) => info.name === nominated);
  const priority = priorityOf(pod);
  for (const { pod: other } of nodeInfo?.pods.values() ?? []) {
    if (priorityOf(other) < priority && terminatingByPreemption(other))
      return "not eligible due to a terminating pod on the nominated node.";
  }
  return undefined;
}

/**
 * `filterPodsWithPDBViolation`: the pods whose eviction some budget of their
 * namespace no longer allows (each eviction spends one of its disruptions),
 * and the others, each in the order given.
 */
export function splitByBudgets(
  pods: readonly PodInfo[],
  pdbs: readonly DeepReadonly<PodDisruptionBudget>[],
): { violating: PodInfo[]; nonViolating: PodInfo[] } {
  const allowed = pdbs.map((pdb) => pdb.status?.disruptionsAllowed ?? 0);
  const selectors = pdbs.map((pdb) => {
    try {
      return labelSelectorAsSelector(pdb.spec?.selector ?? null);
    } catch {
      return undefined; // an invalid selector matches nothing
    }
  });
  const violating: PodInfo[] = [];
  const nonViolating: PodInfo[] = [];
  for (const info of pods) {
    const labels = info.pod.metadata?.labels ?? {};
    let violated = false;
    // A pod without labels matches no budget.
    if (Object.keys(labels).length > 0) {
      pdbs.forEach((pdb, i) => {
        if (pdb.metadata?.namespace !== info.pod.metadata?.namespace) return;
        const selector = selectors[i];
        // A nil or empty selector matches nothing.
        if (selector === undefined || selector.empty() || !selector.matches(labels)) return;
        // A pod the API server already counted as disrupted is not counted again.
        if (pdb.status?.disruptedPods?.[info.pod.metadata?.name ?? ""] !== undefined) return;
        allowed[i]! -= 1;
        if (allowed[i]! < 0) violated = true;
      });
    }
    (violated ? violating : nonViolating).push(info);
  }
  return { violating, nonViolating };
}

/**
 * `SelectVictimsOnNode`: removes every lower-priority pod; if the pod then
 * fits, puts back as many as still let it fit, budget-violating ones first,
 * most important first. Leaves the node and the state as they were.
 */
function selectVictimsOnNode(
  context: PreemptionContext,
  nodeInfo: NodeInfo,
): { victims: DeepReadonly<Pod>[]; numPDBViolations: number } | Status {
  const { pod, filters, now } = context;
  const state = cloneCycleState(context.state);
  const nominated = context.nominatedOn(nodeInfo.name);
  const fitsNow = () => runFiltersWithNominatedPods(filters, state, pod, nodeInfo, nominated);
  const priority = priorityOf(pod);
  const potential: [string, PodInfo][] = [...nodeInfo.pods.entries()].filter(
    ([, info]) => priorityOf(info.pod) < priority,
  );
  if (potential.length === 0)
    return {
      code: "UnschedulableAndUnresolvable",
      reasons: ["No preemption victims found for incoming pod"],
    };
  const uidOf = new Map(potential.map(([uid, info]) => [info, uid]));
  const removed = new Set<PodInfo>();
  const remove = (info: PodInfo) => {
    for (const plugin of filters) plugin.removePod?.(state, pod, info, nodeInfo);
    nodeInfo.removePod(uidOf.get(info)!);
    removed.add(info);
  };
  const add = (info: PodInfo) => {
    nodeInfo.addPod(info.pod, uidOf.get(info)!, info);
    for (const plugin of filters) plugin.addPod?.(state, pod, info, nodeInfo);
    removed.delete(info);
  };
  try {
    for (const [, info] of potential) remove(info);
    const fits = fitsNow();
    if (fits !== undefined) return fits;
    const ordered = potential.map(([, info]) => info).sort((a, b) => moreImportant(a.pod, b.pod, now));
    const { violating, nonViolating } = splitByBudgets(ordered, context.pdbs);
    const victims: DeepReadonly<Pod>[] = [];
    let numPDBViolations = 0;
    const reprieve = (info: PodInfo): boolean => {
      add(info);
      if (fitsNow() === undefined) return true;
      remove(info);
      victims.push(info.pod);
      return false;
    };
    for (const info of violating) if (!reprieve(info)) numPDBViolations++;
    for (const info of nonViolating) reprieve(info);
    if (violating.length > 0 && nonViolating.length > 0) victims.sort((a, b) => moreImportant(a, b, now));
    return { victims, numPDBViolations };
  } finally {
    // The node goes back as it was: every pod still taken out is put back.
    for (const info of [...removed]) nodeInfo.addPod(info.pod, uidOf.get(info)!, info);
  }
}

/** `calculateNumCandidates`: 10 % of the nodes, at least 100, at most all. */
export function numCandidates(numNodes: number): number {
  const n = Math.trunc((numNodes * minCandidateNodesPercentage) / 100);
  return Math.min(Math.max(n, minCandidateNodesAbsolute), numNodes);
}

/** `GetEarliestPodStartTime`: the earliest start among the most important victims. */
function earliestStartOfHighest(victims: readonly DeepReadonly<Pod>[], now: number): number {
  let highest = Number.NEGATIVE_INFINITY;
  let earliest = Number.POSITIVE_INFINITY;
  for (const victim of victims) {
    const priority = priorityOf(victim);
    const started = startTimeOf(victim, now);
    if (priority > highest) {
      highest = priority;
      earliest = started;
    } else if (priority === highest && started < earliest) earliest = started;
  }
  return earliest;
}

/**
 * `pickOneNodeForPreemption`: the fewest budget violations, then the lowest
 * most important victim, the lowest sum of priorities, the fewest victims,
 * the latest start of the most important victims; then the first.
 */
export function pickOneCandidate(
  candidates: readonly PreemptionCandidate[],
  now: number,
): PreemptionCandidate | undefined {
  // Priorities are shifted by 2^31 so that negative ones still add up as upstream's int64 sum.
  const scores: ((c: PreemptionCandidate) => number)[] = [
    (c) => -c.numPDBViolations,
    (c) => -priorityOf(c.victims[0]!),
    (c) => -c.victims.reduce((sum, victim) => sum + priorityOf(victim) + 2 ** 31, 0),
    (c) => -c.victims.length,
    (c) => earliestStartOfHighest(c.victims, now),
  ];
  let remaining = [...candidates];
  for (const score of scores) {
    if (remaining.length <= 1) break;
    let best = Number.NEGATIVE_INFINITY;
    let selected: PreemptionCandidate[] = [];
    for (const candidate of remaining) {
      const value = score(candidate);
      if (value > best) {
        best = value;
        selected = [];
      }
      if (value === best) selected.push(candidate);
    }
    remaining = selected;
  }
  return remaining[0];
}

/**
 * DefaultPreemption's PostFilter (`Evaluator.Preempt`) for a pod no node
 * fits: the candidate to evict for, or the "preemption: …" text saying why
 * none. Only nodes that failed with plain Unschedulable are tried, from a
 * random one on, until enough candidates are found.
 */
export function findPreemption(context: PreemptionContext): PreemptionOutcome {
  const { allNodes, diagnosis } = context;
  const why = ineligibility(context);
  if (why !== undefined) return { message: `preemption: ${why}`, clearNomination: false };
  const potential = allNodes.filter(
    (info) => diagnosis.nodeToStatus.get(info.name)?.code === "Unschedulable",
  );
  const statuses = new Map<string, Status>();
  const nonViolating: PreemptionCandidate[] = [];
  const violating: PreemptionCandidate[] = [];
  if (potential.length > 0) {
    const wanted = numCandidates(potential.length);
    const offset = Math.floor(context.random() * potential.length);
    for (let i = 0; i < potential.length; i++) {
      const nodeInfo = potential[(offset + i) % potential.length]!;
      const result = selectVictimsOnNode(context, nodeInfo);
      if ("code" in result) {
        statuses.set(nodeInfo.name, result);
        continue;
      }
      const candidate = { nodeName: nodeInfo.name, ...result };
      (candidate.numPDBViolations === 0 ? nonViolating : violating).push(candidate);
      if (nonViolating.length > 0 && nonViolating.length + violating.length >= wanted) break;
    }
  }
  const candidate = pickOneCandidate([...nonViolating, ...violating], context.now);
  if (candidate !== undefined) return { candidate };
  // No node can be made to fit: every node without a status of its own is one preemption cannot help.
  const absent = allNodes.length - statuses.size;
  const nodeToStatus = new Map(statuses);
  for (let i = 0; i < absent; i++) {
    nodeToStatus.set(`\u0000absent-${i}`, {
      code: "UnschedulableAndUnresolvable",
      reasons: ["Preemption is not helpful for scheduling"],
    });
  }
  const message = fitErrorMessage(allNodes.length, { nodeToStatus, unschedulablePlugins: new Set() });
  return { message: `preemption: ${message}`, clearNomination: true };
}
