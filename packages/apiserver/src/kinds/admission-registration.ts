import {
  mutatingWebhookConfigurations,
  validatingAdmissionPolicies,
  validatingAdmissionPolicyBindings,
  validatingWebhookConfigurations,
} from "@reconcile/api";
import type {
  MatchResources,
  MutatingWebhook,
  ValidatingAdmissionPolicy,
  ValidatingAdmissionPolicyBinding,
  ValidatingWebhook,
} from "kubernetes-types/admissionregistration/v1.js";
import { compileAdmissionExpression } from "../admission/cel.js";
import type { FieldErrors } from "../registry/field-errors.js";
import { goStrings } from "../registry/go-syntax.js";
import type { ResourceDefinition } from "../registry/resource-definition.js";
import type { Strategy } from "../registry/strategy.js";
import { defineKind } from "./definition.js";
import {
  validatingAdmissionPolicyBindingPrinter,
  validatingAdmissionPolicyPrinter,
  webhookConfigurationPrinter,
} from "./printers/index.js";

type Webhook = MutatingWebhook & ValidatingWebhook;
/** A rule as the wire has it (kubernetes-types leaves out the fields of the embedded Rule). */
interface Rule {
  operations?: string[];
  apiGroups?: string[];
  apiVersions?: string[];
  resources?: string[];
  scope?: string;
}

const operations = ["*", "CREATE", "UPDATE", "DELETE", "CONNECT"];
const scopes = ["*", "Cluster", "Namespaced"];

/** SetDefaults_Rule: the scope is `*` unless given. */
function defaultRules(rules: readonly unknown[] | undefined): void {
  for (const rule of (rules ?? []) as Rule[]) rule.scope ??= "*";
}

/** SetDefaults_MutatingWebhook / SetDefaults_ValidatingWebhook (admissionregistration/v1). */
function defaultWebhook(webhook: Webhook, mutating: boolean): void {
  webhook.failurePolicy ??= "Fail";
  webhook.matchPolicy ??= "Equivalent";
  webhook.namespaceSelector ??= {};
  webhook.objectSelector ??= {};
  webhook.timeoutSeconds ??= 10;
  if (mutating) webhook.reinvocationPolicy ??= "Never";
  defaultRules(webhook.rules);
  const service = webhook.clientConfig?.service;
  if (service) service.port ??= 443;
}

/** A webhook's name: a domain of three segments or more (upstream's `ValidateWebhook`). */
function isQualifiedDomain(name: string): boolean {
  const labels = name.split(".");
  return (
    labels.length >= 3 && labels.every((l) => /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(l)) && name.length <= 253
  );
}

function validateRules(rules: readonly unknown[] | undefined, path: string, errors: FieldErrors): void {
  ((rules ?? []) as Rule[]).forEach((rule, i) => {
    const at = `${path}[${i}]`;
    if ((rule.operations ?? []).length === 0) errors.required(`${at}.operations`);
    (rule.operations ?? []).forEach((op, j) => {
      if (!operations.includes(op)) errors.notSupported(`${at}.operations[${j}]`, op, operations);
    });
    if ((rule.apiGroups ?? []).length === 0) errors.required(`${at}.apiGroups`);
    if ((rule.apiVersions ?? []).length === 0) errors.required(`${at}.apiVersions`);
    if ((rule.resources ?? []).length === 0) errors.required(`${at}.resources`);
    if (rule.scope !== undefined && !scopes.includes(rule.scope))
      errors.notSupported(`${at}.scope`, rule.scope, scopes);
  });
}

/** ValidateValidatingWebhookConfiguration / ValidateMutatingWebhookConfiguration, the checks users meet. */
function validateWebhooks(webhooks: Webhook[] | undefined, mutating: boolean, errors: FieldErrors): void {
  const names = new Set<string>();
  (webhooks ?? []).forEach((webhook, i) => {
    const at = `webhooks[${i}]`;
    if (!webhook.name) errors.required(`${at}.name`);
    else if (!isQualifiedDomain(webhook.name))
      errors.invalid(
        `${at}.name`,
        webhook.name,
        "should be a domain with at least three segments separated by dots",
      );
    else if (names.has(webhook.name)) errors.duplicate(`${at}.name`, webhook.name);
    names.add(webhook.name);
    validateRules(webhook.rules, `${at}.rules`, errors);
    if (webhook.sideEffects === undefined)
      errors.required(`${at}.sideEffects`, "must specify one of None, NoneOnDryRun");
    else if (webhook.sideEffects !== "None" && webhook.sideEffects !== "NoneOnDryRun")
      errors.notSupported(`${at}.sideEffects`, webhook.sideEffects, ["None", "NoneOnDryRun"]);
    const versions = webhook.admissionReviewVersions ?? [];
    if (versions.length === 0)
      errors.required(`${at}.admissionReviewVersions`, "must specify one of v1, v1beta1");
    else if (!versions.includes("v1") && !versions.includes("v1beta1"))
      errors.invalid(`${at}.admissionReviewVersions`, versions, "must include at least one of v1, v1beta1");
    const timeout = webhook.timeoutSeconds;
    if (timeout !== undefined && (timeout < 1 || timeout > 30))
      errors.invalid(`${at}.timeoutSeconds`, timeout, "the timeout value must be between 1 and 30 seconds");
    if (webhook.failurePolicy !== undefined && !["Fail", "Ignore"].includes(webhook.failurePolicy))
      errors.notSupported(`${at}.failurePolicy`, webhook.failurePolicy, ["Fail", "Ignore"]);
    if (webhook.matchPolicy !== undefined && !["Exact", "Equivalent"].includes(webhook.matchPolicy))
      errors.notSupported(`${at}.matchPolicy`, webhook.matchPolicy, ["Exact", "Equivalent"]);
    if (
      mutating &&
      webhook.reinvocationPolicy !== undefined &&
      !["Never", "IfNeeded"].includes(webhook.reinvocationPolicy)
    )
      errors.notSupported(`${at}.reinvocationPolicy`, webhook.reinvocationPolicy, ["Never", "IfNeeded"]);
    validateClientConfig(webhook, `${at}.clientConfig`, errors);
    const conditions = new Set<string>();
    for (const [j, condition] of (webhook.matchConditions ?? []).entries()) {
      const where = `${at}.matchConditions[${j}]`;
      if (conditions.has(condition.name)) errors.duplicate(`${where}.name`, condition.name);
      conditions.add(condition.name);
      checkCompiles(condition.expression, `${where}.expression`, errors);
    }
  });
}

function validateClientConfig(webhook: Webhook, at: string, errors: FieldErrors): void {
  const { url, service } = webhook.clientConfig ?? {};
  if ((url === undefined) === (service === undefined)) {
    errors.required(at, "exactly one of url or service is required");
    return;
  }
  if (url !== undefined) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch {
      errors.invalid(`${at}.url`, url, "host must be specified");
      return;
    }
    if (parsed.protocol !== "https:")
      errors.invalid(`${at}.url`, url, "'https' is the only allowed URL scheme");
    else if (parsed.username || parsed.password)
      errors.invalid(`${at}.url`, url, "user information is not permitted in the URL");
    else if (parsed.hash) errors.invalid(`${at}.url`, url, "fragments are not permitted in the URL");
    else if (parsed.search) errors.invalid(`${at}.url`, url, "query parameters are not permitted in the URL");
  } else if (service !== undefined) {
    if (!service.name) errors.required(`${at}.service.name`, "service name is required");
    if (!service.namespace) errors.required(`${at}.service.namespace`, "service namespace is required");
    if (service.path !== undefined && !service.path.startsWith("/"))
      errors.invalid(`${at}.service.path`, service.path, "must start with a '/'");
    if (service.port !== undefined && (service.port < 1 || service.port > 65535))
      errors.invalid(
        `${at}.service.port`,
        service.port,
        "port is not valid: must be between 1 and 65535, inclusive",
      );
  }
}

function webhookConfigurationStrategy(mutating: boolean): Strategy {
  return {
    applyDefaults(object) {
      for (const webhook of (object as { webhooks?: Webhook[] }).webhooks ?? [])
        defaultWebhook(webhook, mutating);
    },
    validate(object, errors) {
      validateWebhooks((object as { webhooks?: Webhook[] }).webhooks, mutating, errors);
    },
  };
}

/** An admission CEL expression that does not compile is refused with the compiler's first line. */
function checkCompiles(expression: string | undefined, at: string, errors: FieldErrors): void {
  if (!expression) {
    errors.required(at);
    return;
  }
  const compiled = compileAdmissionExpression(expression);
  if (compiled instanceof Error)
    errors.invalid(at, expression, `compilation failed: ERROR: ${compiled.message.split("\n")[0]}`);
}

/** SetDefaults for MatchResources: Equivalent, empty selectors, rules scoped `*`. */
function defaultMatchResources(match: MatchResources | undefined): void {
  if (match === undefined) return;
  match.matchPolicy ??= "Equivalent";
  match.namespaceSelector ??= {};
  match.objectSelector ??= {};
  defaultRules(match.resourceRules);
  defaultRules(match.excludeResourceRules);
}

const policyStrategy: Strategy = {
  prepareForCreate(object) {
    delete (object as { status?: unknown }).status;
  },
  applyDefaults(object) {
    const spec = (object as ValidatingAdmissionPolicy).spec;
    if (spec === undefined) return;
    spec.failurePolicy ??= "Fail";
    defaultMatchResources(spec.matchConstraints);
  },
  validate(object, errors) {
    const spec = (object as ValidatingAdmissionPolicy).spec;
    if (spec === undefined) return errors.required("spec");
    if ((spec.validations ?? []).length === 0 && (spec.auditAnnotations ?? []).length === 0)
      errors.required("spec.validations", "validations or auditAnnotations must contain at least one item");
    for (const [i, v] of (spec.validations ?? []).entries()) {
      checkCompiles(v.expression, `spec.validations[${i}].expression`, errors);
      if (v.messageExpression !== undefined)
        checkCompiles(v.messageExpression, `spec.validations[${i}].messageExpression`, errors);
    }
    for (const [i, c] of (spec.matchConditions ?? []).entries())
      checkCompiles(c.expression, `spec.matchConditions[${i}].expression`, errors);
    for (const [i, v] of (spec.variables ?? []).entries())
      checkCompiles(v.expression, `spec.variables[${i}].expression`, errors);
    if (spec.matchConstraints === undefined) errors.required("spec.matchConstraints");
    else if ((spec.matchConstraints.resourceRules ?? []).length === 0)
      errors.required("spec.matchConstraints.resourceRules");
    validateRules(spec.matchConstraints?.resourceRules, "spec.matchConstraints.resourceRules", errors);
    if (spec.failurePolicy !== undefined && !["Fail", "Ignore"].includes(spec.failurePolicy))
      errors.notSupported("spec.failurePolicy", spec.failurePolicy, ["Fail", "Ignore"]);
  },
};

const validationActions = ["Deny", "Warn", "Audit"];

const bindingStrategy: Strategy = {
  applyDefaults(object) {
    const spec = (object as ValidatingAdmissionPolicyBinding).spec;
    if (spec === undefined) return;
    defaultMatchResources(spec.matchResources);
    if (spec.paramRef) spec.paramRef.parameterNotFoundAction ??= "Deny";
  },
  validate(object, errors) {
    const spec = (object as ValidatingAdmissionPolicyBinding).spec;
    if (spec === undefined) return errors.required("spec");
    if (!spec.policyName) errors.required("spec.policyName");
    const actions = spec.validationActions ?? [];
    if (actions.length === 0) errors.required("spec.validationActions");
    actions.forEach((action, i) => {
      if (!validationActions.includes(action))
        errors.notSupported(`spec.validationActions[${i}]`, action, validationActions);
    });
    if (actions.includes("Deny") && actions.includes("Warn"))
      errors.invalid(
        "spec.validationActions",
        goStrings(actions, "[]admissionregistration.ValidationAction"),
        "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)",
      );
    const ref = spec.paramRef;
    if (ref?.name && ref.selector)
      errors.forbidden("spec.paramRef.name", "name and selector are mutually exclusive");
  },
};

/** `admissionregistration.k8s.io/v1`: webhook configurations, ValidatingAdmissionPolicies and their bindings. */
export const admissionRegistrationDefinitions: readonly ResourceDefinition[] = [
  defineKind({
    descriptor: mutatingWebhookConfigurations,
    strategy: webhookConfigurationStrategy(true),
    printer: webhookConfigurationPrinter,
    allowsUnconditionalUpdate: false,
  }),
  defineKind({
    descriptor: validatingWebhookConfigurations,
    strategy: webhookConfigurationStrategy(false),
    printer: webhookConfigurationPrinter,
    allowsUnconditionalUpdate: false,
  }),
  defineKind({
    descriptor: validatingAdmissionPolicies,
    strategy: policyStrategy,
    printer: validatingAdmissionPolicyPrinter,
    allowsUnconditionalUpdate: false,
  }),
  defineKind({
    descriptor: validatingAdmissionPolicyBindings,
    strategy: bindingStrategy,
    printer: validatingAdmissionPolicyBindingPrinter,
    allowsUnconditionalUpdate: false,
  }),
] as ResourceDefinition[];
