import type { Plugin } from "../framework.js";
import { nodeAffinity } from "./node-affinity.js";
import { nodeName } from "./node-name.js";
import { nodePorts } from "./node-ports.js";
import { nodeResourcesBalancedAllocation, nodeResourcesFit } from "./node-resources-fit.js";
import { nodeUnschedulable } from "./node-unschedulable.js";
import { podTopologySpread } from "./pod-topology-spread.js";
import { taintToleration } from "./taint-toleration.js";
import { type VolumeListers, volumeBinding } from "./volume-binding.js";

/** The default profile's plugins this scheduler has, in upstream's order (which is the Filter order). */
export const defaultPlugins: readonly Plugin[] = [
  nodeUnschedulable,
  nodeName,
  taintToleration,
  nodeAffinity,
  nodePorts,
  nodeResourcesFit,
  podTopologySpread,
  nodeResourcesBalancedAllocation,
];

/** The default plugins with VolumeBinding where upstream's profile has it (after NodeResourcesFit). */
export function defaultPluginsWithVolumes(listers: VolumeListers): readonly Plugin[] {
  const at = defaultPlugins.indexOf(nodeResourcesFit) + 1;
  return [...defaultPlugins.slice(0, at), volumeBinding(listers), ...defaultPlugins.slice(at)];
}

export {
  errReasonPodNotMatchNodeSelector,
  matchesRequiredNodeAffinity,
  matchesTerm,
  nodeAffinity,
} from "./node-affinity.js";
export { errReasonNodeName, nodeName } from "./node-name.js";
export { errReasonNodePorts, nodePorts, portsConflict } from "./node-ports.js";
export {
  balancedAllocationScore,
  fitsRequest,
  type InsufficientResource,
  leastAllocatedScore,
  nodeResourcesBalancedAllocation,
  nodeResourcesFit,
} from "./node-resources-fit.js";
export { errReasonUnschedulable, nodeUnschedulable } from "./node-unschedulable.js";
export { defaultConstraints, hostnameLabel, podTopologySpread, zoneLabel } from "./pod-topology-spread.js";
export { findUntoleratedTaint, taintToleration, toleratesTaint } from "./taint-toleration.js";
export {
  errReasonNodeConflict,
  errReasonUnboundImmediateClaims,
  type VolumeListers,
  volumeBinding,
} from "./volume-binding.js";
