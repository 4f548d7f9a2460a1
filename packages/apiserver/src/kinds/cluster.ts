import {
  clusterRoleBindings,
  clusterRoles,
  endpointSlices,
  endpoints,
  ingressClasses,
  ingresses,
  type KubeObject,
  limitRanges,
  networkPolicies,
  persistentVolumeClaims,
  persistentVolumes,
  priorityClasses,
  resourceQuotas,
  roleBindings,
  roles,
  serviceAccounts,
  storageClasses,
} from "@reconcile/api";
import type {
  Endpoints,
  LimitRange,
  PersistentVolume,
  PersistentVolumeClaim,
} from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import type { Ingress, NetworkPolicy } from "kubernetes-types/networking/v1.js";
import type { Role, RoleBinding } from "kubernetes-types/rbac/v1.js";
import type { PriorityClass } from "kubernetes-types/scheduling/v1.js";
import type { StorageClass } from "kubernetes-types/storage/v1.js";
import { jsonEqual } from "../json.js";
import type { FieldErrors } from "../registry/field-errors.js";
import { goStrings, goStruct } from "../registry/go-syntax.js";
import { pathSegmentProblems } from "../registry/meta-validation.js";
import type { Strategy } from "../registry/strategy.js";
import { defineKind, type ResourceDefinition } from "./definition.js";
import {
  endpointSlicePrinter,
  endpointsPrinter,
  ingressClassPrinter,
  ingressPrinter,
  networkPolicyPrinter,
  persistentVolumeClaimPrinter,
  persistentVolumePrinter,
  priorityClassPrinter,
  resourceQuotaPrinter,
  roleBindingPrinter,
  serviceAccountPrinter,
  storageClassPrinter,
} from "./printers/index.js";

// Configuration, storage, networking, policy and RBAC kinds that manifests and kubectl's prune
// allow-list use, served as storage with kube-apiserver's defaults and the checks clients rely on.
// Nothing acts on them: no volume binding, quota accounting, ingress or RBAC enforcement.

type Kube<T> = T & KubeObject;

const accessModes = ["ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"];
const reclaimPolicies = ["Delete", "Recycle", "Retain"];

const persistentVolumeClaimStrategy: Strategy = {
  prepareForCreate(object) {
    (object as { status?: PersistentVolumeClaim["status"] }).status = { phase: "Pending" };
  },
  applyDefaults(object) {
    const spec = ((object as Kube<PersistentVolumeClaim>).spec ??= {});
    spec.volumeMode ??= "Filesystem";
  },
  validate(object, errors) {
    const spec = (object as Kube<PersistentVolumeClaim>).spec ?? {};
    if ((spec.accessModes ?? []).length === 0)
      errors.required("spec.accessModes", "at least 1 access mode is required");
    for (const [i, mode] of (spec.accessModes ?? []).entries())
      if (!accessModes.includes(mode)) errors.notSupported(`spec.accessModes[${i}]`, mode, accessModes);
    if (spec.resources?.requests?.storage === undefined && spec.dataSourceRef === undefined)
      errors.required("spec.resources[storage]");
  },
  validateUpdate(object, old, errors) {
    // Only the requested size (to grow), volume attributes and the volume name may change once bound.
    const spec = { ...(object as Kube<PersistentVolumeClaim>).spec };
    const previous = { ...(old as Kube<PersistentVolumeClaim>).spec };
    for (const mutable of ["resources", "volumeName", "volumeAttributesClassName"] as const) {
      delete spec[mutable];
      delete previous[mutable];
    }
    // A claim without a class may be given one, once (the retroactive default StorageClass assignment).
    const oldAnnotations = (old as Kube<PersistentVolumeClaim>).metadata?.annotations ?? {};
    if (
      previous.storageClassName == null &&
      oldAnnotations["volume.beta.kubernetes.io/storage-class"] === undefined &&
      typeof spec.storageClassName === "string" &&
      spec.storageClassName !== ""
    )
      delete spec.storageClassName;
    if (!jsonEqual(spec, previous))
      errors.forbidden(
        "spec",
        "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims",
      );
  },
};

/** A PersistentVolume's sources, in the order upstream's validation counts them. */
const persistentVolumeSources = [
  "hostPath",
  "gcePersistentDisk",
  "awsElasticBlockStore",
  "glusterfs",
  "flocker",
  "flexVolume",
  "nfs",
  "rbd",
  "quobyte",
  "cinder",
  "cephfs",
  "iscsi",
  "fc",
  "azureFile",
  "vsphereVolume",
  "azureDisk",
  "photonPersistentDisk",
  "portworxVolume",
  "scaleIO",
  "local",
  "storageos",
  "csi",
];

const persistentVolumeStrategy: Strategy = {
  prepareForCreate(object) {
    (object as { status?: PersistentVolume["status"] }).status = { phase: "Pending" };
  },
  applyDefaults(object) {
    const spec = ((object as Kube<PersistentVolume>).spec ??= {});
    spec.persistentVolumeReclaimPolicy ??= "Retain";
    spec.volumeMode ??= "Filesystem";
  },
  validate(object, errors) {
    const spec = (object as Kube<PersistentVolume>).spec ?? {};
    if ((spec.accessModes ?? []).length === 0)
      errors.required("spec.accessModes", "must specify at least 1 access mode");
    for (const [i, mode] of (spec.accessModes ?? []).entries())
      if (!accessModes.includes(mode)) errors.notSupported(`spec.accessModes[${i}]`, mode, accessModes);
    if (spec.capacity?.storage === undefined) errors.required("spec.capacity");
    const policy = spec.persistentVolumeReclaimPolicy;
    if (policy !== undefined && !reclaimPolicies.includes(policy))
      errors.notSupported("spec.persistentVolumeReclaimPolicy", policy, reclaimPolicies);
    // One volume source, as ValidatePersistentVolumeSpec counts them.
    const sources = persistentVolumeSources.filter(
      (source) => (spec as Record<string, unknown>)[source] != null,
    );
    for (const extra of sources.slice(1))
      errors.forbidden(`spec.${extra}`, "may not specify more than 1 volume type");
    if (sources.length === 0) errors.required("spec", "must specify a volume type");
  },
};

const roleRefImmutable: Strategy["validateUpdate"] = (object, old, errors) => {
  const roleRef = (object as Kube<RoleBinding>).roleRef;
  if (!jsonEqual(roleRef, (old as Kube<RoleBinding>).roleRef))
    errors.invalid(
      "roleRef",
      goStruct("rbac.RoleRef", [
        ["APIGroup", roleRef?.apiGroup ?? ""],
        ["Kind", roleRef?.kind ?? ""],
        ["Name", roleRef?.name ?? ""],
      ]),
      "cannot change roleRef",
    );
};

function validateRules(object: KubeObject, errors: FieldErrors): void {
  for (const [i, rule] of ((object as Kube<Role>).rules ?? []).entries()) {
    if ((rule.verbs ?? []).length === 0)
      errors.required(`rules[${i}].verbs`, "verbs must contain at least one value");
    const urls = (rule.nonResourceURLs ?? []).length > 0;
    if (urls && object.kind === "Role")
      errors.invalid(
        `rules[${i}].nonResourceURLs`,
        rule.nonResourceURLs,
        "namespaced rules cannot apply to non-resource URLs",
      );
    if (!urls && (rule.resources ?? []).length === 0)
      errors.required(`rules[${i}].resources`, "resource rules must supply at least one resource");
  }
}

/** RBAC names are any path segment (`ValidateRBACName`): `system:discovery` is one. */
const rbacName = pathSegmentProblems;

const roleStrategy: Strategy = { nameRule: rbacName, validate: validateRules };

const bindingStrategy: Strategy = {
  nameRule: rbacName,
  validate(object, errors) {
    const binding = object as Kube<RoleBinding>;
    if (!binding.roleRef?.name) errors.required("roleRef.name");
    const kinds = object.kind === "RoleBinding" ? ["Role", "ClusterRole"] : ["ClusterRole"];
    if (binding.roleRef?.kind !== undefined && !kinds.includes(binding.roleRef.kind))
      errors.notSupported("roleRef.kind", binding.roleRef.kind, kinds);
    for (const [i, subject] of (binding.subjects ?? []).entries()) {
      if (!subject.name) errors.required(`subjects[${i}].name`);
      if (!["ServiceAccount", "User", "Group"].includes(subject.kind))
        errors.notSupported(`subjects[${i}].kind`, subject.kind, ["Group", "ServiceAccount", "User"]);
      // A ClusterRoleBinding has no namespace to lend its ServiceAccounts.
      if (subject.kind === "ServiceAccount" && object.kind === "ClusterRoleBinding" && !subject.namespace)
        errors.required(`subjects[${i}].namespace`);
    }
  },
  validateUpdate: roleRefImmutable,
};

const storageClassStrategy: Strategy = {
  applyDefaults(object) {
    const storageClass = object as Kube<StorageClass>;
    storageClass.reclaimPolicy ??= "Delete";
    storageClass.volumeBindingMode ??= "Immediate";
  },
  validate(object, errors) {
    const storageClass = object as Kube<StorageClass>;
    if (!storageClass.provisioner) errors.required("provisioner");
    const reclaim = storageClass.reclaimPolicy;
    if (reclaim !== undefined && reclaim !== "Delete" && reclaim !== "Retain")
      errors.notSupported("reclaimPolicy", reclaim, ["Delete", "Retain"]);
  },
  validateUpdate(object, old, errors) {
    for (const field of ["provisioner", "parameters", "reclaimPolicy", "volumeBindingMode"] as const)
      if (!jsonEqual((object as Kube<StorageClass>)[field], (old as Kube<StorageClass>)[field]))
        errors.forbidden(field, "updates to " + field + " are forbidden.");
  },
};

const priorityClassStrategy: Strategy = {
  applyDefaults(object) {
    (object as Kube<PriorityClass>).preemptionPolicy ??= "PreemptLowerPriority";
  },
  validate(object, errors) {
    const value = (object as Kube<PriorityClass>).value;
    if (value === undefined) errors.required("value");
    else if (value > 1_000_000_000 && !object.metadata?.name?.startsWith("system-"))
      errors.forbidden("value", "maximum allowed value of a user defined priority is 1000000000");
  },
  validateUpdate(object, old, errors) {
    if ((object as Kube<PriorityClass>).value !== (old as Kube<PriorityClass>).value)
      errors.forbidden("value", "may not be changed in an update.");
  },
};

const networkPolicyStrategy: Strategy = {
  applyDefaults(object) {
    // SetDefaults_NetworkPolicy: Ingress always, Egress when egress rules are given.
    const spec = ((object as Kube<NetworkPolicy>).spec ??= { podSelector: {} });
    if (spec.policyTypes === undefined || spec.policyTypes.length === 0)
      spec.policyTypes = spec.egress !== undefined ? ["Ingress", "Egress"] : ["Ingress"];
  },
  validate(object, errors) {
    // ValidateNetworkPolicySpec's policy types: Ingress or Egress, at most two.
    const policyTypes = (object as Kube<NetworkPolicy>).spec?.policyTypes ?? [];
    if (policyTypes.length > 2) {
      errors.invalid(
        "spec.policyTypes",
        goStrings(policyTypes, "[]networking.PolicyType"),
        "may not specify more than two policyTypes",
      );
      return;
    }
    policyTypes.forEach((type, i) => {
      if (type !== "Ingress" && type !== "Egress")
        errors.notSupported(`spec.policyTypes[${i}]`, type, ["Ingress", "Egress"]);
    });
  },
};

/** ValidateIngressSpec: something to route to. */
const ingressStrategy: Strategy = {
  prepareForCreate(object) {
    delete (object as { status?: unknown }).status;
  },
  validate(object, errors) {
    const spec = (object as Kube<Ingress>).spec;
    if ((spec?.rules ?? []).length === 0 && spec?.defaultBackend == null)
      errors.invalid("spec", spec?.rules, "either `defaultBackend` or `rules` must be specified");
  },
};

/**
 * SetDefaults_LimitRangeItem: a Container item's default limit falls back to
 * its max, its default request to its default limit, then to its min.
 */
const limitRangeStrategy: Strategy = {
  applyDefaults(object) {
    for (const item of (object as Kube<LimitRange>).spec?.limits ?? []) {
      if (item.type !== "Container") continue;
      const limits = (item.default ??= {});
      const requests = (item.defaultRequest ??= {});
      for (const [name, value] of Object.entries(item.max ?? {})) limits[name] ??= value;
      for (const [name, value] of Object.entries(limits)) requests[name] ??= value;
      for (const [name, value] of Object.entries(item.min ?? {})) requests[name] ??= value;
      if (Object.keys(limits).length === 0) delete item.default;
      if (Object.keys(requests).length === 0) delete item.defaultRequest;
    }
  },
};

const clearStatus: Strategy["prepareForCreate"] = (object) => {
  delete (object as { status?: unknown }).status;
};

/** `SetDefaults_Endpoints`: each subset's ports are TCP unless said. */
const endpointsStrategy: Strategy = {
  applyDefaults(object) {
    for (const subset of (object as Endpoints).subsets ?? [])
      for (const port of subset.ports ?? []) port.protocol ??= "TCP";
  },
};

/** discovery/v1 `SetDefaults_EndpointPort`: a port's name is "" and its protocol TCP unless said. */
const endpointSliceStrategy: Strategy = {
  applyDefaults(object) {
    for (const port of (object as EndpointSlice).ports ?? []) {
      port.name ??= "";
      port.protocol ??= "TCP";
    }
  },
};

/** The kinds of this file, in discovery order. */
export const clusterDefinitions: readonly ResourceDefinition[] = [
  defineKind({
    descriptor: serviceAccounts,
    printer: serviceAccountPrinter,
    protobufMessage: "ServiceAccount",
  }),
  defineKind({
    descriptor: endpoints,
    strategy: endpointsStrategy,
    printer: endpointsPrinter,
    allowsCreateOnUpdate: true,
  }),
  defineKind({
    descriptor: persistentVolumeClaims,
    strategy: persistentVolumeClaimStrategy,
    printer: persistentVolumeClaimPrinter,
  }),
  defineKind({
    descriptor: persistentVolumes,
    strategy: persistentVolumeStrategy,
    printer: persistentVolumePrinter,
  }),
  defineKind({
    descriptor: resourceQuotas,
    strategy: { prepareForCreate: clearStatus },
    protobufMessage: "ResourceQuota",
    printer: resourceQuotaPrinter,
  }),
  defineKind({ descriptor: limitRanges, strategy: limitRangeStrategy, allowsCreateOnUpdate: true }),
  defineKind({ descriptor: endpointSlices, strategy: endpointSliceStrategy, printer: endpointSlicePrinter }),
  defineKind({
    descriptor: ingresses,
    strategy: ingressStrategy,
    protobufMessage: "Ingress",
    printer: ingressPrinter,
  }),
  defineKind({ descriptor: ingressClasses, printer: ingressClassPrinter }),
  defineKind({ descriptor: networkPolicies, strategy: networkPolicyStrategy, printer: networkPolicyPrinter }),
  // RBAC's kinds may be created with a PUT (their strategies' AllowCreateOnUpdate), as bootstrap reconciliation does.
  defineKind({
    descriptor: roles,
    strategy: roleStrategy,
    protobufMessage: "Role",
    allowsCreateOnUpdate: true,
  }),
  defineKind({
    descriptor: clusterRoles,
    strategy: roleStrategy,
    protobufMessage: "ClusterRole",
    allowsCreateOnUpdate: true,
  }),
  defineKind({
    descriptor: roleBindings,
    strategy: bindingStrategy,
    protobufMessage: "RoleBinding",
    printer: roleBindingPrinter,
    allowsCreateOnUpdate: true,
  }),
  defineKind({
    descriptor: clusterRoleBindings,
    strategy: bindingStrategy,
    protobufMessage: "ClusterRoleBinding",
    printer: roleBindingPrinter,
    allowsCreateOnUpdate: true,
  }),
  defineKind({ descriptor: storageClasses, strategy: storageClassStrategy, printer: storageClassPrinter }),
  defineKind({
    descriptor: priorityClasses,
    strategy: priorityClassStrategy,
    protobufMessage: "PriorityClass",
    printer: priorityClassPrinter,
  }),
] as ResourceDefinition[];
