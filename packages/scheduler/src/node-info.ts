import type { DeepReadonly, Node, Pod } from "@reconcile/api";
import { hasPodAffinity, type PodAffinityTerms, podAffinityTermsOrNone } from "./affinity-terms.js";
import {
  addResource,
  emptyResource,
  nodeAllocatable,
  podRequests,
  type Resource,
  subtractResource,
} from "./resources.js";

/** One host port a pod uses: protocol, IP (0.0.0.0 for all) and port. */
export interface HostPort {
  ip: string;
  protocol: string;
  port: number;
}

/** A pod as the cache keeps it: the object, its requests, and its host ports. */
export interface PodInfo {
  pod: DeepReadonly<Pod>;
  requests: Resource;
  nonZeroRequests: Resource;
  hostPorts: HostPort[];
  /** The uid of the pod's ReplicaSet, ReplicationController or StatefulSet, unless the pod is terminating. */
  controllerUID: string | undefined;
  /** The pod's parsed (anti-)affinity terms; a shared empty set for pods without pod affinity. */
  affinity: PodAffinityTerms;
}

/**
 * A node and what its pods (bound, assumed, or created with a nodeName) use
 * (upstream `framework.NodeInfo`). `node` is undefined for a node that was
 * deleted while pods still name it (a ghost).
 */
export class NodeInfo {
  node: DeepReadonly<Node> | undefined;
  allocatable: Resource = emptyResource();
  readonly pods = new Map<string, PodInfo>();
  /** The same pods by namespace: what counts pods matching a namespaced selector reads. */
  readonly podsByNamespace = new Map<string, Map<string, PodInfo>>();
  /** Σ requests of the node's pods: what Filter and balanced allocation use. */
  readonly requested: Resource = emptyResource();
  /** The same with 100m / 200Mi for containers that request no cpu / memory: what least-allocated scoring uses. */
  readonly nonZeroRequested: Resource = emptyResource();
  readonly usedPorts: HostPort[] = [];
  /** Non-terminating pods per controller uid, for default topology spreading. */
  readonly podsByController = new Map<string, number>();
  /** Image name → size in bytes, from `status.images` (each of an image's names). */
  imageSizes: ReadonlyMap<string, number> = new Map();
  /** How many of the node's pods have pod affinity or anti-affinity (upstream `PodsWithAffinity`). */
  podsWithAffinity = 0;
  /** How many have required anti-affinity terms (upstream `PodsWithRequiredAntiAffinity`). */
  podsWithRequiredAntiAffinity = 0;
  /**
   * Goes up whenever a pod is added or removed: what a plugin derived from
   * the node's pods stays valid while it is unchanged.
   */
  generation = 0;
  /** How many have terms that score other pods: required affinity, or preferred affinity or anti-affinity. */
  podsWithScoringTerms = 0;

  constructor(node?: DeepReadonly<Node>) {
    if (node !== undefined) this.setNode(node);
  }

  get name(): string {
    return this.node?.metadata?.name ?? "";
  }

  setNode(node: DeepReadonly<Node>): void {
    this.node = node;
    this.allocatable = nodeAllocatable(node);
    const images = node.status?.images ?? [];
    if (images.length > 0 || this.imageSizes.size > 0) {
      const sizes = new Map<string, number>();
      for (const image of images) for (const name of image.names ?? []) sizes.set(name, image.sizeBytes ?? 0);
      this.imageSizes = sizes;
    }
  }

  /** Accounts the pod; `info` may be passed when computed already (it must be `podInfo(pod)`). */
  addPod(pod: DeepReadonly<Pod>, uid: string, info: PodInfo = podInfo(pod)): void {
    this.pods.set(uid, info);
    const namespace = info.pod.metadata?.namespace ?? "";
    const inNamespace = this.podsByNamespace.get(namespace);
    if (inNamespace === undefined) this.podsByNamespace.set(namespace, new Map([[uid, info]]));
    else inNamespace.set(uid, info);
    this.generation++;
    addResource(this.requested, info.requests);
    addResource(this.nonZeroRequested, info.nonZeroRequests);
    this.usedPorts.push(...info.hostPorts);
    if (info.controllerUID !== undefined) {
      this.podsByController.set(info.controllerUID, (this.podsByController.get(info.controllerUID) ?? 0) + 1);
    }
    if (hasPodAffinity(info.pod)) this.podsWithAffinity++;
    if (info.affinity.requiredAnti.length > 0) this.podsWithRequiredAntiAffinity++;
    if (scoresOthers(info)) this.podsWithScoringTerms++;
  }

  removePod(uid: string): boolean {
    const info = this.pods.get(uid);
    if (info === undefined) return false;
    this.pods.delete(uid);
    const namespace = info.pod.metadata?.namespace ?? "";
    const inNamespace = this.podsByNamespace.get(namespace);
    if (inNamespace?.delete(uid) && inNamespace.size === 0) this.podsByNamespace.delete(namespace);
    this.generation++;
    subtractResource(this.requested, info.requests);
    subtractResource(this.nonZeroRequested, info.nonZeroRequests);
    for (const port of info.hostPorts) {
      const at = this.usedPorts.findIndex(
        (used) => used.ip === port.ip && used.protocol === port.protocol && used.port === port.port,
      );
      if (at !== -1) this.usedPorts.splice(at, 1);
    }
    if (info.controllerUID !== undefined) {
      const left = (this.podsByController.get(info.controllerUID) ?? 0) - 1;
      if (left > 0) this.podsByController.set(info.controllerUID, left);
      else this.podsByController.delete(info.controllerUID);
    }
    if (hasPodAffinity(info.pod)) this.podsWithAffinity--;
    if (info.affinity.requiredAnti.length > 0) this.podsWithRequiredAntiAffinity--;
    if (scoresOthers(info)) this.podsWithScoringTerms--;
    return true;
  }
}

/** Whether the pod's terms score other pods (InterPodAffinity's PreScore looks only at such pods unless the incoming one has preferred terms). */
export function scoresOthers(info: PodInfo): boolean {
  const terms = info.affinity;
  return terms.required.length + terms.preferred.length + terms.preferredAnti.length > 0;
}

/** The pod's requests and host ports, computed once. */
export function podInfo(pod: DeepReadonly<Pod>): PodInfo {
  return {
    pod,
    requests: podRequests(pod),
    nonZeroRequests: podRequests(pod, { nonZero: true }),
    hostPorts: hostPortsOf(pod),
    controllerUID: pod.metadata?.deletionTimestamp ? undefined : spreadingControllerUID(pod),
    affinity: podAffinityTermsOrNone(pod),
  };
}

const spreadingKinds = new Set(["ReplicaSet", "ReplicationController", "StatefulSet"]);

/** The uid of the controller whose pods default topology spreading spreads: a ReplicaSet, ReplicationController or StatefulSet. */
export function spreadingControllerUID(pod: DeepReadonly<Pod>): string | undefined {
  const ref = pod.metadata?.ownerReferences?.find((owner) => owner.controller === true);
  return ref !== undefined && spreadingKinds.has(ref.kind) ? ref.uid : undefined;
}

/** Container ports with a hostPort; protocol defaults to TCP and hostIP to 0.0.0.0 (upstream `getContainerPorts`). */
export function hostPortsOf(pod: DeepReadonly<Pod>): HostPort[] {
  const ports: HostPort[] = [];
  const containers = [
    ...(pod.spec?.containers ?? []),
    ...(pod.spec?.initContainers ?? []).filter((c) => c.restartPolicy === "Always"),
  ];
  for (const container of containers) {
    for (const port of container.ports ?? []) {
      if (!port.hostPort || port.hostPort <= 0) continue;
      ports.push({ ip: port.hostIP || "0.0.0.0", protocol: port.protocol || "TCP", port: port.hostPort });
    }
  }
  return ports;
}
