import type { DeepReadonly, Node, Pod } from "@reconcile/api";
import type { NodeSelectorRequirement, NodeSelectorTerm } from "kubernetes-types/core/v1.js";
import { defaultNormalizeScore, type Plugin, skipStatus, successStatus, unresolvable } from "../framework.js";

export const errReasonPodNotMatchNodeSelector = "node(s) didn't match Pod's node affinity/selector";

/**
 * Whether the node satisfies the pod's `nodeSelector` and required node
 * affinity (upstream `RequiredNodeAffinity.Match`): every nodeSelector label
 * equal, and at least one required term matching.
 */
export function matchesRequiredNodeAffinity(pod: DeepReadonly<Pod>, node: DeepReadonly<Node>): boolean {
  const labels = node.metadata?.labels ?? {};
  for (const [key, value] of Object.entries(pod.spec?.nodeSelector ?? {})) {
    if (labels[key] !== value) return false;
  }
  const required = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (required === undefined || required === null) return true;
  return (required.nodeSelectorTerms ?? []).some((term) => matchesTerm(term, node));
}

/**
 * Whether one node selector term matches (upstream `nodeSelectorTerm`
 * matching): all its expressions and fields must match; a term with neither
 * matches nothing; a term that does not parse never matches.
 */
export function matchesTerm(term: DeepReadonly<NodeSelectorTerm>, node: DeepReadonly<Node>): boolean {
  const expressions = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (expressions.length === 0 && fields.length === 0) return false;
  const labels = node.metadata?.labels ?? {};
  for (const requirement of expressions) {
    const result = matchesRequirement(requirement, labels[requirement.key], requirement.key in labels);
    if (result !== true) return false;
  }
  for (const requirement of fields) {
    // Only metadata.name, with In/NotIn and exactly one value.
    if (requirement.key !== "metadata.name") return false;
    if (requirement.operator !== "In" && requirement.operator !== "NotIn") return false;
    if ((requirement.values ?? []).length !== 1) return false;
    const result = matchesRequirement(requirement, node.metadata?.name, true);
    if (result !== true) return false;
  }
  return true;
}

// true, false, or "invalid" (which never matches).
function matchesRequirement(
  requirement: DeepReadonly<NodeSelectorRequirement>,
  actual: string | undefined,
  present: boolean,
): boolean | "invalid" {
  const values = requirement.values ?? [];
  switch (requirement.operator) {
    case "In":
      if (values.length === 0) return "invalid";
      return present && values.includes(actual ?? "");
    case "NotIn":
      if (values.length === 0) return "invalid";
      return !present || !values.includes(actual ?? "");
    case "Exists":
      if (values.length > 0) return "invalid";
      return present;
    case "DoesNotExist":
      if (values.length > 0) return "invalid";
      return !present;
    case "Gt":
    case "Lt": {
      if (values.length !== 1) return "invalid";
      const bound = parseInteger(values[0]!);
      if (bound === undefined) return "invalid";
      if (!present) return false;
      const have = parseInteger(actual ?? "");
      if (have === undefined) return false;
      return requirement.operator === "Gt" ? have > bound : have < bound;
    }
    default:
      return "invalid";
  }
}

function parseInteger(text: string): number | undefined {
  return /^[+-]?\d+$/.test(text) ? Number(text) : undefined;
}

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
    return hasSelector || (required !== undefined && required !== null) ? successStatus : skipStatus;
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
