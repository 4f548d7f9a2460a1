import type { Deployment, ReplicaSet } from "kubernetes-types/apps/v1.js";
import type { Lease } from "kubernetes-types/coordination/v1.js";
import type { Event, Namespace, Node, Pod } from "kubernetes-types/core/v1.js";
import type { ObjectMeta } from "kubernetes-types/meta/v1.js";

export type {
  ControllerRevision,
  DaemonSet,
  Deployment,
  DeploymentList,
  ReplicaSet,
  ReplicaSetList,
  StatefulSet,
} from "kubernetes-types/apps/v1.js";
export type { Scale } from "kubernetes-types/autoscaling/v1.js";
export type { Job } from "kubernetes-types/batch/v1.js";
export type { Lease, LeaseList } from "kubernetes-types/coordination/v1.js";
export type {
  ConfigMap,
  Container,
  Event,
  EventList,
  Namespace,
  NamespaceList,
  Node,
  NodeList,
  Pod,
  PodCondition,
  PodList,
  PodSpec,
  PodStatus,
  PodTemplateSpec,
  Secret,
  Service,
} from "kubernetes-types/core/v1.js";
export type {
  LabelSelector,
  LabelSelectorRequirement,
  ListMeta,
  ObjectMeta,
  OwnerReference,
  Status,
  StatusCause,
  StatusDetails,
} from "kubernetes-types/meta/v1.js";

/** Any Kubernetes object in wire format: what every resource has in common. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}

/** The kinds reconcile knows by name. Any other `KubeObject` works too. */
export type KnownObject = Pod | ReplicaSet | Deployment | Lease | Event | Node | Namespace;

/**
 * A deeply read-only view of `T`: what caches, listers and handlers hand out.
 * Mutating a cached object is a type error; copy it (`structuredClone`) first.
 */
export type DeepReadonly<T> = T extends (...args: never[]) => unknown
  ? T
  : T extends ReadonlyMap<infer K, infer V>
    ? ReadonlyMap<DeepReadonly<K>, DeepReadonly<V>>
    : T extends ReadonlySet<infer V>
      ? ReadonlySet<DeepReadonly<V>>
      : T extends readonly (infer E)[]
        ? readonly DeepReadonly<E>[]
        : T extends object
          ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
          : T;
