/** An OpenAPI v3 schema as a CustomResourceDefinition carries it (apiextensions.k8s.io/v1 JSONSchemaProps). */
export interface JSONSchemaProps {
  type?: string;
  format?: string;
  title?: string;
  description?: string;
  default?: unknown;
  example?: unknown;
  enum?: unknown[];
  maximum?: number;
  exclusiveMaximum?: boolean;
  minimum?: number;
  exclusiveMinimum?: boolean;
  multipleOf?: number;
  maxLength?: number;
  minLength?: number;
  pattern?: string;
  maxItems?: number;
  minItems?: number;
  uniqueItems?: boolean;
  maxProperties?: number;
  minProperties?: number;
  required?: string[];
  items?: JSONSchemaProps | JSONSchemaProps[];
  properties?: Record<string, JSONSchemaProps>;
  additionalProperties?: boolean | JSONSchemaProps;
  allOf?: JSONSchemaProps[];
  anyOf?: JSONSchemaProps[];
  oneOf?: JSONSchemaProps[];
  not?: JSONSchemaProps;
  nullable?: boolean;
  externalDocs?: { description?: string; url?: string };
  "x-kubernetes-preserve-unknown-fields"?: boolean;
  "x-kubernetes-embedded-resource"?: boolean;
  "x-kubernetes-int-or-string"?: boolean;
  "x-kubernetes-list-type"?: string;
  "x-kubernetes-list-map-keys"?: string[];
  "x-kubernetes-map-type"?: string;
  "x-kubernetes-validations"?: ValidationRule[];
  [unsupported: string]: unknown;
}

/** One `x-kubernetes-validations` entry. */
export interface ValidationRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  reason?: string;
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: unknown };

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The single item schema of an array node (a list of schemas is not structural and was rejected earlier). */
export function itemSchema(schema: JSONSchemaProps): JSONSchemaProps | undefined {
  return Array.isArray(schema.items) ? undefined : schema.items;
}

/** The int-or-string idiom `anyOf: [{type: integer}, {type: string}]`: what `x-kubernetes-int-or-string` already says. */
export function isIntOrStringIdiom(anyOf: JSONSchemaProps[] | undefined): boolean {
  return anyOf?.length === 2 && anyOf[0]?.type === "integer" && anyOf[1]?.type === "string";
}

/** The schema of `additionalProperties` when it is a schema (`true` means "any value", kept by pruning). */
export function additionalSchema(schema: JSONSchemaProps): JSONSchemaProps | undefined {
  return isObject(schema.additionalProperties) ? (schema.additionalProperties as JSONSchemaProps) : undefined;
}

type Feature = "listTypes" | "embedded" | "rules" | "defaults";
const featureCache: Record<Feature, WeakMap<JSONSchemaProps, boolean>> = {
  listTypes: new WeakMap(),
  embedded: new WeakMap(),
  rules: new WeakMap(),
  defaults: new WeakMap(),
};

/**
 * Whether a schema or anything below it uses a feature, remembered per schema node: walks over objects
 * skip the subtrees that cannot contribute (most of a typical object).
 */
export function subtreeHas(schema: JSONSchemaProps, feature: Feature): boolean {
  const cache = featureCache[feature];
  let has = cache.get(schema);
  if (has !== undefined) return has;
  has =
    (feature === "listTypes" &&
      (schema["x-kubernetes-list-type"] === "set" || schema["x-kubernetes-list-type"] === "map")) ||
    (feature === "embedded" && schema["x-kubernetes-embedded-resource"] === true) ||
    (feature === "rules" && (schema["x-kubernetes-validations"]?.length ?? 0) > 0) ||
    (feature === "defaults" && schema.default !== undefined);
  if (!has) {
    const children = [
      ...Object.values(schema.properties ?? {}),
      ...(isObject(schema.items) ? [schema.items as JSONSchemaProps] : []),
      ...(isObject(schema.additionalProperties) ? [schema.additionalProperties as JSONSchemaProps] : []),
    ];
    has = children.some((child) => subtreeHas(child, feature));
  }
  cache.set(schema, has);
  return has;
}

/** A deep copy of a JSON value (defaults are copied into every object that takes them). */
export function copyJson<T>(value: T): T {
  if (value === null || typeof value !== "object") return value;
  return JSON.parse(JSON.stringify(value)) as T;
}
