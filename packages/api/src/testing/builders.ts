import type { DeploymentSpec, DeploymentStatus, ReplicaSetStatus } from "kubernetes-types/apps/v1.js";
import type { NodeSpec, NodeStatus, ServicePort, ServiceSpec, Taint } from "kubernetes-types/core/v1.js";
import { rfc3339 } from "../time.js";
import type {
  ConfigMap,
  Container,
  Deployment,
  KubeObject,
  Node,
  ObjectMeta,
  OwnerReference,
  Pod,
  PodSpec,
  PodStatus,
  PodTemplateSpec,
  ReplicaSet,
  Service,
} from "../types.js";

/**
 * What every builder takes about `metadata`. Defaults: namespace `default`
 * (namespaced kinds only), uid `uid-<name>`, no labels beyond the kind's own,
 * no resourceVersion (the API server sets one on create).
 */
export interface MetaOptions {
  namespace?: string | undefined;
  uid?: string | undefined;
  labels?: Record<string, string> | undefined;
  annotations?: Record<string, string> | undefined;
  resourceVersion?: string | undefined;
  generation?: number | undefined;
  /** A clock reading (ms) or an RFC 3339 string. */
  creationTimestamp?: number | string | undefined;
  /** Marks the object as being deleted: a clock reading (ms) or an RFC 3339 string. */
  deletionTimestamp?: number | string | undefined;
  finalizers?: string[] | undefined;
  /** The controller of the object: a controller `ownerReference` to it is added (it needs `kind`, name and uid). */
  owner?: KubeObject | undefined;
  /** Further owner references, added as they are. */
  ownerReferences?: OwnerReference[] | undefined;
}

export interface PodOptions extends MetaOptions {
  /** Image of the one container `app`, unless `containers` is given. Default `nginx`. */
  image?: string | undefined;
  /** Requests of the one container, e.g. `{ cpu: "100m", memory: "64Mi" }`. Default none. */
  requests?: Record<string, string> | undefined;
  /** The containers, instead of the one built from `image` and `requests`. */
  containers?: Container[] | undefined;
  /** `spec.nodeName`: the pod is bound. Default: unbound. */
  nodeName?: string | undefined;
  /** `status.phase`. Default `Running` when `ready` is given, else `Pending`. */
  phase?: string | undefined;
  /** Sets the Ready condition (True, or False for `false`) and phase `Running`; a number is when it became ready (ms). Default: no conditions. */
  ready?: boolean | number | undefined;
  /** `status.podIP`. */
  podIP?: string | undefined;
  /** Merged over the built spec. */
  spec?: Partial<PodSpec> | undefined;
  /** Merged over the built status. */
  status?: Partial<PodStatus> | undefined;
}

/** A core/v1 Pod named `name`: one container `app` running `nginx`, labels `{ app: name }` unless given. */
export function pod(name = "pod", options: PodOptions = {}): Pod {
  const ready = options.ready;
  const phase = options.phase ?? (ready === undefined ? "Pending" : "Running");
  const status: PodStatus = { phase };
  if (ready !== undefined) {
    const since = typeof ready === "number" ? ready : 0;
    status.conditions = [
      { type: "Ready", status: ready === false ? "False" : "True", lastTransitionTime: rfc3339(since) },
    ];
  }
  if (options.podIP !== undefined) status.podIP = options.podIP;
  const container: Container = { name: "app", image: options.image ?? "nginx" };
  if (options.requests !== undefined) container.resources = { requests: { ...options.requests } };
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: metadata(name, options, true, { app: name }),
    spec: {
      containers: options.containers ?? [container],
      ...(options.nodeName === undefined ? {} : { nodeName: options.nodeName }),
      ...options.spec,
    },
    status: { ...status, ...options.status },
  };
}

export interface ReplicaSetOptions extends MetaOptions {
  /** `spec.replicas`. Default 1. */
  replicas?: number | undefined;
  /** The selector's `matchLabels` and the template's labels. Default `{ app: name }`. */
  selector?: Record<string, string> | undefined;
  /** Image of the template's container. Default `nginx`. */
  image?: string | undefined;
  /** `spec.minReadySeconds`. Default none. */
  minReadySeconds?: number | undefined;
  /** Merged over the built status (`replicas: 0`, `observedGeneration` 0). */
  status?: Partial<ReplicaSetStatus> | undefined;
}

/** An apps/v1 ReplicaSet named `name` selecting and templating `{ app: name }` pods. */
export function replicaSet(name = "rs", options: ReplicaSetOptions = {}): ReplicaSet {
  const selector = options.selector ?? { app: name };
  return {
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    metadata: metadata(name, options, true, selector),
    spec: {
      replicas: options.replicas ?? 1,
      selector: { matchLabels: { ...selector } },
      template: podTemplate(selector, options.image),
      ...(options.minReadySeconds === undefined ? {} : { minReadySeconds: options.minReadySeconds }),
    },
    status: { replicas: 0, ...options.status },
  };
}

export interface DeploymentOptions extends MetaOptions {
  /** `spec.replicas`. Default 1. */
  replicas?: number | undefined;
  /** The selector's `matchLabels` and the template's labels. Default `{ app: name }`. */
  selector?: Record<string, string> | undefined;
  /** Image of the template's container. Default `nginx`. */
  image?: string | undefined;
  /** Merged over the built spec (RollingUpdate 25%/25%, revisionHistoryLimit 10, progressDeadlineSeconds 600, as the API server defaults). */
  spec?: Partial<DeploymentSpec> | undefined;
  /** Merged over the built, empty status. */
  status?: Partial<DeploymentStatus> | undefined;
}

/** An apps/v1 Deployment named `name` with the API server's defaults, selecting `{ app: name }`. */
export function deployment(name = "deployment", options: DeploymentOptions = {}): Deployment {
  const selector = options.selector ?? { app: name };
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: metadata(name, { generation: 1, ...options }, true, selector),
    spec: {
      replicas: options.replicas ?? 1,
      selector: { matchLabels: { ...selector } },
      template: podTemplate(selector, options.image),
      strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: "25%", maxUnavailable: "25%" } },
      revisionHistoryLimit: 10,
      progressDeadlineSeconds: 600,
      ...options.spec,
    },
    status: { ...options.status },
  };
}

export interface NodeOptions extends Omit<MetaOptions, "namespace"> {
  /** Allocatable and capacity cpu. Default `"4"`. */
  cpu?: string | undefined;
  /** Allocatable and capacity memory. Default `"32Gi"`. */
  memory?: string | undefined;
  /** Allocatable and capacity pods. Default `"110"`. */
  pods?: string | undefined;
  /** The Ready condition. Default true. */
  ready?: boolean | undefined;
  /** `spec.unschedulable` (cordoned). Default false. */
  unschedulable?: boolean | undefined;
  taints?: Taint[] | undefined;
  /** Merged over the built spec. */
  spec?: Partial<NodeSpec> | undefined;
  /** Merged over the built status. */
  status?: Partial<NodeStatus> | undefined;
}

/** A core/v1 Node named `name`, Ready, with 4 cpu, 32Gi and 110 pods, labelled `kubernetes.io/hostname: name`. */
export function node(name = "node", options: NodeOptions = {}): Node {
  const resources = {
    cpu: options.cpu ?? "4",
    memory: options.memory ?? "32Gi",
    pods: options.pods ?? "110",
  };
  const spec: NodeSpec = {};
  if (options.unschedulable) spec.unschedulable = true;
  if (options.taints !== undefined) spec.taints = options.taints;
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: metadata(name, options, false, { "kubernetes.io/hostname": name }),
    spec: { ...spec, ...options.spec },
    status: {
      capacity: { ...resources },
      allocatable: { ...resources },
      conditions: [{ type: "Ready", status: options.ready === false ? "False" : "True" }],
      ...options.status,
    },
  };
}

export interface ServiceOptions extends MetaOptions {
  /** `spec.selector`. Default `{ app: name }`. */
  selector?: Record<string, string> | undefined;
  /** Default one TCP port 80 to target port 80, named `http`. */
  ports?: ServicePort[] | undefined;
  /** Merged over the built spec. */
  spec?: Partial<ServiceSpec> | undefined;
}

/** A core/v1 ClusterIP Service named `name` selecting `{ app: name }` on port 80. */
export function service(name = "service", options: ServiceOptions = {}): Service {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: metadata(name, options, true, {}),
    spec: {
      type: "ClusterIP",
      selector: { ...(options.selector ?? { app: name }) },
      ports: options.ports ?? [{ name: "http", protocol: "TCP", port: 80, targetPort: 80 }],
      ...options.spec,
    },
  };
}

export interface ConfigMapOptions extends MetaOptions {
  data?: Record<string, string> | undefined;
}

/** A core/v1 ConfigMap named `name` holding `data` (default empty). */
export function configMap(name = "config", options: ConfigMapOptions = {}): ConfigMap {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: metadata(name, options, true, {}),
    data: { ...options.data },
  };
}

function metadata(
  name: string,
  options: MetaOptions,
  namespaced: boolean,
  defaultLabels: Record<string, string>,
): ObjectMeta {
  const labels = options.labels ?? defaultLabels;
  const references = [
    ...(options.owner === undefined ? [] : [controllerReference(options.owner)]),
    ...(options.ownerReferences ?? []),
  ];
  return {
    name,
    ...(namespaced ? { namespace: options.namespace ?? "default" } : {}),
    uid: options.uid ?? `uid-${name}`,
    ...(Object.keys(labels).length > 0 ? { labels: { ...labels } } : {}),
    ...(options.annotations === undefined ? {} : { annotations: { ...options.annotations } }),
    ...(options.resourceVersion === undefined ? {} : { resourceVersion: options.resourceVersion }),
    ...(options.generation === undefined ? {} : { generation: options.generation }),
    ...(options.creationTimestamp === undefined
      ? {}
      : { creationTimestamp: timestamp(options.creationTimestamp) }),
    ...(options.deletionTimestamp === undefined
      ? {}
      : { deletionTimestamp: timestamp(options.deletionTimestamp) }),
    ...(options.finalizers === undefined ? {} : { finalizers: [...options.finalizers] }),
    ...(references.length > 0 ? { ownerReferences: references } : {}),
  };
}

function podTemplate(labels: Record<string, string>, image: string | undefined): PodTemplateSpec {
  return {
    metadata: { labels: { ...labels } },
    spec: { containers: [{ name: "app", image: image ?? "nginx" }] },
  };
}

function controllerReference(owner: KubeObject): OwnerReference {
  const name = owner.metadata?.name;
  const uid = owner.metadata?.uid;
  if (!owner.kind || !owner.apiVersion || !name || !uid) {
    throw new TypeError("builders: an owner needs apiVersion, kind, metadata.name and metadata.uid");
  }
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name,
    uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

function timestamp(value: number | string): string {
  return typeof value === "number" ? rfc3339(value) : value;
}
