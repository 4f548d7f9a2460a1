import type { DeepReadonly, Node } from "@reconcile/api";

/** `topology.kubernetes.io/zone`. */
export const labelTopologyZone = "topology.kubernetes.io/zone";
/** `topology.kubernetes.io/region`. */
export const labelTopologyRegion = "topology.kubernetes.io/region";
const labelFailureDomainBetaZone = "failure-domain.beta.kubernetes.io/zone";
const labelFailureDomainBetaRegion = "failure-domain.beta.kubernetes.io/region";

/**
 * The zone a node is counted in (upstream `GetZoneKey`): `region:\0:zone`
 * from the topology labels (the deprecated failure-domain.beta labels win
 * when both are set, as upstream reads them first); "" for a node with
 * neither. The NUL keeps a colon inside a region or zone name unambiguous.
 */
export function zoneKeyOf(node: DeepReadonly<Node>): string {
  const labels = node.metadata?.labels;
  if (labels === undefined) return "";
  const zone = labels[labelFailureDomainBetaZone] ?? labels[labelTopologyZone] ?? "";
  const region = labels[labelFailureDomainBetaRegion] ?? labels[labelTopologyRegion] ?? "";
  if (region === "" && zone === "") return "";
  return `${region}:\u0000:${zone}`;
}
