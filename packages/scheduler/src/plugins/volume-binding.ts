import { type DeepReadonly, matchesTerm, type Pod } from "@reconcile/api";
import type { ControllerIndexer } from "@reconcile/controller";
import type { PersistentVolume, PersistentVolumeClaim } from "kubernetes-types/core/v1.js";
import type { StorageClass } from "kubernetes-types/storage/v1.js";
import { type CycleState, type Plugin, skipStatus, successStatus, unresolvable } from "../framework.js";

export const errReasonUnboundImmediateClaims = "pod has unbound immediate PersistentVolumeClaims";
export const errReasonNodeConflict = "node(s) had volume node affinity conflict";

/** The caches VolumeBinding reads. */
export interface VolumeListers {
  claims: ControllerIndexer<PersistentVolumeClaim>;
  volumes: ControllerIndexer<PersistentVolume>;
  classes: ControllerIndexer<StorageClass>;
}

/** {@link VolumeListers} over informers' caches. */
export function volumeListers(informers: {
  claims: { getIndexer(): ControllerIndexer<PersistentVolumeClaim> };
  volumes: { getIndexer(): ControllerIndexer<PersistentVolume> };
  classes: { getIndexer(): ControllerIndexer<StorageClass> };
}): VolumeListers {
  return {
    claims: informers.claims.getIndexer(),
    volumes: informers.volumes.getIndexer(),
    classes: informers.classes.getIndexer(),
  };
}

const stateKey = "VolumeBinding";

/** The claims a pod uses: `persistentVolumeClaim` volumes, and the one of each generic ephemeral volume. */
function claimNames(pod: DeepReadonly<Pod>): string[] {
  const names: string[] = [];
  for (const volume of pod.spec?.volumes ?? []) {
    if (volume.persistentVolumeClaim?.claimName) names.push(volume.persistentVolumeClaim.claimName);
    else if (volume.ephemeral !== undefined) names.push(`${pod.metadata?.name ?? ""}-${volume.name}`);
  }
  return names;
}

/**
 * VolumeBinding (upstream `plugins/volumebinding`), as far as this cluster
 * needs it: a pod waits, unscheduled, until each of its claims exists and
 * every claim whose class binds immediately is bound ("pod has unbound
 * immediate PersistentVolumeClaims"), and then fits only nodes its bound
 * volumes' node affinity allows ("node(s) had volume node affinity
 * conflict"). A claim or volume change requeues it. Claims of a
 * `WaitForFirstConsumer` class are left unbound to whichever node is chosen
 * (no volume is picked or provisioned for the node here).
 */
export function volumeBinding(listers: VolumeListers): Plugin {
  return {
    name: "VolumeBinding",
    events: [
      "NodeAdd",
      "NodeLabelChange",
      "PersistentVolumeClaimChange",
      "PersistentVolumeChange",
      "StorageClassChange",
    ],
    preFilter(state: CycleState, pod) {
      const names = claimNames(pod);
      if (names.length === 0) return skipStatus;
      const namespace = pod.metadata?.namespace ?? "";
      const bound: DeepReadonly<PersistentVolume>[] = [];
      let unboundImmediate = false;
      for (const name of names) {
        const claim = listers.claims.getByKey(`${namespace}/${name}`);
        if (claim === undefined) return unresolvable(`persistentvolumeclaim "${name}" not found`);
        if (claim.metadata?.deletionTimestamp !== undefined)
          return unresolvable(`persistentvolumeclaim "${name}" is being deleted`);
        const volumeName = claim.spec?.volumeName;
        if (volumeName) {
          const volume = listers.volumes.getByKey(volumeName);
          if (volume !== undefined) bound.push(volume);
          continue;
        }
        const className = claim.spec?.storageClassName ?? "";
        const mode = className === "" ? undefined : listers.classes.getByKey(className)?.volumeBindingMode;
        if (mode !== "WaitForFirstConsumer") unboundImmediate = true;
      }
      if (unboundImmediate) return unresolvable(errReasonUnboundImmediateClaims);
      state.set(stateKey, bound);
      return successStatus;
    },
    filter(state, _pod, nodeInfo) {
      const bound = state.get(stateKey) as DeepReadonly<PersistentVolume>[] | undefined;
      const node = nodeInfo.node;
      if (bound === undefined || node === undefined) return successStatus;
      for (const volume of bound) {
        const terms = volume.spec?.nodeAffinity?.required?.nodeSelectorTerms;
        if (terms === undefined) continue;
        if (!terms.some((term) => matchesTerm(term, node))) return unresolvable(errReasonNodeConflict);
      }
      return successStatus;
    },
  };
}
