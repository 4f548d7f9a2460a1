import { Quantity } from "@reconcile/api";
import { definitions as csiDefinitions } from "../../schemas/storage-csi.generated.js";
import { ageColumn, ageOf, column, type Loose, nameColumn, nameOf, type Printer } from "./columns.js";

// kube-apiserver's columns (pkg/printers/internalversion/printers.go) for storage.k8s.io's CSI kinds.
// Most column descriptions are the fields' own docs (`SwaggerDoc()`), read from their definitions.

/** The documentation of `field` in the storage.k8s.io/v1 definition `definition`. */
function fieldDoc(definition: string, field: string): string {
  const properties = (csiDefinitions[`io.k8s.api.storage.v1.${definition}`] as Loose)?.properties;
  return String(properties?.[field]?.description ?? "");
}

const flag = (value: unknown, unset: boolean) => (typeof value === "boolean" ? value : unset);

export const csiNodePrinter: Printer = {
  columns: [
    nameColumn,
    column("Drivers", "integer", "Drivers indicates the number of CSI drivers registered on the node"),
    ageColumn,
  ],
  cells(node: Loose, now) {
    const drivers = Array.isArray(node.spec?.drivers) ? node.spec.drivers.length : 0;
    return [nameOf(node), drivers, ageOf(node, now)];
  },
};

export const csiDriverPrinter: Printer = {
  columns: [
    nameColumn,
    column("AttachRequired", "boolean", fieldDoc("CSIDriverSpec", "attachRequired")),
    column("PodInfoOnMount", "boolean", fieldDoc("CSIDriverSpec", "podInfoOnMount")),
    column("StorageCapacity", "boolean", fieldDoc("CSIDriverSpec", "storageCapacity")),
    column("TokenRequests", "string", fieldDoc("CSIDriverSpec", "tokenRequests")),
    column("RequiresRepublish", "boolean", fieldDoc("CSIDriverSpec", "requiresRepublish")),
    column("Modes", "string", fieldDoc("CSIDriverSpec", "volumeLifecycleModes")),
    ageColumn,
  ],
  cells(driver: Loose, now) {
    const spec = driver.spec ?? {};
    const audiences: string[] = Array.isArray(spec.tokenRequests)
      ? spec.tokenRequests.map((request: Loose) => String(request?.audience ?? ""))
      : [];
    const modes: string[] = Array.isArray(spec.volumeLifecycleModes) ? spec.volumeLifecycleModes : [];
    return [
      nameOf(driver),
      flag(spec.attachRequired, true),
      flag(spec.podInfoOnMount, false),
      flag(spec.storageCapacity, false),
      audiences.length > 0 ? audiences.join(",") : "<unset>",
      flag(spec.requiresRepublish, false),
      modes.length > 0 ? modes.join(",") : "<none>",
      ageOf(driver, now),
    ];
  },
};

export const volumeAttachmentPrinter: Printer = {
  columns: [
    nameColumn,
    column("Attacher", "string", fieldDoc("VolumeAttachmentSpec", "attacher"), 0, "name"),
    column("PV", "string", fieldDoc("VolumeAttachmentSource", "persistentVolumeName")),
    column("Node", "string", fieldDoc("VolumeAttachmentSpec", "nodeName")),
    column("Attached", "boolean", fieldDoc("VolumeAttachmentStatus", "attached")),
    ageColumn,
  ],
  cells(attachment: Loose, now) {
    return [
      nameOf(attachment),
      String(attachment.spec?.attacher ?? ""),
      String(attachment.spec?.source?.persistentVolumeName ?? ""),
      String(attachment.spec?.nodeName ?? ""),
      attachment.status?.attached === true,
      ageOf(attachment, now),
    ];
  },
};

/** `printCSIStorageCapacity`: no age column; `<unset>` for a capacity not reported. */
export const csiStorageCapacityPrinter: Printer = {
  columns: [
    nameColumn,
    column("StorageClassName", "string", fieldDoc("CSIStorageCapacity", "storageClassName")),
    column("Capacity", "string", fieldDoc("CSIStorageCapacity", "capacity")),
  ],
  cells(capacity: Loose) {
    let text = "<unset>";
    if (capacity.capacity !== undefined && capacity.capacity !== null) {
      try {
        text = Quantity.parse(capacity.capacity).toString();
      } catch {
        text = String(capacity.capacity);
      }
    }
    return [nameOf(capacity), String(capacity.storageClassName ?? ""), text];
  },
};
