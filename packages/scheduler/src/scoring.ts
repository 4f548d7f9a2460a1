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
  for (const plugin of plugins) {
    if (plugin.score === undefined) continue;
    const status = plugin.preScore?.(state, pod, feasible, allNodes);
    if (status?.code === "Skip") continue;
    if (status !== undefined && status.code !== "Success") {
      throw new Error(`running PreScore plugin "${plugin.name}": ${status.reasons.join(", ")}`);
    }
    const scores = feasible.map((nodeInfo) => plugin.score!(state, pod, nodeInfo));
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
