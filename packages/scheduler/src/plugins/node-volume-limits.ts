import { createHash } from "node:crypto";
import type { DeepReadonly, Pod } from "@reconcile/api";
import type { PersistentVolumeClaim } from "kubernetes-types/core/v1.js";
import {
  type Plugin,
  type Status,
  skipStatus,
  successStatus,
  unresolvable,
  unschedulable,
} from "../framework.js";
import type { NodeInfo } from "../node-info.js";
import type { VolumeListers } from "./volume-binding.js";

export const errReasonMaxVolumeCountExceeded = "node(s) exceed max volume count";

/** The prefix of a node's attachable-volume limits in its allocatable resources. */
const attachableVolumesPrefix = "attachable-volumes-";
const csiAttachLimitPrefix = "attachable-volumes-csi-";
/** A resource name's length limit (upstream `ResourceNameLengthLimit`). */
const resourceNameLengthLimit = 63;

/**
 * The allocatable resource that limits a CSI driver's volumes on a node
 * (upstream `GetCSIAttachLimitKey`): `attachable-volumes-csi-<driver>`, or,
 * when that is 63 characters or longer, the driver's first 23 characters
 * and 16 hex digits of its SHA-1.
 */
export function csiAttachLimitKey(driver: string): string {
  if (csiAttachLimitPrefix.length + driver.length < resourceNameLengthLimit)
    return csiAttachLimitPrefix + driver;
  const hashed = createHash("sha1").update(driver).digest("hex").slice(0, 16);
  return csiAttachLimitPrefix + driver.slice(0, 23) + hashed;
}

/** A claim not bound yet stands for one volume of its class's driver, named apart from any real handle. */
const unboundHandlePrefix = "\u0000unbound";

/** Why a pod's volumes cannot be counted: unresolvable (a missing claim) or an error. */
class CountingError extends Error {
  constructor(
    message: string,
    readonly unresolvable: boolean,
  ) {
    super(message);
  }
}

/**
 * NodeVolumeLimits (upstream `plugins/nodevolumelimits`, CSILimits): a
 * node takes a pod only if the CSI volumes its pods use, with the pod's new
 * ones, stay within each driver's limit. A volume is counted once per node
 * by driver and handle: a bound claim's volume by its `csi` source, a claim
 * not bound yet (or bound to a volume not in the cache) by its class's
 * provisioner. Limits are the node's allocatable `attachable-volumes-csi-*`
 * resources (CSINode objects are not served here); a node without them takes
 * any number. In-tree volumes are not migrated to CSI drivers here, so they
 * are not counted.
 */
export function nodeVolumeLimits(listers: VolumeListers): Plugin {
  return {
    name: "NodeVolumeLimits",
    events: ["AssignedPodDelete", "PersistentVolumeClaimChange", "NodeAdd", "NodeAllocatableChange"],
    preFilter(_state, pod) {
      const uses = (pod.spec?.volumes ?? []).some(
        (v) => v.persistentVolumeClaim != null || v.ephemeral != null,
      );
      return uses ? successStatus : skipStatus;
    },
    filter(_state, pod, nodeInfo) {
      if ((pod.spec?.volumes ?? []).length === 0) return successStatus;
      const added = new Map<string, string>();
      try {
        attachableVolumes(listers, pod, true, added);
      } catch (error) {
        return statusOf(error);
      }
      if (added.size === 0) return successStatus;
      const limits = volumeLimits(nodeInfo);
      if (limits.size === 0) return successStatus;
      const attached = new Map<string, string>();
      try {
        for (const { pod: existing } of nodeInfo.pods.values())
          attachableVolumes(listers, existing, false, attached);
      } catch (error) {
        return statusOf(error);
      }
      const attachedCount = new Map<string, number>();
      for (const [volume, limitKey] of attached) {
        // A volume another pod on the node already uses counts once.
        added.delete(volume);
        attachedCount.set(limitKey, (attachedCount.get(limitKey) ?? 0) + 1);
      }
      const addedCount = new Map<string, number>();
      for (const limitKey of added.values()) addedCount.set(limitKey, (addedCount.get(limitKey) ?? 0) + 1);
      for (const [limitKey, count] of addedCount) {
        const limit = limits.get(limitKey);
        if (limit !== undefined && (attachedCount.get(limitKey) ?? 0) + count > limit)
          return unschedulable(errReasonMaxVolumeCountExceeded);
      }
      return successStatus;
    },
  };
}

function statusOf(error: unknown): Status {
  if (error instanceof CountingError && error.unresolvable) return unresolvable(error.message);
  return { code: "Error", reasons: [error instanceof Error ? error.message : String(error)] };
}

/** The node's attachable-volume limits from its allocatable resources. */
function volumeLimits(nodeInfo: NodeInfo): Map<string, number> {
  const limits = new Map<string, number>();
  for (const [name, amount] of nodeInfo.allocatable.scalar)
    if (name.startsWith(attachableVolumesPrefix)) limits.set(name, amount);
  return limits;
}

/**
 * Adds the CSI volumes `pod` uses to `into`, as `driver/handle` → limit key
 * (upstream `filterAttachableVolumes`). A claim that is missing fails the
 * new pod; an existing pod's is skipped. A generic ephemeral volume's claim
 * must be the pod's own.
 */
function attachableVolumes(
  listers: VolumeListers,
  pod: DeepReadonly<Pod>,
  newPod: boolean,
  into: Map<string, string>,
): void {
  const namespace = pod.metadata?.namespace ?? "";
  for (const volume of pod.spec?.volumes ?? []) {
    let claimName: string;
    const ephemeral = volume.ephemeral != null;
    if (volume.persistentVolumeClaim != null) claimName = volume.persistentVolumeClaim.claimName;
    else if (ephemeral) claimName = `${pod.metadata?.name ?? ""}-${volume.name}`;
    else continue;
    if (!claimName) throw new CountingError("PersistentVolumeClaim had no name", false);
    const claim = listers.claims.getByKey(`${namespace}/${claimName}`);
    if (claim === undefined) {
      if (newPod)
        throw new CountingError(
          `looking up PVC ${namespace}/${claimName}: persistentvolumeclaim "${claimName}" not found`,
          true,
        );
      continue;
    }
    if (ephemeral && !ownedBy(claim, pod))
      throw new CountingError(
        `PVC ${namespace}/${claimName} was not created for pod ${namespace}/${pod.metadata?.name ?? ""} (pod is not owner)`,
        false,
      );
    const csi = csiVolumeOf(listers, claim);
    if (csi === undefined) continue;
    into.set(`${csi.driver}/${csi.handle}`, csiAttachLimitKey(csi.driver));
  }
}

function ownedBy(claim: DeepReadonly<PersistentVolumeClaim>, pod: DeepReadonly<Pod>): boolean {
  const owner = claim.metadata?.ownerReferences?.find((ref) => ref.controller === true);
  return owner !== undefined && owner.kind === "Pod" && owner.uid === pod.metadata?.uid;
}

/** The driver and handle of a claim's volume (upstream `getCSIDriverInfo`), or of its class's driver while unbound. */
function csiVolumeOf(
  listers: VolumeListers,
  claim: DeepReadonly<PersistentVolumeClaim>,
): { driver: string; handle: string } | undefined {
  const volumeName = claim.spec?.volumeName;
  const volume = volumeName ? listers.volumes.getByKey(volumeName) : undefined;
  if (volume !== undefined) {
    const csi = volume.spec?.csi;
    return csi == null ? undefined : { driver: csi.driver, handle: csi.volumeHandle };
  }
  // The beta annotation first, as upstream's `GetPersistentVolumeClaimClass` reads it.
  const className =
    claim.metadata?.annotations?.["volume.beta.kubernetes.io/storage-class"] ??
    claim.spec?.storageClassName ??
    "";
  if (className === "") return undefined;
  const storageClass = listers.classes.getByKey(className);
  if (storageClass === undefined) return undefined;
  const handle = `${unboundHandlePrefix}-${claim.metadata?.namespace ?? ""}/${claim.metadata?.name ?? ""}`;
  return { driver: storageClass.provisioner, handle };
}
