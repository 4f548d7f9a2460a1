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

/** The schema of `additionalProperties` when it is a schema (`true` means "any value", kept by pruning). */
export function additionalSchema(schema: JSONSchemaProps): JSONSchemaProps | undefined {
  return isObject(schema.additionalProperties) ? (schema.additionalProperties as JSONSchemaProps) : undefined;
}
