import type { Node, NodeSelectorRequirement, NodeSelectorTerm, Pod } from "kubernetes-types/core/v1.js";
import type { DeepReadonly } from "./types.js";

// Required node affinity as the scheduler, the kubelet and the DaemonSet
// controller read it (upstream `k8s.io/component-helpers/scheduling/corev1/nodeaffinity`).

/**
 * Whether the node satisfies the pod's `nodeSelector` and required node
 * affinity (upstream `RequiredNodeAffinity.Match`): every nodeSelector label
 * equal, and at least one required term matching.
 */
export function matchesRequiredNodeAffinity(
  pod: Pod | DeepReadonly<Pod>,
  node: Node | DeepReadonly<Node>,
): boolean {
  const selector = pod.spec?.nodeSelector;
  if (selector != null) {
    const labels = node.metadata?.labels ?? {};
    // for…in: this runs for every node a pod is placed against, and allocates nothing.
    for (const key in selector) if (labels[key] !== selector[key]) return false;
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
export function matchesTerm(
  term: NodeSelectorTerm | DeepReadonly<NodeSelectorTerm>,
  node: Node | DeepReadonly<Node>,
): boolean {
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
  requirement: NodeSelectorRequirement | DeepReadonly<NodeSelectorRequirement>,
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
