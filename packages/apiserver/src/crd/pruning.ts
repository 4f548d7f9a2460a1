import { additionalSchema, isObject, itemSchema, type JSONSchemaProps, type JsonObject } from "./schema.js";

/**
 * Removes every field the schema does not declare, in place, and returns the removed paths sorted
 * (`spec.foo`, `spec.list[0].bar`, `metadata.unknown`), which `fieldValidation=Strict|Warn` report.
 *
 * As apiextensions-apiserver's pruning: `apiVersion`, `kind` and `metadata` at the resource root and at
 * `x-kubernetes-embedded-resource` nodes are left to ObjectMeta coercion (only ObjectMeta's own fields stay);
 * `x-kubernetes-preserve-unknown-fields` keeps unknown keys at its node but still prunes declared children.
 */
export function prune(object: JsonObject, schema: JSONSchemaProps): string[] {
  const unknown: string[] = [];
  pruneObject(object, schema, "", true, unknown);
  return unknown.sort();
}

/**
 * Drops `null` values of properties whose schema is neither nullable nor defaulted, inside objects and maps
 * (never inside arrays), as the custom resource decoder does after pruning.
 */
export function dropNulls(value: unknown, schema: JSONSchemaProps | undefined): void {
  if (!schema) return;
  if (Array.isArray(value)) {
    const items = itemSchema(schema);
    for (const item of value) dropNulls(item, items);
    return;
  }
  if (!isObject(value)) return;
  for (const key in value) {
    const child = value[key];
    const childSchema = schema.properties?.[key] ?? additionalSchema(schema);
    if (child === null) {
      if (childSchema && !childSchema.nullable && childSchema.default === undefined) delete value[key];
      continue;
    }
    dropNulls(child, childSchema);
  }
}

/** ObjectMeta's fields: what metadata keeps after coercion through the real type. */
const objectMetaFields = new Set([
  "name",
  "generateName",
  "namespace",
  "selfLink",
  "uid",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "labels",
  "annotations",
  "ownerReferences",
  "finalizers",
  "managedFields",
]);

function pruneObject(
  object: JsonObject,
  schema: JSONSchemaProps,
  path: string,
  resource: boolean,
  unknown: string[],
): void {
  const preserve = schema["x-kubernetes-preserve-unknown-fields"] === true;
  const additional = schema.additionalProperties;
  // Paths are built only where they are needed: below objects and arrays, and for what is removed.
  for (const key of Object.keys(object)) {
    if (resource && (key === "apiVersion" || key === "kind")) continue;
    if (resource && key === "metadata") {
      pruneMetadata(object[key], childPath(path, key), unknown, path !== "");
      continue;
    }
    const declared =
      schema.properties?.[key] ?? (isObject(additional) ? (additional as JSONSchemaProps) : undefined);
    if (declared) {
      const value = object[key];
      if (typeof value === "object" && value !== null)
        pruneValue(value, declared, childPath(path, key), unknown);
    } else if (additional === true || preserve) {
      // kept as is: no schema below this key
    } else {
      delete object[key];
      unknown.push(childPath(path, key));
    }
  }
}

function pruneValue(value: unknown, schema: JSONSchemaProps, path: string, unknown: string[]): void {
  if (Array.isArray(value)) {
    const items = itemSchema(schema);
    if (!items) return;
    for (let i = 0; i < value.length; i++) {
      const item = value[i];
      if (typeof item === "object" && item !== null) pruneValue(item, items, `${path}[${i}]`, unknown);
    }
    return;
  }
  if (!isObject(value)) return;
  const embedded = schema["x-kubernetes-embedded-resource"] === true;
  pruneObject(value, schema, path, embedded, unknown);
}

function pruneMetadata(metadata: unknown, path: string, unknown: string[], embedded: boolean): void {
  if (!isObject(metadata)) return;
  for (const key of Object.keys(metadata)) {
    if (objectMetaFields.has(key)) continue;
    delete metadata[key];
    unknown.push(`${path}.${key}`);
  }
  // An embedded object's zero creationTimestamp is dropped by the coercion round trip.
  if (embedded && metadata.creationTimestamp === null) delete metadata.creationTimestamp;
}

function childPath(path: string, key: string): string {
  return path === "" ? key : `${path}.${key}`;
}
