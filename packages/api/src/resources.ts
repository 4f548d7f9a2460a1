import type {
  MutatingWebhookConfiguration,
  ValidatingAdmissionPolicy,
  ValidatingAdmissionPolicyBinding,
  ValidatingWebhookConfiguration,
} from "kubernetes-types/admissionregistration/v1.js";
import type { CustomResourceDefinition } from "kubernetes-types/apiextensions/v1.js";
import type { ControllerRevision, DaemonSet, StatefulSet } from "kubernetes-types/apps/v1.js";
import type { TokenReview } from "kubernetes-types/authentication/v1.js";
import type { SubjectAccessReview } from "kubernetes-types/authorization/v1.js";
import type { HorizontalPodAutoscaler } from "kubernetes-types/autoscaling/v2.js";
import type { CronJob, Job } from "kubernetes-types/batch/v1.js";
import type { CertificateSigningRequest } from "kubernetes-types/certificates/v1.js";
import type {
  ComponentStatus,
  ConfigMap,
  Endpoints,
  LimitRange,
  PersistentVolume,
  PersistentVolumeClaim,
  PodTemplate,
  ReplicationController,
  ResourceQuota,
  Secret,
  Service,
  ServiceAccount,
} from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import type { Event as EventsV1Event } from "kubernetes-types/events/v1.js";
import type { FlowSchema, PriorityLevelConfiguration } from "kubernetes-types/flowcontrol/v1.js";
import type { Ingress, IngressClass, NetworkPolicy } from "kubernetes-types/networking/v1.js";
import type { RuntimeClass } from "kubernetes-types/node/v1.js";
import type { PodDisruptionBudget } from "kubernetes-types/policy/v1.js";
import type { ClusterRole, ClusterRoleBinding, Role, RoleBinding } from "kubernetes-types/rbac/v1.js";
import type { PriorityClass } from "kubernetes-types/scheduling/v1.js";
import type {
  CSIDriver,
  CSINode,
  CSIStorageCapacity,
  StorageClass,
  VolumeAttachment,
} from "kubernetes-types/storage/v1.js";
import type { GroupKind, GroupResource } from "./errors.js";
import type { Deployment, Event, KubeObject, Lease, Namespace, Node, Pod, ReplicaSet } from "./types.js";

/**
 * Describes one API resource: where it lives, what it is called, whether it is
 * namespaced. `T` is the object type, so a `Client` given a descriptor hands
 * back typed objects.
 */
export interface ResourceDescriptor<T extends KubeObject = KubeObject> {
  /** API group; "" for the core group. */
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly listKind: string;
  /** The resource name in URLs: `pods`, `replicasets`. */
  readonly plural: string;
  readonly singular: string;
  readonly namespaced: boolean;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  /** Subresources the resource serves. */
  readonly subresources: readonly ("status" | "scale")[];
  /** Type-only marker; never set at run time. */
  readonly __type?: T;
}

/** `v1`, `apps/v1`. */
export function apiVersionOf(resource: Pick<ResourceDescriptor, "group" | "version">): string {
  return resource.group ? `${resource.group}/${resource.version}` : resource.version;
}

export function groupResourceOf(resource: Pick<ResourceDescriptor, "group" | "plural">): GroupResource {
  return { group: resource.group, resource: resource.plural };
}

export function groupKindOf(resource: Pick<ResourceDescriptor, "group" | "kind">): GroupKind {
  return { group: resource.group, kind: resource.kind };
}

/** Builds a descriptor, filling `listKind`, `singular` and empty lists. */
export function defineResource<T extends KubeObject>(
  descriptor: Pick<ResourceDescriptor<T>, "group" | "version" | "kind" | "plural" | "namespaced"> &
    Partial<
      Pick<ResourceDescriptor<T>, "listKind" | "singular" | "shortNames" | "categories" | "subresources">
    >,
): ResourceDescriptor<T> {
  return Object.freeze({
    listKind: `${descriptor.kind}List`,
    singular: descriptor.kind.toLowerCase(),
    shortNames: [],
    categories: [],
    subresources: [],
    ...descriptor,
  });
}

export const pods = defineResource<Pod>({
  group: "",
  version: "v1",
  kind: "Pod",
  plural: "pods",
  namespaced: true,
  shortNames: ["po"],
  categories: ["all"],
  subresources: ["status"],
});

export const replicaSets = defineResource<ReplicaSet>({
  group: "apps",
  version: "v1",
  kind: "ReplicaSet",
  plural: "replicasets",
  namespaced: true,
  shortNames: ["rs"],
  categories: ["all"],
  subresources: ["status", "scale"],
});

export const deployments = defineResource<Deployment>({
  group: "apps",
  version: "v1",
  kind: "Deployment",
  plural: "deployments",
  namespaced: true,
  shortNames: ["deploy"],
  categories: ["all"],
  subresources: ["status", "scale"],
});

export const leases = defineResource<Lease>({
  group: "coordination.k8s.io",
  version: "v1",
  kind: "Lease",
  plural: "leases",
  namespaced: true,
});

export const events = defineResource<Event>({
  group: "",
  version: "v1",
  kind: "Event",
  plural: "events",
  namespaced: true,
  shortNames: ["ev"],
});

export const nodes = defineResource<Node>({
  group: "",
  version: "v1",
  kind: "Node",
  plural: "nodes",
  namespaced: false,
  shortNames: ["no"],
  subresources: ["status"],
});

export const namespaces = defineResource<Namespace>({
  group: "",
  version: "v1",
  kind: "Namespace",
  plural: "namespaces",
  namespaced: false,
  shortNames: ["ns"],
  subresources: ["status"],
});

export const configMaps = defineResource<ConfigMap>({
  group: "",
  version: "v1",
  kind: "ConfigMap",
  plural: "configmaps",
  namespaced: true,
  shortNames: ["cm"],
});

export const secrets = defineResource<Secret>({
  group: "",
  version: "v1",
  kind: "Secret",
  plural: "secrets",
  namespaced: true,
});

export const services = defineResource<Service>({
  group: "",
  version: "v1",
  kind: "Service",
  plural: "services",
  namespaced: true,
  shortNames: ["svc"],
  categories: ["all"],
  subresources: ["status"],
});

export const jobs = defineResource<Job>({
  group: "batch",
  version: "v1",
  kind: "Job",
  plural: "jobs",
  namespaced: true,
  categories: ["all"],
  subresources: ["status"],
});

// The kinds the API server serves beyond those above: workloads, configuration, storage,
// networking, policy, RBAC and the CRD kind. Every built-in descriptor is defined here, once.

type Kube<T> = T & KubeObject;

export const daemonSets = defineResource<Kube<DaemonSet>>({
  group: "apps",
  version: "v1",
  kind: "DaemonSet",
  plural: "daemonsets",
  namespaced: true,
  shortNames: ["ds"],
  categories: ["all"],
  subresources: ["status"],
});

export const statefulSets = defineResource<Kube<StatefulSet>>({
  group: "apps",
  version: "v1",
  kind: "StatefulSet",
  plural: "statefulsets",
  namespaced: true,
  shortNames: ["sts"],
  categories: ["all"],
  subresources: ["status", "scale"],
});

/** `apps/v1` ControllerRevisions: the immutable history snapshots of DaemonSets and StatefulSets. */
export const controllerRevisions = defineResource<Kube<ControllerRevision>>({
  group: "apps",
  version: "v1",
  kind: "ControllerRevision",
  plural: "controllerrevisions",
  namespaced: true,
});

export const replicationControllers = defineResource<Kube<ReplicationController>>({
  group: "",
  version: "v1",
  kind: "ReplicationController",
  plural: "replicationcontrollers",
  namespaced: true,
  shortNames: ["rc"],
  categories: ["all"],
  subresources: ["status", "scale"],
});

/** Pod templates kept as objects of their own (`kubectl get podtemplates`); no controller reads them. */
export const podTemplates = defineResource<Kube<PodTemplate>>({
  group: "",
  version: "v1",
  kind: "PodTemplate",
  plural: "podtemplates",
  namespaced: true,
});

export const cronJobs = defineResource<Kube<CronJob>>({
  group: "batch",
  version: "v1",
  kind: "CronJob",
  plural: "cronjobs",
  namespaced: true,
  shortNames: ["cj"],
  categories: ["all"],
  subresources: ["status"],
});

export const horizontalPodAutoscalers = defineResource<Kube<HorizontalPodAutoscaler>>({
  group: "autoscaling",
  version: "v2",
  kind: "HorizontalPodAutoscaler",
  plural: "horizontalpodautoscalers",
  namespaced: true,
  shortNames: ["hpa"],
  categories: ["all"],
  subresources: ["status"],
});

export const podDisruptionBudgets = defineResource<Kube<PodDisruptionBudget>>({
  group: "policy",
  version: "v1",
  kind: "PodDisruptionBudget",
  plural: "poddisruptionbudgets",
  namespaced: true,
  shortNames: ["pdb"],
  subresources: ["status"],
});

/** A namespaced core (`v1`) kind. */
function core<T extends KubeObject>(
  kind: string,
  plural: string,
  extra: Partial<Parameters<typeof defineResource<T>>[0]> = {},
): ResourceDescriptor<T> {
  return defineResource<T>({ group: "", version: "v1", kind, plural, namespaced: true, ...extra });
}

export const serviceAccounts = core<Kube<ServiceAccount>>("ServiceAccount", "serviceaccounts", {
  shortNames: ["sa"],
});
export const endpoints = core<Kube<Endpoints>>("Endpoints", "endpoints", { shortNames: ["ep"] });
/**
 * core/v1 ComponentStatus (deprecated since v1.19, still served): the health
 * of the control plane's components, computed when read. Not among
 * {@link builtinResources}: a server serves it from what it knows of them.
 */
export const componentStatuses = core<Kube<ComponentStatus>>("ComponentStatus", "componentstatuses", {
  shortNames: ["cs"],
  namespaced: false,
});
export const persistentVolumeClaims = core<Kube<PersistentVolumeClaim>>(
  "PersistentVolumeClaim",
  "persistentvolumeclaims",
  {
    shortNames: ["pvc"],
    subresources: ["status"],
  },
);
export const persistentVolumes = core<Kube<PersistentVolume>>("PersistentVolume", "persistentvolumes", {
  namespaced: false,
  shortNames: ["pv"],
  subresources: ["status"],
});
export const resourceQuotas = core<Kube<ResourceQuota>>("ResourceQuota", "resourcequotas", {
  shortNames: ["quota"],
  subresources: ["status"],
});
export const limitRanges = core<Kube<LimitRange>>("LimitRange", "limitranges", { shortNames: ["limits"] });

export const endpointSlices = defineResource<Kube<EndpointSlice>>({
  group: "discovery.k8s.io",
  version: "v1",
  kind: "EndpointSlice",
  plural: "endpointslices",
  namespaced: true,
});

const networking = { group: "networking.k8s.io", version: "v1" } as const;
export const ingresses = defineResource<Kube<Ingress>>({
  ...networking,
  kind: "Ingress",
  plural: "ingresses",
  namespaced: true,
  shortNames: ["ing"],
  subresources: ["status"],
});
export const ingressClasses = defineResource<Kube<IngressClass>>({
  ...networking,
  kind: "IngressClass",
  plural: "ingressclasses",
  namespaced: false,
});
export const networkPolicies = defineResource<Kube<NetworkPolicy>>({
  ...networking,
  kind: "NetworkPolicy",
  plural: "networkpolicies",
  namespaced: true,
  shortNames: ["netpol"],
});

const rbac = { group: "rbac.authorization.k8s.io", version: "v1" } as const;
export const roles = defineResource<Kube<Role>>({ ...rbac, kind: "Role", plural: "roles", namespaced: true });
export const clusterRoles = defineResource<Kube<ClusterRole>>({
  ...rbac,
  kind: "ClusterRole",
  plural: "clusterroles",
  namespaced: false,
});
export const roleBindings = defineResource<Kube<RoleBinding>>({
  ...rbac,
  kind: "RoleBinding",
  plural: "rolebindings",
  namespaced: true,
});
export const clusterRoleBindings = defineResource<Kube<ClusterRoleBinding>>({
  ...rbac,
  kind: "ClusterRoleBinding",
  plural: "clusterrolebindings",
  namespaced: false,
});

export const storageClasses = defineResource<Kube<StorageClass>>({
  group: "storage.k8s.io",
  version: "v1",
  kind: "StorageClass",
  plural: "storageclasses",
  namespaced: false,
  shortNames: ["sc"],
});
const storage = { group: "storage.k8s.io", version: "v1" } as const;
export const csiDrivers = defineResource<Kube<CSIDriver>>({
  ...storage,
  kind: "CSIDriver",
  plural: "csidrivers",
  namespaced: false,
});
export const csiNodes = defineResource<Kube<CSINode>>({
  ...storage,
  kind: "CSINode",
  plural: "csinodes",
  namespaced: false,
});
export const csiStorageCapacities = defineResource<Kube<CSIStorageCapacity>>({
  ...storage,
  kind: "CSIStorageCapacity",
  plural: "csistoragecapacities",
  namespaced: true,
});
export const volumeAttachments = defineResource<Kube<VolumeAttachment>>({
  ...storage,
  kind: "VolumeAttachment",
  plural: "volumeattachments",
  namespaced: false,
  subresources: ["status"],
});
export const priorityClasses = defineResource<Kube<PriorityClass>>({
  group: "scheduling.k8s.io",
  version: "v1",
  kind: "PriorityClass",
  plural: "priorityclasses",
  namespaced: false,
  shortNames: ["pc"],
});

const admissionRegistration = { group: "admissionregistration.k8s.io", version: "v1" } as const;
export const mutatingWebhookConfigurations = defineResource<Kube<MutatingWebhookConfiguration>>({
  ...admissionRegistration,
  kind: "MutatingWebhookConfiguration",
  plural: "mutatingwebhookconfigurations",
  namespaced: false,
  categories: ["api-extensions"],
});
export const validatingWebhookConfigurations = defineResource<Kube<ValidatingWebhookConfiguration>>({
  ...admissionRegistration,
  kind: "ValidatingWebhookConfiguration",
  plural: "validatingwebhookconfigurations",
  namespaced: false,
  categories: ["api-extensions"],
});
export const validatingAdmissionPolicies = defineResource<Kube<ValidatingAdmissionPolicy>>({
  ...admissionRegistration,
  kind: "ValidatingAdmissionPolicy",
  plural: "validatingadmissionpolicies",
  namespaced: false,
  categories: ["api-extensions"],
  subresources: ["status"],
});
export const validatingAdmissionPolicyBindings = defineResource<Kube<ValidatingAdmissionPolicyBinding>>({
  ...admissionRegistration,
  kind: "ValidatingAdmissionPolicyBinding",
  plural: "validatingadmissionpolicybindings",
  namespaced: false,
  categories: ["api-extensions"],
});

/** `apiextensions.k8s.io/v1` CustomResourceDefinitions: cluster-scoped, short names `crd` and `crds`. */
export const customResourceDefinitions = defineResource<Kube<CustomResourceDefinition>>({
  group: "apiextensions.k8s.io",
  version: "v1",
  kind: "CustomResourceDefinition",
  plural: "customresourcedefinitions",
  namespaced: false,
  shortNames: ["crd", "crds"],
  categories: ["api-extensions"],
  subresources: ["status"],
});

/**
 * An `apiregistration.k8s.io/v1` APIService: a group-version the API server
 * serves, itself (`Local`, no `service`) or through an aggregated server.
 * kubernetes-types has no kube-aggregator types; these are its fields.
 */
export interface APIService extends KubeObject {
  spec?: {
    group?: string;
    version?: string;
    groupPriorityMinimum: number;
    versionPriority: number;
    service?: { namespace?: string; name?: string; port?: number };
    caBundle?: string;
    insecureSkipTLSVerify?: boolean;
  };
  status?: {
    conditions?: {
      type: string;
      status: string;
      lastTransitionTime?: string;
      reason?: string;
      message?: string;
    }[];
  };
}

export const apiServices = defineResource<APIService>({
  group: "apiregistration.k8s.io",
  version: "v1",
  kind: "APIService",
  plural: "apiservices",
  namespaced: false,
  categories: ["api-extensions"],
  subresources: ["status"],
});

/** events.k8s.io/v1 Events: the core Events, served in the newer API's shape (the same objects). */
export const eventsV1Events = defineResource<Kube<EventsV1Event>>({
  group: "events.k8s.io",
  version: "v1",
  kind: "Event",
  plural: "events",
  namespaced: true,
  shortNames: ["ev"],
});

export const runtimeClasses = defineResource<Kube<RuntimeClass>>({
  group: "node.k8s.io",
  version: "v1",
  kind: "RuntimeClass",
  plural: "runtimeclasses",
  namespaced: false,
});

export const certificateSigningRequests = defineResource<Kube<CertificateSigningRequest>>({
  group: "certificates.k8s.io",
  version: "v1",
  kind: "CertificateSigningRequest",
  plural: "certificatesigningrequests",
  namespaced: false,
  shortNames: ["csr"],
  subresources: ["status"],
});

/** authentication.k8s.io/v1 TokenReviews: created only, answered in `status` (who does `spec.token` name?). */
export const tokenReviews = defineResource<Kube<TokenReview>>({
  group: "authentication.k8s.io",
  version: "v1",
  kind: "TokenReview",
  plural: "tokenreviews",
  namespaced: false,
});

/**
 * authorization.k8s.io/v1 SubjectAccessReviews: created only, answered in
 * `status` (may `spec.user` in `spec.groups` do `spec.resourceAttributes`?).
 */
export const subjectAccessReviews = defineResource<Kube<SubjectAccessReview>>({
  group: "authorization.k8s.io",
  version: "v1",
  kind: "SubjectAccessReview",
  plural: "subjectaccessreviews",
  namespaced: false,
});

const flowControl = { group: "flowcontrol.apiserver.k8s.io", version: "v1" } as const;
export const flowSchemas = defineResource<Kube<FlowSchema>>({
  ...flowControl,
  kind: "FlowSchema",
  plural: "flowschemas",
  namespaced: false,
  subresources: ["status"],
});
export const priorityLevelConfigurations = defineResource<Kube<PriorityLevelConfiguration>>({
  ...flowControl,
  kind: "PriorityLevelConfiguration",
  plural: "prioritylevelconfigurations",
  namespaced: false,
  subresources: ["status"],
});

/** The resources reconcile serves and uses, in discovery order. */
export const builtinResources: readonly ResourceDescriptor[] = [
  pods,
  events,
  nodes,
  namespaces,
  configMaps,
  secrets,
  services,
  replicaSets,
  deployments,
  jobs,
  leases,
] as ResourceDescriptor[];
