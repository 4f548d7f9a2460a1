import type { DeepReadonly, Pod } from "@reconcile/api";
import type { PersistentVolumeClaim, Volume } from "kubernetes-types/core/v1.js";
import {
  type CycleState,
  type Plugin,
  skipStatus,
  successStatus,
  unresolvable,
  unschedulable,
} from "../framework.js";
import type { NodeInfo } from "../node-info.js";
import type { VolumeListers } from "./volume-binding.js";

export const errReasonDiskConflict = "node(s) had no available disk";
export const errReasonReadWriteOncePodConflict =
  "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode";

const stateKey = "VolumeRestrictions";

/** The cycle's state: the pod's ReadWriteOncePod claims, and how many of them other pods already use. */
class PreFilterState {
  constructor(
    readonly readWriteOncePodClaims: ReadonlySet<string>,
    public conflicting: number,
  ) {}

  clone(): PreFilterState {
    return new PreFilterState(this.readWriteOncePodClaims, this.conflicting);
  }

  /** `updateWithPod`: a pod using one of the claims adds (or, removed, takes away) a conflict. */
  update(pod: DeepReadonly<Pod>, by: 1 | -1): void {
    const namespace = pod.metadata?.namespace ?? "";
    for (const claim of claimKeys(pod, namespace))
      if (this.readWriteOncePodClaims.has(claim)) this.conflicting += by;
  }
}

function claimKeys(pod: DeepReadonly<Pod>, namespace: string): string[] {
  return (pod.spec?.volumes ?? []).flatMap((volume) =>
    volume.persistentVolumeClaim?.claimName ? [`${namespace}/${volume.persistentVolumeClaim.claimName}`] : [],
  );
}

/** Volumes whose disks one node may mount once (read-write). */
function needsRestrictionsCheck(volume: DeepReadonly<Volume>): boolean {
  return (
    volume.gcePersistentDisk != null ||
    volume.awsElasticBlockStore != null ||
    volume.rbd != null ||
    volume.iscsi != null
  );
}

/** `isVolumeConflict`: the same GCE disk, EBS volume, iSCSI target or RBD image, not read-only on both sides. */
function conflicts(volume: DeepReadonly<Volume>, existing: DeepReadonly<Volume>): boolean {
  const gce = volume.gcePersistentDisk;
  const otherGce = existing.gcePersistentDisk;
  if (
    gce != null &&
    otherGce != null &&
    gce.pdName === otherGce.pdName &&
    !(gce.readOnly && otherGce.readOnly)
  )
    return true;
  const ebs = volume.awsElasticBlockStore;
  if (
    ebs != null &&
    existing.awsElasticBlockStore != null &&
    ebs.volumeID === existing.awsElasticBlockStore.volumeID
  )
    return true;
  const iscsi = volume.iscsi;
  const otherIscsi = existing.iscsi;
  if (
    iscsi != null &&
    otherIscsi != null &&
    iscsi.iqn === otherIscsi.iqn &&
    !(iscsi.readOnly && otherIscsi.readOnly)
  )
    return true;
  const rbd = volume.rbd;
  const otherRbd = existing.rbd;
  if (rbd != null && otherRbd != null) {
    const monitors = new Set(rbd.monitors ?? []);
    const overlap = (otherRbd.monitors ?? []).some((monitor) => monitors.has(monitor));
    if (
      overlap &&
      (rbd.pool ?? "rbd") === (otherRbd.pool ?? "rbd") &&
      rbd.image === otherRbd.image &&
      !(rbd.readOnly && otherRbd.readOnly)
    )
      return true;
  }
  return false;
}

function satisfiesVolumeConflicts(pod: DeepReadonly<Pod>, nodeInfo: NodeInfo): boolean {
  const volumes = (pod.spec?.volumes ?? []).filter(needsRestrictionsCheck);
  if (volumes.length === 0) return true;
  for (const { pod: other } of nodeInfo.pods.values())
    for (const volume of volumes)
      for (const existing of other.spec?.volumes ?? []) if (conflicts(volume, existing)) return false;
  return true;
}

/**
 * VolumeRestrictions (upstream `plugins/volumerestrictions`): a node where
 * another pod mounts the same GCE persistent disk, EBS volume, iSCSI target
 * or RBD image read-write does not fit ("node(s) had no available disk"),
 * and a claim with the ReadWriteOncePod access mode that another pod already
 * uses keeps the pod off every node until that pod goes (preemption may
 * make it go). A claim that does not exist is unresolvable.
 */
export function volumeRestrictions(listers: Pick<VolumeListers, "claims">): Plugin {
  return {
    name: "VolumeRestrictions",
    events: ["AssignedPodDelete", "PersistentVolumeClaimChange", "NodeAdd"],
    preFilter(state: CycleState, pod, nodeInfos) {
      const needsCheck = (pod.spec?.volumes ?? []).some(needsRestrictionsCheck);
      const namespace = pod.metadata?.namespace ?? "";
      const readWriteOncePod = new Set<string>();
      for (const key of claimKeys(pod, namespace)) {
        const claim: DeepReadonly<PersistentVolumeClaim> | undefined = listers.claims.getByKey(key);
        if (claim === undefined)
          return unresolvable(`persistentvolumeclaim "${key.slice(namespace.length + 1)}" not found`);
        if (claim.spec?.accessModes?.includes("ReadWriteOncePod")) readWriteOncePod.add(key);
      }
      const s = new PreFilterState(readWriteOncePod, 0);
      if (readWriteOncePod.size > 0)
        for (const nodeInfo of nodeInfos)
          for (const { pod: other } of nodeInfo.pods.values()) s.update(other, 1);
      if (!needsCheck && s.conflicting === 0) return skipStatus;
      state.set(stateKey, s);
      return successStatus;
    },
    addPod(state, _pod, added) {
      (state.get(stateKey) as PreFilterState | undefined)?.update(added.pod, 1);
    },
    removePod(state, _pod, removed) {
      (state.get(stateKey) as PreFilterState | undefined)?.update(removed.pod, -1);
    },
    filter(state, pod, nodeInfo) {
      if (!satisfiesVolumeConflicts(pod, nodeInfo)) return unschedulable(errReasonDiskConflict);
      const s = state.get(stateKey) as PreFilterState | undefined;
      if (s !== undefined && s.conflicting > 0) return unschedulable(errReasonReadWriteOncePodConflict);
      return successStatus;
    },
  };
}
