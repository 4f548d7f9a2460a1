import type { FieldError, KubeObject } from "@reconcile/api";
import { compileRules, type RuleContext, type RuleCost } from "./cel.js";
import { childCardinality, exceedsBudgetMessage, STATIC_CRD_COST_LIMIT } from "./cel-cost.js";
import { RuleChecker } from "./cel-types.js";
import { SchemaErrors } from "./errors.js";
import { isObject, type JSONSchemaProps, subtreeHas } from "./schema.js";
import { validateStructuralSchema } from "./structural.js";

/** The spec of an apiextensions.k8s.io/v1 CustomResourceDefinition. */
export interface CustomResourceDefinitionSpec {
  group: string;
  names: CustomResourceDefinitionNames;
  scope: string;
  versions: CustomResourceDefinitionVersion[];
  conversion?: { strategy?: string; webhook?: ConversionWebhook | undefined };
  preserveUnknownFields?: boolean;
}

/** `spec.conversion.webhook`: where conversions are sent, and the ConversionReview versions it reads. */
export interface ConversionWebhook {
  clientConfig?:
    | {
        url?: string;
        service?: { namespace: string; name: string; path?: string; port?: number };
        caBundle?: string;
      }
    | undefined;
  conversionReviewVersions?: string[] | undefined;
}

export interface CustomResourceDefinitionNames {
  plural: string;
  singular?: string;
  kind: string;
  listKind?: string;
  shortNames?: string[];
  categories?: string[];
}

export interface CustomResourceDefinitionVersion {
  name: string;
  served: boolean;
  storage: boolean;
  deprecated?: boolean;
  deprecationWarning?: string;
  schema?: { openAPIV3Schema?: JSONSchemaProps };
  subresources?: {
    status?: Record<string, never>;
    scale?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string };
  };
  additionalPrinterColumns?: PrinterColumn[];
}

export interface PrinterColumn {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath: string;
}

export interface CustomResourceDefinitionCondition {
  type: string;
  status: "True" | "False" | "Unknown";
  reason: string;
  message: string;
  lastTransitionTime: string;
}

export interface CustomResourceDefinitionStatus {
  conditions?: CustomResourceDefinitionCondition[] | null;
  acceptedNames: { plural: string; kind: string } & Partial<CustomResourceDefinitionNames>;
  storedVersions: string[];
}

export interface CustomResourceDefinition extends KubeObject {
  spec: CustomResourceDefinitionSpec;
  status?: CustomResourceDefinitionStatus;
}

/**
 * The v1 scheme's defaults for a CRD: `names.singular` is the lower-cased kind, `names.listKind` is
 * `<kind>List`, `conversion` is `{strategy: None}`.
 */
export function defaultCustomResourceDefinition(crd: CustomResourceDefinition): void {
  const spec = crd.spec;
  if (!isObject(spec)) return;
  if (isObject(spec.names)) {
    if (!spec.names.singular && typeof spec.names.kind === "string")
      spec.names.singular = spec.names.kind.toLowerCase();
    if (!spec.names.listKind && spec.names.kind) spec.names.listKind = `${spec.names.kind}List`;
  }
  spec.conversion ??= { strategy: "None" };
  const service = spec.conversion.webhook?.clientConfig?.service;
  if (isObject(service)) service.port ??= 443;
  for (const version of Array.isArray(spec.versions) ? spec.versions : []) {
    if (isObject(version)) {
      version.served ??= false;
      version.storage ??= false;
    }
  }
}

const dns1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const dns1035Message =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const dns1123Subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * Validates a CRD as apiextensions-apiserver does on create (and, with `old`, on update), with its messages.
 * Paths follow the internal layout upstream reports: a schema shared by every version (always so with one
 * version) is reported under `spec.validation.openAPIV3Schema`, and `versions[0].name` also at `spec.version`.
 */
export function validateCustomResourceDefinition(
  crd: CustomResourceDefinition,
  old?: CustomResourceDefinition,
): FieldError[] {
  const errors = new SchemaErrors();
  const spec = isObject(crd.spec) ? crd.spec : ({} as CustomResourceDefinitionSpec);
  const names = isObject(spec.names) ? spec.names : ({} as CustomResourceDefinitionNames);
  const name = crd.metadata?.name ?? "";

  if (name !== `${names.plural}.${spec.group}`) {
    errors.invalid("metadata.name", name, 'must be spec.names.plural+"."+spec.group');
  }
  if (!spec.group) errors.required("spec.group");
  else if (!dns1123Subdomain.test(spec.group) || !spec.group.includes(".")) {
    errors.invalid("spec.group", spec.group, "should be a domain with at least one dot");
  }
  if (!spec.scope) errors.required("spec.scope");
  else if (spec.scope !== "Namespaced" && spec.scope !== "Cluster") {
    errors.notSupported("spec.scope", spec.scope, ["Cluster", "Namespaced"]);
  }
  validateNames(names, errors);
  validateVersions(spec, errors);
  validateConversion(spec, errors);
  if (spec.preserveUnknownFields === true && old?.spec?.preserveUnknownFields !== true) {
    errors.invalid(
      "spec.preserveUnknownFields",
      true,
      "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead",
    );
  }
  if (old) validateImmutables(crd, old, errors);
  return errors.list;
}

function validateNames(names: CustomResourceDefinitionNames, errors: SchemaErrors): void {
  label("spec.names.plural", names.plural, errors);
  label("spec.names.singular", names.singular, errors);
  (names.shortNames ?? []).forEach((s, i) => {
    label(`spec.names.shortNames[${i}]`, s, errors);
  });
  (names.categories ?? []).forEach((c, i) => {
    label(`spec.names.categories[${i}]`, c, errors);
  });
  for (const field of ["kind", "listKind"] as const) {
    const value = names[field];
    if (!value) {
      errors.required(`spec.names.${field}`);
    } else if (!dns1035.test(value.toLowerCase())) {
      errors.invalid(
        `spec.names.${field}`,
        value,
        `may have mixed case, but should otherwise match: ${dns1035Message}`,
      );
    }
  }
  if (names.kind && names.kind === names.listKind) {
    errors.invalid("spec.names.listKind", names.listKind, "kind and listKind may not be the same");
  }
}

/**
 * Upstream's `ValidateCustomResourceDefinitionStatus`, what a `/status` write is checked against: the
 * accepted names, each only when set (the controller writes them once it has accepted them).
 */
export function validateCustomResourceDefinitionStatus(crd: CustomResourceDefinition): FieldError[] {
  const errors = new SchemaErrors();
  const names = (
    isObject(crd.status?.acceptedNames) ? crd.status.acceptedNames : {}
  ) as Partial<CustomResourceDefinitionNames>;
  const base = "status.acceptedNames";
  if (names.plural) label(`${base}.plural`, names.plural, errors);
  if (names.singular) label(`${base}.singular`, names.singular, errors);
  (names.shortNames ?? []).forEach((s, i) => {
    if (s) label(`${base}.shortNames[${i}]`, s, errors);
  });
  (names.categories ?? []).forEach((c, i) => {
    if (c) label(`${base}.categories[${i}]`, c, errors);
  });
  for (const field of ["kind", "listKind"] as const) {
    const value = names[field];
    if (value && !dns1035.test(value.toLowerCase()))
      errors.invalid(
        `${base}.${field}`,
        value,
        `may have mixed case, but should otherwise match: ${dns1035Message}`,
      );
  }
  if (names.kind && names.kind === names.listKind)
    errors.invalid(`${base}.listKind`, names.listKind, "kind and listKind may not be the same");
  return errors.list;
}

function label(path: string, value: string | undefined, errors: SchemaErrors): void {
  if (!value) {
    errors.required(path);
    return;
  }
  if (!dns1035.test(value)) errors.invalid(path, value, dns1035Message);
  if (value.length > 63) errors.invalid(path, value, "must be no more than 63 characters");
}

function validateVersions(spec: CustomResourceDefinitionSpec, errors: SchemaErrors): void {
  const versions = Array.isArray(spec.versions) ? spec.versions : [];
  if (versions.length === 0) {
    errors.invalid("spec.versions", versions, "must have exactly one version marked as storage version");
    return;
  }
  const seen = new Set<string>();
  let storage = 0;
  versions.forEach((version, i) => {
    if (!dns1035.test(version.name ?? "")) {
      errors.invalid(`spec.versions[${i}].name`, version.name ?? "", dns1035Message);
      if (i === 0) errors.invalid("spec.version", version.name ?? "", dns1035Message);
    }
    seen.add(version.name);
    if (version.storage) storage++;
    if (version.deprecationWarning !== undefined && !version.deprecated) {
      errors.invalid(
        `spec.versions[${i}].deprecationWarning`,
        version.deprecationWarning,
        "can only be set for deprecated versions",
      );
    }
  });
  if (seen.size !== versions.length) {
    errors.invalid(
      "spec.versions",
      versions.map((v) => v.name),
      "must contain unique version names",
    );
  }
  if (storage !== 1) {
    errors.invalid(
      "spec.versions",
      versions.map((v) => v.name),
      "must have exactly one version marked as storage version",
    );
  }
  const shared = versions.every((v) => JSON.stringify(v.schema) === JSON.stringify(versions[0]?.schema));
  versions.forEach((version, i) => {
    const base = shared ? "spec.validation" : `spec.versions[${i}].schema`;
    if (shared && i > 0) return;
    const schema = version.schema?.openAPIV3Schema;
    if (!schema) {
      errors.required(`spec.versions[${i}].schema.openAPIV3Schema`, "schemas are required");
      return;
    }
    const structural = validateStructuralSchema(schema, `${base}.openAPIV3Schema`);
    errors.list.push(...structural.list);
    if (structural.list.length === 0) compileSchemaRules(schema, `${base}.openAPIV3Schema`, errors);
  });
  const sharedColumns = versions.every(
    (v) =>
      JSON.stringify(v.additionalPrinterColumns) === JSON.stringify(versions[0]?.additionalPrinterColumns),
  );
  versions.forEach((version, i) => {
    if (sharedColumns && i > 0) return;
    const base = sharedColumns
      ? "spec.additionalPrinterColumns"
      : `spec.versions[${i}].additionalPrinterColumns`;
    (version.additionalPrinterColumns ?? []).forEach((column, j) => {
      validateColumn(column, `${base}[${j}]`, errors);
    });
  });
  const sharedSubresources = versions.every(
    (v) => JSON.stringify(v.subresources) === JSON.stringify(versions[0]?.subresources),
  );
  versions.forEach((version, i) => {
    if (sharedSubresources && i > 0) return;
    const scale = version.subresources?.scale;
    if (!scale) return;
    const base = sharedSubresources ? "spec.subresources.scale" : `spec.versions[${i}].subresources.scale`;
    if (!scale.specReplicasPath) errors.required(`${base}.specReplicasPath`);
    else if (!scale.specReplicasPath.startsWith(".spec.")) {
      errors.invalid(`${base}.specReplicasPath`, scale.specReplicasPath, "should be a json path under .spec");
    }
    if (!scale.statusReplicasPath) errors.required(`${base}.statusReplicasPath`);
    else if (!scale.statusReplicasPath.startsWith(".status.")) {
      errors.invalid(
        `${base}.statusReplicasPath`,
        scale.statusReplicasPath,
        "should be a json path under .status",
      );
    }
    const selector = scale.labelSelectorPath;
    if (selector && !selector.startsWith(".spec.") && !selector.startsWith(".status.")) {
      errors.invalid(
        `${base}.labelSelectorPath`,
        selector,
        "should be a json path under either .spec or .status",
      );
    }
  });
}

/**
 * Compiles every rule of a version's schema and checks their estimated costs: each rule against the
 * per-expression limit (in compileRules), and their sum against the per-schema limit — over it, the four most
 * expensive rules and the schema root are forbidden, as apiextensions' validation reports it.
 */
function compileSchemaRules(schema: JSONSchemaProps, path: string, errors: SchemaErrors): void {
  const costs: RuleCost[] = [];
  if (!subtreeHas(schema, "rules")) return;
  compileAll(schema, path, errors, 1, costs, { checker: ruleCheckerFor(schema) });
  const total = costs.reduce((sum, rule) => sum + rule.cost, 0);
  if (total <= STATIC_CRD_COST_LIMIT) return;
  const expensive = [...costs].sort((a, b) => b.cost - a.cost).slice(0, 4);
  for (const rule of expensive) {
    errors.forbidden(
      rule.path,
      "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema",
    );
  }
  errors.forbidden(
    path,
    exceedsBudgetMessage(
      "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema",
      total,
      STATIC_CRD_COST_LIMIT,
    ),
  );
}

/**
 * The checker of a schema's rules; none (rules checked with `self` dyn, as
 * before the schema's types were declared) if the types cannot be declared,
 * so a CRD is never refused for a fault of the checker's own.
 */
function ruleCheckerFor(schema: JSONSchemaProps): RuleChecker | undefined {
  try {
    return new RuleChecker(schema);
  } catch {
    return undefined;
  }
}

/** `cardinality`: how many times the node may occur in one object (the sizes of the lists and maps above it). */
function compileAll(
  schema: JSONSchemaProps,
  path: string,
  errors: SchemaErrors,
  cardinality: number,
  costs: RuleCost[],
  context: RuleContext,
): void {
  if (!subtreeHas(schema, "rules")) return;
  costs.push(...compileRules(schema, errors, path, cardinality, context));
  const below = cardinality * childCardinality(schema);
  for (const [name, child] of Object.entries(schema.properties ?? {}))
    compileAll(child, `${path}.properties[${name}]`, errors, cardinality, costs, context);
  if (isObject(schema.items)) {
    const items = `${path}.items`;
    // Only a map list's items correlate with the old object's (by key); below any other list, none do.
    const correlates = schema["x-kubernetes-list-type"] === "map";
    compileAll(schema.items as JSONSchemaProps, items, errors, below, costs, {
      ...context,
      uncorrelatable: context.uncorrelatable ?? (correlates ? undefined : items),
    });
  }
  if (isObject(schema.additionalProperties)) {
    compileAll(
      schema.additionalProperties as JSONSchemaProps,
      `${path}.additionalProperties`,
      errors,
      below,
      costs,
      context,
    );
  }
}

const columnTypes = ["boolean", "date", "integer", "number", "string"];
const columnFormats = ["byte", "date", "date-time", "double", "float", "int32", "int64", "password"];

function validateColumn(column: PrinterColumn, path: string, errors: SchemaErrors): void {
  if (!column.name) errors.required(`${path}.name`);
  if (!column.type) errors.required(`${path}.type`, `must be one of ${columnTypes.join(",")}`);
  else if (!columnTypes.includes(column.type)) errors.notSupported(`${path}.type`, column.type, columnTypes);
  if (column.format && !columnFormats.includes(column.format)) {
    errors.invalid(`${path}.format`, column.format, `must be one of ${columnFormats.join(",")}`);
  }
  if (!column.jsonPath) errors.required(`${path}.JSONPath`);
  else if (!column.jsonPath.startsWith(".")) {
    errors.invalid(`${path}.JSONPath`, column.jsonPath, "must be a simple json path starting with .");
  }
}

function validateConversion(spec: CustomResourceDefinitionSpec, errors: SchemaErrors): void {
  const strategy = spec.conversion?.strategy ?? "None";
  const webhook = spec.conversion?.webhook;
  if (strategy === "Webhook") {
    if (webhook === undefined) {
      errors.required("spec.conversion.webhook", "required when strategy is set to Webhook");
      return;
    }
    const versions = webhook.conversionReviewVersions ?? [];
    if (versions.length === 0)
      errors.required("spec.conversion.webhook.conversionReviewVersions", "must specify one of v1, v1beta1");
    else if (!versions.includes("v1") && !versions.includes("v1beta1"))
      errors.invalid(
        "spec.conversion.webhook.conversionReviewVersions",
        versions,
        "must include at least one of v1, v1beta1",
      );
    const { url, service } = webhook.clientConfig ?? {};
    if ((url === undefined) === (service === undefined))
      errors.required("spec.conversion.webhook.clientConfig", "exactly one of url or service is required");
    else if (url !== undefined && !url.startsWith("https://"))
      errors.invalid(
        "spec.conversion.webhook.clientConfig.url",
        url,
        "'https' is the only allowed URL scheme",
      );
  } else if (strategy !== "None") {
    errors.notSupported("spec.conversion.strategy", strategy, ["None", "Webhook"]);
  } else if (webhook !== undefined) {
    errors.forbidden("spec.conversion.webhook", "should not be set when strategy is not set to Webhook");
  }
}

function validateImmutables(
  crd: CustomResourceDefinition,
  old: CustomResourceDefinition,
  errors: SchemaErrors,
): void {
  if (crd.spec?.group !== old.spec?.group)
    errors.invalid("spec.group", crd.spec?.group, "field is immutable");
  if (crd.spec?.names?.plural !== old.spec?.names?.plural) {
    errors.invalid("spec.names.plural", crd.spec?.names?.plural, "field is immutable");
  }
  const established = old.status?.conditions?.some((c) => c.type === "Established" && c.status === "True");
  if (established) {
    if (crd.spec?.scope !== old.spec?.scope)
      errors.invalid("spec.scope", crd.spec?.scope, "field is immutable");
    if (crd.spec?.names?.kind !== old.spec?.names?.kind) {
      errors.invalid("spec.names.kind", crd.spec?.names?.kind, "field is immutable");
    }
  }
  const storedVersions = old.status?.storedVersions ?? [];
  storedVersions.forEach((v, i) => {
    if (!crd.spec?.versions?.some((version) => version.name === v)) {
      errors.invalid(`status.storedVersions[${i}]`, v, "must appear in spec.versions");
    }
  });
}
