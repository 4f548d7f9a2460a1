import {
  errorMessage,
  type KubeObject,
  type LabelSelector,
  labelSelectorAsSelector,
  type Namespace,
  namespaces,
  newInternalError,
  type ResourceDescriptor,
  StatusError,
} from "@reconcile/api";
import type { AdmissionAttributes } from "../registry/admission.js";
import type { AdmissionContext } from "./plugin.js";

/** One rule of a webhook or a policy's match constraints, as the wire has it. */
export interface AdmissionRule {
  operations?: string[] | undefined;
  apiGroups?: string[] | undefined;
  apiVersions?: string[] | undefined;
  resources?: string[] | undefined;
  resourceNames?: string[] | undefined;
  scope?: string | undefined;
}

const has = (list: readonly string[] | undefined, value: string) =>
  (list ?? []).includes("*") || (list ?? []).includes(value);

/**
 * Whether a rule matches the request (upstream's `rules.Matcher`): the
 * operation, group, version, `resource/subresource` (a star matches any)
 * and scope.
 */
export function ruleMatches(rule: AdmissionRule, a: AdmissionAttributes): boolean {
  const { resource } = a;
  if (!has(rule.operations, a.operation) || !has(rule.apiGroups, resource.group)) return false;
  if (!has(rule.apiVersions, resource.version)) return false;
  const names = rule.resourceNames ?? [];
  if (names.length > 0 && !names.includes(a.name)) return false;
  const resourceMatches = (rule.resources ?? []).some((entry) => {
    const slash = entry.indexOf("/");
    const res = slash < 0 ? entry : entry.slice(0, slash);
    const sub = slash < 0 ? "" : entry.slice(slash + 1);
    return (res === "*" || res === resource.plural) && (sub === "*" || sub === a.subresource);
  });
  if (!resourceMatches) return false;
  switch (rule.scope ?? "*") {
    case "Cluster":
      return !resource.namespaced;
    case "Namespaced":
      return resource.namespaced;
    default:
      return true;
  }
}

/**
 * The resource `rules` match the request as (upstream's
 * `matchesResourceRules`): its own when a rule matches it, else, when
 * `equivalent` (`matchPolicy: Equivalent`), the first equivalent resource a
 * rule matches (another served version of the kind); undefined for none.
 */
export function rulesMatch(
  rules: readonly AdmissionRule[],
  a: AdmissionAttributes,
  context: AdmissionContext,
  equivalent: boolean,
): ResourceDescriptor | undefined {
  if (rules.length === 0) return undefined;
  if (rules.some((rule) => ruleMatches(rule, a))) return a.resource;
  if (!equivalent) return undefined;
  return context
    .equivalents?.(a.resource)
    .find((other) => rules.some((rule) => ruleMatches(rule, { ...a, resource: other })));
}

/** Objects whose kind is the same at every version (Scale, Binding, Eviction) stay as they are. */
const convertedSubresources = new Set(["", "status"]);

/**
 * `a` at the version of an equivalent `resource` (upstream's
 * `VersionedAttributes`): itself for its own resource, else a copy whose
 * objects are converted; a conversion that fails is the client's 500.
 */
export function versionedAttributes(
  a: AdmissionAttributes,
  resource: ResourceDescriptor,
  context: AdmissionContext,
): AdmissionAttributes | Promise<AdmissionAttributes> {
  // The common case, answered at once: no conversion, no promise.
  if (resource === a.resource) return a;
  return convertedAttributes(a, resource, context);
}

async function convertedAttributes(
  a: AdmissionAttributes,
  resource: ResourceDescriptor,
  context: AdmissionContext,
): Promise<AdmissionAttributes> {
  const convert = async (object: KubeObject | undefined) => {
    if (object === undefined || !convertedSubresources.has(a.subresource) || context.convert === undefined) {
      return object;
    }
    try {
      return await context.convert(object, a.resource, resource);
    } catch (error) {
      throw error instanceof StatusError ? error : newInternalError(errorMessage(error));
    }
  };
  const object = await convert(a.object);
  const oldObject = await convert(a.oldObject);
  // Spelled out: the write's attributes may be a class, whose methods a spread would leave behind.
  return {
    operation: a.operation,
    resource,
    subresource: a.subresource,
    namespace: a.namespace,
    name: a.name,
    object,
    oldObject,
    dryRun: a.dryRun,
    user: a.user,
    warn: (message) => a.warn(message),
    annotate: (key, value, level) => a.annotate(key, value, level),
  };
}

type Selector = ReturnType<typeof labelSelectorAsSelector>;
const everything: Selector = labelSelectorAsSelector({});
/** Selectors of the configurations and policies the read cache hands out, parsed once per object. */
const parsedSelectors = new WeakMap<LabelSelector, Selector>();

function parsedSelector(selector: LabelSelector | undefined): Selector {
  if (selector === undefined) return everything;
  let parsed = parsedSelectors.get(selector);
  if (parsed === undefined) {
    parsed = labelSelectorAsSelector(selector);
    parsedSelectors.set(selector, parsed);
  }
  return parsed;
}

/**
 * Whether `selector` selects the request's namespace (upstream's
 * `namespace.Matcher`): a cluster-scoped object other than a Namespace is
 * always selected; a Namespace is judged by its own labels.
 */
export async function namespaceSelected(
  selector: LabelSelector | undefined,
  a: AdmissionAttributes,
  context: AdmissionContext,
): Promise<boolean> {
  const known = namespaceSelectedNow(selector, a);
  if (known !== undefined) return known;
  const namespace = await context.get<Namespace>(namespaces, "", a.namespace);
  return parsedSelector(selector).matches(namespace?.metadata?.labels);
}

/**
 * {@link namespaceSelected} when it can be told without reading the
 * namespace (an empty selector, a cluster-scoped request, a Namespace
 * itself); undefined when the namespace's labels decide.
 */
export function namespaceSelectedNow(
  selector: LabelSelector | undefined,
  a: AdmissionAttributes,
): boolean | undefined {
  const parsed = parsedSelector(selector);
  if (parsed.empty()) return true;
  const isNamespace = a.resource.group === "" && a.resource.plural === namespaces.plural;
  if (isNamespace) return parsed.matches((a.object ?? a.oldObject)?.metadata?.labels);
  if (a.namespace === "") return true;
  return undefined;
}

/** Whether `selector` selects the object or its old version (upstream's `object.Matcher`). */
export function objectSelected(selector: LabelSelector | undefined, a: AdmissionAttributes): boolean {
  const parsed = parsedSelector(selector);
  if (parsed.empty()) return true;
  const matches = (object: KubeObject | undefined) =>
    object !== undefined && parsed.matches(object.metadata?.labels);
  return matches(a.object) || matches(a.oldObject);
}
