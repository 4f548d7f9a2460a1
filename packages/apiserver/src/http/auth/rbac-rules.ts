import type { PolicyRule } from "kubernetes-types/rbac/v1.js";
import type { Attributes } from "./attributes.js";

// Upstream's rule matching (`plugin/pkg/auth/authorizer/rbac/rbac.go` RuleAllows
// and `pkg/apis/rbac/v1/evaluation_helpers.go`).

/** Whether one rule allows what `attributes` ask. */
export function ruleAllows(attributes: Attributes, rule: PolicyRule): boolean {
  if (!attributes.resourceRequest)
    return verbMatches(rule, attributes.verb) && nonResourceURLMatches(rule, attributes.path);
  const combined =
    attributes.subresource === "" ? attributes.resource : `${attributes.resource}/${attributes.subresource}`;
  return (
    verbMatches(rule, attributes.verb) &&
    apiGroupMatches(rule, attributes.apiGroup) &&
    resourceMatches(rule, combined, attributes.subresource) &&
    resourceNameMatches(rule, attributes.name)
  );
}

export function verbMatches(rule: PolicyRule, verb: string): boolean {
  return rule.verbs.some((v) => v === "*" || v === verb);
}

export function apiGroupMatches(rule: PolicyRule, group: string): boolean {
  return (rule.apiGroups ?? []).some((g) => g === "*" || g === group);
}

/**
 * `*` matches every resource and subresource; `pods/*` every subresource of
 * pods (not pods itself); `*\/scale` that subresource of every resource.
 */
export function resourceMatches(rule: PolicyRule, combined: string, subresource: string): boolean {
  for (const r of rule.resources ?? []) {
    if (r === "*" || r === combined) return true;
    if (subresource === "") continue;
    if (r === `*/${subresource}`) return true;
    if (r.endsWith("/*") && combined.startsWith(r.slice(0, -1))) return true;
  }
  return false;
}

/** A rule without resourceNames matches any name; with them, only those (never a request without a name). */
export function resourceNameMatches(rule: PolicyRule, name: string): boolean {
  const names = rule.resourceNames ?? [];
  return names.length === 0 || names.includes(name);
}

/** `*`, the exact path, or a prefix ending in `*`. */
export function nonResourceURLMatches(rule: PolicyRule, path: string): boolean {
  for (const url of rule.nonResourceURLs ?? []) {
    if (url === "*" || url === path) return true;
    if (url.endsWith("*") && path.startsWith(url.slice(0, -1))) return true;
  }
  return false;
}
