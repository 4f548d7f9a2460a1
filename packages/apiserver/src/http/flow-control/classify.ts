import type {
  NonResourcePolicyRule,
  PolicyRulesWithSubjects,
  ResourcePolicyRule,
  Subject,
} from "kubernetes-types/flowcontrol/v1.js";
import {
  type FlowSchemaObject,
  mandatoryFlowSchemas,
  mandatoryPriorityLevels,
  type PriorityLevelObject,
} from "../../kinds/flow-control-bootstrap.js";
import type { Attributes } from "../auth/attributes.js";
import type { UserInfo } from "../auth/user.js";

// How API Priority and Fairness classifies a request (k8s.io/apiserver's
// util/flowcontrol: `matchesFlowSchema`, `matchesPolicyRule`): the first
// FlowSchema, by matchingPrecedence then name, whose rules match the request's
// user and attributes; its priority level; and the flow, from its
// distinguisher (the user's name or the request's namespace).

/** Who asks and what: the user and the request's own attributes (its verb, or a path). */
export type RequestDigest = Attributes;

/** Where a request goes: its FlowSchema, priority level, and the flow within the level. */
export interface Classification {
  readonly flowSchema: FlowSchemaObject;
  readonly priorityLevel: PriorityLevelObject;
  /** The distinguisher's value: the user's name, the namespace, or "". */
  readonly flowDistinguisher: string;
}

const serviceAccountPrefix = "system:serviceaccount:";

function subjectMatches(subject: Subject, user: UserInfo): boolean {
  switch (subject.kind) {
    case "User":
      return subject.user?.name === "*" || subject.user?.name === user.username;
    case "Group": {
      const name = subject.group?.name;
      return name === "*" || (name !== undefined && user.groups.includes(name));
    }
    case "ServiceAccount": {
      if (!user.username.startsWith(serviceAccountPrefix)) return false;
      const [namespace, name] = user.username.slice(serviceAccountPrefix.length).split(":");
      const account = subject.serviceAccount;
      return account?.namespace === namespace && (account?.name === "*" || account?.name === name);
    }
    default:
      return false;
  }
}

function anySubjectMatches(subjects: readonly Subject[], user: UserInfo): boolean {
  for (const subject of subjects) if (subjectMatches(subject, user)) return true;
  return false;
}

const hasOrStar = (list: readonly string[] | undefined, value: string) =>
  list !== undefined && (list.includes("*") || list.includes(value));

function resourceRuleMatches(rule: ResourcePolicyRule, digest: RequestDigest): boolean {
  if (!digest.resourceRequest) return false;
  if (!hasOrStar(rule.verbs, digest.verb) || !hasOrStar(rule.apiGroups, digest.apiGroup)) return false;
  const asked = digest.subresource ? `${digest.resource}/${digest.subresource}` : digest.resource;
  if (!rule.resources.some((r) => r === "*" || r === asked)) return false;
  return digest.namespace === "" ? rule.clusterScope === true : hasOrStar(rule.namespaces, digest.namespace);
}

function nonResourceRuleMatches(rule: NonResourcePolicyRule, digest: RequestDigest): boolean {
  if (digest.resourceRequest || !hasOrStar(rule.verbs, digest.verb)) return false;
  const path = digest.path;
  return rule.nonResourceURLs.some(
    (url) => url === "*" || url === path || (url.endsWith("/*") && path.startsWith(url.slice(0, -1))),
  );
}

function rulesMatch(rules: PolicyRulesWithSubjects, digest: RequestDigest): boolean {
  if (!anySubjectMatches(rules.subjects, digest.user)) return false;
  if (digest.resourceRequest) {
    for (const rule of rules.resourceRules ?? []) if (resourceRuleMatches(rule, digest)) return true;
  } else {
    for (const rule of rules.nonResourceRules ?? []) if (nonResourceRuleMatches(rule, digest)) return true;
  }
  return false;
}

/** Whether `rules` match every request of their subjects: every verb, group, resource and scope, every path. */
function takesEverything(rules: PolicyRulesWithSubjects): boolean {
  const all = (list: readonly string[] | undefined) => list?.includes("*") === true;
  const resources = (rules.resourceRules ?? []).some(
    (rule) =>
      all(rule.verbs) &&
      all(rule.apiGroups) &&
      all(rule.resources) &&
      all(rule.namespaces) &&
      rule.clusterScope === true,
  );
  const paths = (rules.nonResourceRules ?? []).some((rule) => all(rule.verbs) && all(rule.nonResourceURLs));
  return resources && paths;
}

/** Whether `flowSchema` takes the request (any of its rules matches). */
export function flowSchemaMatches(flowSchema: FlowSchemaObject, digest: RequestDigest): boolean {
  for (const rules of flowSchema.spec?.rules ?? []) if (rulesMatch(rules, digest)) return true;
  return false;
}

/**
 * The configuration requests are classified by: the FlowSchemas whose priority
 * level exists, in matching order, and the levels by name. The mandatory
 * objects stand in for any not stored (as upstream's config controller
 * imagines them), so a server without the bootstrap objects still exempts
 * `system:masters` and sends everything else to `catch-all`.
 */
export class FlowControlConfig {
  readonly flowSchemas: readonly FlowSchemaObject[];
  readonly priorityLevels: ReadonlyMap<string, PriorityLevelObject>;

  constructor(flowSchemas: readonly FlowSchemaObject[], priorityLevels: readonly PriorityLevelObject[]) {
    const levels = new Map(priorityLevels.map((level) => [level.metadata?.name ?? "", level]));
    for (const level of mandatoryPriorityLevels)
      if (!levels.has(level.metadata!.name!)) levels.set(level.metadata!.name!, level);
    const schemas = new Map(flowSchemas.map((schema) => [schema.metadata?.name ?? "", schema]));
    for (const schema of mandatoryFlowSchemas)
      if (!schemas.has(schema.metadata!.name!)) schemas.set(schema.metadata!.name!, schema);
    this.priorityLevels = levels;
    // A dangling FlowSchema (its level missing) takes no requests.
    this.flowSchemas = [...schemas.values()]
      .filter((schema) => levels.has(schema.spec?.priorityLevelConfiguration.name ?? ""))
      .sort(
        (a, b) =>
          (a.spec?.matchingPrecedence ?? 1000) - (b.spec?.matchingPrecedence ?? 1000) ||
          ((a.metadata?.name ?? "") < (b.metadata?.name ?? "") ? -1 : 1),
      );
    const first = this.flowSchemas[0];
    this.#firstTakesAllOf =
      first === undefined || first.spec?.distinguisherMethod?.type === "ByNamespace"
        ? []
        : (first.spec?.rules ?? []).filter(takesEverything).flatMap((rules) => rules.subjects);
  }

  /** The subjects all of whose requests the first FlowSchema takes (none when it is picky). */
  readonly #firstTakesAllOf: readonly Subject[];

  /**
   * Where the request of `user` goes; `catch-all` when no FlowSchema
   * matches. `attributes` are asked for only when the first FlowSchema does
   * not take everything its subjects ask (as `exempt` takes all of
   * `system:masters`'s requests), so an admin's request is placed at once.
   */
  classify(user: UserInfo, request: { attributes(): RequestDigest }): Classification {
    const schemas = this.flowSchemas;
    if (anySubjectMatches(this.#firstTakesAllOf, user))
      return this.#classification(schemas[0]!, user, undefined);
    const digest = request.attributes();
    for (const schema of schemas)
      if (flowSchemaMatches(schema, digest)) return this.#classification(schema, user, digest);
    const catchAll = schemas.find((schema) => schema.metadata?.name === "catch-all")!;
    return this.#classification(catchAll, user, digest);
  }

  #classification(
    flowSchema: FlowSchemaObject,
    user: UserInfo,
    digest: RequestDigest | undefined,
  ): Classification {
    const priorityLevel = this.priorityLevels.get(flowSchema.spec!.priorityLevelConfiguration.name)!;
    const method = flowSchema.spec?.distinguisherMethod?.type;
    const flowDistinguisher =
      method === "ByUser"
        ? user.username
        : method === "ByNamespace" && digest?.resourceRequest
          ? digest.namespace
          : "";
    return { flowSchema, priorityLevel, flowDistinguisher };
  }
}
