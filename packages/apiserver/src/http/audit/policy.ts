import { isDNS1123Subdomain } from "@reconcile/api";
import { parse as parseYaml } from "yaml";
import { FieldErrors } from "../../registry/field-errors.js";
import { goStrings } from "../../registry/go-syntax.js";
import type { NonResourceAttributes, ResourceAttributes } from "../auth/attributes.js";
import type { UserInfo } from "../auth/user.js";

/** How much of a request an audit event records (upstream's `audit.Level`), least first. */
export type AuditLevel = "None" | "Metadata" | "Request" | "RequestResponse";

/** When in a request's life an event is written (upstream's `audit.Stage`). */
export type AuditStage = "RequestReceived" | "ResponseStarted" | "ResponseComplete" | "Panic";

export const auditLevels: readonly AuditLevel[] = ["None", "Metadata", "Request", "RequestResponse"];
const auditStages: readonly AuditStage[] = [
  "RequestReceived",
  "ResponseStarted",
  "ResponseComplete",
  "Panic",
];

/** Resources of one API group a rule selects (upstream's `audit.GroupResources`). */
export interface AuditGroupResources {
  /** The API group; "" (or absent) is the core group. */
  group?: string | undefined;
  // `pods`, `pods/log`, `*`, `*/status` (a subresource of any), `pods/*` (any of pods'); none: every resource of the group.
  resources?: readonly string[] | undefined;
  /** Only these objects; none: all. */
  resourceNames?: readonly string[] | undefined;
}

/** One rule of a policy (upstream's `audit.PolicyRule`): the first rule a request matches gives its level. */
export interface AuditPolicyRule {
  level: AuditLevel;
  users?: readonly string[] | undefined;
  userGroups?: readonly string[] | undefined;
  verbs?: readonly string[] | undefined;
  resources?: readonly AuditGroupResources[] | undefined;
  /** "" selects cluster-scoped resources. */
  namespaces?: readonly string[] | undefined;
  /** `/healthz`, `/logs*`, `*`. */
  nonResourceURLs?: readonly string[] | undefined;
  omitStages?: readonly AuditStage[] | undefined;
  /** Overrides the policy's `omitManagedFields` for what this rule selects. */
  omitManagedFields?: boolean | undefined;
}

/** An `audit.k8s.io/v1` Policy: what kube-apiserver's `--audit-policy-file` holds. */
export interface AuditPolicy {
  apiVersion?: string | undefined;
  kind?: string | undefined;
  rules: readonly AuditPolicyRule[];
  /** Stages no request is recorded at, whatever rule selects it. */
  omitStages?: readonly AuditStage[] | undefined;
  /** Leave `metadata.managedFields` out of the objects recorded. */
  omitManagedFields?: boolean | undefined;
}

/** What a policy decides for one request (upstream's `RequestAuditConfig`). */
export interface RequestAuditConfig {
  level: AuditLevel;
  omitStages: ReadonlySet<AuditStage>;
  omitManagedFields: boolean;
}

/** A request as a policy judges it: who (none before authentication), what verb, on what. */
export type AuditRequestAttributes = (
  | Omit<ResourceAttributes, "user" | "fieldSelector">
  | Omit<NonResourceAttributes, "user">
) & { user: UserInfo | undefined };

/**
 * Reads an audit policy, as kube-apiserver reads `--audit-policy-file`: YAML
 * or JSON text (or the object itself) of kind Policy in `audit.k8s.io/v1`,
 * with at least one rule, each rule valid as upstream validates it. Throws an
 * Error naming every problem.
 */
export function loadAuditPolicy(source: string | AuditPolicy): AuditPolicy {
  let policy: unknown = source;
  if (typeof source === "string") {
    try {
      policy = parseYaml(source);
    } catch (error) {
      throw new Error(`failed decoding audit policy: ${(error as Error).message}`);
    }
  }
  if (policy === null || typeof policy !== "object" || Array.isArray(policy))
    throw new Error("failed decoding audit policy: not an object");
  const { apiVersion, kind } = policy as { apiVersion?: unknown; kind?: unknown };
  if (apiVersion !== undefined && apiVersion !== "audit.k8s.io/v1")
    throw new Error(
      `failed decoding audit policy: unknown group version field ${JSON.stringify(apiVersion)} in policy (audit.k8s.io/v1 is the one served)`,
    );
  if (kind !== undefined && kind !== "Policy")
    throw new Error(`failed decoding audit policy: kind ${JSON.stringify(kind)} is not Policy`);
  const errors = validateAuditPolicy(policy as AuditPolicy);
  if (!errors.empty)
    throw new Error(`invalid audit policy: ${errors.list.map((error) => error.message).join(", ")}`);
  if ((policy as AuditPolicy).rules.length === 0) throw new Error("loaded illegal audit policy with 0 rules");
  return policy as AuditPolicy;
}

/** Upstream's `ValidatePolicy`: levels, stages, non-resource URLs, groups and resource names of every rule. */
export function validateAuditPolicy(policy: AuditPolicy): FieldErrors {
  const errors = new FieldErrors();
  if (!Array.isArray(policy.rules)) {
    errors.required("rules", "");
    return errors;
  }
  validateStages(errors, policy.omitStages, "omitStages");
  policy.rules.forEach((rule, i) => {
    const path = `rules[${i}]`;
    if (rule === null || typeof rule !== "object") {
      errors.invalid(path, rule, "must be an object");
      return;
    }
    if (rule.level === undefined || (rule.level as string) === "") errors.required(`${path}.level`);
    else if (!auditLevels.includes(rule.level)) errors.notSupported(`${path}.level`, rule.level, auditLevels);
    (rule.nonResourceURLs ?? []).forEach((url: string, j: number) => {
      if (url === "*") return;
      const field = `${path}.nonResourceURLs[${j}]`;
      if (!url.startsWith("/"))
        errors.invalid(field, url, "non-resource URL rules must begin with a '/' character");
      if (url !== "" && url.slice(0, -1).includes("*"))
        errors.invalid(field, url, "non-resource URL wildcards '*' must be the final character of the rule");
    });
    for (const groupResources of rule.resources ?? []) {
      const group = groupResources.group ?? "";
      const problems = group === "" ? [] : isDNS1123Subdomain(group);
      if (problems.length > 0) errors.invalid(`${path}.resources.group`, group, problems.join(","));
      if ((groupResources.resourceNames ?? []).length > 0 && (groupResources.resources ?? []).length === 0)
        errors.invalid(
          `${path}.resources.resourceNames`,
          goStrings(groupResources.resourceNames),
          "using resourceNames requires at least one resource",
        );
    }
    validateStages(errors, rule.omitStages, `${path}.omitStages`);
    if (
      (rule.nonResourceURLs ?? []).length > 0 &&
      ((rule.resources ?? []).length > 0 || (rule.namespaces ?? []).length > 0)
    )
      errors.invalid(
        `${path}.nonResourceURLs`,
        goStrings(rule.nonResourceURLs),
        "rules cannot apply to both regular resources and non-resource URLs",
      );
  });
  return errors;
}

function validateStages(errors: FieldErrors, stages: readonly AuditStage[] | undefined, path: string): void {
  (stages ?? []).forEach((stage, i) => {
    if (!auditStages.includes(stage))
      errors.invalid(`${path}[${i}]`, stage, `allowed stages are ${auditStages.join(",")}`);
  });
}

/**
 * The level, stages to omit and managed-fields choice for one request
 * (upstream's `EvaluatePolicyRule`): the first rule the request matches
 * decides, its stages added to the policy's; no rule matching is `None`.
 */
export function evaluateAuditPolicy(
  policy: AuditPolicy,
  attributes: AuditRequestAttributes,
): RequestAuditConfig {
  for (const rule of policy.rules) {
    if (!ruleMatches(rule, attributes)) continue;
    return {
      level: rule.level,
      omitStages: new Set([...(policy.omitStages ?? []), ...(rule.omitStages ?? [])]),
      omitManagedFields: rule.omitManagedFields ?? policy.omitManagedFields ?? false,
    };
  }
  return {
    level: "None",
    omitStages: new Set(policy.omitStages ?? []),
    omitManagedFields: policy.omitManagedFields ?? false,
  };
}

function nonEmpty<T>(list: readonly T[] | undefined): list is readonly T[] {
  return list !== undefined && list.length > 0;
}

/** Whether `rule` selects the request (upstream's `ruleMatches`). */
export function ruleMatches(rule: AuditPolicyRule, attributes: AuditRequestAttributes): boolean {
  const { user } = attributes;
  if (nonEmpty(rule.users) && (user === undefined || !rule.users.includes(user.username))) return false;
  if (nonEmpty(rule.userGroups)) {
    const groups = rule.userGroups;
    if (user === undefined || !user.groups.some((group) => groups.includes(group))) return false;
  }
  if (nonEmpty(rule.verbs) && !rule.verbs.includes(attributes.verb)) return false;
  if (nonEmpty(rule.namespaces) || nonEmpty(rule.resources)) return resourceMatches(rule, attributes);
  if (nonEmpty(rule.nonResourceURLs)) {
    if (attributes.resourceRequest) return false;
    const { path } = attributes;
    return rule.nonResourceURLs.some(
      (spec) =>
        spec === "*" || spec === path || (spec.endsWith("*") && path.startsWith(spec.replace(/\*+$/, ""))),
    );
  }
  return true;
}

function resourceMatches(rule: AuditPolicyRule, attributes: AuditRequestAttributes): boolean {
  if (!attributes.resourceRequest) return false;
  if (nonEmpty(rule.namespaces) && !rule.namespaces.includes(attributes.namespace)) return false;
  if (!nonEmpty(rule.resources)) return true;
  const { apiGroup, resource, subresource, name } = attributes;
  const combined = subresource === "" ? resource : `${resource}/${subresource}`;
  for (const groupResources of rule.resources) {
    if ((groupResources.group ?? "") !== apiGroup) continue;
    if (!nonEmpty(groupResources.resources)) return true;
    if (nonEmpty(groupResources.resourceNames) && !groupResources.resourceNames.includes(name)) continue;
    for (const selected of groupResources.resources) {
      if (selected === combined || selected === "*") return true;
      if (subresource !== "" && selected.startsWith("*/") && selected.slice(2) === subresource) return true;
      if (selected.endsWith("/*") && selected.slice(0, -2) === resource) return true;
    }
  }
  return false;
}
