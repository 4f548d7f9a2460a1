import {
  type DeepReadonly,
  type LabelSelector,
  labelSelectorAsSelector,
  type Node,
  type Pod,
  type Selector,
} from "@reconcile/api";
import type { TopologySpreadConstraint } from "kubernetes-types/core/v1.js";
import {
  nodeListsOf,
  type Plugin,
  skipStatus,
  successStatus,
  unresolvable,
  unschedulable,
} from "../framework.js";
import { type NodeInfo, type PodInfo, spreadingControllerUID } from "../node-info.js";
import { matchesRequiredNodeAffinity } from "./node-affinity.js";
import { defaultSpreadSelector, type SpreadingListers } from "./spread-selector.js";
import { findUntoleratedTaint } from "./taint-toleration.js";

export const hostnameLabel = "kubernetes.io/hostname";
export const zoneLabel = "topology.kubernetes.io/zone";

export const errReasonConstraintsNotMatch = "node(s) didn't match pod topology spread constraints";
export const errReasonNodeLabelNotMatch = `${errReasonConstraintsNotMatch} (missing required label)`;

/** The system default constraints: hostname with maxSkew 3, zone with maxSkew 5, both ScheduleAnyway. */
export const defaultConstraints = [
  { topologyKey: hostnameLabel, maxSkew: 3 },
  { topologyKey: zoneLabel, maxSkew: 5 },
] as const;

/** A constraint as the plugin uses it (upstream `topologySpreadConstraint`). */
interface Constraint {
  maxSkew: number;
  topologyKey: string;
  minDomains: number;
  /** Whether nodes the pod's required node affinity refuses are left out of the counts. */
  honorNodeAffinity: boolean;
  /** Whether nodes with taints the pod does not tolerate are left out of the counts. */
  honorNodeTaints: boolean;
  selector: Selector;
  /** Names the constraint's counts on a node: the namespace and the selector's canonical text. */
  key: string;
  /** System defaults only: the pods counted are this controller's (see {@link podTopologySpread}). */
  controllerUID?: string | undefined;
}

/**
 * The pod's constraints with this `whenUnsatisfiable` (upstream
 * `filterTopologySpreadConstraints`): `matchLabelKeys` add the pod's own
 * values to the selector; minDomains defaults to 1, nodeAffinityPolicy to
 * Honor, nodeTaintsPolicy to Ignore.
 */
function podConstraints(pod: DeepReadonly<Pod>, action: "DoNotSchedule" | "ScheduleAnyway"): Constraint[] {
  const labels = pod.metadata?.labels ?? {};
  const result: Constraint[] = [];
  for (const c of (pod.spec?.topologySpreadConstraints ??
    []) as readonly DeepReadonly<TopologySpreadConstraint>[]) {
    if (c.whenUnsatisfiable !== action) continue;
    let selector = c.labelSelector as LabelSelector | undefined;
    const pinned = (c.matchLabelKeys ?? []).filter((key) => labels[key] !== undefined);
    if (selector != null && pinned.length > 0) {
      selector = {
        ...selector,
        matchExpressions: [
          ...pinned.map((key) => ({ key, operator: "In", values: [labels[key]!] })),
          ...(selector.matchExpressions ?? []),
        ],
      };
    }
    const parsed = labelSelectorAsSelector(selector);
    result.push({
      maxSkew: c.maxSkew,
      topologyKey: c.topologyKey,
      minDomains: c.minDomains ?? 1,
      honorNodeAffinity: (c.nodeAffinityPolicy ?? "Honor") === "Honor",
      honorNodeTaints: c.nodeTaintsPolicy === "Honor",
      selector: parsed,
      key: `PodTopologySpread\u0000${pod.metadata?.namespace ?? ""}\u0000${selector == null ? "\u2205" : parsed.toString()}`,
    });
  }
  return result;
}

/**
 * ScheduleAnyway constraints: the pod's own, or else the system defaults,
 * counting the pods {@link defaultSpreadSelector} selects — or, without
 * listers, the pods of the same spreading controller.
 */
function scoringConstraints(pod: DeepReadonly<Pod>, listers: SpreadingListers | undefined): Constraint[] {
  if ((pod.spec?.topologySpreadConstraints?.length ?? 0) > 0) return podConstraints(pod, "ScheduleAnyway");
  if (listers !== undefined) {
    const selector = defaultSpreadSelector(pod, listers);
    if (selector.empty()) return [];
    return systemDefaults(
      selector,
      `PodTopologySpread\u0000${pod.metadata?.namespace ?? ""}\u0000${selector.toString()}`,
    );
  }
  const controllerUID = spreadingControllerUID(pod);
  if (controllerUID === undefined) return [];
  return systemDefaults(
    labelSelectorAsSelector({}),
    `PodTopologySpread\u0000controller\u0000${controllerUID}`,
    controllerUID,
  );
}

/** The system default constraints, counting what `selector` (or else `controllerUID`) picks out. */
function systemDefaults(selector: Selector, key: string, controllerUID?: string): Constraint[] {
  return defaultConstraints.map(({ topologyKey, maxSkew }) => ({
    maxSkew,
    topologyKey,
    minDomains: 1,
    honorNodeAffinity: true,
    honorNodeTaints: false,
    selector,
    key,
    ...(controllerUID === undefined ? {} : { controllerUID }),
  }));
}

/** Matching pods of the incoming pod's namespace on one node; terminating pods do not count. */
function countOnNode(c: Constraint, nodeInfo: NodeInfo, namespace: string): number {
  if (c.controllerUID !== undefined) return nodeInfo.podsByController.get(c.controllerUID) ?? 0;
  if (c.selector.empty()) return 0;
  const inNamespace = nodeInfo.podsByNamespace.get(namespace);
  if (inNamespace === undefined) return 0;
  let count = 0;
  for (const { pod } of inNamespace.values()) {
    if (pod.metadata?.deletionTimestamp) continue;
    if (c.selector.matches(pod.metadata?.labels ?? noLabels)) count++;
  }
  return count;
}

/** The last count taken on each node, with the constraint's key and the node's generation then. */
const lastCounts = new WeakMap<NodeInfo, { key: string; generation: number; count: number }>();

/** {@link countOnNode}, taken again only when the node's pods or the constraint changed since it was last taken there. */
function countOnNodeOnce(c: Constraint, nodeInfo: NodeInfo, namespace: string): number {
  const last = lastCounts.get(nodeInfo);
  if (last !== undefined && last.key === c.key && last.generation === nodeInfo.generation) return last.count;
  const count = countOnNode(c, nodeInfo, namespace);
  if (last === undefined) lastCounts.set(nodeInfo, { key: c.key, generation: nodeInfo.generation, count });
  else {
    last.key = c.key;
    last.generation = nodeInfo.generation;
    last.count = count;
  }
  return count;
}

/**
 * {@link countOnNode} over a node list, remembered per node position with the
 * node's generation, for as long as the cache hands out the same list: the
 * next pod of the same workload asks the same, and only nodes whose pods
 * changed are counted again.
 */
class RememberedCounts {
  readonly #generations: number[] = [];
  readonly #nodes: (NodeInfo | undefined)[] = [];
  readonly #counts: number[] = [];

  count(c: Constraint, position: number, nodeInfo: NodeInfo, namespace: string): number {
    if (this.#nodes[position] === nodeInfo && this.#generations[position] === nodeInfo.generation) {
      return this.#counts[position]!;
    }
    const count = countOnNode(c, nodeInfo, namespace);
    this.#nodes[position] = nodeInfo;
    this.#generations[position] = nodeInfo.generation;
    this.#counts[position] = count;
    return count;
  }
}

/**
 * What a plugin keeps per node list and key: the list is the cache's until
 * nodes come or go, so its entries go with it. At most 64 keys per list; past
 * that the oldest goes.
 */
class PerNodeList<T> {
  readonly #lists = new WeakMap<readonly NodeInfo[], Map<string, T>>();

  constructor(readonly make: () => T) {}

  get(nodes: readonly NodeInfo[], key: string): T {
    let byKey = this.#lists.get(nodes);
    if (byKey === undefined) this.#lists.set(nodes, (byKey = new Map()));
    let value = byKey.get(key);
    if (value === undefined) {
      if (byKey.size >= 64) byKey.delete(byKey.keys().next().value!);
      byKey.set(key, (value = this.make()));
    }
    return value;
  }
}

const rememberedCounts = new PerNodeList(() => new RememberedCounts());

const noLabels: Readonly<Record<string, string>> = Object.freeze({});

function hasAllTopologyKeys(node: DeepReadonly<Node>, constraints: readonly Constraint[]): boolean {
  const labels = node.metadata?.labels ?? noLabels;
  for (let i = 0; i < constraints.length; i++)
    if (labels[constraints[i]!.topologyKey] === undefined) return false;
  return true;
}

const noScheduleOrNoExecute = (taint: { effect?: string }) =>
  taint.effect === "NoSchedule" || taint.effect === "NoExecute";

/** Whether the node's domain counts for this constraint (upstream `matchNodeInclusionPolicies`). */
function includesNode(c: Constraint, pod: DeepReadonly<Pod>, node: DeepReadonly<Node>): boolean {
  if (c.honorNodeAffinity && !matchesRequiredNodeAffinity(pod, node)) return false;
  if (c.honorNodeTaints) {
    const taints = node.spec?.taints ?? [];
    if (findUntoleratedTaint(taints, pod.spec?.tolerations ?? [], noScheduleOrNoExecute) !== undefined)
      return false;
  }
  return true;
}

/** Whether {@link includesNode} can say no for this pod: only with a policy to honour and something to honour. */
function needsNodeCheck(c: Constraint, pod: DeepReadonly<Pod>): boolean {
  const spec = pod.spec;
  const affinity =
    Object.keys(spec?.nodeSelector ?? {}).length > 0 ||
    spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution != null;
  return (c.honorNodeAffinity && affinity) || c.honorNodeTaints;
}

/** The two domains with the fewest matching pods (upstream `criticalPaths`). */
class CriticalPaths {
  paths = [
    { value: "", count: Number.MAX_SAFE_INTEGER },
    { value: "", count: Number.MAX_SAFE_INTEGER },
  ];

  update(value: string, count: number): void {
    const [first, second] = this.paths as [
      { value: string; count: number },
      { value: string; count: number },
    ];
    const at = value === first.value ? 0 : value === second.value ? 1 : -1;
    if (at >= 0) {
      this.paths[at]!.count = count;
      if (this.paths[0]!.count > this.paths[1]!.count) this.paths.reverse();
    } else if (count < first.count) {
      this.paths = [{ value, count }, { ...first }];
    } else if (count < second.count) {
      this.paths[1] = { value, count };
    }
  }

  clone(): CriticalPaths {
    const copy = new CriticalPaths();
    copy.paths = this.paths.map((path) => ({ ...path }));
    return copy;
  }
}

/**
 * The values one topology key takes over one node list, each with a slot,
 * kept for as long as the scheduler's cache hands out the same list (it makes
 * a new one when nodes come or go). Each node's slot is remembered with the
 * label value it was found for, and looked up again if the label changed.
 */
class DomainTable {
  readonly #slotOfValue = new Map<string, number>();
  readonly values: string[] = [];
  readonly #nodeValue: (string | undefined)[] = [];
  readonly #nodeSlot: number[] = [];

  slot(value: string): number | undefined {
    return this.#slotOfValue.get(value);
  }

  /** The slot of the value the node at `position` has now. */
  slotOfNode(position: number, value: string): number {
    if (this.#nodeValue[position] === value) return this.#nodeSlot[position]!;
    let slot = this.#slotOfValue.get(value);
    if (slot === undefined) {
      slot = this.values.length;
      this.values.push(value);
      this.#slotOfValue.set(value, slot);
    }
    this.#nodeValue[position] = value;
    this.#nodeSlot[position] = slot;
    return slot;
  }
}

const domainTables = new PerNodeList(() => new DomainTable());

/** Matching pods per domain of one constraint, by the table's slots; a domain is present once an eligible node has it. */
class DomainCounts {
  size = 0;

  constructor(
    readonly table: DomainTable,
    readonly counts: (number | undefined)[] = [],
  ) {
    for (const count of counts) if (count !== undefined) this.size++;
  }

  get(value: string): number {
    const slot = this.table.slot(value);
    return slot === undefined ? 0 : (this.counts[slot] ?? 0);
  }

  addAt(slot: number, delta: number): void {
    const before = this.counts[slot];
    if (before === undefined) this.size++;
    this.counts[slot] = (before ?? 0) + delta;
  }

  /** Adds to a domain by value (preemption's what-ifs); a value the table does not know is not a domain here. */
  add(value: string, delta: number): number | undefined {
    const slot = this.table.slot(value);
    if (slot === undefined) return undefined;
    this.addAt(slot, delta);
    return this.counts[slot];
  }

  *entries(): IterableIterator<[string, number]> {
    for (let slot = 0; slot < this.counts.length; slot++) {
      const count = this.counts[slot];
      if (count !== undefined) yield [this.table.values[slot]!, count];
    }
  }

  clone(): DomainCounts {
    return new DomainCounts(this.table, [...this.counts]);
  }
}

const preFilterKey = "PreFilterPodTopologySpread";
const preScoreKey = "PreScorePodTopologySpread";

class PreFilterState {
  constructor(
    readonly constraints: readonly Constraint[],
    /** Matching pods per domain, one per constraint. */
    readonly counts: DomainCounts[],
    readonly critical: CriticalPaths[],
  ) {}

  clone(): PreFilterState {
    return new PreFilterState(
      this.constraints,
      this.counts.map((counts) => counts.clone()),
      this.critical.map((paths) => paths.clone()),
    );
  }

  /** The global minimum, or 0 while fewer domains than minDomains exist. */
  minMatch(i: number): number {
    if (this.counts[i]!.size < this.constraints[i]!.minDomains) return 0;
    return this.critical[i]!.paths[0]!.count;
  }

  updateWithPod(
    other: PodInfo,
    pod: DeepReadonly<Pod>,
    node: DeepReadonly<Node> | undefined,
    delta: number,
  ): void {
    if (node === undefined || (other.pod.metadata?.namespace ?? "") !== (pod.metadata?.namespace ?? ""))
      return;
    if (!hasAllTopologyKeys(node, this.constraints)) return;
    const labels = other.pod.metadata?.labels ?? {};
    this.constraints.forEach((c, i) => {
      if (!c.selector.matches(labels) || !includesNode(c, pod, node)) return;
      const value = node.metadata!.labels![c.topologyKey]!;
      const count = this.counts[i]!.add(value, delta);
      if (count !== undefined) this.critical[i]!.update(value, count);
    });
  }
}

interface PreScoreState {
  constraints: readonly Constraint[];
  /** Nodes missing a topology key of the pod's own constraints: they score 0. */
  ignored: Set<NodeInfo>;
  /** Matching pods per domain value, per constraint (hostname counts are taken per node at Score). */
  counts: Map<string, number>[];
  /** ln(domains + 2) per constraint, so counts in small topologies are not watered down by big ones. */
  weights: number[];
  /** Per constraint counting by selector, the nodes holding pods it counts (see `NodeLists.spreadCounts`). */
  matched: (ReadonlyMap<NodeInfo, number> | undefined)[];
}

/**
 * PodTopologySpread (upstream `plugins/podtopologyspread`). Filter: for
 * each `DoNotSchedule` constraint, placing the pod in the node's domain must
 * not make that domain exceed the global minimum by more than `maxSkew`
 * (the minimum is 0 while fewer than `minDomains` domains exist); a node
 * without the topology label cannot take the pod. Score: for `ScheduleAnyway`
 * constraints, or else the system defaults (hostname maxSkew 3, zone maxSkew
 * 5), nodes in domains with fewer matching pods score higher:
 * `round(Σ count·ln(domains + 2) + maxSkew − 1)`, normalized as
 * `100·(max + min − raw) / max`. The system defaults count the pods this
 * plugin's {@link podTopologySpreadPlugin} listers select for the pod (its
 * Services' and controller's selectors, upstream's `DefaultSelector`); this
 * one, without listers, counts the pods of the incoming pod's ReplicaSet,
 * ReplicationController or StatefulSet by its uid.
 */
/** PodTopologySpread whose system defaults count what `listers.spreading` selects for each pod (see {@link defaultSpreadSelector}). */
export function podTopologySpreadPlugin(listers: { spreading?: SpreadingListers | undefined } = {}): Plugin {
  return { ...podTopologySpread, preScore: preScoreWith(listers.spreading) };
}

export const podTopologySpread: Plugin = {
  name: "PodTopologySpread",
  weight: 2,
  dependsOnOtherNodes: true,
  events: [
    "AssignedPodAdd",
    "AssignedPodLabelChange",
    "AssignedPodDelete",
    "NodeAdd",
    "NodeDelete",
    "NodeLabelChange",
    "NodeTaintChange",
  ],
  preFilter(state, pod, allNodes) {
    let constraints: Constraint[];
    try {
      constraints = podConstraints(pod, "DoNotSchedule");
    } catch (error) {
      return {
        code: "Error",
        reasons: [`obtaining pod's hard topology spread constraints: ${(error as Error).message}`],
      };
    }
    if (constraints.length === 0) return skipStatus;
    const namespace = pod.metadata?.namespace ?? "";
    const counts = constraints.map((c) => new DomainCounts(domainTables.get(allNodes, c.topologyKey)));
    const checks = constraints.map((c) => needsNodeCheck(c, pod));
    const known = constraints.map((c) => rememberedCounts.get(allNodes, c.key));
    for (let position = 0; position < allNodes.length; position++) {
      const nodeInfo = allNodes[position]!;
      const labels = nodeInfo.node?.metadata?.labels;
      if (labels === undefined || !hasAllTopologyKeys(nodeInfo.node!, constraints)) continue;
      for (let i = 0; i < constraints.length; i++) {
        const c = constraints[i]!;
        if (checks[i] && !includesNode(c, pod, nodeInfo.node!)) continue;
        const domains = counts[i]!;
        const slot = domains.table.slotOfNode(position, labels[c.topologyKey]!);
        domains.addAt(slot, known[i]!.count(c, position, nodeInfo, namespace));
      }
    }
    const critical = counts.map((domains) => {
      const paths = new CriticalPaths();
      for (const [value, count] of domains.entries()) paths.update(value, count);
      return paths;
    });
    state.set(preFilterKey, new PreFilterState(constraints, counts, critical));
    return successStatus;
  },
  addPod(state, pod, added, nodeInfo) {
    (state.get(preFilterKey) as PreFilterState | undefined)?.updateWithPod(added, pod, nodeInfo.node, 1);
  },
  removePod(state, pod, removed, nodeInfo) {
    (state.get(preFilterKey) as PreFilterState | undefined)?.updateWithPod(removed, pod, nodeInfo.node, -1);
  },
  filter(state, pod, nodeInfo) {
    const s = state.get(preFilterKey) as PreFilterState;
    const labels = nodeInfo.node?.metadata?.labels ?? {};
    const own = pod.metadata?.labels ?? {};
    for (let i = 0; i < s.constraints.length; i++) {
      const c = s.constraints[i]!;
      const value = labels[c.topologyKey];
      if (value === undefined) return unresolvable(errReasonNodeLabelNotMatch);
      const self = c.selector.matches(own) ? 1 : 0;
      const skew = s.counts[i]!.get(value) + self - s.minMatch(i);
      if (skew > c.maxSkew) return unschedulable(errReasonConstraintsNotMatch);
    }
    return successStatus;
  },
  preScore: preScoreWith(undefined),
  score(state, pod, nodeInfo) {
    const s = state.get(preScoreKey) as PreScoreState;
    if (s.ignored.has(nodeInfo)) return 0;
    const labels = nodeInfo.node?.metadata?.labels;
    if (labels === undefined) return 0;
    // Called for every feasible node of every pod: plain loops, nothing allocated.
    let score = 0;
    for (let i = 0; i < s.constraints.length; i++) {
      const c = s.constraints[i]!;
      const value = labels[c.topologyKey];
      if (value === undefined) continue;
      const onNodes = s.matched[i];
      const count =
        c.topologyKey !== hostnameLabel
          ? (s.counts[i]!.get(value) ?? 0)
          : onNodes !== undefined
            ? (onNodes.get(nodeInfo) ?? 0)
            : countOnNodeOnce(c, nodeInfo, pod.metadata?.namespace ?? "");
      score += count * s.weights[i]! + (c.maxSkew - 1);
    }
    return Math.round(score);
  },
  normalizeScore(state, _pod, scores, nodes) {
    const { ignored } = state.get(preScoreKey) as PreScoreState;
    let min = Number.POSITIVE_INFINITY;
    let max = 0;
    scores.forEach((score, i) => {
      if (ignored.has(nodes[i]!)) return;
      if (score < min) min = score;
      if (score > max) max = score;
    });
    for (let i = 0; i < scores.length; i++) {
      if (ignored.has(nodes[i]!)) scores[i] = 0;
      else scores[i] = max === 0 ? 100 : Math.trunc((100 * (max + min - scores[i]!)) / max);
    }
  },
};

/** PreScore, with the listers the system defaults' selector is made from (see {@link scoringConstraints}). */
function preScoreWith(listers: SpreadingListers | undefined): NonNullable<Plugin["preScore"]> {
  return (state, pod, feasible, allNodes) => {
    if (feasible.length === 0 || allNodes.length === 0) return skipStatus;
    let constraints: Constraint[];
    try {
      constraints = scoringConstraints(pod, listers);
    } catch (error) {
      return { code: "Error", reasons: [`calculating preScoreState: ${(error as Error).message}`] };
    }
    if (constraints.length === 0) return skipStatus;
    // The pod's own constraints need every topology key on a node; the system defaults do not.
    const requireAll = (pod.spec?.topologySpreadConstraints?.length ?? 0) > 0;
    const ignored = new Set<NodeInfo>();
    const counts = constraints.map(() => new Map<string, number>());
    for (const nodeInfo of feasible) {
      const node = nodeInfo.node!;
      if (requireAll && !hasAllTopologyKeys(node, constraints)) {
        ignored.add(nodeInfo);
        continue;
      }
      for (let i = 0; i < constraints.length; i++) {
        const c = constraints[i]!;
        if (c.topologyKey === hostnameLabel) continue;
        const value = node.metadata?.labels?.[c.topologyKey] ?? "";
        if (!counts[i]!.has(value)) counts[i]!.set(value, 0);
      }
    }
    const weights = constraints.map((c, i) =>
      Math.log((c.topologyKey === hostnameLabel ? feasible.length - ignored.size : counts[i]!.size) + 2),
    );
    const namespace = pod.metadata?.namespace ?? "";
    // A selector's matching pods are read from the cycle's index of the nodes holding them; a
    // controller's (no listers) are counted on every node, from each node's count by controller.
    const lists = nodeListsOf(state, allNodes);
    const matched = constraints.map((c) =>
      c.controllerUID === undefined ? lists.spreadCounts(namespace, c.key, c.selector) : undefined,
    );
    for (let i = 0; i < constraints.length; i++) {
      const c = constraints[i]!;
      if (c.topologyKey === hostnameLabel) continue;
      const check = needsNodeCheck(c, pod);
      const domains = counts[i]!;
      // The domain a node's pods count in: only domains of feasible nodes count, and a node
      // the pod could never use adds nothing.
      const domainOf = (nodeInfo: NodeInfo): string | undefined => {
        const node = nodeInfo.node;
        if (node === undefined || (requireAll && !hasAllTopologyKeys(node, constraints))) return undefined;
        const value = node.metadata?.labels?.[c.topologyKey] ?? "";
        if (!domains.has(value) || (check && !includesNode(c, pod, node))) return undefined;
        return value;
      };
      const onNodes = matched[i];
      if (onNodes !== undefined) {
        onNodes.forEach((n, nodeInfo) => {
          const value = domainOf(nodeInfo);
          if (value !== undefined) domains.set(value, domains.get(value)! + n);
        });
      } else {
        for (const nodeInfo of allNodes) {
          const value = domainOf(nodeInfo);
          if (value !== undefined)
            domains.set(value, domains.get(value)! + countOnNodeOnce(c, nodeInfo, namespace));
        }
      }
    }
    state.set(preScoreKey, { constraints, ignored, counts, weights, matched } satisfies PreScoreState);
    return successStatus;
  };
}
