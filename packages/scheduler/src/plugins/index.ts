import type { NamespaceLister } from "../affinity-terms.js";
import type { Plugin } from "../framework.js";
import { imageLocality } from "./image-locality.js";
import { interPodAffinity, interPodAffinityPlugin } from "./inter-pod-affinity.js";
import { nodeAffinity } from "./node-affinity.js";
import { nodeName } from "./node-name.js";
import { nodePorts } from "./node-ports.js";
import { nodeResourcesBalancedAllocation, nodeResourcesFit } from "./node-resources-fit.js";
import { nodeUnschedulable } from "./node-unschedulable.js";
import { nodeVolumeLimits } from "./node-volume-limits.js";
import { podTopologySpread, podTopologySpreadPlugin } from "./pod-topology-spread.js";
import type { SpreadingListers } from "./spread-selector.js";
import { taintToleration } from "./taint-toleration.js";
import { type VolumeListers, volumeBinding } from "./volume-binding.js";
import { volumeRestrictions } from "./volume-restrictions.js";
import { volumeZone } from "./volume-zone.js";

/** The default profile's plugins this scheduler has, in upstream's order (which is the Filter order). */
export const defaultPlugins: readonly Plugin[] = [
  nodeUnschedulable,
  nodeName,
  taintToleration,
  nodeAffinity,
  nodePorts,
  nodeResourcesFit,
  podTopologySpread,
  interPodAffinity,
  nodeResourcesBalancedAllocation,
  imageLocality,
];

/**
 * The default plugins given the caches some of them read: VolumeRestrictions,
 * NodeVolumeLimits, VolumeBinding and VolumeZone where upstream's profile has them (after NodeResourcesFit)
 * when `volumes` are given, InterPodAffinity resolving namespace selectors through
 * `namespaces`, and PodTopologySpread's system defaults selecting through `spreading`.
 */
export function defaultPluginsWith(listers: {
  volumes?: VolumeListers | undefined;
  namespaces?: NamespaceLister | undefined;
  spreading?: SpreadingListers | undefined;
}): readonly Plugin[] {
  const plugins = defaultPlugins.map((plugin) => {
    if (plugin === interPodAffinity && listers.namespaces !== undefined)
      return interPodAffinityPlugin({ namespaces: listers.namespaces });
    if (plugin === podTopologySpread && listers.spreading !== undefined)
      return podTopologySpreadPlugin({ spreading: listers.spreading });
    return plugin;
  });
  if (listers.volumes === undefined) return plugins;
  const at = plugins.indexOf(nodeResourcesFit) + 1;
  return [
    ...plugins.slice(0, at),
    volumeRestrictions(listers.volumes),
    nodeVolumeLimits(listers.volumes),
    volumeBinding(listers.volumes),
    volumeZone(listers.volumes),
    ...plugins.slice(at),
  ];
}

/** The default plugins with the volume plugins where upstream's profile has them (after NodeResourcesFit). */
export function defaultPluginsWithVolumes(listers: VolumeListers): readonly Plugin[] {
  return defaultPluginsWith({ volumes: listers });
}

export { imageLocality, normalizedImageName } from "./image-locality.js";
export {
  errReasonAffinityRulesNotMatch,
  errReasonAntiAffinityRulesNotMatch,
  errReasonExistingAntiAffinityRulesNotMatch,
  interPodAffinity,
  interPodAffinityPlugin,
} from "./inter-pod-affinity.js";
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
export {
  csiAttachLimitKey,
  errReasonMaxVolumeCountExceeded,
  nodeVolumeLimits,
} from "./node-volume-limits.js";
export {
  defaultConstraints,
  errReasonConstraintsNotMatch,
  errReasonNodeLabelNotMatch,
  hostnameLabel,
  podTopologySpread,
  podTopologySpreadPlugin,
  zoneLabel,
} from "./pod-topology-spread.js";
export { defaultSpreadSelector, type SpreadingListers, spreadingListers } from "./spread-selector.js";
export { findUntoleratedTaint, taintToleration, toleratesTaint } from "./taint-toleration.js";
export {
  errReasonNodeConflict,
  errReasonUnboundImmediateClaims,
  type VolumeListers,
  volumeBinding,
  volumeListers,
} from "./volume-binding.js";
export {
  errReasonDiskConflict,
  errReasonReadWriteOncePodConflict,
  volumeRestrictions,
} from "./volume-restrictions.js";
export { errReasonVolumeZoneConflict, volumeZone } from "./volume-zone.js";
