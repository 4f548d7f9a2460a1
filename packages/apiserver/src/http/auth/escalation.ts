import { type KubeObject, type ResourceDescriptor, StatusError } from "@reconcile/api";
import type { ClusterRole, PolicyRule, RoleBinding } from "kubernetes-types/rbac/v1.js";
import type { Attributes } from "./attributes.js";
import type { ClusterAuth } from "./authenticate.js";
import { nonResourceURLMatches } from "./rbac-rules.js";
import { systemPrivilegedGroup, type UserInfo } from "./user.js";

// RBAC's escalation prevention (upstream `pkg/registry/rbac`): a user may
// write a role only with rules it holds itself (or the `escalate` verb), and
// bind a role only if it holds the role's rules (or the `bind` verb).

const rbacGroup = "rbac.authorization.k8s.io";

/** The admission check of a write to an RBAC kind by `user`, or undefined for any other kind. */
export function rbacEscalationCheck(
  auth: ClusterAuth,
  user: UserInfo,
  resource: ResourceDescriptor,
): ((object: KubeObject) => Promise<void>) | undefined {
  if (resource.group !== rbacGroup || user.groups.includes(systemPrivilegedGroup)) return undefined;
  const plural = resource.plural;
  if (plural === "roles" || plural === "clusterroles")
    return async (object) => {
      const namespace = object.metadata?.namespace ?? "";
      const name = object.metadata?.name ?? "";
      if (await allowed(auth, user, "escalate", plural, namespace, name)) return;
      const role = object as ClusterRole;
      const held = await auth.rbac.rulesFor(user, namespace);
      if (
        role.aggregationRule !== undefined &&
        !covers(held, [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"] }])
      )
        throw forbiddenWrite(plural, name, "must have cluster-admin privileges to use the aggregationRule");
      throwIfEscalating(plural, name, user, held, role.rules ?? []);
    };
  if (plural === "rolebindings" || plural === "clusterrolebindings")
    return async (object) => {
      const binding = object as RoleBinding;
      const namespace = object.metadata?.namespace ?? "";
      const name = object.metadata?.name ?? "";
      const ref = binding.roleRef;
      const roleResource = ref?.kind === "Role" ? "roles" : "clusterroles";
      const roleNamespace = ref?.kind === "Role" ? namespace : "";
      if (await allowed(auth, user, "bind", roleResource, roleNamespace, ref?.name ?? "")) return;
      const rules = auth.rbac.roleRules(ref?.kind ?? "", namespace, ref?.name ?? "");
      if (rules === undefined)
        throw forbiddenWrite(plural, name, `${roleResource} ${JSON.stringify(ref?.name ?? "")} not found`);
      throwIfEscalating(plural, name, user, await auth.rbac.rulesFor(user, namespace), rules);
    };
  return undefined;
}

async function allowed(
  auth: ClusterAuth,
  user: UserInfo,
  verb: string,
  resource: string,
  namespace: string,
  name: string,
): Promise<boolean> {
  const attributes: Attributes = {
    user,
    resourceRequest: true,
    verb,
    apiGroup: rbacGroup,
    resource,
    subresource: "",
    namespace,
    name,
  };
  return (await auth.authorize(attributes)).allowed;
}

function throwIfEscalating(
  plural: string,
  name: string,
  user: UserInfo,
  held: { resourceRules: PolicyRule[]; nonResourceRules: PolicyRule[] },
  wanted: readonly PolicyRule[],
): void {
  const missing = wanted.flatMap(atomic).filter((rule) => !covers(held, [rule]));
  if (missing.length === 0) return;
  const groups = user.groups.map((g) => JSON.stringify(g)).join(" ");
  throw forbiddenWrite(
    plural,
    name,
    `user ${JSON.stringify(user.username)} (groups=[${groups}]) is attempting to grant RBAC permissions not currently held:\n${missing.map(describeRule).join("\n")}`,
  );
}

function forbiddenWrite(plural: string, name: string, reason: string): StatusError {
  return new StatusError({
    code: 403,
    reason: "Forbidden",
    message: `${plural}.${rbacGroup} ${JSON.stringify(name)} is forbidden: ${reason}`,
    details: { name, group: rbacGroup, kind: plural },
  });
}

/** One verb on one group, resource and name (or one URL): the unit `Covers` compares. */
function atomic(rule: PolicyRule): PolicyRule[] {
  const result: PolicyRule[] = [];
  for (const verb of rule.verbs) {
    for (const url of rule.nonResourceURLs ?? []) result.push({ verbs: [verb], nonResourceURLs: [url] });
    for (const group of rule.apiGroups ?? [])
      for (const resource of rule.resources ?? []) {
        const names = rule.resourceNames ?? [];
        if (names.length === 0) result.push({ verbs: [verb], apiGroups: [group], resources: [resource] });
        for (const name of names)
          result.push({ verbs: [verb], apiGroups: [group], resources: [resource], resourceNames: [name] });
      }
  }
  return result;
}

/** Whether the held rules cover every atomic rule (upstream `validation.Covers`). */
function covers(
  held: { resourceRules: PolicyRule[]; nonResourceRules: PolicyRule[] },
  wanted: PolicyRule[],
): boolean {
  return wanted.every((rule) => {
    if ((rule.nonResourceURLs ?? []).length > 0)
      return held.nonResourceRules.some(
        (owner) =>
          verbCovered(owner, rule.verbs[0]!) &&
          (owner.nonResourceURLs ?? []).some(
            (url) => url === "*" || nonResourceURLMatches(owner, rule.nonResourceURLs![0]!),
          ),
      );
    return held.resourceRules.some((owner) => ruleCovers(owner, rule));
  });
}

function verbCovered(owner: PolicyRule, verb: string): boolean {
  return owner.verbs.includes("*") || owner.verbs.includes(verb);
}

function ruleCovers(owner: PolicyRule, rule: PolicyRule): boolean {
  const group = rule.apiGroups![0]!;
  const resource = rule.resources![0]!;
  const name = rule.resourceNames?.[0];
  if (!verbCovered(owner, rule.verbs[0]!)) return false;
  if (!(owner.apiGroups ?? []).some((g) => g === "*" || g === group)) return false;
  const resourceCovered = (owner.resources ?? []).some((r) => {
    if (r === "*" || r === resource) return true;
    // `pods/*` covers every subresource of pods; `*/scale` that subresource of everything.
    if (r.endsWith("/*") && resource.startsWith(r.slice(0, -1))) return true;
    return r.startsWith("*/") && resource.includes("/") && resource.endsWith(r.slice(1));
  });
  if (!resourceCovered) return false;
  const names = owner.resourceNames ?? [];
  return names.length === 0 || (name !== undefined && names.includes(name));
}

/** A rule as upstream's `CompactString` prints it. */
function describeRule(rule: PolicyRule): string {
  const list = (values: readonly string[]) => `[${values.map((v) => JSON.stringify(v)).join(" ")}]`;
  const parts: string[] = [];
  if ((rule.apiGroups ?? []).length > 0) parts.push(`APIGroups:${list(rule.apiGroups!)}`);
  if ((rule.resources ?? []).length > 0) parts.push(`Resources:${list(rule.resources!)}`);
  if ((rule.nonResourceURLs ?? []).length > 0) parts.push(`NonResourceURLs:${list(rule.nonResourceURLs!)}`);
  if ((rule.resourceNames ?? []).length > 0) parts.push(`ResourceNames:${list(rule.resourceNames!)}`);
  parts.push(`Verbs:${list(rule.verbs)}`);
  return `{${parts.join(", ")}}`;
}
