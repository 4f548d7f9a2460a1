import {
  type DeepReadonly,
  type LabelSelector,
  type LabelSelectorRequirement,
  labelSelectorAsSelector,
  type Pod,
  type Selector,
} from "@reconcile/api";
import type { ReplicaSet, StatefulSet } from "kubernetes-types/apps/v1.js";
import type { ReplicationController, Service } from "kubernetes-types/core/v1.js";

/**
 * The caches system-default spreading reads (upstream hands the plugin the
 * informer factory's listers): Services by namespace, and the
 * ReplicationControllers, ReplicaSets and StatefulSets by `namespace/name`.
 */
export interface SpreadingListers {
  servicesIn(namespace: string): readonly DeepReadonly<Service>[];
  replicationController(key: string): DeepReadonly<ReplicationController> | undefined;
  replicaSet(key: string): DeepReadonly<ReplicaSet> | undefined;
  statefulSet(key: string): DeepReadonly<StatefulSet> | undefined;
}

/** Informers (or anything with an indexer) over the four kinds {@link SpreadingListers} reads. */
interface IndexerOf<T> {
  getIndexer(): {
    byIndex(index: "namespace", value: string): readonly DeepReadonly<T>[];
    getByKey(key: string): DeepReadonly<T> | undefined;
  };
}

/** {@link SpreadingListers} over informers' caches. */
export function spreadingListers(informers: {
  services: IndexerOf<Service>;
  replicationControllers: IndexerOf<ReplicationController>;
  replicaSets: IndexerOf<ReplicaSet>;
  statefulSets: IndexerOf<StatefulSet>;
}): SpreadingListers {
  const services = informers.services.getIndexer();
  const controllers = informers.replicationControllers.getIndexer();
  const replicaSets = informers.replicaSets.getIndexer();
  const statefulSets = informers.statefulSets.getIndexer();
  return {
    servicesIn: (namespace) => services.byIndex("namespace", namespace),
    replicationController: (key) => controllers.getByKey(key),
    replicaSet: (key) => replicaSets.getByKey(key),
    statefulSet: (key) => statefulSets.getByKey(key),
  };
}

/**
 * The selector system-default spreading counts a pod's peers with (upstream
 * `helper.DefaultSelector`): the selectors of the pod's namespace's Services
 * that select it, merged, then its controller's — a ReplicationController's
 * selector merged in, or a ReplicaSet's or StatefulSet's requirements added.
 * Empty when nothing selects the pod: then it is not spread by default.
 */
export function defaultSpreadSelector(pod: DeepReadonly<Pod>, listers: SpreadingListers): Selector {
  const namespace = pod.metadata?.namespace ?? "";
  const labels = pod.metadata?.labels ?? {};
  const matchLabels: Record<string, string> = {};
  for (const service of listers.servicesIn(namespace)) {
    const selector = service.spec?.selector;
    // A Service without a selector selects nothing, not everything.
    if (selector == null) continue;
    if (Object.entries(selector).every(([key, value]) => labels[key] === value))
      Object.assign(matchLabels, selector);
  }
  const matchExpressions: LabelSelectorRequirement[] = [];
  const owner = pod.metadata?.ownerReferences?.find((ref) => ref.controller === true);
  const key = owner === undefined ? "" : `${namespace}/${owner.name}`;
  if (owner?.apiVersion === "v1" && owner.kind === "ReplicationController") {
    const selector = listers.replicationController(key)?.spec?.selector;
    if (selector != null) Object.assign(matchLabels, selector);
  } else if (
    owner?.apiVersion === "apps/v1" &&
    (owner.kind === "ReplicaSet" || owner.kind === "StatefulSet")
  ) {
    const controller = owner.kind === "ReplicaSet" ? listers.replicaSet(key) : listers.statefulSet(key);
    matchExpressions.push(...requirementsOf(controller?.spec?.selector));
  }
  return labelSelectorAsSelector({ matchLabels, matchExpressions });
}

/** A label selector's terms as expressions; none for a missing or invalid selector (upstream skips it). */
function requirementsOf(selector: DeepReadonly<LabelSelector> | undefined): LabelSelectorRequirement[] {
  if (selector == null) return [];
  try {
    labelSelectorAsSelector(selector);
  } catch {
    return [];
  }
  return [
    ...Object.entries(selector.matchLabels ?? {}).map(([key, value]) => ({
      key,
      operator: "In",
      values: [value],
    })),
    ...(selector.matchExpressions ?? []).map((e) => ({
      key: e.key,
      operator: e.operator,
      values: [...(e.values ?? [])],
    })),
  ];
}
