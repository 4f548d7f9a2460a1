import type { DeepReadonly, Pod, Selector } from "@reconcile/api";
import type { AffinityTerm } from "./affinity-terms.js";
import type { NodeInfo, PodInfo } from "./node-info.js";
import { SpreadCountsIndex } from "./spread-counts.js";
import { AntiAffinityIndex, type PairCounts, SelectedPodsIndex } from "./topology-counts.js";

/** The outcome of a plugin call (upstream `framework.Code`). */
export type Code = "Success" | "Error" | "Unschedulable" | "UnschedulableAndUnresolvable" | "Skip";

/** A plugin's verdict: a code and the reasons users see in `FailedScheduling` messages. */
export interface Status {
  code: Code;
  reasons: string[];
  /** The plugin that returned it; filled in by the framework. */
  plugin?: string;
  /**
   * From a successful PreFilter: the only nodes the pod can fit (upstream
   * `PreFilterResult.NodeNames`); only these are filtered. Undefined: all nodes.
   */
  nodeNames?: ReadonlySet<string> | undefined;
}

export const successStatus: Status = Object.freeze({ code: "Success", reasons: [] }) as Status;
export const skipStatus: Status = Object.freeze({ code: "Skip", reasons: [] }) as Status;

export function unschedulable(...reasons: string[]): Status {
  return { code: "Unschedulable", reasons };
}

export function unresolvable(...reasons: string[]): Status {
  return { code: "UnschedulableAndUnresolvable", reasons };
}

/** Unschedulable, UnschedulableAndUnresolvable (the codes that park a pod rather than back it off as an error). */
export function isRejected(status: Status): boolean {
  return status.code === "Unschedulable" || status.code === "UnschedulableAndUnresolvable";
}

/**
 * Data plugins keep for one scheduling cycle of one pod, by plugin name
 * (upstream `CycleState`). A value with a `clone()` method is copied by
 * {@link cloneCycleState}; any other value is shared by the copies.
 */
export type CycleState = Map<string, unknown>;

/**
 * Lists a cycle may read instead of walking every node (upstream's snapshot
 * lister: `HavePodsWithAffinityList`, `HavePodsWithRequiredAntiAffinityList`,
 * and the image states). The scheduler's cache provides them; a plugin run
 * without it gets them computed from the nodes it is given.
 */
export interface NodeLists {
  /** Nodes holding a pod with pod affinity or anti-affinity. */
  havePodsWithAffinity(): readonly NodeInfo[];
  /** Nodes holding a pod with required anti-affinity terms. */
  havePodsWithRequiredAntiAffinity(): readonly NodeInfo[];
  /** How many nodes hold the image of this name (as `status.images` lists it). */
  imageNodeCount(name: string): number;
  /**
   * Per topology pair, how many required anti-affinity terms of pods on
   * nodes select `pod` (in parts, to be summed).
   */
  existingAntiAffinity(
    pod: DeepReadonly<Pod>,
    namespaceLabels: Readonly<Record<string, string>> | undefined,
  ): readonly PairCounts[];
  /**
   * Per topology pair, how many pods on nodes the term selects (the
   * incoming pod's own terms, with their namespace selectors resolved).
   */
  podsSelectedBy(term: AffinityTerm): PairCounts;
  /**
   * The nodes holding pods of `namespace` that `selector` counts for
   * topology spreading (matching, not terminating), with how many each
   * holds; nodes holding none are left out. `key` names the namespace and
   * selector: the same key, the same pair.
   */
  spreadCounts(namespace: string, key: string, selector: Selector): ReadonlyMap<NodeInfo, number>;
}

const nodeListsKey = "NodeLists";

/** Makes `lists` the cycle's node lists. */
export function setNodeLists(state: CycleState, lists: NodeLists): void {
  state.set(nodeListsKey, lists);
}

/** The cycle's node lists, or lists computed from `allNodes` when the cycle has none. */
export function nodeListsOf(state: CycleState, allNodes: readonly NodeInfo[]): NodeLists {
  const lists = state.get(nodeListsKey) as NodeLists | undefined;
  if (lists !== undefined) return lists;
  return {
    havePodsWithAffinity: () => allNodes.filter((info) => info.podsWithAffinity > 0),
    havePodsWithRequiredAntiAffinity: () => allNodes.filter((info) => info.podsWithRequiredAntiAffinity > 0),
    imageNodeCount: (name) => allNodes.filter((info) => info.imageSizes.has(name)).length,
    existingAntiAffinity: (pod, namespaceLabels) => {
      const index = new AntiAffinityIndex();
      for (const info of allNodes) {
        if (info.node === undefined || info.podsWithRequiredAntiAffinity === 0) continue;
        for (const existing of info.pods.values())
          index.update(existing.affinity.requiredAnti, info.node.metadata?.labels, 1);
      }
      return index.selecting(pod, namespaceLabels);
    },
    podsSelectedBy: (term) =>
      new SelectedPodsIndex().counts(term, (visit) => {
        for (const info of allNodes) {
          if (info.node === undefined) continue;
          for (const existing of info.pods.values()) visit(existing.pod, info.node.metadata?.labels);
        }
      }),
    spreadCounts: (namespace, key, selector) =>
      new SpreadCountsIndex().counts(namespace, key, selector, (visit) => {
        for (const info of allNodes) {
          if (info.node === undefined) continue;
          for (const existing of info.podsByNamespace.get(namespace)?.values() ?? [])
            visit(info, existing.pod);
        }
      }),
  };
}

/** A copy of the state in which each clonable value is cloned (upstream `CycleState.Clone`). */
export function cloneCycleState(state: CycleState): CycleState {
  const copy: CycleState = new Map();
  for (const [key, value] of state) {
    const clone = (value as { clone?: () => unknown } | null)?.clone;
    copy.set(key, typeof clone === "function" ? clone.call(value) : value);
  }
  return copy;
}

/** Kinds of cluster change that may make a rejected pod schedulable (upstream `ClusterEvent`). */
export type ClusterEvent =
  | "NodeAdd"
  | "NodeDelete"
  | "NodeAllocatableChange"
  | "NodeLabelChange"
  | "NodeTaintChange"
  | "AssignedPodAdd"
  | "AssignedPodLabelChange"
  | "AssignedPodDelete"
  | "PodTolerationChange"
  | "PodUpdate"
  | "PersistentVolumeClaimChange"
  | "PersistentVolumeChange"
  | "StorageClassChange"
  | "UnschedulableTimeout"
  | "ForceActivate";

/**
 * A scheduling plugin (upstream `framework.Plugin` with its extension
 * points). Every method is synchronous: a scheduling cycle runs without
 * yielding, so the cache cannot change under it.
 */
export interface Plugin {
  readonly name: string;
  /** Score weight in the default profile. Default 1 (only plugins with `score` use it). */
  readonly weight?: number;
  /**
   * Whether its Filter verdict on a node depends on pods on other nodes
   * (pod affinity, spreading): the cheap check on one node before a parked
   * pod is moved leaves such plugins out.
   */
  readonly dependsOnOtherNodes?: boolean;
  /** The cluster events after which a pod this plugin rejected may fit (upstream `EventsToRegister`). */
  readonly events?: readonly ClusterEvent[];
  /** Once per cycle before Filter; Skip turns this plugin's Filter off for the cycle; a rejection fails the attempt. */
  preFilter?(state: CycleState, pod: DeepReadonly<Pod>, nodes: readonly NodeInfo[]): Status;
  /**
   * Updates this plugin's PreFilter state as if `added` were placed on
   * `nodeInfo` (upstream `PreFilterExtensions.AddPod`): preemption asks
   * "would the pod fit without these victims" without running PreFilter again.
   */
  addPod?(state: CycleState, pod: DeepReadonly<Pod>, added: PodInfo, nodeInfo: NodeInfo): void;
  /** The same for a pod taken off `nodeInfo` (upstream `PreFilterExtensions.RemovePod`). */
  removePod?(state: CycleState, pod: DeepReadonly<Pod>, removed: PodInfo, nodeInfo: NodeInfo): void;
  /** Whether `pod` fits on `nodeInfo`. */
  filter?(state: CycleState, pod: DeepReadonly<Pod>, nodeInfo: NodeInfo): Status;
  /** Once per cycle before Score, with the feasible nodes; Skip turns this plugin's Score off. */
  preScore?(
    state: CycleState,
    pod: DeepReadonly<Pod>,
    nodes: readonly NodeInfo[],
    allNodes: readonly NodeInfo[],
  ): Status;
  /** A raw score for `nodeInfo`. */
  score?(state: CycleState, pod: DeepReadonly<Pod>, nodeInfo: NodeInfo): number;
  /** Maps the raw scores of every feasible node (`nodes`, in the same order) into [0, 100], in place. */
  normalizeScore?(
    state: CycleState,
    pod: DeepReadonly<Pod>,
    scores: number[],
    nodes: readonly NodeInfo[],
  ): void;
}

/** The highest normalized score (upstream `MaxNodeScore`). */
export const maxNodeScore = 100;

/**
 * Upstream's `DefaultNormalizeScore`: scales so the highest is 100 (all 0 when
 * the highest is 0); `reverse` flips it (100 − score), so fewer is better.
 */
export function defaultNormalizeScore(scores: number[], reverse: boolean): void {
  let max = 0;
  for (const score of scores) if (score > max) max = score;
  if (max === 0) {
    if (reverse) scores.fill(maxNodeScore);
    return;
  }
  for (let i = 0; i < scores.length; i++) {
    let score = Math.trunc((maxNodeScore * scores[i]!) / max);
    if (reverse) score = maxNodeScore - score;
    scores[i] = score;
  }
}

/** The first non-success status of the filters on one node, with its plugin; undefined when all pass. */
export function runFilters(
  filters: readonly Plugin[],
  state: CycleState,
  pod: DeepReadonly<Pod>,
  nodeInfo: NodeInfo,
): Status | undefined {
  for (const plugin of filters) {
    const status = plugin.filter!(state, pod, nodeInfo);
    if (status.code === "Success") continue;
    return { ...status, plugin: plugin.name };
  }
  return undefined;
}
