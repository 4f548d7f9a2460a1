import type { DeepReadonly, Node, Pod } from "@reconcile/api";
import {
  type AffinityTerm,
  type NamespaceLister,
  type PodAffinityTerms,
  podAffinityTerms,
  resolveNamespaces,
  termMatches,
} from "../affinity-terms.js";
import {
  maxNodeScore,
  nodeListsOf,
  type Plugin,
  skipStatus,
  successStatus,
  unresolvable,
  unschedulable,
} from "../framework.js";
import { type NodeInfo, type PodInfo, scoresOthers } from "../node-info.js";
import { SummedCounts, TopologyCounts } from "../topology-counts.js";

export const errReasonExistingAntiAffinityRulesNotMatch =
  "node(s) didn't satisfy existing pods anti-affinity rules";
export const errReasonAffinityRulesNotMatch = "node(s) didn't match pod affinity rules";
export const errReasonAntiAffinityRulesNotMatch = "node(s) didn't match pod anti-affinity rules";

/** The weight a pod's required affinity term gives a node when scoring pods it selects (upstream `HardPodAffinityWeight`'s default). */
const hardPodAffinityWeight = 1;

const preFilterKey = "PreFilterInterPodAffinity";
const preScoreKey = "PreScoreInterPodAffinity";

function update(
  counts: Pick<TopologyCounts, "add">,
  node: DeepReadonly<Node>,
  topologyKey: string,
  delta: number,
): void {
  const value = node.metadata?.labels?.[topologyKey];
  if (value !== undefined) counts.add(topologyKey, value, delta);
}

/** Adds `delta` for every term when `pod` matches all of them (the incoming pod's affinity terms). */
function updateWithAffinityTerms(
  counts: Pick<TopologyCounts, "add">,
  terms: readonly AffinityTerm[],
  pod: DeepReadonly<Pod>,
  node: DeepReadonly<Node>,
  delta: number,
): void {
  if (!matchesAllTerms(terms, pod)) return;
  for (const term of terms) update(counts, node, term.topologyKey, delta);
}

/** Adds `delta` for each term `pod` matches. */
function updateWithAntiAffinityTerms(
  counts: Pick<TopologyCounts, "add">,
  terms: readonly AffinityTerm[],
  pod: DeepReadonly<Pod>,
  namespaceLabels: Readonly<Record<string, string>> | undefined,
  node: DeepReadonly<Node>,
  delta: number,
): void {
  for (const term of terms) {
    if (termMatches(term, pod, namespaceLabels)) update(counts, node, term.topologyKey, delta);
  }
}

// The incoming pod's namespace selectors are resolved into namespaces, so no namespace labels are needed.
function matchesAllTerms(terms: readonly AffinityTerm[], pod: DeepReadonly<Pod>): boolean {
  if (terms.length === 0) return false;
  return terms.every((term) => termMatches(term, pod, undefined));
}

class PreFilterState {
  constructor(
    readonly pod: DeepReadonly<Pod>,
    readonly terms: PodAffinityTerms,
    readonly namespaceLabels: Readonly<Record<string, string>> | undefined,
    /** Pairs where an existing pod's required anti-affinity selects the incoming pod. */
    readonly existingAntiAffinityCounts: SummedCounts,
    /** Pairs where existing pods match all of the incoming pod's required affinity terms. */
    readonly affinityCounts: SummedCounts,
    /** Pairs where existing pods match one of the incoming pod's required anti-affinity terms. */
    readonly antiAffinityCounts: SummedCounts,
  ) {}

  clone(): PreFilterState {
    return new PreFilterState(
      this.pod,
      this.terms,
      this.namespaceLabels,
      this.existingAntiAffinityCounts.clone(),
      this.affinityCounts.clone(),
      this.antiAffinityCounts.clone(),
    );
  }

  updateWithPod(other: PodInfo, node: DeepReadonly<Node>, delta: number): void {
    updateWithAntiAffinityTerms(
      this.existingAntiAffinityCounts,
      other.affinity.requiredAnti,
      this.pod,
      this.namespaceLabels,
      node,
      delta,
    );
    updateWithAffinityTerms(this.affinityCounts, this.terms.required, other.pod, node, delta);
    updateWithAntiAffinityTerms(
      this.antiAffinityCounts,
      this.terms.requiredAnti,
      other.pod,
      undefined,
      node,
      delta,
    );
  }
}

interface PreScoreState {
  /** Score per topology key and value. */
  topologyScore: Map<string, Map<string, number>>;
}

/** The incoming pod's terms, with namespace selectors resolved; throws when a selector does not parse. */
function incomingTerms(pod: DeepReadonly<Pod>, namespaces: NamespaceLister | undefined): PodAffinityTerms {
  const terms = podAffinityTerms(pod);
  if (
    terms.required.length +
      terms.requiredAnti.length +
      terms.preferred.length +
      terms.preferredAnti.length ===
    0
  )
    return terms;
  const resolve = (term: AffinityTerm) => resolveNamespaces(term, namespaces);
  return {
    required: terms.required.map(resolve),
    requiredAnti: terms.requiredAnti.map(resolve),
    preferred: terms.preferred.map(({ term, weight }) => ({ term: resolve(term), weight })),
    preferredAnti: terms.preferredAnti.map(({ term, weight }) => ({ term: resolve(term), weight })),
  };
}

/**
 * InterPodAffinity (upstream `plugins/interpodaffinity`). Filter: a node
 * must hold, in each required affinity term's topology, pods matching all the
 * terms (or no pod anywhere matches and the pod matches its own terms, so
 * the first of a group can land); must not hold, in a required anti-affinity
 * term's topology, a pod the term selects; and must not be in the topology
 * of an existing pod whose required anti-affinity selects this pod. Score:
 * the preferred terms both ways, and existing pods' required affinity terms
 * selecting this pod (weight 1), summed per topology and scaled to
 * [0, 100] between the lowest and highest node.
 */
export function interPodAffinityPlugin(options: { namespaces?: NamespaceLister | undefined } = {}): Plugin {
  const lister = options.namespaces;
  const namespaceLabels = (pod: DeepReadonly<Pod>) => lister?.labels(pod.metadata?.namespace ?? "");
  return {
    name: "InterPodAffinity",
    weight: 2,
    dependsOnOtherNodes: true,
    events: ["AssignedPodAdd", "AssignedPodLabelChange", "AssignedPodDelete", "NodeAdd", "NodeLabelChange"],
    preFilter(state, pod, allNodes) {
      let terms: PodAffinityTerms;
      try {
        terms = incomingTerms(pod, lister);
      } catch (error) {
        return unresolvable(`parsing pod: ${(error as Error).message}`);
      }
      const labels = namespaceLabels(pod);
      const lists = nodeListsOf(state, allNodes);
      // Where an existing pod's anti-affinity selects this pod, and where pods this pod's terms select are.
      const existingAnti = new SummedCounts(lists.existingAntiAffinity(pod, labels));
      const incoming = terms.required.length > 0 || terms.requiredAnti.length > 0;
      const anti = new SummedCounts(terms.requiredAnti.map((term) => lists.podsSelectedBy(term)));
      let affinity = new SummedCounts([]);
      if (terms.required.length === 1)
        affinity = new SummedCounts([lists.podsSelectedBy(terms.required[0]!)]);
      else if (terms.required.length > 1) {
        // Pods matching all of several terms: counted afresh.
        const counts = new TopologyCounts();
        for (const nodeInfo of allNodes) {
          if (nodeInfo.node !== undefined && nodeInfo.pods.size > 0) {
            countMatchingAll(counts, terms.required, nodeInfo, nodeInfo.node);
          }
        }
        affinity = new SummedCounts([counts]);
      }
      if (existingAnti.size === 0 && !incoming) return skipStatus;
      state.set(preFilterKey, new PreFilterState(pod, terms, labels, existingAnti, affinity, anti));
      return successStatus;
    },
    addPod(state, _pod, added, nodeInfo) {
      const s = state.get(preFilterKey) as PreFilterState | undefined;
      if (s !== undefined && nodeInfo.node !== undefined) s.updateWithPod(added, nodeInfo.node, 1);
    },
    removePod(state, _pod, removed, nodeInfo) {
      const s = state.get(preFilterKey) as PreFilterState | undefined;
      if (s !== undefined && nodeInfo.node !== undefined) s.updateWithPod(removed, nodeInfo.node, -1);
    },
    filter(state, _pod, nodeInfo) {
      const s = state.get(preFilterKey) as PreFilterState;
      const node = nodeInfo.node;
      if (node === undefined) return unresolvable("node not found");
      if (!satisfiesPodAffinity(s, node)) return unresolvable(errReasonAffinityRulesNotMatch);
      if (!satisfiesPodAntiAffinity(s, node)) return unschedulable(errReasonAntiAffinityRulesNotMatch);
      if (!satisfiesExistingPodsAntiAffinity(s, node)) {
        return unschedulable(errReasonExistingAntiAffinityRulesNotMatch);
      }
      return successStatus;
    },
    preScore(state, pod, feasible, allNodes) {
      if (feasible.length === 0) return skipStatus;
      const affinity = pod.spec?.affinity;
      const hasPreferred =
        (affinity?.podAffinity?.preferredDuringSchedulingIgnoredDuringExecution?.length ?? 0) > 0 ||
        (affinity?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution?.length ?? 0) > 0;
      let terms: PodAffinityTerms;
      try {
        terms = incomingTerms(pod, lister);
      } catch (error) {
        return { code: "Error", reasons: [`failed to parse pod: ${(error as Error).message}`] };
      }
      const nodes = hasPreferred ? allNodes : nodeListsOf(state, allNodes).havePodsWithAffinity();
      const topologyScore = scoreTopologies(pod, terms, namespaceLabels(pod), nodes, hasPreferred);
      if (topologyScore.size === 0) return skipStatus;
      state.set(preScoreKey, { topologyScore } satisfies PreScoreState);
      return successStatus;
    },
    score(state, _pod, nodeInfo) {
      const { topologyScore } = state.get(preScoreKey) as PreScoreState;
      const labels = nodeInfo.node?.metadata?.labels ?? {};
      let score = 0;
      for (const [key, values] of topologyScore) {
        const value = labels[key];
        if (value !== undefined) score += values.get(value) ?? 0;
      }
      return score;
    },
    normalizeScore(_state, _pod, scores) {
      let min = Number.POSITIVE_INFINITY;
      let max = Number.NEGATIVE_INFINITY;
      for (const score of scores) {
        if (score > max) max = score;
        if (score < min) min = score;
      }
      const spread = max - min;
      for (let i = 0; i < scores.length; i++) {
        scores[i] = spread > 0 ? Math.trunc(maxNodeScore * ((scores[i]! - min) / spread)) : 0;
      }
    },
  };
}

/** Adds the node's pods matching all of several affinity terms, under each term's topology pair. */
function countMatchingAll(
  counts: TopologyCounts,
  terms: readonly AffinityTerm[],
  nodeInfo: NodeInfo,
  node: DeepReadonly<Node>,
): void {
  let matching = 0;
  for (const { pod } of nodeInfo.pods.values()) if (matchesAllTerms(terms, pod)) matching++;
  if (matching > 0) for (const term of terms) update(counts, node, term.topologyKey, matching);
}

function hasLabels(node: DeepReadonly<Node>): boolean {
  for (const _ in node.metadata?.labels ?? {}) return true;
  return false;
}

/**
 * Score per topology key and value: the incoming pod's preferred terms over
 * the pods on `nodes`, and those pods' required and preferred terms over the
 * incoming pod. Unless the incoming pod has preferred terms, only pods with
 * scoring terms of their own count (`nodes` then holds only nodes with such pods).
 */
function scoreTopologies(
  pod: DeepReadonly<Pod>,
  terms: PodAffinityTerms,
  labels: Readonly<Record<string, string>> | undefined,
  nodes: readonly NodeInfo[],
  hasPreferred: boolean,
): Map<string, Map<string, number>> {
  const topologyScore = new Map<string, Map<string, number>>();
  const add = (
    term: AffinityTerm,
    weight: number,
    target: DeepReadonly<Pod>,
    nsLabels: typeof labels,
    node: DeepReadonly<Node>,
  ) => {
    if (!termMatches(term, target, nsLabels)) return;
    const value = node.metadata?.labels?.[term.topologyKey];
    if (value === undefined) return;
    let values = topologyScore.get(term.topologyKey);
    if (values === undefined) topologyScore.set(term.topologyKey, (values = new Map()));
    values.set(value, (values.get(value) ?? 0) + weight);
  };
  for (const nodeInfo of nodes) {
    const node = nodeInfo.node;
    if (node === undefined || (!hasPreferred && nodeInfo.podsWithScoringTerms === 0)) continue;
    if (!hasLabels(node)) continue;
    for (const existing of nodeInfo.pods.values()) {
      const theirs = existing.affinity;
      // Neither side has a term that scores here (e.g. a pod with required anti-affinity only).
      if (!hasPreferred && !scoresOthers(existing)) continue;
      for (const { term, weight } of terms.preferred) add(term, weight, existing.pod, undefined, node);
      for (const { term, weight } of terms.preferredAnti) add(term, -weight, existing.pod, undefined, node);
      for (const term of theirs.required) add(term, hardPodAffinityWeight, pod, labels, node);
      for (const { term, weight } of theirs.preferred) add(term, weight, pod, labels, node);
      for (const { term, weight } of theirs.preferredAnti) add(term, -weight, pod, labels, node);
    }
  }
  return topologyScore;
}

/** InterPodAffinity without a namespace lister: a term's namespace selector other than `{}` selects no namespace. */
export const interPodAffinity: Plugin = interPodAffinityPlugin();

function satisfiesPodAffinity(s: PreFilterState, node: DeepReadonly<Node>): boolean {
  const labels = node.metadata?.labels ?? {};
  let podsExist = true;
  for (const term of s.terms.required) {
    const value = labels[term.topologyKey];
    // Every topology key must be on the node.
    if (value === undefined) return false;
    if (s.affinityCounts.get(term.topologyKey, value) <= 0) podsExist = false;
  }
  if (podsExist) return true;
  // The first pod of a group with affinity to itself: no pod matches anywhere, and it matches its own terms.
  return s.affinityCounts.size === 0 && matchesAllTerms(s.terms.required, s.pod);
}

function satisfiesPodAntiAffinity(s: PreFilterState, node: DeepReadonly<Node>): boolean {
  if (s.antiAffinityCounts.size === 0) return true;
  const labels = node.metadata?.labels ?? {};
  for (const term of s.terms.requiredAnti) {
    const value = labels[term.topologyKey];
    if (value !== undefined && s.antiAffinityCounts.get(term.topologyKey, value) > 0) return false;
  }
  return true;
}

function satisfiesExistingPodsAntiAffinity(s: PreFilterState, node: DeepReadonly<Node>): boolean {
  if (s.existingAntiAffinityCounts.size === 0) return true;
  for (const [key, value] of Object.entries(node.metadata?.labels ?? {})) {
    if (s.existingAntiAffinityCounts.get(key, value) > 0) return false;
  }
  return true;
}
