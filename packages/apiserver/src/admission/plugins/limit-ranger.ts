import {
  limitRanges,
  type Pod,
  persistentVolumeClaims,
  podResourceTotals,
  pods,
  Quantity,
  resourceListOf,
} from "@reconcile/api";
import type { Container, LimitRange, PersistentVolumeClaim } from "kubernetes-types/core/v1.js";
import {
  type AdmissionAttributes,
  type AdmissionContext,
  type AdmissionPlugin,
  aggregate,
  forbidden,
  resourceKey,
  whenKnown,
} from "../plugin.js";

/** The annotation that lists what the plugin defaulted. */
export const limitRangerAnnotation = "kubernetes.io/limit-ranger";

type ResourceList = Record<string, string>;
type Limit = NonNullable<LimitRange["spec"]>["limits"][number];

const podKey = resourceKey(pods);
const claimKey = resourceKey(persistentVolumeClaims);

/**
 * LimitRanger: the namespace's LimitRanges default the requests and limits of
 * a new pod's containers (noting what it set in the `kubernetes.io/limit-ranger`
 * annotation), then bound them per container and per pod (min, max, the limit
 * to request ratio), and bound a claim's storage request. Pod updates are not
 * looked at (containers cannot change), nor are objects being deleted.
 */
export function limitRanger(context: AdmissionContext): AdmissionPlugin {
  const applies = (key: string, operation: string, subresource: string, deleting: boolean) =>
    subresource === "" &&
    !deleting &&
    ((key === podKey && operation === "CREATE") ||
      (key === claimKey && (operation === "CREATE" || operation === "UPDATE")));
  return {
    name: "LimitRanger",
    resources: [podKey, claimKey],
    admit(a) {
      const key = resourceKey(a.resource);
      if (key !== podKey || !applies(key, a.operation, a.subresource, false) || a.object === undefined)
        return;
      return whenKnown(context.list(limitRanges, a.namespace), defaultPod, a.object as Pod);
    },
    validate(a) {
      const key = resourceKey(a.resource);
      const deleting = a.oldObject?.metadata?.deletionTimestamp !== undefined;
      if (!applies(key, a.operation, a.subresource, deleting) || a.object === undefined) return;
      return whenKnown(context.list(limitRanges, a.namespace), checkAgainst, a, key);
    },
  };
}

/** Gives a pod each range's defaults. */
function defaultPod(ranges: readonly LimitRange[], pod: Pod): void {
  for (const range of ranges) defaultPodResources(range, pod);
}

/** Refuses the pod or claim of `a` (its resource's `key`) if it breaks a range's bounds. */
function checkAgainst(ranges: readonly LimitRange[], a: AdmissionAttributes, key: string): void {
  for (const range of ranges) {
    const problems =
      key === podKey
        ? podProblems(range, a.object as Pod)
        : claimProblems(range, a.object as PersistentVolumeClaim);
    if (problems.length > 0) throw forbidden(a, aggregate(problems));
  }
}

interface ContainerDefaults {
  readonly requests: ResourceList;
  readonly limits: ResourceList;
  /** The names of each, sorted, as the annotation lists them. */
  readonly requestNames: readonly string[];
  readonly limitNames: readonly string[];
}

/** The defaults a range's Container limits give (requests from `defaultRequest`, limits from `default`), once per range. */
function containerDefaults(range: LimitRange): ContainerDefaults {
  let defaults = defaultsOfRanges.get(range);
  if (defaults === undefined) {
    const requests: ResourceList = {};
    const limits: ResourceList = {};
    for (const limit of range.spec?.limits ?? []) {
      if (limit.type !== "Container") continue;
      Object.assign(requests, limit.defaultRequest);
      Object.assign(limits, limit.default);
    }
    const requestNames = Object.keys(requests).sort();
    const limitNames = Object.keys(limits).sort();
    defaults = { requests, limits, requestNames, limitNames };
    defaultsOfRanges.set(range, defaults);
  }
  return defaults;
}

/** Ranges as the list cache shares them (read-only): their defaults are worked out once. */
const defaultsOfRanges = new WeakMap<LimitRange, ContainerDefaults>();

/** Fills what a pod's containers leave unset from `range`'s defaults, and says so in the annotation. */
export function defaultPodResources(range: LimitRange, pod: Pod): void {
  const defaults = containerDefaults(range);
  if (defaults.requestNames.length === 0 && defaults.limitNames.length === 0) return;
  const notes: string[] = [];
  for (const container of pod.spec?.containers ?? [])
    defaultContainer(defaults, container, "container", notes);
  for (const container of pod.spec?.initContainers ?? [])
    defaultContainer(defaults, container, "init container", notes);
  if (notes.length === 0) return;
  const meta = (pod.metadata ??= {});
  (meta.annotations ??= {})[limitRangerAnnotation] = `LimitRanger plugin set: ${notes.join("; ")}`;
}

/** Sets `container`'s unset requests and limits from `defaults`, noting what it set. */
function defaultContainer(
  defaults: ContainerDefaults,
  container: Container,
  prefix: string,
  notes: string[],
) {
  const limitsSet = defaultList(container, "limits", defaults.limits, defaults.limitNames);
  const requestsSet = defaultList(container, "requests", defaults.requests, defaults.requestNames);
  if (requestsSet !== "") notes.push(`${requestsSet} request for ${prefix} ${container.name}`);
  if (limitsSet !== "") notes.push(`${limitsSet} limit for ${prefix} ${container.name}`);
}

/** Sets the names of `given` that `container`'s `which` list lacks; returns them joined by ", " in order. */
function defaultList(
  container: Container,
  which: "requests" | "limits",
  given: ResourceList,
  names: readonly string[],
): string {
  let list: ResourceList | undefined = container.resources?.[which];
  let set = "";
  for (const name of names) {
    if (list !== undefined && Object.hasOwn(list, name)) continue;
    if (list === undefined) {
      list = {};
      (container.resources ??= {})[which] = list;
    }
    list[name] = given[name]!;
    set = set === "" ? name : `${set}, ${name}`;
  }
  return set;
}

/** What breaks `range`'s Container and Pod limits, in upstream's words. */
export function podProblems(range: LimitRange, pod: Pod): string[] {
  const problems: string[] = [];
  const spec = pod.spec;
  for (const limit of range.spec?.limits ?? []) {
    if (!hasBounds(limit)) continue;
    if (limit.type === "Container") {
      for (const container of [...(spec?.containers ?? []), ...(spec?.initContainers ?? [])]) {
        const { requests = {}, limits = {} } = container.resources ?? {};
        checkBounds(limit, requests, limits, problems);
      }
    } else if (limit.type === "Pod" && spec !== undefined) {
      checkBounds(limit, podTotal(spec, "requests"), podTotal(spec, "limits"), problems);
    }
  }
  return problems;
}

/** What breaks `range`'s PersistentVolumeClaim limits: only the requests count. */
export function claimProblems(range: LimitRange, claim: PersistentVolumeClaim): string[] {
  const problems: string[] = [];
  const requests: ResourceList = (claim.spec?.resources?.requests ?? {}) as ResourceList;
  for (const limit of range.spec?.limits ?? []) {
    if (limit.type !== "PersistentVolumeClaim") continue;
    for (const [name, bound] of entries(limit.min)) {
      const problem = minProblem(limit.type, name, bound, requests, {});
      if (problem !== undefined) problems.push(problem);
    }
    for (const [name, bound] of entries(limit.max)) {
      const enforced = Quantity.parse(bound);
      const request = requests[name];
      if (request === undefined)
        problems.push(`maximum ${name} usage per ${limit.type} is ${enforced}.  No request is specified`);
      else if (compareValue(request, enforced) > 0)
        problems.push(
          `maximum ${name} usage per ${limit.type} is ${enforced}, but request is ${Quantity.parse(request)}`,
        );
    }
  }
  return problems;
}

/** Whether `limit` bounds anything (a range of defaults only does not). */
function hasBounds(limit: Limit): boolean {
  return limit.min !== undefined || limit.max !== undefined || limit.maxLimitRequestRatio !== undefined;
}

function checkBounds(limit: Limit, requests: ResourceList, limits: ResourceList, problems: string[]): void {
  for (const [name, bound] of entries(limit.min)) {
    const problem = minProblem(limit.type, name, bound, requests, limits);
    if (problem !== undefined) problems.push(problem);
  }
  for (const [name, bound] of entries(limit.max)) {
    const problem = maxProblem(limit.type, name, bound, requests, limits);
    if (problem !== undefined) problems.push(problem);
  }
  for (const [name, bound] of entries(limit.maxLimitRequestRatio)) {
    const problem = ratioProblem(limit.type, name, bound, requests, limits);
    if (problem !== undefined) problems.push(problem);
  }
}

function minProblem(
  type: string,
  name: string,
  bound: string,
  requests: ResourceList,
  limits: ResourceList,
): string | undefined {
  const enforced = Quantity.parse(bound);
  const request = requests[name];
  const limit = limits[name];
  if (request === undefined)
    return `minimum ${name} usage per ${type} is ${enforced}.  No request is specified`;
  if (compareValue(request, enforced) < 0)
    return `minimum ${name} usage per ${type} is ${enforced}, but request is ${Quantity.parse(request)}`;
  if (limit !== undefined && compareValue(limit, enforced) < 0)
    return `minimum ${name} usage per ${type} is ${enforced}, but limit is ${Quantity.parse(limit)}`;
  return undefined;
}

function maxProblem(
  type: string,
  name: string,
  bound: string,
  requests: ResourceList,
  limits: ResourceList,
): string | undefined {
  const enforced = Quantity.parse(bound);
  const request = requests[name];
  const limit = limits[name];
  if (limit === undefined) return `maximum ${name} usage per ${type} is ${enforced}.  No limit is specified`;
  if (compareValue(limit, enforced) > 0)
    return `maximum ${name} usage per ${type} is ${enforced}, but limit is ${Quantity.parse(limit)}`;
  if (request !== undefined && compareValue(request, enforced) > 0)
    return `maximum ${name} usage per ${type} is ${enforced}, but request is ${Quantity.parse(request)}`;
  return undefined;
}

function ratioProblem(
  type: string,
  name: string,
  bound: string,
  requests: ResourceList,
  limits: ResourceList,
): string | undefined {
  const enforced = Quantity.parse(bound);
  const request = requests[name] === undefined ? 0 : Quantity.parse(requests[name]).milliValue();
  const limit = limits[name] === undefined ? 0 : Quantity.parse(limits[name]).milliValue();
  if (request === 0)
    return `${name} max limit to request ratio per ${type} is ${enforced}, but no request is specified or request is 0`;
  if (limit === 0)
    return `${name} max limit to request ratio per ${type} is ${enforced}, but no limit is specified or limit is 0`;
  const ratio = limit / request;
  // Compared in thousandths, as upstream does, so 1.5 against a bound of 1500m is not over it.
  if (ratio * 1000 > enforced.milliValue())
    return `${name} max limit to request ratio per ${type} is ${enforced}, but provided ratio is ${ratio.toFixed(6)}`;
  return undefined;
}

/** Compares at upstream's precision: thousandths, rounded up. */
function compareValue(value: string, enforced: Quantity): number {
  return Math.sign(Quantity.parse(value).milliValue() - enforced.milliValue());
}

/** A pod's total requests or limits as LimitRanger counts them (without the pod's overhead). */
function podTotal(spec: NonNullable<Pod["spec"]>, which: "requests" | "limits"): ResourceList {
  return resourceListOf(podResourceTotals(spec, which));
}

function entries(list: Record<string, unknown> | undefined): [string, string][] {
  return Object.entries(list ?? {}).map(([name, value]) => [name, String(value)]);
}
