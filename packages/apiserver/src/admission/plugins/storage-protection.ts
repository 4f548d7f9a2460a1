import type { AdmissionPlugin } from "../plugin.js";

const finalizers: Record<string, string> = {
  "/persistentvolumeclaims": "kubernetes.io/pvc-protection",
  "/persistentvolumes": "kubernetes.io/pv-protection",
};

/**
 * StorageObjectInUseProtection (`plugin/pkg/admission/storage/storageobjectinuseprotection`):
 * every new claim gets the `kubernetes.io/pvc-protection` finalizer and every
 * new volume `kubernetes.io/pv-protection`, which the protection controllers
 * take off once nothing uses them — so a claim a pod still uses, or a volume
 * still bound, stays until it is free.
 */
export function storageObjectInUseProtection(): AdmissionPlugin {
  return {
    name: "StorageObjectInUseProtection",
    resources: Object.keys(finalizers),
    admit(a) {
      if (a.operation !== "CREATE" || a.subresource !== "" || a.object === undefined) return;
      const finalizer = finalizers[`${a.resource.group}/${a.resource.plural}`];
      if (finalizer === undefined) return;
      const meta = (a.object.metadata ??= {});
      const current = meta.finalizers ?? [];
      if (!current.includes(finalizer)) meta.finalizers = [...current, finalizer];
    },
  };
}
