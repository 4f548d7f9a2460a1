import type { DeepReadonly, Node } from "@reconcile/api";
import type { PersistentVolume } from "kubernetes-types/core/v1.js";
import { type CycleState, type Plugin, skipStatus, successStatus, unresolvable } from "../framework.js";
import type { VolumeListers } from "./volume-binding.js";

export const errReasonVolumeZoneConflict = "node(s) had no available volume zone";

const zoneLabel = "topology.kubernetes.io/zone";
const regionLabel = "topology.kubernetes.io/region";
const betaZoneLabel = "failure-domain.beta.kubernetes.io/zone";
const betaRegionLabel = "failure-domain.beta.kubernetes.io/region";

/** The labels a volume's topology is read from, GA and beta. */
const topologyLabels = [betaZoneLabel, zoneLabel, betaRegionLabel, regionLabel];

/** A beta label as its GA name (a volume labelled the old way matches a node labelled the new way). */
const gaLabelOf: Readonly<Record<string, string>> = {
  [betaZoneLabel]: zoneLabel,
  [betaRegionLabel]: regionLabel,
};

/** One topology constraint of a bound volume: a label and the values it allows. */
interface Topology {
  readonly key: string;
  readonly values: ReadonlySet<string>;
}

const stateKey = "VolumeZone";

/** `LabelZonesToSet`: several zones in one value are joined by `__`; an empty member voids the label. */
function zones(value: string): Set<string> | undefined {
  const members = value.split("__");
  return members.every((member) => member !== "") ? new Set(members) : undefined;
}

function topologiesOf(volume: DeepReadonly<PersistentVolume>): Topology[] {
  const topologies: Topology[] = [];
  for (const key of topologyLabels) {
    const value = volume.metadata?.labels?.[key];
    const values = value === undefined ? undefined : zones(value);
    if (values !== undefined) topologies.push({ key, values });
  }
  return topologies;
}

/**
 * VolumeZone (upstream `plugins/volumezone`): a pod whose bound volumes are
 * labelled with a zone or region fits only nodes in one of them ("node(s)
 * had no available volume zone"); a node without topology labels fits any.
 * Unbound claims of a `WaitForFirstConsumer` class are left to VolumeBinding.
 */
export function volumeZone(listers: VolumeListers): Plugin {
  return {
    name: "VolumeZone",
    events: [
      "NodeAdd",
      "NodeLabelChange",
      "PersistentVolumeClaimChange",
      "PersistentVolumeChange",
      "StorageClassChange",
    ],
    preFilter(state: CycleState, pod) {
      const namespace = pod.metadata?.namespace ?? "";
      const topologies: Topology[] = [];
      for (const volume of pod.spec?.volumes ?? []) {
        const claimName = volume.persistentVolumeClaim?.claimName;
        if (!claimName) continue;
        const claim = listers.claims.getByKey(`${namespace}/${claimName}`);
        if (claim === undefined) return unresolvable(`persistentvolumeclaim "${claimName}" not found`);
        const volumeName = claim.spec?.volumeName;
        if (!volumeName) {
          const className = claim.spec?.storageClassName ?? "";
          if (className === "")
            return unresolvable("PersistentVolumeClaim had no pv name and storageClass name");
          const storageClass = listers.classes.getByKey(className);
          if (storageClass === undefined)
            return unresolvable(`storageclass.storage.k8s.io "${className}" not found`);
          if (storageClass.volumeBindingMode === undefined)
            return unresolvable(`VolumeBindingMode not set for StorageClass "${className}"`);
          if (storageClass.volumeBindingMode === "WaitForFirstConsumer") continue;
          return unresolvable("PersistentVolume had no name");
        }
        const bound = listers.volumes.getByKey(volumeName);
        if (bound === undefined) return unresolvable(`persistentvolume "${volumeName}" not found`);
        topologies.push(...topologiesOf(bound));
      }
      if (topologies.length === 0) return skipStatus;
      state.set(stateKey, topologies);
      return successStatus;
    },
    filter(state, _pod, nodeInfo) {
      const topologies = state.get(stateKey) as Topology[] | undefined;
      const labels = (nodeInfo.node as DeepReadonly<Node> | undefined)?.metadata?.labels ?? {};
      if (topologies === undefined || !topologyLabels.some((key) => labels[key] !== undefined))
        return successStatus;
      for (const { key, values } of topologies) {
        const value = labels[key] ?? labels[gaLabelOf[key] ?? key];
        if (value === undefined || !values.has(value)) return unresolvable(errReasonVolumeZoneConflict);
      }
      return successStatus;
    },
  };
}
