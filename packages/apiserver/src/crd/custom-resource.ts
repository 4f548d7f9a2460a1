import type { FieldError } from "@reconcile/api";
import { goQuote } from "../registry/field-validation.js";
import { validateCEL } from "./cel.js";
import { applyDefaults } from "./defaulting.js";
import { SchemaErrors } from "./errors.js";
import { dropNulls, prune } from "./pruning.js";
import { type JSONSchemaProps, type JsonObject, subtreeHas } from "./schema.js";
import { validateEmbeddedResources, validateListTypes, validateOpenAPI } from "./validation.js";

export type FieldValidation = "Strict" | "Warn" | "Ignore";

export interface DecodeResult {
  /** Paths of the fields pruning removed, sorted (`spec.foo`, `metadata.unknown`). */
  unknownFields: string[];
}

/**
 * The decode half of a custom resource write, in place and in upstream's order: prune unknown fields, drop
 * non-nullable nulls, then apply defaults. The caller turns `unknownFields` into a Strict error or Warn
 * warnings (see {@link unknownFieldsMessage}).
 */
export function decodeCustomResource(object: JsonObject, schema: JSONSchemaProps): DecodeResult {
  const unknownFields = prune(object, schema);
  dropNulls(object, schema);
  applyDefaults(object, schema);
  return { unknownFields };
}

/** `strict decoding error: unknown field "spec.foo", unknown field "spec.bar"`, as the CR decoder words it. */
export function unknownFieldsMessage(paths: readonly string[]): string {
  return `strict decoding error: ${paths.map((p) => `unknown field ${goQuote(p)}`).join(", ")}`;
}

/** The Warning header text for one unknown field under `fieldValidation=Warn`. */
export function unknownFieldWarning(path: string): string {
  return `unknown field ${goQuote(path)}`;
}

// Upstream skips CEL when an earlier error shows the object's shape is wrong (cel.go's
// hasBlockingErr: Unsupported, Required, Too long, Too many, TypeInvalid), and says so only when the
// schema has rules to skip.
const blocking = new Set<FieldError["type"]>([
  "FieldValueNotSupported",
  "FieldValueRequired",
  "FieldValueTooLong",
  "FieldValueTooMany",
  "FieldValueTypeInvalid",
]);

/**
 * Validates a decoded custom resource against its version's schema: OpenAPI (kube-openapi's messages),
 * embedded resources, list-type set/map uniqueness (waived on update when the old object already broke it),
 * then `x-kubernetes-validations`. `old` is the stored object on update.
 */
export function validateCustomResource(
  object: JsonObject,
  schema: JSONSchemaProps,
  old?: JsonObject,
): FieldError[] {
  const errors = new SchemaErrors();
  validateOpenAPI(object, schema, errors);
  validateEmbeddedResources(object, schema, errors);
  const listErrors = new SchemaErrors();
  validateListTypes(object, schema, listErrors);
  if (listErrors.list.length > 0) {
    const oldErrors = new SchemaErrors();
    if (old) validateListTypes(old, schema, oldErrors);
    if (oldErrors.list.length === 0) errors.list.push(...listErrors.list);
  }
  if (!subtreeHas(schema, "rules")) return errors.list;
  if (errors.list.some((e) => blocking.has(e.type))) {
    errors.invalid(
      "",
      null,
      "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
    );
  } else {
    validateCEL(object, old, schema, errors);
  }
  return errors.list;
}

/**
 * Validates a `/status` write: the status schema on `.status` (errors keep the `status.` path), then list
 * types and CEL rules over the whole object.
 */
export function validateCustomResourceStatus(
  object: JsonObject,
  schema: JSONSchemaProps,
  old?: JsonObject,
): FieldError[] {
  const errors = new SchemaErrors();
  const statusSchema = schema.properties?.status;
  if (statusSchema && object.status !== undefined)
    validateOpenAPI(object.status, statusSchema, errors, "status");
  validateListTypes(object, schema, errors);
  if (errors.list.some((e) => blocking.has(e.type))) return errors.list;
  validateCEL(object, old, schema, errors);
  return errors.list;
}
