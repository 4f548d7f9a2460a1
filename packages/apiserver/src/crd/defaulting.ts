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
  defaultValue(value, schema, true);
}

/**
 * The object as a read serves it: itself when it already carries every default its schema declares, else a
 * copy with them applied (apiextensions-apiserver defaults objects read from storage, so a default added to a
 * CRD shows on objects written before it).
 */
export function withDefaultsOnRead<T>(object: T, schema: JSONSchemaProps): T {
  if (!lacksDefaults(object, schema, true)) return object;
  const copy = copyJson(object);
  defaultValue(copy, schema, true);
  return copy;
}

/** Whether applying the defaults would change `value` (the same walk as {@link defaultValue}, changing nothing). */
function lacksDefaults(value: unknown, schema: JSONSchemaProps | undefined, root: boolean): boolean {
  if (!schema || !subtreeHas(schema, "defaults")) return false;
  if (Array.isArray(value)) {
    const items = itemSchema(schema);
    if (!items) return false;
    for (const item of value) {
      if (item === null && items.default !== undefined && !items.nullable) return true;
      if (lacksDefaults(item, items, false)) return true;
    }
    return false;
  }
  if (!isObject(value)) return false;
  for (const [key, property] of defaultedProperties(schema)) {
    if (root && key === "metadata") continue;
    const current = value[key];
    if (current === undefined || (current === null && !property.nullable)) return true;
  }
  const additional = additionalSchema(schema);
  for (const key in value) {
    if (root && key === "metadata") continue;
    const declared = schema.properties?.[key];
    if (declared !== undefined) {
      if (lacksDefaults(value[key], declared, false)) return true;
    } else if (additional !== undefined) {
      if (value[key] === null && additional.default !== undefined && !additional.nullable) return true;
      if (lacksDefaults(value[key], additional, false)) return true;
    }
  }
  return false;
}

function defaultValue(value: unknown, schema: JSONSchemaProps | undefined, root: boolean): void {
  if (!schema || !subtreeHas(schema, "defaults")) return;
  if (Array.isArray(value)) {
    const items = itemSchema(schema);
    if (!items) return;
    for (let i = 0; i < value.length; i++) {
      if (value[i] === null && items.default !== undefined && !items.nullable)
        value[i] = copyJson(items.default);
      defaultValue(value[i], items, false);
    }
    return;
  }
  if (!isObject(value)) return;
  for (const [key, property] of defaultedProperties(schema)) {
    if (root && key === "metadata") continue;
    const current = value[key];
    if (current === undefined || (current === null && !property.nullable)) {
      value[key] = copyJson(property.default);
    }
  }
  const additional = additionalSchema(schema);
  for (const key of Object.keys(value)) {
    if (root && key === "metadata") continue;
    const declared = schema.properties?.[key];
    if (declared) {
      defaultValue(value[key], declared, false);
    } else if (additional) {
      if (value[key] === null && additional.default !== undefined && !additional.nullable) {
        value[key] = copyJson(additional.default);
      }
      defaultValue(value[key], additional, false);
    }
  }
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
