import type { Job } from "kubernetes-types/batch/v1.js";
import type { ConfigMap, Secret, Service } from "kubernetes-types/core/v1.js";
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
