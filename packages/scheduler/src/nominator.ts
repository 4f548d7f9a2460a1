import type { DeepReadonly, Pod } from "@reconcile/api";
import { type ControllerInformer, objectFromTombstone } from "@reconcile/controller";
import { responsibleForPod } from "./event-handlers.js";
import { type CycleState, cloneCycleState, type Plugin, runFilters, type Status } from "./framework.js";
import { type NodeInfo, type PodInfo, podInfo } from "./node-info.js";

// The pods nominated to nodes by preemption (upstream's nominator, part of
// the scheduling queue): a pod that evicted others for a node holds the room
// it made there, so that pods of lower priority do not take it while the
// victims terminate.

const none: readonly PodInfo[] = Object.freeze([]);

/** Nominated pods by node (upstream `nominator`). */
export class Nominator {
  readonly #byNode = new Map<string, Map<string, PodInfo>>();
  readonly #nodeOf = new Map<string, string>();

  /** Nominates `pod` to `nodeName` (replacing an earlier nomination of it). */
  add(pod: DeepReadonly<Pod>, nodeName: string): void {
    const uid = pod.metadata?.uid ?? "";
    this.delete(uid);
    if (nodeName === "") return;
    let pods = this.#byNode.get(nodeName);
    if (pods === undefined) {
      pods = new Map();
      this.#byNode.set(nodeName, pods);
    }
    pods.set(uid, podInfo(pod));
    this.#nodeOf.set(uid, nodeName);
  }

  /** Forgets the nomination of the pod `uid`, if any. */
  delete(uid: string): void {
    const nodeName = this.#nodeOf.get(uid);
    if (nodeName === undefined) return;
    this.#nodeOf.delete(uid);
    const pods = this.#byNode.get(nodeName)!;
    pods.delete(uid);
    if (pods.size === 0) this.#byNode.delete(nodeName);
  }

  /** How many pods are nominated. */
  get size(): number {
    return this.#nodeOf.size;
  }

  /** The node the pod `uid` is nominated to, if any. */
  nodeOf(uid: string): string | undefined {
    return this.#nodeOf.get(uid);
  }

  /** The pods nominated to `nodeName` (a shared empty list when there are none: asked once per node and cycle). */
  nominatedOn(nodeName: string): readonly PodInfo[] {
    const pods = this.#byNode.get(nodeName);
    return pods === undefined ? none : [...pods.values()];
  }

  /** Forgets and returns the pods nominated to `nodeName` with a priority below `priority`. */
  takeLowerPriority(nodeName: string, priority: number): DeepReadonly<Pod>[] {
    const lower = this.nominatedOn(nodeName)
      .filter((info) => (info.pod.spec?.priority ?? 0) < priority)
      .map((info) => info.pod);
    for (const pod of lower) this.delete(pod.metadata?.uid ?? "");
    return lower;
  }

  /** Keeps the nominations of `schedulerName`'s pods in step with `podInformer`'s events. */
  follow(podInformer: ControllerInformer<Pod>, schedulerName: string): void {
    const ours = (pod: DeepReadonly<Pod>) => responsibleForPod(pod, schedulerName);
    podInformer.addEventHandler({
      onAdd: (pod) => {
        if (ours(pod)) this.update(undefined, pod);
      },
      onUpdate: (old, pod) => {
        if (ours(pod)) this.update(old, pod);
      },
      onDelete: (obj) => this.delete(objectFromTombstone(obj).metadata?.uid ?? ""),
    });
  }

  /**
   * Follows a pod's update (upstream `UpdateNominatedPod`): a bound or
   * deleted pod holds nothing; a pending one holds the node its status
   * names. An update naming no node, after an object that named none either,
   * keeps a nomination made in memory before the status write lands.
   */
  update(old: DeepReadonly<Pod> | undefined, pod: DeepReadonly<Pod>): void {
    const uid = pod.metadata?.uid ?? "";
    if (pod.spec?.nodeName || pod.metadata?.deletionTimestamp) {
      this.delete(uid);
      return;
    }
    const nominated = pod.status?.nominatedNodeName ?? "";
    const before = old?.status?.nominatedNodeName ?? "";
    const inMemory = this.#nodeOf.get(uid);
    if (nominated === "" && before === "" && inMemory !== undefined) {
      this.add(pod, inMemory);
      return;
    }
    if (nominated === "") this.delete(uid);
    else this.add(pod, nominated);
  }
}

/**
 * `RunFilterPluginsWithNominatedPods`: when pods of equal or higher priority
 * are nominated to the node, the filters run first with them added (as if
 * they ran there) and, if the pod still fits, again without them (affinity
 * to them must not count). Leaves the node and `state` as they were.
 */
export function runFiltersWithNominatedPods(
  filters: readonly Plugin[],
  state: CycleState,
  pod: DeepReadonly<Pod>,
  nodeInfo: NodeInfo,
  nominated: readonly PodInfo[],
): Status | undefined {
  // The common case, asked for every node of every cycle: nothing nominated there.
  if (nominated.length === 0) return runFilters(filters, state, pod, nodeInfo);
  const priority = pod.spec?.priority ?? 0;
  const uid = pod.metadata?.uid;
  const adding = nominated.filter(
    (info) => info.pod.metadata?.uid !== uid && (info.pod.spec?.priority ?? 0) >= priority,
  );
  if (adding.length === 0) return runFilters(filters, state, pod, nodeInfo);
  const withNominated = cloneCycleState(state);
  const keys = adding.map((info) => `\u0000nominated/${info.pod.metadata?.uid ?? ""}`);
  let status: Status | undefined;
  try {
    adding.forEach((info, i) => {
      nodeInfo.addPod(info.pod, keys[i]!, info);
      for (const plugin of filters) plugin.addPod?.(withNominated, pod, info, nodeInfo);
    });
    status = runFilters(filters, withNominated, pod, nodeInfo);
  } finally {
    for (const key of keys) nodeInfo.removePod(key);
  }
  if (status !== undefined) return status;
  return runFilters(filters, state, pod, nodeInfo);
}

/**
 * `evaluateNominatedNode`: a pod that preemption nominated to a node tries
 * that node first, after the PreFilters; the node when every filter passes
 * there, else undefined (and the cycle goes on over all nodes).
 */
export function fitsNominatedNode(
  pod: DeepReadonly<Pod>,
  filters: readonly Plugin[],
  state: CycleState,
  nominator: Nominator,
  nodeInfoOf: (name: string) => NodeInfo | undefined,
): string | undefined {
  const name = pod.status?.nominatedNodeName;
  if (!name) return undefined;
  const nodeInfo = nodeInfoOf(name);
  if (nodeInfo?.node === undefined) return undefined;
  const status = runFiltersWithNominatedPods(filters, state, pod, nodeInfo, nominator.nominatedOn(name));
  return status === undefined ? name : undefined;
}
