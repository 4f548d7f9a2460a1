import type { ResourceQuota, ScopedResourceSelectorRequirement } from "kubernetes-types/core/v1.js";
import { Quantity } from "./quantity.js";
import type { ResourceDescriptor } from "./resources.js";
import type { KubeObject, Pod, PodSpec } from "./types.js";

/** Amounts by resource name (`cpu`, `requests.memory`, `count/pods`). */
export type ResourceAmounts = Map<string, Quantity>;

type Which = "requests" | "limits";
type GroupResource = Pick<ResourceDescriptor, "group" | "plural">;

/**
 * A pod's total requests or limits (upstream's `PodRequests`/`PodLimits`):
 * the containers and sidecars summed, raised to what any one init container
 * needs beside the sidecars started before it, plus the pod's overhead when
 * `withOverhead`.
 */
export function podResourceTotals(spec: PodSpec, which: Which, withOverhead = false): ResourceAmounts {
  const total: ResourceAmounts = new Map();
  for (const container of spec.containers ?? []) addAmounts(total, container.resources?.[which]);
  const sidecars: ResourceAmounts = new Map();
  const initMax: ResourceAmounts = new Map();
  for (const container of spec.initContainers ?? []) {
    const own = container.resources?.[which];
    let needed: ResourceAmounts;
    if (container.restartPolicy === "Always") {
      addAmounts(total, own);
      addAmounts(sidecars, own);
      needed = sidecars;
    } else {
      needed = new Map();
      addAmounts(needed, own);
      for (const [name, q] of sidecars) needed.set(name, needed.get(name)?.add(q) ?? q);
    }
    for (const [name, q] of needed) {
      const had = initMax.get(name);
      if (had === undefined || q.cmp(had) > 0) initMax.set(name, q);
    }
  }
  for (const [name, q] of initMax) {
    const had = total.get(name);
    if (had === undefined || q.cmp(had) > 0) total.set(name, q);
  }
  if (withOverhead) addAmounts(total, spec.overhead);
  return total;
}

/** Adds each amount of `list` (quantities as JSON gives them) into `into`. */
export function addAmounts(
  into: ResourceAmounts,
  list: Record<string, unknown> | ResourceAmounts | undefined,
): void {
  const entries = list instanceof Map ? list.entries() : Object.entries(list ?? {});
  for (const [name, value] of entries) {
    const q = value instanceof Quantity ? value : Quantity.parse(String(value));
    const had = into.get(name);
    into.set(name, had === undefined ? q : had.add(q));
  }
}

/** The names of the resources a quota on pods tracks besides prefixed and extended ones. */
const podResources = new Set([
  "pods",
  "count/pods",
  "cpu",
  "memory",
  "ephemeral-storage",
  "requests.cpu",
  "requests.memory",
  "requests.ephemeral-storage",
  "limits.cpu",
  "limits.memory",
  "limits.ephemeral-storage",
]);
/** Resources a quota makes every container state explicitly (the old coupling of quota and validation). */
const mustSpecify = new Set([
  "cpu",
  "memory",
  "requests.cpu",
  "requests.memory",
  "limits.cpu",
  "limits.memory",
]);
/** The older names of core object counts. */
const legacyCounts: Readonly<Record<string, string>> = {
  services: "services",
  configmaps: "configmaps",
  secrets: "secrets",
  resourcequotas: "resourcequotas",
  replicationcontrollers: "replicationcontrollers",
  persistentvolumeclaims: "persistentvolumeclaims",
};

/** `count/<plural>` for core resources, `count/<plural>.<group>` for the others. */
export function objectCountName(resource: GroupResource): string {
  return resource.group === "" ? `count/${resource.plural}` : `count/${resource.plural}.${resource.group}`;
}

/** Which of `names` (a quota's hard resources) an object of `resource` counts against (upstream's `MatchingResources`). */
export function quotaResourcesFor(resource: GroupResource, names: Iterable<string>): string[] {
  const count = objectCountName(resource);
  const legacy = resource.group === "" ? legacyCounts[resource.plural] : undefined;
  const matching: string[] = [];
  for (const name of names) {
    if (name === count || name === legacy) matching.push(name);
    else if (resource.group === "" && resource.plural === "pods") {
      if (podResources.has(name) || name.startsWith("hugepages-") || name.startsWith("requests."))
        matching.push(name);
    } else if (resource.group === "" && resource.plural === "services") {
      if (name === "services.loadbalancers" || name === "services.nodeports") matching.push(name);
    } else if (resource.group === "" && resource.plural === "persistentvolumeclaims") {
      if (name === "requests.storage" || name.includes(".storageclass.storage.k8s.io/")) matching.push(name);
    }
  }
  return matching;
}

/**
 * Whether a pod still counts for compute resources: not finished, and not
 * past the end of its deletion's grace period (upstream's `QuotaV1Pod`).
 */
export function podCountsForQuota(pod: Pod, nowMs: number): boolean {
  const phase = pod.status?.phase;
  if (phase === "Succeeded" || phase === "Failed") return false;
  const deletion = pod.metadata?.deletionTimestamp;
  const grace = pod.metadata?.deletionGracePeriodSeconds;
  if (deletion != null && grace != null && nowMs > Date.parse(deletion) + grace * 1000) return false;
  return true;
}

/** What one object adds to the quotas of its namespace (upstream's evaluators' `Usage`). */
export function quotaUsage(
  resource: GroupResource,
  object: KubeObject,
  nowMs: number,
  /** The resources asked about, when not all: a pod's compute totals are summed only if one of them needs them. */
  only?: readonly string[],
): ResourceAmounts {
  const one = () => new Quantity(1);
  const usage: ResourceAmounts = new Map([[objectCountName(resource), one()]]);
  if (resource.group !== "") return usage;
  const legacy = legacyCounts[resource.plural];
  if (legacy !== undefined) usage.set(legacy, one());
  if (resource.plural === "pods") {
    const pod = object as Pod;
    if (pod.spec === undefined || !podCountsForQuota(pod, nowMs)) return usage;
    usage.set("pods", one());
    if (only?.every((name) => name === "pods" || name.startsWith("count/"))) return usage;
    const requests = podResourceTotals(pod.spec, "requests", true);
    const limits = podResourceTotals(pod.spec, "limits", true);
    for (const name of ["cpu", "memory", "ephemeral-storage"]) {
      const request = requests.get(name);
      if (request !== undefined) usage.set(name, request).set(`requests.${name}`, request);
      const limit = limits.get(name);
      if (limit !== undefined) usage.set(`limits.${name}`, limit);
    }
    for (const [name, request] of requests) {
      if (name.startsWith("hugepages-")) usage.set(name, request).set(`requests.${name}`, request);
      else if (name.includes("/") && !name.startsWith("kubernetes.io/"))
        usage.set(`requests.${name}`, request);
    }
  } else if (resource.plural === "services") {
    const spec = (object as { spec?: { type?: string; ports?: { nodePort?: number }[] } }).spec;
    if (spec?.type === "LoadBalancer") usage.set("services.loadbalancers", one());
    if (spec?.type === "LoadBalancer" || spec?.type === "NodePort")
      usage.set("services.nodeports", new Quantity(spec.ports?.length ?? 0));
  } else if (resource.plural === "persistentvolumeclaims") {
    const spec = (
      object as { spec?: { storageClassName?: string; resources?: { requests?: Record<string, string> } } }
    ).spec;
    const storage = spec?.resources?.requests?.storage;
    const className = spec?.storageClassName;
    if (storage !== undefined) usage.set("requests.storage", Quantity.parse(storage));
    if (className) {
      usage.set(`${className}.storageclass.storage.k8s.io/persistentvolumeclaims`, one());
      if (storage !== undefined)
        usage.set(`${className}.storageclass.storage.k8s.io/requests.storage`, Quantity.parse(storage));
    }
  }
  return usage;
}

/** The scope selectors of a quota: its `scopes` and its `scopeSelector`, as one list. */
function scopeSelectors(quota: ResourceQuota): ScopedResourceSelectorRequirement[] {
  const fromScopes = (quota.spec?.scopes ?? []).map((scopeName) => ({ scopeName, operator: "Exists" }));
  return [...fromScopes, ...(quota.spec?.scopeSelector?.matchExpressions ?? [])];
}

/**
 * Whether a quota's scopes select the object: every scope must; only pods
 * match any scope (upstream's `MatchesScopeFunc`).
 */
export function quotaScopesMatch(quota: ResourceQuota, resource: GroupResource, object: KubeObject): boolean {
  const selectors = scopeSelectors(quota);
  if (selectors.length === 0) return true;
  if (resource.group !== "" || resource.plural !== "pods") return false;
  const spec = (object as Pod).spec;
  return selectors.every((selector) => podMatchesScope(spec, selector));
}

function podMatchesScope(spec: PodSpec | undefined, selector: ScopedResourceSelectorRequirement): boolean {
  switch (selector.scopeName) {
    case "Terminating":
      return spec?.activeDeadlineSeconds != null && spec.activeDeadlineSeconds >= 0;
    case "NotTerminating":
      return !(spec?.activeDeadlineSeconds != null && spec.activeDeadlineSeconds >= 0);
    case "BestEffort":
      return isBestEffort(spec);
    case "NotBestEffort":
      return !isBestEffort(spec);
    case "PriorityClass": {
      const name = spec?.priorityClassName ?? "";
      const values = selector.values ?? [];
      switch (selector.operator) {
        case "In":
          return values.includes(name);
        case "NotIn":
          return !values.includes(name);
        case "Exists":
          return name !== "";
        case "DoesNotExist":
          return name === "";
      }
      return false;
    }
    case "CrossNamespacePodAffinity": {
      const terms = [
        ...(spec?.affinity?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []),
        ...(spec?.affinity?.podAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []).map(
          (w) => w.podAffinityTerm,
        ),
        ...(spec?.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []),
        ...(spec?.affinity?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []).map(
          (w) => w.podAffinityTerm,
        ),
      ];
      return terms.some((t) => (t.namespaces ?? []).length > 0 || t.namespaceSelector != null);
    }
  }
  return false;
}

/** No container requests or limits cpu or memory (upstream's `isBestEffort`, from the QoS class). */
function isBestEffort(spec: PodSpec | undefined): boolean {
  for (const container of [...(spec?.containers ?? []), ...(spec?.initContainers ?? [])]) {
    for (const which of ["requests", "limits"] as const) {
      const list = container.resources?.[which] ?? {};
      if (list.cpu !== undefined || list.memory !== undefined) return false;
    }
  }
  return true;
}

/**
 * The containers that leave unset a resource a quota tracks by container
 * (`must specify limits.cpu for: a,b; requests.memory for: a`), or undefined
 * (upstream's pod evaluator `Constraints`).
 */
export function podQuotaConstraints(pod: Pod, restricted: Iterable<string>): string | undefined {
  const missing = new Map<string, Set<string>>();
  const required = [...restricted].filter((name) => mustSpecify.has(name));
  if (required.length === 0) return undefined;
  for (const container of [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])]) {
    for (const name of required) {
      const limit = name.startsWith("limits.");
      const plain = name.replace(/^(requests|limits)\./, "");
      const list = (limit ? container.resources?.limits : container.resources?.requests) ?? {};
      if (list[plain] !== undefined) continue;
      const names = missing.get(name) ?? new Set<string>();
      names.add(container.name);
      missing.set(name, names);
    }
  }
  if (missing.size === 0) return undefined;
  const parts = [...missing.keys()]
    .sort()
    .map((name) => `${name} for: ${[...missing.get(name)!].sort().join(",")}`);
  return `must specify ${parts.join("; ")}`;
}

/** Amounts as Go prints a ResourceList in quota messages: sorted `name=value`, comma-joined. */
export function formatAmounts(amounts: ResourceAmounts): string {
  return [...amounts.keys()]
    .sort()
    .map((name) => `${name}=${amounts.get(name)!.toString()}`)
    .join(",");
}

/** A ResourceList (JSON) as amounts. */
export function amountsOf(list: Record<string, unknown> | undefined): ResourceAmounts {
  const amounts: ResourceAmounts = new Map();
  addAmounts(amounts, list);
  return amounts;
}

/** Amounts as a ResourceList (JSON), each quantity in its canonical form. */
export function resourceListOf(amounts: ResourceAmounts): Record<string, string> {
  return Object.fromEntries([...amounts].map(([name, q]) => [name, q.toString()]));
}
