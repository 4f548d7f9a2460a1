import { matchesRequiredNodeAffinity, matchesTerm } from "@reconcile/api";
import { defaultNormalizeScore, type Plugin, skipStatus, successStatus, unresolvable } from "../framework.js";

export { matchesRequiredNodeAffinity, matchesTerm };

export const errReasonPodNotMatchNodeSelector = "node(s) didn't match Pod's node affinity/selector";
/** Every required term names nodes by metadata.name, and no name is in all of one term's requirements. */
export const errReasonConflict = "pod affinity terms conflict";

/**
 * NodeAffinity: Filter on `nodeSelector` and required node affinity; Score
 * by the summed weights of the preferred terms a node matches.
 */
export const nodeAffinity: Plugin = {
  name: "NodeAffinity",
  weight: 2,
  events: ["NodeAdd", "NodeLabelChange"],
  preFilter(_state, pod) {
    const hasSelector = Object.keys(pod.spec?.nodeSelector ?? {}).length > 0;
    const required = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
    if (required === undefined || required === null) return hasSelector ? successStatus : skipStatus;
    // Terms that each name nodes by metadata.name (a DaemonSet's pods): only those nodes can fit.
    let nodeNames: Set<string> | undefined;
    for (const term of required.nodeSelectorTerms ?? []) {
      let termNames: Set<string> | undefined;
      for (const field of term.matchFields ?? []) {
        if (field.key !== "metadata.name" || field.operator !== "In") continue;
        const values = new Set(field.values ?? []);
        termNames = termNames === undefined ? values : new Set([...termNames].filter((n) => values.has(n)));
      }
      // A term without a name requirement lets every node through (terms are ORed).
      if (termNames === undefined) return successStatus;
      nodeNames = new Set([...(nodeNames ?? []), ...termNames]);
    }
    if (nodeNames !== undefined && nodeNames.size === 0) return unresolvable(errReasonConflict);
    return nodeNames === undefined ? successStatus : { code: "Success", reasons: [], nodeNames };
  },
  filter(_state, pod, nodeInfo) {
    if (nodeInfo.node === undefined) return unresolvable("node not found");
    return matchesRequiredNodeAffinity(pod, nodeInfo.node)
      ? successStatus
      : unresolvable(errReasonPodNotMatchNodeSelector);
  },
  preScore(_state, pod) {
    const preferred = pod.spec?.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? [];
    return preferred.length === 0 ? skipStatus : successStatus;
  },
  score(_state, pod, nodeInfo) {
    const node = nodeInfo.node;
    if (node === undefined) return 0;
    let total = 0;
    for (const term of pod.spec?.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution ??
      []) {
      if (term.weight === 0) continue;
      if (matchesTerm(term.preference, node)) total += term.weight;
    }
    return total;
  },
  normalizeScore(_state, _pod, scores) {
    defaultNormalizeScore(scores, false);
  },
};
