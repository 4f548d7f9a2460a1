import {
  flowSchemas,
  isDNS1123Label,
  isDNS1123Subdomain,
  type KubeObject,
  priorityLevelConfigurations,
} from "@reconcile/api";
import type {
  FlowSchema,
  PolicyRulesWithSubjects,
  PriorityLevelConfiguration,
  QueuingConfiguration,
  Subject,
} from "kubernetes-types/flowcontrol/v1.js";
import { jsonEqual } from "../json.js";
import type { FieldErrors } from "../registry/field-errors.js";
import { goStrings, goStruct } from "../registry/go-syntax.js";
import type { Strategy } from "../registry/strategy.js";
import { defineKind } from "./definition.js";
import { mandatoryFlowSchemas, mandatoryPriorityLevels } from "./flow-control-bootstrap.js";
import { ageColumn, ageOf, column, nameColumn, nameOf, type Printer } from "./printers/columns.js";

// flowcontrol.apiserver.k8s.io/v1 FlowSchemas and PriorityLevelConfigurations
// (API Priority and Fairness) as kube-apiserver stores and checks them. They
// are configuration only here: requests are not classified or queued by them.

type FS = FlowSchema & KubeObject;
type PL = PriorityLevelConfiguration & KubeObject;

const supportedVerbs = [
  "create",
  "delete",
  "deletecollection",
  "get",
  "list",
  "patch",
  "proxy",
  "update",
  "watch",
];
const subjectKinds = ["Group", "ServiceAccount", "User"];
const namespaceIntro = "each member of this list must be '*' or a DNS-1123 label; ";

/** `SetDefaults_FlowSchemaSpec`. */
function defaultFlowSchema(object: KubeObject): void {
  const spec = (object as FS).spec;
  if (spec !== undefined && !spec.matchingPrecedence) spec.matchingPrecedence = 1000;
}

/** `SetDefaults_*PriorityLevelConfiguration` and `SetDefaults_QueuingConfiguration`. */
function defaultPriorityLevel(object: KubeObject): void {
  const spec = (object as PL).spec;
  if (spec === undefined) return;
  if (spec.exempt !== undefined) {
    spec.exempt.nominalConcurrencyShares ??= 0;
    spec.exempt.lendablePercent ??= 0;
  }
  const limited = spec.limited;
  if (limited === undefined) return;
  limited.nominalConcurrencyShares ??= 30;
  limited.lendablePercent ??= 0;
  const queuing = limited.limitResponse?.queuing;
  if (queuing !== undefined) {
    queuing.handSize ||= 8;
    queuing.queues ||= 64;
    queuing.queueLengthLimit ||= 50;
  }
}

function hasWildcard(list: readonly string[]): boolean {
  return list.includes("*");
}

function validateVerbs(verbs: readonly string[] | undefined, at: string, errors: FieldErrors): void {
  const list = verbs ?? [];
  if (list.length === 0) errors.required(`${at}.verbs`, "verbs must contain at least one value");
  else if (hasWildcard(list)) {
    if (list.length > 1)
      errors.invalid(`${at}.verbs`, goStrings(list), "if '*' is present, must not specify other verbs");
  } else if (!list.every((verb) => supportedVerbs.includes(verb)))
    errors.notSupported(`${at}.verbs`, goStrings(list), supportedVerbs);
}

/** `ValidateNonResourceURLPath`. */
function nonResourceURLProblem(path: string): string | undefined {
  if (path === "") return "must not be empty";
  if (path === "/") return undefined;
  if (!path.startsWith("/")) return "must start with slash";
  if (path.includes(" ")) return "must not contain white-space";
  if (path.includes("//")) return "must not contain double slash";
  const wildcards = path.split("*").length - 1;
  if (wildcards > 1 || (wildcards === 1 && !path.endsWith("/*")))
    return "wildcard can only do suffix matching";
  return undefined;
}

function validateSubject(subject: Subject, at: string, errors: FieldErrors): void {
  const kind = subject.kind;
  const present = { User: subject.user, Group: subject.group, ServiceAccount: subject.serviceAccount };
  if (!subjectKinds.includes(kind)) {
    errors.notSupported(`${at}.kind`, kind, subjectKinds);
    return;
  }
  const field = kind === "ServiceAccount" ? "serviceAccount" : kind.toLowerCase();
  const own = present[kind as keyof typeof present];
  if (own === undefined)
    errors.required(`${at}.${field}`, `${field} is required when subject kind is '${kind}'`);
  else if (kind === "ServiceAccount") {
    const account = subject.serviceAccount!;
    if (!account.name) errors.required(`${at}.serviceAccount.name`, "");
    else if (account.name !== "*")
      for (const problem of isDNS1123Subdomain(account.name))
        errors.invalid(`${at}.serviceAccount.name`, account.name, problem);
    if (!account.namespace)
      errors.required(`${at}.serviceAccount.namespace`, "must specify namespace for service account");
    else
      for (const problem of isDNS1123Label(account.namespace))
        errors.invalid(`${at}.serviceAccount.namespace`, account.namespace, problem);
  } else if (!(own as { name?: string }).name) errors.required(`${at}.${field}.name`, "");
  for (const other of ["User", "Group", "ServiceAccount"] as const) {
    if (other === kind || present[other] === undefined) continue;
    const name = other === "ServiceAccount" ? "serviceAccount" : other.toLowerCase();
    errors.forbidden(`${at}.${name}`, `${name} is forbidden when subject kind is not '${other}'`);
  }
}

function validateRules(rule: PolicyRulesWithSubjects, at: string, errors: FieldErrors): void {
  const subjects = rule.subjects ?? [];
  if (subjects.length === 0) errors.required(`${at}.subjects`, "subjects must contain at least one value");
  for (const [i, subject] of subjects.entries()) validateSubject(subject, `${at}.subjects[${i}]`, errors);
  const resourceRules = rule.resourceRules ?? [];
  const nonResourceRules = rule.nonResourceRules ?? [];
  if (resourceRules.length === 0 && nonResourceRules.length === 0)
    errors.required(at, "at least one of resourceRules and nonResourceRules has to be non-empty");
  resourceRules.forEach((resourceRule, i) => {
    const path = `${at}.resourceRules[${i}]`;
    validateVerbs(resourceRule.verbs, path, errors);
    for (const [field, what] of [
      ["apiGroups", "api group"],
      ["resources", "resource"],
    ] as const) {
      const list = resourceRule[field] ?? [];
      if (list.length === 0)
        errors.required(`${path}.${field}`, `resource rules must supply at least one ${what}`);
      else if (list.length > 1 && hasWildcard(list))
        errors.invalid(`${path}.${field}`, list, `if '*' is present, must not specify other ${what}s`);
    }
    const namespaces = resourceRule.namespaces ?? [];
    if (namespaces.length === 0 && !resourceRule.clusterScope)
      errors.required(
        `${path}.namespaces`,
        "resource rules that are not cluster scoped must supply at least one namespace",
      );
    else if (hasWildcard(namespaces)) {
      if (namespaces.length > 1)
        errors.invalid(
          `${path}.namespaces`,
          namespaces,
          "if '*' is present, must not specify other namespaces",
        );
    } else
      namespaces.forEach((namespace, j) => {
        for (const problem of isDNS1123Label(namespace))
          errors.invalid(`${path}.namespaces[${j}]`, namespace, namespaceIntro + problem);
      });
  });
  nonResourceRules.forEach((nonResourceRule, i) => {
    const path = `${at}.nonResourceRules[${i}]`;
    validateVerbs(nonResourceRule.verbs, path, errors);
    const urls = nonResourceRule.nonResourceURLs ?? [];
    if (urls.length === 0)
      errors.required(`${path}.nonResourceURLs`, "nonResourceURLs must contain at least one value");
    else if (hasWildcard(urls)) {
      if (urls.length > 1)
        errors.invalid(
          `${path}.nonResourceURLs`,
          urls,
          "if '*' is present, must not specify other non-resource URLs",
        );
    } else
      urls.forEach((url, j) => {
        const problem = nonResourceURLProblem(url);
        if (problem !== undefined) errors.invalid(`${path}.nonResourceURLs[${j}]`, url, problem);
      });
  });
}

function validateConditions(conditions: readonly { type?: string }[] | undefined, errors: FieldErrors): void {
  const seen = new Set<string>();
  (conditions ?? []).forEach((condition, i) => {
    const type = condition.type ?? "";
    if (seen.has(type)) errors.duplicate(`status.conditions[${i}].type`, type);
    seen.add(type);
    if (type === "") errors.required(`status.conditions[${i}].type`, "must not be empty");
  });
}

/** `ValidateFlowSchema`. */
function validateFlowSchema(object: KubeObject, errors: FieldErrors): void {
  const fs = object as FS;
  const name = fs.metadata?.name ?? "";
  const spec = fs.spec ?? ({} as NonNullable<FS["spec"]>);
  const precedence = spec.matchingPrecedence ?? 0;
  if (precedence <= 0) errors.invalid("spec.matchingPrecedence", precedence, "must be a positive value");
  if (precedence > 10000)
    errors.invalid("spec.matchingPrecedence", precedence, "must not be greater than 10000");
  if (precedence === 1 && name !== "exempt")
    errors.invalid(
      "spec.matchingPrecedence",
      precedence,
      "only the schema named 'exempt' may have matchingPrecedence 1",
    );
  const method = spec.distinguisherMethod;
  if (method != null && method.type !== "ByNamespace" && method.type !== "ByUser")
    errors.notSupported(
      "spec.distinguisherMethod.type",
      goStruct("flowcontrol.FlowDistinguisherMethod", [["Type", method.type ?? ""]]),
      ["ByNamespace", "ByUser"],
    );
  const level = spec.priorityLevelConfiguration?.name ?? "";
  if (level === "")
    errors.required("spec.priorityLevelConfiguration.name", "must reference a priority level");
  else
    for (const problem of isDNS1123Subdomain(level))
      errors.invalid("spec.priorityLevelConfiguration.name", level, problem);
  for (const [i, rule] of (spec.rules ?? []).entries()) validateRules(rule, `spec.rules[${i}]`, errors);
  const mandatory = mandatoryFlowSchemas.find((m) => m.metadata?.name === name);
  if (mandatory !== undefined && !jsonEqual(spec, mandatory.spec))
    errors.invalid("spec", spec, `spec of '${name}' must equal the fixed value`);
  validateConditions(fs.status?.conditions, errors);
}

/** `ValidatePriorityLevelQueuingConfiguration`, with shuffle sharding's entropy bound. */
function validateQueuing(queuing: QueuingConfiguration, errors: FieldErrors): void {
  const at = "spec.limited.limitResponse.queuing";
  const { queues = 0, handSize = 0, queueLengthLimit = 0 } = queuing;
  if (queueLengthLimit <= 0) errors.invalid(`${at}.queueLengthLimit`, queueLengthLimit, "must be positive");
  if (queues <= 0) errors.invalid(`${at}.queues`, queues, "must be positive");
  else if (queues > 10_000_000) errors.invalid(`${at}.queues`, queues, "must not be greater than 10000000");
  if (handSize <= 0) errors.invalid(`${at}.handSize`, handSize, "must be positive");
  else if (handSize > queues)
    errors.invalid(`${at}.handSize`, handSize, `should not be greater than queues (${queues})`);
  else if (Math.ceil(handSize * Math.log2(queues)) > 60)
    errors.invalid(
      `${at}.handSize`,
      handSize,
      `required entropy bits of deckSize ${queues} and handSize ${handSize} should not be greater than 60`,
    );
}

function validatePercent(value: number | undefined, at: string, errors: FieldErrors): void {
  if (value != null && (value < 0 || value > 100))
    errors.invalid(at, value, "must be between 0 and 100, inclusive");
}

/** `ValidatePriorityLevelConfiguration`. */
function validatePriorityLevel(object: KubeObject, errors: FieldErrors): void {
  const pl = object as PL;
  const name = pl.metadata?.name ?? "";
  const spec = pl.spec ?? ({} as NonNullable<PL["spec"]>);
  if ((name === "exempt") !== (spec.type === "Exempt"))
    errors.invalid("spec.type", spec.type ?? "", "type must be 'Exempt' if and only if name is 'exempt'");
  if (spec.type === "Exempt") {
    if (spec.limited != null) errors.forbidden("spec.limited", "must be nil if the type is not Limited");
    const shares = spec.exempt?.nominalConcurrencyShares;
    if (shares != null && shares < 0)
      errors.invalid("spec.exempt.nominalConcurrencyShares", shares, "must be a non-negative integer");
    validatePercent(spec.exempt?.lendablePercent, "spec.exempt.lendablePercent", errors);
  } else if (spec.type === "Limited") {
    if (spec.exempt != null) errors.forbidden("spec.exempt", "must be nil if the type is Limited");
    const limited = spec.limited;
    if (limited == null) errors.required("spec.limited", "must not be empty when type is Limited");
    else {
      const shares = limited.nominalConcurrencyShares ?? 0;
      if (shares < 0)
        errors.invalid("spec.limited.nominalConcurrencyShares", shares, "must be a non-negative integer");
      validatePercent(limited.lendablePercent, "spec.limited.lendablePercent", errors);
      const borrowing = limited.borrowingLimitPercent;
      if (borrowing != null && borrowing < 0)
        errors.invalid(
          "spec.limited.borrowingLimitPercent",
          borrowing,
          "if specified, must be a non-negative integer",
        );
      const response = limited.limitResponse ?? ({} as NonNullable<typeof limited.limitResponse>);
      if (response.type === "Reject") {
        if (response.queuing != null)
          errors.forbidden(
            "spec.limited.limitResponse.queuing",
            "must be nil if limited.limitResponse.type is not Limited",
          );
      } else if (response.type === "Queue") {
        if (response.queuing == null)
          errors.required(
            "spec.limited.limitResponse.queuing",
            "must not be empty if limited.limitResponse.type is Limited",
          );
        else validateQueuing(response.queuing, errors);
      } else errors.notSupported("spec.limited.limitResponse.type", response.type ?? "", ["Queue", "Reject"]);
    }
  } else errors.notSupported("spec.type", spec.type ?? "", ["Exempt", "Limited"]);
  // The exempt level's shares and lendable percent are the operator's; the rest of a mandatory spec is fixed.
  const mandatory = mandatoryPriorityLevels.find((m) => m.metadata?.name === name);
  if (mandatory !== undefined) {
    const fixed = name === "exempt" ? { ...mandatory.spec, exempt: spec.exempt } : mandatory.spec;
    if (name === "exempt" && spec.exempt === undefined) delete (fixed as { exempt?: unknown }).exempt;
    if (!jsonEqual(spec, fixed)) errors.invalid("spec", spec, `spec of '${name}' must equal the fixed value`);
  }
  validateConditions(pl.status?.conditions, errors);
}

const clearStatus = (object: KubeObject) => {
  delete (object as { status?: unknown }).status;
};

const flowSchemaPrinter: Printer = {
  columns: [
    nameColumn,
    column(
      "PriorityLevel",
      "string",
      "`priorityLevelConfiguration` should reference a PriorityLevelConfiguration in the cluster.",
    ),
    column(
      "MatchingPrecedence",
      "string",
      "`matchingPrecedence` is used to choose among the FlowSchemas that match a given request.",
    ),
    column(
      "DistinguisherMethod",
      "string",
      "`distinguisherMethod` defines how to compute the flow distinguisher for requests that match this schema.",
    ),
    ageColumn,
    column("MissingPL", "string", "references a broken or non-existent PriorityLevelConfiguration"),
  ],
  // `FlowSchemaSequence`: by matching precedence, then name.
  order: (objects) =>
    [...objects].sort((a, b) => {
      const pa = (a as FS).spec?.matchingPrecedence ?? 0;
      const pb = (b as FS).spec?.matchingPrecedence ?? 0;
      if (pa !== pb) return pa - pb;
      return nameOf(a) < nameOf(b) ? -1 : nameOf(a) > nameOf(b) ? 1 : 0;
    }),
  cells(object: FS, now) {
    const spec = object.spec ?? ({} as NonNullable<FS["spec"]>);
    const dangling = object.status?.conditions?.find((c) => c.type === "Dangling");
    return [
      nameOf(object),
      spec.priorityLevelConfiguration?.name ?? "",
      spec.matchingPrecedence ?? 0,
      spec.distinguisherMethod?.type ?? "<none>",
      ageOf(object, now),
      dangling?.status ?? "?",
    ];
  },
};

const priorityLevelPrinter: Printer = {
  columns: [
    nameColumn,
    column(
      "Type",
      "string",
      "`type` indicates whether this priority level is subject to limitation on request execution.",
    ),
    column(
      "NominalConcurrencyShares",
      "string",
      "`nominalConcurrencyShares` (NCS) contributes to the computation of the NominalConcurrencyLimit (NominalCL) of this level.",
    ),
    column("Queues", "string", "`queues` is the number of queues for this priority level."),
    column(
      "HandSize",
      "string",
      "`handSize` is a small positive number that configures the shuffle sharding of requests into queues.",
    ),
    column(
      "QueueLengthLimit",
      "string",
      "`queueLengthLimit` is the maximum number of requests allowed to be waiting in a given queue of this priority level at a time.",
    ),
    ageColumn,
  ],
  cells(object: PL, now) {
    const limited = object.spec?.limited;
    const queuing = limited?.limitResponse?.queuing;
    const orNone = (value: number | undefined, present: unknown) =>
      present == null ? "<none>" : (value ?? 0);
    return [
      nameOf(object),
      object.spec?.type ?? "",
      orNone(limited?.nominalConcurrencyShares, limited),
      orNone(queuing?.queues, queuing),
      orNone(queuing?.handSize, queuing),
      orNone(queuing?.queueLengthLimit, queuing),
      ageOf(object, now),
    ];
  },
};

const flowSchemaStrategy: Strategy = {
  prepareForCreate: clearStatus,
  applyDefaults: defaultFlowSchema,
  validate: validateFlowSchema,
  validateStatusUpdate: (object, _old, errors) =>
    validateConditions((object as FS).status?.conditions, errors),
};

const priorityLevelStrategy: Strategy = {
  prepareForCreate: clearStatus,
  applyDefaults: defaultPriorityLevel,
  validate: validatePriorityLevel,
  validateStatusUpdate: (object, _old, errors) =>
    validateConditions((object as PL).status?.conditions, errors),
};

export const flowControlDefinitions = [
  defineKind({ descriptor: flowSchemas, strategy: flowSchemaStrategy, printer: flowSchemaPrinter }),
  defineKind({
    descriptor: priorityLevelConfigurations,
    strategy: priorityLevelStrategy,
    printer: priorityLevelPrinter,
  }),
];
