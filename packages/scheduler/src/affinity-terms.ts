import {
  type DeepReadonly,
  labelSelectorAsSelector,
  type Namespace,
  nothing,
  type Pod,
  type Selector,
} from "@reconcile/api";
import type { PodAffinityTerm } from "kubernetes-types/core/v1.js";

// Pod (anti-)affinity terms, parsed once per pod (upstream framework.AffinityTerm and PodInfo's term lists).

/** A parsed `PodAffinityTerm`: which pods it selects, and the topology it spans. */
export interface AffinityTerm {
  /** Namespaces named by the term, or the pod's own when the term names none and has no namespace selector. */
  namespaces: ReadonlySet<string>;
  selector: Selector;
  topologyKey: string;
  /** `namespaceSelector`: missing selects no namespace, `{}` every namespace. */
  namespaceSelector: Selector;
}

export interface WeightedAffinityTerm {
  term: AffinityTerm;
  weight: number;
}

/** A pod's four term lists; pods without pod affinity share one empty set. */
export interface PodAffinityTerms {
  required: readonly AffinityTerm[];
  requiredAnti: readonly AffinityTerm[];
  preferred: readonly WeightedAffinityTerm[];
  preferredAnti: readonly WeightedAffinityTerm[];
}

export const noAffinityTerms: PodAffinityTerms = Object.freeze({
  required: [],
  requiredAnti: [],
  preferred: [],
  preferredAnti: [],
});

/** Whether the pod has pod affinity or anti-affinity at all (upstream's `PodsWithAffinity` membership). */
export function hasPodAffinity(pod: DeepReadonly<Pod>): boolean {
  const affinity = pod.spec?.affinity;
  return affinity != null && (affinity.podAffinity != null || affinity.podAntiAffinity != null);
}

/**
 * Parses the pod's affinity terms (upstream `NewPodInfo`). Throws the label
 * selector's error for a term that does not parse; {@link podAffinityTermsOrNone}
 * is the forgiving form the cache uses for pods already on nodes.
 */
export function podAffinityTerms(pod: DeepReadonly<Pod>): PodAffinityTerms {
  if (!hasPodAffinity(pod)) return noAffinityTerms;
  const affinity = pod.spec!.affinity!;
  const terms = (list: readonly DeepReadonly<PodAffinityTerm>[] | undefined) =>
    (list ?? []).map((term) => affinityTerm(pod, term));
  const weighted = (
    list: readonly DeepReadonly<{ weight: number; podAffinityTerm: PodAffinityTerm }>[] | undefined,
  ) =>
    (list ?? []).map((entry) => ({ term: affinityTerm(pod, entry.podAffinityTerm), weight: entry.weight }));
  return {
    required: terms(affinity.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution),
    requiredAnti: terms(affinity.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution),
    preferred: weighted(affinity.podAffinity?.preferredDuringSchedulingIgnoredDuringExecution),
    preferredAnti: weighted(affinity.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution),
  };
}

/**
 * The terms of a pod already placed: upstream ignores a parse error there
 * (the API server does not validate every selector), so such a pod's terms
 * count as none.
 */
export function podAffinityTermsOrNone(pod: DeepReadonly<Pod>): PodAffinityTerms {
  try {
    return podAffinityTerms(pod);
  } catch {
    return noAffinityTerms;
  }
}

function affinityTerm(pod: DeepReadonly<Pod>, term: DeepReadonly<PodAffinityTerm>): AffinityTerm {
  const named = term.namespaces ?? [];
  const namespaces =
    named.length === 0 && term.namespaceSelector == null
      ? new Set([pod.metadata?.namespace ?? ""])
      : new Set(named);
  return {
    namespaces,
    selector: labelSelectorAsSelector(term.labelSelector),
    topologyKey: term.topologyKey,
    namespaceSelector: labelSelectorAsSelector(term.namespaceSelector),
  };
}

/**
 * Whether the term selects `pod`: the pod's namespace is named, or its labels
 * `namespaceLabels` pass the namespace selector, and its labels pass the
 * label selector (upstream `AffinityTerm.Matches`).
 */
export function termMatches(
  term: AffinityTerm,
  pod: DeepReadonly<Pod>,
  namespaceLabels: Readonly<Record<string, string>> | undefined,
): boolean {
  const namespace = pod.metadata?.namespace ?? "";
  if (term.namespaces.has(namespace) || term.namespaceSelector.matches(namespaceLabels ?? {})) {
    return term.selector.matches(pod.metadata?.labels ?? {});
  }
  return false;
}

/** Looks namespaces up for namespace selectors. */
export interface NamespaceLister {
  /** Every namespace's name and labels. */
  list(): readonly DeepReadonly<{ metadata?: { name?: string; labels?: Record<string, string> } }>[];
  /** One namespace's labels; undefined when it is not known. */
  labels(name: string): Readonly<Record<string, string>> | undefined;
}

/**
 * The incoming pod's terms with a namespace selector resolved into the
 * namespaces it selects now (upstream `mergeAffinityTermNamespacesIfNotEmpty`);
 * a selector of every namespace (`{}`) stays a selector.
 */
export function resolveNamespaces(term: AffinityTerm, lister: NamespaceLister | undefined): AffinityTerm {
  if (term.namespaceSelector.empty()) return term;
  const namespaces = new Set(term.namespaces);
  if (term.namespaceSelector !== nothing()) {
    for (const namespace of lister?.list() ?? []) {
      if (term.namespaceSelector.matches(namespace.metadata?.labels ?? {})) {
        namespaces.add(namespace.metadata?.name ?? "");
      }
    }
  }
  return { ...term, namespaces, namespaceSelector: nothing() };
}

/** Namespace names and labels from a namespace informer's cache. */
export function namespaceLister(
  informer:
    | {
        getIndexer(): {
          byIndex(index: "namespace", value: ""): readonly DeepReadonly<Namespace>[];
          getByKey(key: string): DeepReadonly<Namespace> | undefined;
        };
      }
    | undefined,
): NamespaceLister | undefined {
  if (informer === undefined) return undefined;
  const indexer = informer.getIndexer();
  return {
    list: () => indexer.byIndex("namespace", ""),
    labels: (name) => indexer.getByKey(name)?.metadata?.labels,
  };
}
