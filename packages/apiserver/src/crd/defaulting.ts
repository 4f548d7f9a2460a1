import {
  additionalSchema,
  copyJson,
  isObject,
  itemSchema,
  type JSONSchemaProps,
  subtreeHas,
} from "./schema.js";

/**
 * Applies the schema's defaults in place, as apiextensions-apiserver's structural defaulting: a property with
 * a `default` is set when absent, or when it is `null` and the property is not nullable; defaulting then recurses
 * into every present key, just-defaulted ones included. `null` items of arrays and of `additionalProperties`
 * maps take the item or value default the same way. The root's `metadata` is never defaulted.
 */
export function applyDefaults(value: unknown, schema: JSONSchemaProps): void {
  defaultValue(value, schema, true, true);
}

/**
 * The object as a read serves it: itself when it already carries every default its schema declares, else a
 * copy with them applied (apiextensions-apiserver defaults objects read from storage, so a default added to a
 * CRD shows on objects written before it).
 */
export function withDefaultsOnRead<T>(object: T, schema: JSONSchemaProps): T {
  if (!defaultValue(object, schema, true, false)) return object;
  const copy = copyJson(object);
  defaultValue(copy, schema, true, true);
  return copy;
}

/**
 * Whether a default is due anywhere in `value`: with `apply`, every due default is set; without, the walk
 * only looks and stops at the first.
 */
function defaultValue(
  value: unknown,
  schema: JSONSchemaProps | undefined,
  root: boolean,
  apply: boolean,
): boolean {
  if (!schema || !subtreeHas(schema, "defaults")) return false;
  let due = false;
  if (Array.isArray(value)) {
    const items = itemSchema(schema);
    if (!items) return false;
    for (let i = 0; i < value.length; i++) {
      if (value[i] === null && items.default !== undefined && !items.nullable) {
        if (!apply) return true;
        value[i] = copyJson(items.default);
        due = true;
      }
      if (defaultValue(value[i], items, false, apply)) {
        if (!apply) return true;
        due = true;
      }
    }
    return due;
  }
  if (!isObject(value)) return false;
  for (const [key, property] of defaultedProperties(schema)) {
    if (root && key === "metadata") continue;
    const current = value[key];
    if (current === undefined || (current === null && !property.nullable)) {
      if (!apply) return true;
      value[key] = copyJson(property.default);
      due = true;
    }
  }
  const additional = additionalSchema(schema);
  for (const key of Object.keys(value)) {
    if (root && key === "metadata") continue;
    let childSchema = schema.properties?.[key];
    if (childSchema === undefined && additional !== undefined) {
      childSchema = additional;
      if (value[key] === null && additional.default !== undefined && !additional.nullable) {
        if (!apply) return true;
        value[key] = copyJson(additional.default);
        due = true;
      }
    }
    if (childSchema !== undefined && defaultValue(value[key], childSchema, false, apply)) {
      if (!apply) return true;
      due = true;
    }
  }
  return due;
}

/** The properties of a schema that declare a default, listed once per schema (schemas do not change). */
function defaultedProperties(schema: JSONSchemaProps): readonly [string, JSONSchemaProps][] {
  let list = defaulted.get(schema);
  if (list === undefined) {
    list = Object.entries(schema.properties ?? {}).filter(([, property]) => property.default !== undefined);
    defaulted.set(schema, list);
  }
  return list;
}

const defaulted = new WeakMap<JSONSchemaProps, readonly [string, JSONSchemaProps][]>();
