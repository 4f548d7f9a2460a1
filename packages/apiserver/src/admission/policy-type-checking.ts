import type { Environment } from "@marcbachmann/cel-js";
import type {
  ExpressionWarning,
  ValidatingAdmissionPolicy,
} from "kubernetes-types/admissionregistration/v1.js";
import { checkExpression, checkingEnvironment, SchemaCelTypes } from "../crd/cel-types.js";
import type { JSONSchemaProps } from "../crd/schema.js";
import type { ResourceDefinition } from "../registry/resource-definition.js";
import { isRecord, type KindSchema, type OpenAPIDefinition, schemaRef } from "../schemas/kind-schema.js";
import type { AdmissionRule } from "./matching.js";

// Type checking of a ValidatingAdmissionPolicy (upstream's
// `validating.TypeChecker`): its validations' expressions and message
// expressions are compiled with `object` and `oldObject` typed as each kind
// its match constraints name (at most 10, no wildcards), and `params` as its
// paramKind; what does not compile becomes a warning of the policy's status.
// Warnings never change what the policy does.

/** Upstream's `maxTypesToCheck`. */
const maxTypesToCheck = 10;

/** What the type checker reads: the served definitions, by resource and by kind. */
export interface PolicyTypeSource {
  get(resource: { group: string; version: string; plural: string }): ResourceDefinition | undefined;
  forKind(apiVersion: string, kind: string): ResourceDefinition | undefined;
}

interface CheckedKind {
  /** `apps/v1, Kind=Deployment` (Go's `GroupVersionKind.String()`). */
  gvk: string;
  types: SchemaCelTypes;
}

/** The warnings of a policy's expressions, as `status.typeChecking.expressionWarnings` holds them. */
export function policyTypeWarnings(
  policy: ValidatingAdmissionPolicy,
  source: PolicyTypeSource,
): ExpressionWarning[] {
  const spec = policy.spec;
  if (spec === undefined) return [];
  const kinds = kindsToCheck((spec.matchConstraints?.resourceRules ?? []) as AdmissionRule[], source);
  if (kinds.length === 0) return [];
  const paramKind = spec.paramKind;
  const paramDefinition =
    paramKind?.apiVersion && paramKind.kind
      ? source.forKind(paramKind.apiVersion, paramKind.kind)
      : undefined;
  const params = paramDefinition === undefined ? undefined : celTypesOf(paramDefinition, "Params");
  // A kind whose types cannot be declared is skipped: type checking never changes what a policy does.
  const checked: { kind: CheckedKind; environment: Environment }[] = [];
  for (const kind of kinds) {
    try {
      checked.push({ kind, environment: policyEnvironment(kind, params, spec.variables ?? []) });
    } catch {
      // upstream skips a kind whose schema it cannot resolve, likewise
    }
  }
  const warnings: ExpressionWarning[] = [];
  const check = (fieldRef: string, expression: string) => {
    const results: string[] = [];
    for (const { kind, environment } of checked) {
      const fieldsOf = (type: string) => kind.types.fieldsOf(type) ?? params?.fieldsOf(type);
      const outcome = checkExpression(environment, expression, fieldsOf);
      if ("issue" in outcome) results.push(`${kind.gvk}: ${outcome.issue}\n`);
    }
    if (results.length > 0) warnings.push({ fieldRef, warning: results.join("\n") });
  };
  (spec.validations ?? []).forEach((validation, i) => {
    check(`spec.validations[${i}].expression`, validation.expression);
    if (validation.messageExpression)
      check(`spec.validations[${i}].messageExpression`, validation.messageExpression);
  });
  return warnings;
}

/**
 * The kinds a policy's rules name exactly: every group, version and resource
 * spelled out (a rule with a wildcard group or version is skipped, as are
 * wildcard and subresource resources), resolved to served kinds with a
 * schema, sorted by group, version and kind; at most 10.
 */
function kindsToCheck(rules: readonly AdmissionRule[], source: PolicyTypeSource): CheckedKind[] {
  const found = new Map<string, ResourceDefinition>();
  for (const rule of rules) {
    const groups = rule.apiGroups ?? [];
    const versions = rule.apiVersions ?? [];
    const resources = (rule.resources ?? []).filter((r) => !/[*/]/.test(r));
    if (groups.some((g) => g.includes("*")) || versions.some((v) => v.includes("*"))) continue;
    for (const group of [...groups].sort())
      for (const version of [...versions].sort())
        for (const plural of [...resources].sort()) {
          const definition = source.get({ group, version, plural });
          if (definition === undefined) continue;
          const { kind } = definition.descriptor;
          found.set(`${group}/${version}/${kind}`, definition);
          if (found.size === maxTypesToCheck) return sortedKinds(found);
        }
  }
  return sortedKinds(found);
}

function sortedKinds(found: Map<string, ResourceDefinition>): CheckedKind[] {
  const out: CheckedKind[] = [];
  for (const key of [...found.keys()].sort()) {
    const definition = found.get(key)!;
    const types = celTypesOf(definition, definition.descriptor.kind);
    if (types === undefined) continue;
    const { group, version, kind } = definition.descriptor;
    out.push({ gvk: `${group}/${version}, Kind=${kind}`, types });
  }
  return out;
}

const typesOfSchemas = new WeakMap<KindSchema, Map<string, SchemaCelTypes | undefined>>();

/** The CEL types of a kind's OpenAPI schema, its references resolved (once per schema); undefined without one. */
function celTypesOf(definition: ResourceDefinition, rootName: string): SchemaCelTypes | undefined {
  const openAPI = definition.openAPI;
  if (openAPI === undefined) return undefined;
  let byRoot = typesOfSchemas.get(openAPI);
  if (byRoot === undefined) typesOfSchemas.set(openAPI, (byRoot = new Map()));
  if (!byRoot.has(rootName)) {
    const root = resolvedSchema(openAPI);
    byRoot.set(rootName, root === undefined ? undefined : new SchemaCelTypes(root, rootName));
  }
  return byRoot.get(rootName);
}

const resolvedSchemas = new WeakMap<KindSchema, JSONSchemaProps | undefined>();

/**
 * A kind's OpenAPI definition as one schema: every `$ref` replaced by the
 * definition it names (one object per definition, so a definition that holds
 * itself, as JSONSchemaProps does, makes a cycle rather than an endless tree).
 */
export function resolvedSchema(kind: KindSchema): JSONSchemaProps | undefined {
  if (resolvedSchemas.has(kind)) return resolvedSchemas.get(kind);
  const definitions = kind.definitions();
  const byName = new Map<string, JSONSchemaProps>();
  const named = (name: string): JSONSchemaProps | undefined => {
    const known = byName.get(name);
    if (known !== undefined) return known;
    const definition = definitions[name];
    if (definition === undefined) return undefined;
    const node: JSONSchemaProps = {};
    byName.set(name, node);
    return Object.assign(node, convert(definition));
  };
  const resolve = (schema: OpenAPIDefinition): JSONSchemaProps => {
    const ref = schemaRef(schema);
    return (ref === undefined ? undefined : named(ref)) ?? convert(schema);
  };
  const convert = (schema: OpenAPIDefinition): JSONSchemaProps => {
    const out: JSONSchemaProps = {};
    const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
    if (typeof type === "string") out.type = type;
    if (typeof schema.format === "string") out.format = schema.format;
    // IntOrString is a string of format int-or-string in the built-in documents.
    if (schema["x-kubernetes-int-or-string"] === true || schema.format === "int-or-string")
      out["x-kubernetes-int-or-string"] = true;
    if (schema["x-kubernetes-embedded-resource"] === true) out["x-kubernetes-embedded-resource"] = true;
    if (isRecord(schema.properties)) {
      const properties: Record<string, JSONSchemaProps> = {};
      for (const [key, property] of Object.entries(schema.properties))
        if (isRecord(property)) properties[key] = resolve(property);
      out.properties = properties;
    }
    if (isRecord(schema.items)) out.items = resolve(schema.items);
    if (isRecord(schema.additionalProperties))
      out.additionalProperties = resolve(schema.additionalProperties);
    return out;
  };
  const root = named(kind.name);
  resolvedSchemas.set(kind, root);
  return root;
}

/**
 * The environment one kind's checks run in: `object` and `oldObject` of the
 * kind, `params` of the paramKind (dyn without one), `variables` typed as
 * their expressions are, and `request`, `namespaceObject` and `authorizer` dyn.
 */
function policyEnvironment(
  kind: CheckedKind,
  params: SchemaCelTypes | undefined,
  variables: readonly { name: string; expression: string }[],
): Environment {
  const typed = kind.types.register(checkingEnvironment().clone());
  if (params !== undefined) params.register(typed);
  const declare = (environment: Environment, variablesType: string) =>
    environment
      .registerVariable("object", kind.types.rootType)
      .registerVariable("oldObject", kind.types.rootType)
      .registerVariable("params", params?.rootType ?? "dyn")
      .registerVariable("request", "dyn")
      .registerVariable("namespaceObject", "dyn")
      .registerVariable("authorizer", "dyn")
      .registerVariable("variables", variablesType);
  if (variables.length === 0) return declare(typed.clone(), "dyn");
  // Each variable's type from its expression (a variable that does not check is dyn), then one type of them all.
  const first = declare(typed.clone(), "dyn");
  const fields: Record<string, string> = {};
  for (const { name, expression } of variables) {
    const outcome = checkExpression(first, expression);
    fields[name] = "type" in outcome && !/^[A-Z]$/.test(outcome.type) ? outcome.type : "dyn";
  }
  const environment = typed.clone();
  environment.registerType("Variables", { fields });
  return declare(environment, "Variables");
}
