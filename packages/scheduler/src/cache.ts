import { type DeepReadonly, labelsEqual, type Node, type Pod, type Selector } from "@reconcile/api";
import type { AffinityTerm } from "./affinity-terms.js";
import type { NodeLists } from "./framework.js";
import { NodeInfo, type PodInfo, podInfo } from "./node-info.js";
import { SpreadCountsIndex, sameForSpreading } from "./spread-counts.js";
import { AntiAffinityIndex, type PairCounts, SelectedPodsIndex } from "./topology-counts.js";

/**
 * The scheduler's view of nodes and of the pods on them (upstream
 * `internal/cache`): pods bound or created with a nodeName, and pods the
 * scheduler has assumed onto a node before the binding is observed, so a pod
 * counts against its node at once. Assumed pods never expire (upstream's TTL
 * is 0 since 1.23); the informer's add of the bound pod replaces the assumed
 * copy, and a failed bind forgets it. A deleted node with pods left stays as a
 * ghost, outside {@link nodeList}, until its last pod goes.
 */
export class SchedulerCache implements NodeLists {
  readonly #nodes = new Map<string, NodeInfo>();
  /** Nodes (not ghosts) holding pods with pod affinity, and with required anti-affinity; lists built on demand. */
  readonly #withAffinity = new Set<NodeInfo>();
  readonly #withRequiredAnti = new Set<NodeInfo>();
  #withAffinityList: NodeInfo[] | undefined;
  #withRequiredAntiList: NodeInfo[] | undefined;
  /** Image name → how many nodes list it. */
  readonly #imageNodes = new Map<string, number>();
  /** The required anti-affinity terms of pods on live nodes. */
  readonly #antiAffinity = new AntiAffinityIndex();
  /** The pods on live nodes that recent incoming pods' terms select. */
  readonly #selected = new SelectedPodsIndex();
  /** Per namespace and selector, the live nodes holding pods that recent spreading constraints count. */
  readonly #spread = new SpreadCountsIndex();
  /** Per namespace, the nodes (and ghosts) holding pods of it: what a selector's first count scans. */
  readonly #namespaceNodes = new Map<string, Set<NodeInfo>>();
  /** uid → the node the pod is accounted on, and whether it is only assumed. */
  readonly #pods = new Map<string, { nodeName: string; assumed: boolean; bindingFinished: boolean }>();
  #nodeList: NodeInfo[] | undefined;

  /**
   * The nodes that exist, the snapshot a cycle filters over, interleaved
   * across zones as upstream's `NodeTree` lists them: the first node of each
   * zone (zones in the order first seen), then the second of each, and so
   * on; nodes without zone labels form one zone.
   */
  nodeList(): readonly NodeInfo[] {
    if (this.#nodeList === undefined) {
      const zones = new Map<string, NodeInfo[]>();
      for (const info of this.#nodes.values()) {
        if (info.node === undefined) continue;
        const zone = zoneKey(info.node);
        let members = zones.get(zone);
        if (members === undefined) zones.set(zone, (members = []));
        members.push(info);
      }
      const list: NodeInfo[] = [];
      const groups = [...zones.values()];
      for (let i = 0; list.length < this.#nodes.size && groups.some((group) => i < group.length); i++) {
        for (const group of groups) if (i < group.length) list.push(group[i]!);
      }
      this.#nodeList = list;
    }
    return this.#nodeList;
  }

  havePodsWithAffinity(): readonly NodeInfo[] {
    this.#withAffinityList ??= [...this.#withAffinity];
    return this.#withAffinityList;
  }

  havePodsWithRequiredAntiAffinity(): readonly NodeInfo[] {
    this.#withRequiredAntiList ??= [...this.#withRequiredAnti];
    return this.#withRequiredAntiList;
  }

  existingAntiAffinity(
    pod: DeepReadonly<Pod>,
    namespaceLabels: Readonly<Record<string, string>> | undefined,
  ): readonly PairCounts[] {
    return this.#antiAffinity.selecting(pod, namespaceLabels);
  }

  spreadCounts(namespace: string, key: string, selector: Selector): ReadonlyMap<NodeInfo, number> {
    return this.#spread.counts(namespace, key, selector, (visit) => {
      for (const info of this.#namespaceNodes.get(namespace) ?? []) {
        if (info.node === undefined) continue;
        const inNamespace = info.podsByNamespace.get(namespace);
        if (inNamespace !== undefined) for (const existing of inNamespace.values()) visit(info, existing.pod);
      }
    });
  }

  podsSelectedBy(term: AffinityTerm): PairCounts {
    return this.#selected.counts(term, (visit) => {
      for (const info of this.#nodes.values()) {
        if (info.node === undefined) continue;
        for (const existing of info.pods.values()) visit(existing.pod, info.node.metadata?.labels);
      }
    });
  }

  imageNodeCount(name: string): number {
    return this.#imageNodes.get(name) ?? 0;
  }

  nodeInfo(name: string): NodeInfo | undefined {
    return this.#nodes.get(name);
  }

  /** Pods accounted on nodes, and how many of them are only assumed. */
  counts(): { nodes: number; pods: number; assumedPods: number } {
    let assumedPods = 0;
    for (const state of this.#pods.values()) if (state.assumed) assumedPods++;
    return { nodes: this.nodeList().length, pods: this.#pods.size, assumedPods };
  }

  addNode(node: DeepReadonly<Node>): void {
    const name = node.metadata?.name ?? "";
    const existing = this.#nodes.get(name);
    if (existing !== undefined) {
      const moved = existing.node === undefined || zoneKey(existing.node) !== zoneKey(node);
      if (existing.node !== undefined) this.#countImages(existing, -1);
      const relabelled =
        existing.node === undefined || !labelsEqual(existing.node.metadata?.labels, node.metadata?.labels);
      if (relabelled) this.#indexPods(existing, -1);
      existing.setNode(node);
      if (relabelled) this.#indexPods(existing, 1);
      this.#countImages(existing, 1);
      this.#track(existing);
      if (moved) this.#nodeList = undefined;
      return;
    }
    const info = new NodeInfo(node);
    this.#countImages(info, 1);
    this.#nodes.set(name, info);
    this.#nodeList = undefined;
  }

  updateNode(node: DeepReadonly<Node>): void {
    this.addNode(node);
  }

  removeNode(name: string): void {
    const info = this.#nodes.get(name);
    if (info === undefined) return;
    if (info.node !== undefined) this.#countImages(info, -1);
    this.#indexPods(info, -1);
    if (info.pods.size === 0) this.#nodes.delete(name);
    else info.node = undefined; // a ghost until its pods go
    this.#track(info);
    this.#nodeList = undefined;
  }

  isAssumed(uid: string): boolean {
    return this.#pods.get(uid)?.assumed === true;
  }

  /** Accounts `pod` (whose spec.nodeName is the chosen node) on its node before it is bound. */
  assumePod(pod: DeepReadonly<Pod>): void {
    const uid = pod.metadata?.uid ?? "";
    if (this.#pods.has(uid))
      throw new Error(`pod ${podName(pod)} (${uid}) is in the cache, so can't be assumed`);
    const nodeName = pod.spec?.nodeName ?? "";
    const info = podInfo(pod); // may throw on a malformed quantity: before anything changes
    const nodeInfo = this.#nodeInfoFor(nodeName);
    nodeInfo.addPod(pod, uid, info);
    this.#noteNamespace(nodeInfo, pod);
    this.#indexPod(nodeInfo, info, 1);
    this.#track(nodeInfo);
    this.#pods.set(uid, { nodeName, assumed: true, bindingFinished: false });
  }

  finishBinding(uid: string): void {
    const state = this.#pods.get(uid);
    if (state?.assumed) state.bindingFinished = true;
  }

  /** Drops an assumed pod (its bind failed). A pod that is no longer only assumed is left alone. */
  forgetPod(uid: string): void {
    const state = this.#pods.get(uid);
    if (state === undefined || !state.assumed) return;
    this.#removeFromNode(uid, state.nodeName);
    this.#pods.delete(uid);
  }

  /** A pod with a nodeName seen by the informer: replaces its assumed copy, or is accounted anew. */
  addPod(pod: DeepReadonly<Pod>): void {
    const uid = pod.metadata?.uid ?? "";
    const nodeName = pod.spec?.nodeName ?? "";
    const info = podInfo(pod); // may throw on a malformed quantity: before anything changes
    const state = this.#pods.get(uid);
    // Most updates change only a pod's status: the spreading counts stay as they are.
    const previous = state === undefined ? undefined : this.#nodes.get(state.nodeName)?.pods.get(uid)?.pod;
    const spreadUnchanged =
      previous !== undefined && state?.nodeName === nodeName && sameForSpreading(previous, pod);
    if (state !== undefined) this.#removeFromNode(uid, state.nodeName, spreadUnchanged);
    const nodeInfo = this.#nodeInfoFor(nodeName);
    nodeInfo.addPod(pod, uid, info);
    this.#noteNamespace(nodeInfo, pod);
    this.#indexPod(nodeInfo, info, 1, spreadUnchanged);
    this.#track(nodeInfo);
    this.#pods.set(uid, { nodeName, assumed: false, bindingFinished: true });
  }

  updatePod(pod: DeepReadonly<Pod>): void {
    const state = this.#pods.get(pod.metadata?.uid ?? "");
    // Updates of a pod still only assumed are ignored, as upstream.
    if (state?.assumed) return;
    this.addPod(pod);
  }

  removePod(pod: DeepReadonly<Pod>): void {
    const uid = pod.metadata?.uid ?? "";
    const state = this.#pods.get(uid);
    if (state === undefined) return;
    this.#removeFromNode(uid, state.nodeName);
    this.#pods.delete(uid);
  }

  #nodeInfoFor(nodeName: string): NodeInfo {
    let info = this.#nodes.get(nodeName);
    if (info === undefined) {
      // A pod names a node not seen (yet): account it on a ghost that becomes the node when it appears.
      info = new NodeInfo();
      this.#nodes.set(nodeName, info);
    }
    return info;
  }

  #removeFromNode(uid: string, nodeName: string, spreadUnchanged = false): void {
    const info = this.#nodes.get(nodeName);
    if (info === undefined) return;
    const removed = info.pods.get(uid);
    if (removed !== undefined) this.#indexPod(info, removed, -1, spreadUnchanged);
    info.removePod(uid);
    if (removed !== undefined) this.#noteNamespace(info, removed.pod);
    this.#track(info);
    if (info.node === undefined && info.pods.size === 0) this.#nodes.delete(nodeName);
  }

  // Keeps the node's membership of its pod's namespace's nodes in step with its pods.
  #noteNamespace(info: NodeInfo, pod: DeepReadonly<Pod>): void {
    const namespace = pod.metadata?.namespace ?? "";
    let nodes = this.#namespaceNodes.get(namespace);
    if (info.podsByNamespace.has(namespace)) {
      if (nodes === undefined) this.#namespaceNodes.set(namespace, (nodes = new Set()));
      nodes.add(info);
    } else if (nodes?.delete(info) && nodes.size === 0) this.#namespaceNodes.delete(namespace);
  }

  // Keeps the node's membership of the affinity lists in step with its pods.
  #track(info: NodeInfo): void {
    const live = info.node !== undefined;
    if (setMembership(this.#withAffinity, info, live && info.podsWithAffinity > 0))
      this.#withAffinityList = undefined;
    if (setMembership(this.#withRequiredAnti, info, live && info.podsWithRequiredAntiAffinity > 0)) {
      this.#withRequiredAntiList = undefined;
    }
  }

  // A pod's required anti-affinity terms count while its node is live, under the node's labels.
  // `spreadUnchanged`: the pod is replaced by one the spreading counts count alike, on the same node.
  #indexPod(nodeInfo: NodeInfo, pod: PodInfo, delta: number, spreadUnchanged = false): void {
    if (nodeInfo.node === undefined) return;
    const labels = nodeInfo.node.metadata?.labels;
    if (pod.affinity.requiredAnti.length > 0)
      this.#antiAffinity.update(pod.affinity.requiredAnti, labels, delta);
    if (this.#selected.size > 0) this.#selected.update(pod.pod, labels, delta);
    if (this.#spread.size > 0 && !spreadUnchanged) this.#spread.update(nodeInfo, pod.pod, delta);
  }

  #indexPods(nodeInfo: NodeInfo, delta: number): void {
    if (nodeInfo.podsWithRequiredAntiAffinity === 0 && this.#selected.size === 0 && this.#spread.size === 0)
      return;
    for (const pod of nodeInfo.pods.values()) this.#indexPod(nodeInfo, pod, delta);
  }

  #countImages(info: NodeInfo, delta: number): void {
    for (const name of info.imageSizes.keys()) {
      const count = (this.#imageNodes.get(name) ?? 0) + delta;
      if (count > 0) this.#imageNodes.set(name, count);
      else this.#imageNodes.delete(name);
    }
  }
}

/** Puts `info` in or out of `set`; whether that changed anything. */
function setMembership(set: Set<NodeInfo>, info: NodeInfo, member: boolean): boolean {
  if (member === set.has(info)) return false;
  if (member) set.add(info);
  else set.delete(info);
  return true;
}

function podName(pod: DeepReadonly<Pod>): string {
  return `${pod.metadata?.namespace ?? ""}/${pod.metadata?.name ?? ""}`;
}

// upstream utilnode.GetZoneKey: region and zone labels (the GA ones, else the deprecated beta ones).
function zoneKey(node: DeepReadonly<Node>): string {
  const labels = node.metadata?.labels ?? {};
  const region =
    labels["topology.kubernetes.io/region"] ?? labels["failure-domain.beta.kubernetes.io/region"] ?? "";
  const zone =
    labels["topology.kubernetes.io/zone"] ?? labels["failure-domain.beta.kubernetes.io/zone"] ?? "";
  return region === "" && zone === "" ? "" : `${region}:\x00:${zone}`;
}
