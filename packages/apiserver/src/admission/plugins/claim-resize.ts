import { parseQuantity, storageClasses } from "@reconcile/api";
import type { PersistentVolumeClaim } from "kubernetes-types/core/v1.js";
import { type AdmissionContext, type AdmissionPlugin, forbidden } from "../plugin.js";

/** The claim's class: `spec.storageClassName`, else the beta annotation (upstream's `GetPersistentVolumeClaimClass`). */
function classOf(claim: PersistentVolumeClaim): string {
  return (
    claim.metadata?.annotations?.["volume.beta.kubernetes.io/storage-class"] ??
    claim.spec?.storageClassName ??
    ""
  );
}

/**
 * PersistentVolumeClaimResize (`plugin/pkg/admission/storage/persistentvolume/resize`):
 * a claim's storage request may grow only once it is bound, and only when
 * its StorageClass (unchanged) allows volume expansion.
 */
export function claimResize(context: AdmissionContext): AdmissionPlugin {
  return {
    name: "PersistentVolumeClaimResize",
    resources: ["/persistentvolumeclaims"],
    async validate(a) {
      if (a.operation !== "UPDATE" || a.subresource !== "") return;
      const claim = a.object as PersistentVolumeClaim | undefined;
      const old = a.oldObject as PersistentVolumeClaim | undefined;
      if (claim === undefined || old === undefined) return;
      const size = claim.spec?.resources?.requests?.storage;
      const oldSize = old.spec?.resources?.requests?.storage;
      if (size === undefined || oldSize === undefined || parseQuantity(size).cmp(oldSize) <= 0) return;
      if (old.status?.phase !== "Bound")
        throw forbidden(a, "Only bound persistent volume claims can be expanded");
      const name = classOf(claim);
      const storageClass =
        name === "" || name !== classOf(old) ? undefined : await context.get(storageClasses, "", name);
      if (storageClass?.allowVolumeExpansion !== true)
        throw forbidden(
          a,
          "only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize",
        );
    },
  };
}
