import {
  csiDrivers,
  csiNodes,
  csiStorageCapacities,
  isDNS1123Subdomain,
  isQualifiedName,
  type KubeObject,
  Quantity,
  volumeAttachments,
} from "@reconcile/api";
import type {
  CSIDriver,
  CSIDriverSpec,
  CSINode,
  CSINodeDriver,
  CSIStorageCapacity,
  VolumeAttachment,
  VolumeError,
} from "kubernetes-types/storage/v1.js";
import { jsonEqual } from "../json.js";
import { type FieldErrors, GoSyntax } from "../registry/field-errors.js";
import { goNil, goPointer, goStrings, goStruct } from "../registry/go-syntax.js";
import { validateLabelSelector } from "../registry/meta-validation.js";
import { defineKind, type ResourceDefinition } from "./definition.js";
import {
  csiDriverPrinter,
  csiNodePrinter,
  csiStorageCapacityPrinter,
  volumeAttachmentPrinter,
} from "./printers/storage-csi.js";

// storage.k8s.io/v1's CSI kinds as kube-apiserver's registries serve them (pkg/registry/storage and
// pkg/apis/storage/validation): what a CSI driver's deployment and the kubelet write, and what the
// attach/detach machinery reads. Nothing here attaches volumes; the kubelets register their CSINodes.

const fsGroupPolicies = ["File", "None", "ReadWriteOnceWithFSType"];
const lifecycleModes = ["Persistent", "Ephemeral"];
/** A CSINode driver's nodeID, long IDs allowed (`csiNodeIDLongerMaxLength`). */
const maxNodeIDLength = 256;
const maxAttachmentMetadataBytes = 256 * 1024;
const maxVolumeErrorMessageBytes = 1024;

/** `SetDefaults_CSIDriver` (with SELinuxMountReadWriteOncePod on, as in 1.32). */
function csiDriverDefaults(spec: CSIDriverSpec): void {
  spec.attachRequired ??= true;
  spec.podInfoOnMount ??= false;
  spec.storageCapacity ??= false;
  spec.fsGroupPolicy ??= "ReadWriteOnceWithFSType";
  if ((spec.volumeLifecycleModes ?? []).length === 0) spec.volumeLifecycleModes = ["Persistent"];
  spec.requiresRepublish ??= false;
  spec.seLinuxMount ??= false;
}

/** `validateCSIDriverSpec`; upstream names attachRequired's path `attachedRequired`. */
function validateCSIDriverSpec(spec: CSIDriverSpec, errors: FieldErrors): void {
  if (spec.attachRequired == null) errors.required("spec.attachedRequired");
  if (spec.podInfoOnMount == null) errors.required("spec.podInfoOnMount");
  if (spec.storageCapacity == null) errors.required("spec.storageCapacity");
  if (spec.fsGroupPolicy != null && !fsGroupPolicies.includes(spec.fsGroupPolicy))
    errors.notSupported("spec.fsGroupPolicy", spec.fsGroupPolicy, fsGroupPolicies);
  const audiences = new Set<string>();
  for (const [i, request] of (spec.tokenRequests ?? []).entries()) {
    const path = `spec.tokenRequests[${i}]`;
    if (audiences.has(request.audience)) {
      errors.duplicate(`${path}.audience`, request.audience);
      continue;
    }
    audiences.add(request.audience);
    const seconds = request.expirationSeconds;
    if (seconds == null) continue;
    if (seconds < 600)
      errors.invalid(`${path}.expirationSeconds`, seconds, "may not specify a duration less than 10 minutes");
    if (seconds > 2 ** 32)
      errors.invalid(
        `${path}.expirationSeconds`,
        seconds,
        "may not specify a duration larger than 2^32 seconds",
      );
  }
  for (const mode of spec.volumeLifecycleModes ?? [])
    if (!lifecycleModes.includes(mode))
      errors.notSupported("spec.volumeLifecycleModes", mode, lifecycleModes);
  if (spec.seLinuxMount == null) errors.required("spec.seLinuxMount");
}

export const csiDriverDefinition = defineKind({
  descriptor: csiDrivers,
  printer: csiDriverPrinter,
  allowsUnconditionalUpdate: false,
  // The strategy bumps the generation when the spec changes and sets none on create.
  tracksGeneration: "from-first-change",
  strategy: {
    applyDefaults(object) {
      csiDriverDefaults(((object as CSIDriver).spec ??= {}));
    },
    validate(object, errors) {
      validateCSIDriverSpec((object as CSIDriver).spec ?? {}, errors);
    },
    validateUpdate(object, old, errors) {
      const spec = (object as CSIDriver).spec ?? {};
      const before = (old as CSIDriver).spec ?? {};
      if (spec.attachRequired !== before.attachRequired)
        errors.invalid("spec.attachedRequired", spec.attachRequired ?? null, "field is immutable");
      if (!jsonEqual(spec.volumeLifecycleModes, before.volumeLifecycleModes))
        errors.invalid("spec.volumeLifecycleModes", spec.volumeLifecycleModes ?? null, "field is immutable");
    },
  },
});

/** `ValidateCSIDriverName`: empty, over 63 characters, or not a DNS subdomain once lower-cased. */
function validateDriverName(name: string | undefined, path: string, errors: FieldErrors): void {
  if (!name) errors.required(path);
  const value = name ?? "";
  if (value.length > 63) errors.tooLong(path, 63);
  for (const problem of isDNS1123Subdomain(value.toLowerCase())) errors.invalid(path, value, problem);
}

export const csiNodeDefinition = defineKind({
  descriptor: csiNodes,
  printer: csiNodePrinter,
  allowsUnconditionalUpdate: false,
  tracksGeneration: false,
  strategy: {
    validate(object, errors) {
      const names = new Set<string>();
      for (const [i, driver] of ((object as CSINode).spec?.drivers ?? []).entries()) {
        const path = `spec.drivers[${i}]`;
        validateDriverName(driver.name, `${path}.name`, errors);
        if (!driver.nodeID) errors.required(`${path}.nodeID`);
        else if (driver.nodeID.length > maxNodeIDLength)
          errors.invalid(`${path}.nodeID`, driver.nodeID, `must be ${maxNodeIDLength} characters or less`);
        const count = driver.allocatable?.count;
        if (count != null && count < 0)
          errors.invalid(`${path}.allocatable.count`, count, "must be greater than or equal to 0");
        if (names.has(driver.name)) errors.duplicate(`${path}.name`, driver.name);
        names.add(driver.name);
        const keys = new Set<string>();
        for (const key of driver.topologyKeys ?? []) {
          if (key === "") errors.required(path);
          if (keys.has(key)) errors.duplicate(path, key);
          keys.add(key);
          for (const problem of isQualifiedName(key)) errors.invalid(path, key, problem);
        }
      }
    },
    validateUpdate(object, old, errors) {
      // A registered driver's entry never changes; drivers come and go whole.
      const before = new Map(((old as CSINode).spec?.drivers ?? []).map((d) => [d.name, d]));
      for (const driver of (object as CSINode).spec?.drivers ?? []) {
        const previous = before.get(driver.name);
        // Upstream names the driver's Go type as the path.
        if (previous !== undefined && !jsonEqual(driver, previous))
          errors.invalid("CSINodeDriver", goCSINodeDriver(driver), "field is immutable");
      }
    },
  },
});

function validateVolumeError(error: VolumeError | undefined, path: string, errors: FieldErrors): void {
  // Upstream reports an over-long message with the attachment metadata's limit.
  if (error?.message !== undefined && Buffer.byteLength(error.message) > maxVolumeErrorMessageBytes)
    errors.tooLong(`${path}.message`, maxAttachmentMetadataBytes);
}

function validateVolumeAttachment(attachment: VolumeAttachment, errors: FieldErrors): void {
  const spec = attachment.spec ?? { attacher: "", nodeName: "", source: {} };
  if (!spec.attacher) errors.required("spec.attacher");
  const source = spec.source ?? {};
  const exactlyOne = "must specify exactly one of inlineVolumeSpec and persistentVolumeName";
  if (source.inlineVolumeSpec == null && source.persistentVolumeName == null)
    errors.required("spec.source", exactlyOne);
  else if (source.inlineVolumeSpec != null && source.persistentVolumeName != null)
    errors.forbidden("spec.source", exactlyOne);
  else if (source.persistentVolumeName === "")
    errors.required("spec.source.persistentVolumeName", "must specify non empty persistentVolumeName");
  for (const problem of isDNS1123Subdomain(spec.nodeName ?? ""))
    errors.invalid("spec.nodeName", spec.nodeName, problem);
  const status = attachment.status;
  const metadataBytes = Object.entries(status?.attachmentMetadata ?? {}).reduce(
    (sum, [key, value]) => sum + Buffer.byteLength(key) + Buffer.byteLength(value),
    0,
  );
  if (metadataBytes > maxAttachmentMetadataBytes)
    errors.tooLong("status.attachmentMetadata", maxAttachmentMetadataBytes);
  validateVolumeError(status?.attachError, "status.attachError", errors);
  validateVolumeError(status?.detachError, "status.detachError", errors);
  // ValidateVolumeAttachmentV1: the attacher is a CSI driver's name, the volume a PersistentVolume's.
  if (spec.attacher) validateDriverName(spec.attacher, "spec.attacher", errors);
  if (source.persistentVolumeName)
    for (const problem of isDNS1123Subdomain(source.persistentVolumeName))
      errors.invalid("spec.source.persistentVolumeName", source.persistentVolumeName, problem);
}

export const volumeAttachmentDefinition = defineKind({
  descriptor: volumeAttachments,
  printer: volumeAttachmentPrinter,
  allowsUnconditionalUpdate: false,
  tracksGeneration: false,
  strategy: {
    prepareForCreate(object) {
      delete (object as { status?: unknown }).status;
    },
    validate(object, errors) {
      validateVolumeAttachment(object as VolumeAttachment, errors);
    },
    validateUpdate(object, old, errors) {
      const spec = (object as VolumeAttachment).spec;
      if (!jsonEqual(spec, (old as VolumeAttachment).spec))
        errors.invalid("spec", goVolumeAttachmentSpec(spec), "field is immutable");
    },
  },
});

export const csiStorageCapacityDefinition = defineKind({
  descriptor: csiStorageCapacities,
  printer: csiStorageCapacityPrinter,
  allowsUnconditionalUpdate: false,
  tracksGeneration: false,
  strategy: {
    validate(object, errors) {
      const capacity = object as CSIStorageCapacity & KubeObject;
      if (capacity.nodeTopology != null) validateLabelSelector(capacity.nodeTopology, "nodeTopology", errors);
      for (const problem of isDNS1123Subdomain(capacity.storageClassName ?? ""))
        errors.invalid("storageClassName", capacity.storageClassName, problem);
      if (capacity.capacity != null && Quantity.parse(capacity.capacity).sign() < 0)
        errors.invalid(
          "capacity",
          Quantity.parse(capacity.capacity).toString(),
          "must be greater than or equal to 0",
        );
    },
    validateUpdate(object, old, errors) {
      const capacity = object as CSIStorageCapacity;
      const before = old as CSIStorageCapacity;
      if (!jsonEqual(capacity.nodeTopology, before.nodeTopology))
        errors.invalid("nodeTopology", capacity.nodeTopology ?? null, "field is immutable");
      if (capacity.storageClassName !== before.storageClassName)
        errors.invalid("storageClassName", capacity.storageClassName, "field is immutable");
    },
  },
});

/** The CSI kinds, in discovery order (after StorageClass). */
export const storageCSIDefinitions: readonly ResourceDefinition[] = [
  csiDriverDefinition,
  csiNodeDefinition,
  csiStorageCapacityDefinition,
  volumeAttachmentDefinition,
] as ResourceDefinition[];

/** A CSINode's driver entry as Go's `%#v` prints `storage.CSINodeDriver`. */
function goCSINodeDriver(driver: CSINodeDriver): GoSyntax {
  const count = driver.allocatable?.count;
  return goStruct("storage.CSINodeDriver", [
    ["Name", driver.name ?? ""],
    ["NodeID", driver.nodeID ?? ""],
    ["TopologyKeys", goStrings(driver.topologyKeys)],
    [
      "Allocatable",
      driver.allocatable === undefined
        ? goNil("*storage.VolumeNodeResources")
        : goPointer(
            "*storage.VolumeNodeResources",
            goStruct("storage.VolumeNodeResources", [["Count", goPointer("*int32", count)]]),
          ),
    ],
  ]);
}

/**
 * A VolumeAttachment's spec as Go's `%#v` prints `storage.VolumeAttachmentSpec`
 * (an inline volume spec, a large struct, is shown as its JSON).
 */
function goVolumeAttachmentSpec(spec: VolumeAttachment["spec"] | undefined): GoSyntax {
  const source = spec?.source;
  const inline = source?.inlineVolumeSpec;
  return goStruct("storage.VolumeAttachmentSpec", [
    ["Attacher", spec?.attacher ?? ""],
    [
      "Source",
      goStruct("storage.VolumeAttachmentSource", [
        ["PersistentVolumeName", goPointer("*string", source?.persistentVolumeName)],
        [
          "InlineVolumeSpec",
          inline === undefined
            ? goNil("*core.PersistentVolumeSpec")
            : goPointer("*core.PersistentVolumeSpec", new GoSyntax(JSON.stringify(inline))),
        ],
      ]),
    ],
    ["NodeName", spec?.nodeName ?? ""],
  ]);
}
