import {
  type KubeObject,
  labelSelectorAsSelector,
  type Namespace,
  namespaces,
  type ResourceDescriptor,
  StatusError,
  validatingAdmissionPolicies,
  validatingAdmissionPolicyBindings,
} from "@reconcile/api";
import type {
  MatchResources,
  ValidatingAdmissionPolicy,
  ValidatingAdmissionPolicyBinding,
} from "kubernetes-types/admissionregistration/v1.js";
import type { AdmissionAttributes } from "../registry/admission.js";
import {
  type CelRequestValues,
  celRequestValues,
  celValueOf,
  compileAdmissionExpression,
  type RequestReads,
  requestReads,
  runAdmissionExpression,
} from "./cel.js";
import {
  type AdmissionRule,
  namespaceSelected,
  namespaceSelectedNow,
  objectSelected,
  rulesMatch,
  versionedAttributes,
} from "./matching.js";
import { type AdmissionContext, type AdmissionPlugin, forbidden, knownEmpty } from "./plugin.js";

/** A refusal's reason and the HTTP code it carries (upstream's `reasonToCode`). */
const codes: Readonly<Record<string, number>> = {
  Forbidden: 403,
  Unauthorized: 401,
  RequestEntityTooLarge: 413,
  Invalid: 422,
};

interface Decision {
  policy: string;
  binding: string;
  message: string;
  reason: string;
}

/**
 * The resource a policy's or binding's match resources select the request
 * as (upstream's `Matcher.Matches`): its own, or with `matchPolicy:
 * Equivalent` (the default) an equivalent one its rules name; undefined
 * when they do not select it. An excluded equivalent excludes the request.
 */
function matchResourcesSelect(
  match: MatchResources | undefined,
  a: AdmissionAttributes,
  context: AdmissionContext,
): ResourceDescriptor | undefined | Promise<ResourceDescriptor | undefined> {
  if (match === undefined) return a.resource;
  const equivalent = match.matchPolicy !== "Exact";
  const excluded = (match.excludeResourceRules ?? []) as AdmissionRule[];
  if (rulesMatch(excluded, a, context, equivalent) !== undefined) return undefined;
  const rules = (match.resourceRules ?? []) as AdmissionRule[];
  const resource = rules.length === 0 ? a.resource : rulesMatch(rules, a, context, equivalent);
  if (resource === undefined || !objectSelected(match.objectSelector, a)) return undefined;
  // Told at once unless the namespace's labels decide.
  const known = namespaceSelectedNow(match.namespaceSelector, a);
  if (known !== undefined) return known ? resource : undefined;
  return namespaceSelected(match.namespaceSelector, a, context).then((yes) => (yes ? resource : undefined));
}

/** What a policy without a paramKind is evaluated with: one null param. */
const noParams: readonly null[] = [null];

/**
 * The params a binding gives its policy: `[null]` without a paramKind (at
 * once), `[]` when none are found, or why the binding is wrong.
 */
function paramsOf(
  policy: ValidatingAdmissionPolicy,
  binding: ValidatingAdmissionPolicyBinding,
  a: AdmissionAttributes,
  context: AdmissionContext,
): readonly (KubeObject | null)[] | string | Promise<(KubeObject | null)[] | string> {
  const kind = policy.spec?.paramKind;
  if (kind === undefined) return noParams;
  return paramsOfKind(kind, binding, a, context);
}

async function paramsOfKind(
  kind: NonNullable<NonNullable<ValidatingAdmissionPolicy["spec"]>["paramKind"]>,
  binding: ValidatingAdmissionPolicyBinding,
  a: AdmissionAttributes,
  context: AdmissionContext,
): Promise<(KubeObject | null)[] | string> {
  const ref = binding.spec?.paramRef;
  if (ref === undefined) return "paramRef is required when paramKind is set";
  const resource = context.resourceForKind(kind.apiVersion ?? "", kind.kind ?? "");
  if (resource === undefined)
    return `failed to find resource referenced by paramKind: '${kind.apiVersion}, Kind=${kind.kind}'`;
  const namespace = resource.namespaced ? ref.namespace || a.namespace : "";
  let found: KubeObject[];
  if (ref.name) {
    const param =
      resource.namespaced && namespace === "" ? undefined : await context.get(resource, namespace, ref.name);
    found = param === undefined ? [] : [param];
  } else {
    const selector = labelSelectorAsSelector(ref.selector ?? {});
    found = (await context.list(resource, namespace)).filter((p) => selector.matches(p.metadata?.labels));
  }
  if (found.length === 0 && ref.parameterNotFoundAction !== "Allow")
    return "no params found for policy binding with `Deny` parameterNotFoundAction";
  return found;
}

type Outcome = { value: unknown } | { error: string };

function run(expression: string, variables: Record<string, unknown>): Outcome {
  const program = compileAdmissionExpression(expression);
  if (program instanceof Error) return { error: `compilation failed: ${program.message}` };
  return runAdmissionExpression(program, variables);
}

/**
 * Defines `variables.<name>` as upstream's composition does: evaluated on
 * first use, once; a variable no expression reads is never evaluated, and one
 * that fails fails the expression that reads it.
 */
function lazyVariable(
  composited: Record<string, unknown>,
  variable: { name: string; expression: string },
  context: Record<string, unknown>,
): void {
  let outcome: Outcome | undefined;
  Object.defineProperty(composited, variable.name, {
    enumerable: true,
    // A name declared twice is the later declaration's.
    configurable: true,
    get() {
      outcome ??= run(variable.expression, context);
      if ("error" in outcome)
        throw new Error(`composited variable "${variable.name}" fails to evaluate: ${outcome.error}`);
      return outcome.value;
    },
  });
}

/**
 * Evaluates one policy for one param: its match conditions, variables and
 * validations; the messages of the validations that failed (with their
 * reasons), or an error saying why it could not be evaluated. `base` holds
 * the request's values, the param and the namespace; its `variables` are
 * set here.
 */
function evaluatePolicy(
  policy: ValidatingAdmissionPolicy,
  base: PolicyVariables,
): { failures: PolicyFailure[]; annotations: [string, string][] } | { error: string } | "skip" {
  const spec = policy.spec!;
  const conditions = spec.matchConditions ?? [];
  for (let i = 0; i < conditions.length; i++) {
    const condition = conditions[i]!;
    const outcome = run(condition.expression, base);
    if ("error" in outcome)
      return { error: `failed to evaluate match condition "${condition.name}": ${outcome.error}` };
    if (outcome.value !== true) return "skip";
  }
  const declared = spec.variables ?? [];
  const composited: Record<string, unknown> = {};
  const variables = base;
  variables.variables = composited;
  for (let i = 0; i < declared.length; i++) {
    // A variable sees the variables declared before it, as upstream compiles them: no cycles.
    const earlier: Record<string, unknown> = {};
    for (let j = 0; j < i; j++) {
      const { name } = declared[j]!;
      Object.defineProperty(earlier, name, Object.getOwnPropertyDescriptor(composited, name)!);
    }
    lazyVariable(composited, declared[i]!, { ...base, variables: earlier });
  }
  const failures: PolicyFailure[] = [];
  const validations = spec.validations ?? [];
  for (let index = 0; index < validations.length; index++) {
    const validation = validations[index]!;
    const outcome = run(validation.expression, variables);
    if ("error" in outcome)
      return { error: `expression '${validation.expression}' resulted in error: ${outcome.error}` };
    if (outcome.value === true) continue;
    let message = validation.message?.trim() || `failed expression: ${validation.expression.trim()}`;
    if (validation.messageExpression) {
      const produced = run(validation.messageExpression, variables);
      if (
        "value" in produced &&
        typeof produced.value === "string" &&
        produced.value.trim() !== "" &&
        !/[\r\n]/.test(produced.value)
      )
        message = produced.value.trim();
    }
    failures.push({ message, reason: validation.reason ?? "Invalid", index });
  }
  // Audit annotations: a string is recorded (its first 10 KiB), null leaves the key out.
  const annotations: [string, string][] = [];
  for (const annotation of spec.auditAnnotations ?? []) {
    const outcome = run(annotation.valueExpression, variables);
    if ("error" in outcome)
      return { error: `valueExpression '${annotation.valueExpression}' resulted in error: ${outcome.error}` };
    if (outcome.value === null || outcome.value === undefined) continue;
    if (typeof outcome.value !== "string")
      return {
        error: `valueExpression '${annotation.valueExpression}' resulted in unsupported return type: ${celTypeName(outcome.value)}. Return type must be either string or null.`,
      };
    annotations.push([annotation.key, outcome.value.slice(0, maxAuditAnnotationValueLength)]);
  }
  return { failures, annotations };
}

/** What a policy's expressions are evaluated over. */
type PolicyVariables = {
  object: unknown;
  oldObject: unknown;
  request: unknown;
  params: unknown;
  namespaceObject: unknown;
  variables?: Record<string, unknown>;
};

/** A validation that failed: its message, the reason of its denial, and its index among the policy's validations. */
interface PolicyFailure {
  message: string;
  reason: string;
  index: number;
}

/** Upstream's cap on an audit annotation's value. */
const maxAuditAnnotationValueLength = 10 * 1024;

/** The CEL type of a value, as an error names it. */
function celTypeName(value: unknown): string {
  if (typeof value === "bigint") return "int";
  if (typeof value === "number") return "double";
  if (typeof value === "boolean") return "bool";
  if (Array.isArray(value)) return "list";
  if (value instanceof Uint8Array) return "bytes";
  return typeof value === "object" ? "map" : typeof value;
}

const readsOfPolicies = new WeakMap<object, RequestReads>();

// What the plugin derives from the lists and objects the read cache hands out, kept while they are
// (the cache hands out the same array or object until it changes).
const sortedBindings = new WeakMap<readonly object[], readonly ValidatingAdmissionPolicyBinding[]>();
const policiesByName = new WeakMap<readonly object[], ReadonlyMap<string, ValidatingAdmissionPolicy>>();
const celValues = new WeakMap<object, unknown>();

/** Bindings in name order, as upstream evaluates them. */
function sortedByName(
  bindings: readonly ValidatingAdmissionPolicyBinding[],
): readonly ValidatingAdmissionPolicyBinding[] {
  let sorted = sortedBindings.get(bindings);
  if (sorted === undefined) {
    sorted = [...bindings].sort((x, y) => ((x.metadata?.name ?? "") < (y.metadata?.name ?? "") ? -1 : 1));
    sortedBindings.set(bindings, sorted);
  }
  return sorted;
}

function byName(
  policies: readonly ValidatingAdmissionPolicy[],
): ReadonlyMap<string, ValidatingAdmissionPolicy> {
  let map = policiesByName.get(policies);
  if (map === undefined) {
    map = new Map(policies.map((p) => [p.metadata?.name ?? "", p]));
    policiesByName.set(policies, map);
  }
  return map;
}

/** A stored object (a param, a namespace) as CEL sees it, made once per object the cache hands out. */
function celValueOfObject(object: object): unknown {
  let value = celValues.get(object);
  if (value === undefined) {
    value = celValueOf(object);
    celValues.set(object, value);
  }
  return value;
}

/** What a policy's expressions read of the request (remembered per policy object). */
function policyReads(policy: ValidatingAdmissionPolicy): RequestReads {
  const spec = policy.spec!;
  let reads = readsOfPolicies.get(spec);
  if (reads === undefined) {
    reads = requestReads([
      ...(spec.matchConditions ?? []).map((c) => c.expression),
      ...(spec.variables ?? []).map((v) => v.expression),
      ...(spec.validations ?? []).flatMap((v) => [v.expression, v.messageExpression ?? "true"]),
      ...(spec.auditAnnotations ?? []).map((annotation) => annotation.valueExpression),
    ]);
    readsOfPolicies.set(spec, reads);
  }
  return reads;
}

/**
 * ValidatingAdmissionPolicy: each binding whose policy and match resources
 * select the request runs the policy's CEL validations (over `object`,
 * `oldObject`, `request`, `params`, `namespaceObject` and `variables`) for
 * each param it names; a failed validation is denied, warned or only
 * audited as the binding's `validationActions` say, with upstream's texts.
 */
export function validatingAdmissionPolicyPlugin(context: AdmissionContext): AdmissionPlugin {
  return {
    name: "ValidatingAdmissionPolicy",
    validate(a) {
      const listed = context.list(validatingAdmissionPolicyBindings, "");
      if (knownEmpty(listed)) return;
      return validateByPolicies(a, listed, context);
    },
  };
}

/** Runs the policies the bindings of `pending` bind that select `a`; throws the first denial's error. */
async function validateByPolicies(
  a: AdmissionAttributes,
  pending: readonly ValidatingAdmissionPolicyBinding[] | Promise<readonly ValidatingAdmissionPolicyBinding[]>,
  context: AdmissionContext,
): Promise<void> {
  const listed = await pending;
  if (listed.length === 0) return;
  const bindings = sortedByName(listed);
  const policies = byName(await context.list(validatingAdmissionPolicies, ""));
  const denied: Decision[] = [];
  // Each policy's audit annotations, every distinct value its bindings and params gave a key.
  const annotations = new Map<string, Map<string, string[]>>();
  let namespaceObject: unknown;
  // The request's values as CEL sees them, made once per version and per policy's reads, for every binding and param.
  const values = new Map<ResourceDescriptor, Map<RequestReads, CelRequestValues>>();
  for (const binding of bindings) {
    const policy = policies.get(binding.spec?.policyName ?? "");
    if (policy?.spec === undefined) continue;
    // The policy's constraints name the version its expressions see the objects at.
    const matched = await matchResourcesSelect(policy.spec.matchConstraints, a, context);
    if (matched === undefined) continue;
    if ((await matchResourcesSelect(binding.spec?.matchResources, a, context)) === undefined) continue;
    const names = { policy: policy.metadata?.name ?? "", binding: binding.metadata?.name ?? "" };
    const failOpen = policy.spec.failurePolicy === "Ignore";
    const params = await paramsOf(policy, binding, a, context);
    if (typeof params === "string") {
      if (!failOpen)
        denied.push({ ...names, message: `failed to configure binding: ${params}`, reason: "Invalid" });
      continue;
    }
    const reads = policyReads(policy);
    // The namespace is looked up only for a policy whose expressions name it.
    if (namespaceObject === undefined && reads.namespaceObject) {
      const isNamespace = a.resource.group === "" && a.resource.plural === "namespaces";
      const ns =
        a.namespace === "" || isNamespace
          ? undefined
          : await context.get<Namespace>(namespaces, "", a.namespace);
      namespaceObject = ns === undefined ? null : celValueOfObject(ns);
    }
    const actions = binding.spec?.validationActions ?? [];
    let byReads = values.get(matched);
    if (byReads === undefined) values.set(matched, (byReads = new Map()));
    let versioned = byReads.get(reads);
    for (const param of params) {
      if (versioned === undefined) {
        versioned = celRequestValues(await versionedAttributes(a, matched, context), reads);
        byReads.set(reads, versioned);
      }
      const base: PolicyVariables = {
        object: versioned.object,
        oldObject: versioned.oldObject,
        request: versioned.request,
        params: param === null ? null : celValueOfObject(param),
        namespaceObject: namespaceObject ?? null,
      };
      const result = evaluatePolicy(policy, base);
      if (result === "skip") continue;
      if ("error" in result) {
        if (!failOpen) denied.push({ ...names, message: result.error, reason: "Invalid" });
        continue;
      }
      for (const failure of result.failures) {
        if (actions.includes("Deny")) denied.push({ ...names, ...failure });
        if (actions.includes("Warn"))
          a.warn(
            `Validation failed for ValidatingAdmissionPolicy '${names.policy}' with binding '${names.binding}': ${failure.message}`,
          );
        if (actions.includes("Audit"))
          a.annotate(
            "validation.policy.admission.k8s.io/validation_failure",
            JSON.stringify([
              {
                message: failure.message,
                policy: names.policy,
                binding: names.binding,
                expressionIndex: failure.index,
                validationActions: actions,
              },
            ]),
          );
      }
      let keys = annotations.get(names.policy);
      if (keys === undefined) annotations.set(names.policy, (keys = new Map()));
      for (const [key, value] of result.annotations) {
        const values = keys.get(key) ?? [];
        if (!values.includes(value)) keys.set(key, [...values, value]);
      }
    }
  }
  for (const [policyName, keys] of annotations)
    for (const [key, values] of keys) a.annotate(`${policyName}/${key}`, values.join(", "));
  const first = denied[0];
  if (first === undefined) return;
  const message = `ValidatingAdmissionPolicy '${first.policy}' with binding '${first.binding}' denied request: ${first.message}`;
  const { status } = forbidden(a, message);
  throw new StatusError({
    ...status,
    code: codes[first.reason] ?? 422,
    reason: first.reason as never,
    details: { ...status.details, causes: [...(status.details?.causes ?? []), { message }] },
  });
}
