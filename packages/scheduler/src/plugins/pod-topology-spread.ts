import { type Plugin, skipStatus, successStatus } from "../framework.js";
import { spreadingControllerUID } from "../node-info.js";
import { matchesRequiredNodeAffinity } from "./node-affinity.js";

export const hostnameLabel = "kubernetes.io/hostname";
export const zoneLabel = "topology.kubernetes.io/zone";

/** The system default constraints: hostname with maxSkew 3, zone with maxSkew 5, both ScheduleAnyway. */
export const defaultConstraints = [
  { topologyKey: hostnameLabel, maxSkew: 3 },
  { topologyKey: zoneLabel, maxSkew: 5 },
] as const;

const stateKey = "PreScorePodTopologySpread";

interface SpreadState {
  controllerUID: string;
  /** ln(K + 2) per constraint, K = distinct values among the feasible nodes. */
  weights: number[];
  /** Matching pods per zone value, over nodes that pass the pod's required node affinity. */
  podsPerZone: Map<string, number>;
}

/**
 * PodTopologySpread with the system default constraints only (scoring, no
 * filtering): a pod owned by a ReplicaSet, ReplicationController or
 * StatefulSet prefers nodes, and zones, holding fewer pods of the same
 * controller. Raw score per node `round(Σ count·ln(K + 2) + maxSkew − 1)`
 * over the constraints whose label the node has; normalized as
 * `100·(max + min − raw) / max`. Pods are matched by controller uid, which
 * equals matching by the controller's selector for the pods it owns.
 */
export const podTopologySpread: Plugin = {
  name: "PodTopologySpread",
  weight: 2,
  preScore(state, pod, feasible, allNodes) {
    const controllerUID = spreadingControllerUID(pod);
    if (controllerUID === undefined) return skipStatus;
    const weights = defaultConstraints.map(({ topologyKey }) => {
      const values = new Set<string>();
      for (const nodeInfo of feasible) {
        const value = nodeInfo.node?.metadata?.labels?.[topologyKey];
        if (value !== undefined) values.add(value);
      }
      return Math.log(values.size + 2);
    });
    const podsPerZone = new Map<string, number>();
    for (const nodeInfo of allNodes) {
      const node = nodeInfo.node;
      const zone = node?.metadata?.labels?.[zoneLabel];
      if (node === undefined || zone === undefined || !matchesRequiredNodeAffinity(pod, node)) continue;
      const count = nodeInfo.podsByController.get(controllerUID) ?? 0;
      podsPerZone.set(zone, (podsPerZone.get(zone) ?? 0) + count);
    }
    state.set(stateKey, { controllerUID, weights, podsPerZone } satisfies SpreadState);
    return successStatus;
  },
  score(state, _pod, nodeInfo) {
    const spread = state.get(stateKey) as SpreadState;
    const labels = nodeInfo.node?.metadata?.labels ?? {};
    let score = 0;
    defaultConstraints.forEach(({ topologyKey, maxSkew }, i) => {
      const value = labels[topologyKey];
      if (value === undefined) return;
      const count =
        topologyKey === hostnameLabel
          ? (nodeInfo.podsByController.get(spread.controllerUID) ?? 0)
          : (spread.podsPerZone.get(value) ?? 0);
      score += count * spread.weights[i]! + (maxSkew - 1);
    });
    return Math.round(score);
  },
  normalizeScore(_state, _pod, scores) {
    if (scores.length === 0) return;
    let min = Number.POSITIVE_INFINITY;
    let max = 0;
    for (const score of scores) {
      if (score < min) min = score;
      if (score > max) max = score;
    }
    for (let i = 0; i < scores.length; i++) {
      scores[i] = max === 0 ? 100 : Math.trunc((100 * (max + min - scores[i]!)) / max);
    }
  },
};
