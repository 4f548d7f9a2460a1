import type { DeepReadonly, Pod } from "@reconcile/api";
import { type CycleState, maxNodeScore, type Plugin } from "./framework.js";
import type { NodeInfo } from "./node-info.js";

// The scoring half of a scheduling cycle: the plugins' scores summed per
// feasible node, and the node picked.

/**
 * `prioritizeNodes`: each scoring plugin's PreScore, Score and
 * NormalizeScore over the feasible nodes, weighted and summed per node.
 */
export function prioritizeNodes(
  plugins: readonly Plugin[],
  state: CycleState,
  pod: DeepReadonly<Pod>,
  feasible: readonly NodeInfo[],
  allNodes: readonly NodeInfo[],
): number[] {
  const totals = new Array<number>(feasible.length).fill(0);
  // One buffer for every plugin's scores: this runs for every pod over hundreds of nodes.
  const scores = new Array<number>(feasible.length);
  for (const plugin of plugins) {
    if (plugin.score === undefined) continue;
    const status = plugin.preScore?.(state, pod, feasible, allNodes);
    if (status?.code === "Skip") continue;
    if (status !== undefined && status.code !== "Success") {
      throw new Error(`running PreScore plugin "${plugin.name}": ${status.reasons.join(", ")}`);
    }
    for (let i = 0; i < feasible.length; i++) scores[i] = plugin.score(state, pod, feasible[i]!);
    plugin.normalizeScore?.(state, pod, scores, feasible);
    const weight = plugin.weight ?? 1;
    for (let i = 0; i < scores.length; i++) {
      const score = scores[i]!;
      if (score < 0 || score > maxNodeScore) {
        throw new Error(
          `plugin "${plugin.name}" returns an invalid score ${score}, it should in the range of [0, 100] after normalizing`,
        );
      }
      totals[i]! += score * weight;
    }
  }
  return totals;
}

/** The highest total; ties broken uniformly at random by reservoir sampling (upstream `selectHost`). */
export function selectHost(
  feasible: readonly NodeInfo[],
  totals: readonly number[],
  random: () => number,
): string {
  let best = 0;
  let ties = 1;
  for (let i = 1; i < totals.length; i++) {
    if (totals[i]! > totals[best]!) {
      best = i;
      ties = 1;
    } else if (totals[i] === totals[best]) {
      ties++;
      if (random() * ties < 1) best = i;
    }
  }
  return feasible[best]!.name;
}

const minFeasibleNodesToFind = 100;
const minFeasibleNodesPercentageToFind = 5;

/**
 * How many feasible nodes to find before scoring (upstream
 * `numFeasibleNodesToFind`): all below 100 nodes; else `percentage` (of
 * `percentageOfNodesToScore`), or adaptively `50 − nodes/125` percent but at
 * least 5 %, and at least 100 nodes.
 */
export function numFeasibleNodesToFind(numAllNodes: number, percentage: number): number {
  if (numAllNodes < minFeasibleNodesToFind) return numAllNodes;
  let percent = percentage;
  if (percent === 0) percent = Math.max(50 - Math.trunc(numAllNodes / 125), minFeasibleNodesPercentageToFind);
  const count = Math.trunc((numAllNodes * percent) / 100);
  return count < minFeasibleNodesToFind ? minFeasibleNodesToFind : count;
}
