import type { PolicyRule } from "kubernetes-types/rbac/v1.js";
import type { Attributes } from "./attributes.js";

// Upstream's rule matching (`plugin/pkg/auth/authorizer/rbac/rbac.go` RuleAllows
// and `pkg/apis/rbac/v1/evaluation_helpers.go`).

/** Whether one rule allows what `attributes` ask. */
export function ruleAllows(attributes: Attributes, rule: PolicyRule): boolean {
  return ruleMatcher(attributes)(rule);
}

/** A test of rules against one request, its per-request work (the combined resource) done once. */
export function ruleMatcher(attributes: Attributes): (rule: PolicyRule) => boolean {
  const verb = attributes.verb;
  if (!attributes.resourceRequest) {
    const path = attributes.path;
    return (rule) => verbMatches(rule, verb) && nonResourceURLMatches(rule, path);
  }
  const { apiGroup, subresource, name } = attributes;
  const combined = subresource === "" ? attributes.resource : `${attributes.resource}/${subresource}`;
  return (rule) =>
    verbMatches(rule, verb) &&
    apiGroupMatches(rule, apiGroup) &&
    resourceMatches(rule, combined, subresource) &&
    resourceNameMatches(rule, name);
}

export function verbMatches(rule: PolicyRule, verb: string): boolean {
  for (const v of rule.verbs) if (v === verb || v === "*") return true;
  return false;
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
