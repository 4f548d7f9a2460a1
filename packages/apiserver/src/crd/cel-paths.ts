import { additionalSchema, type JSONSchemaProps } from "./schema.js";

/**
 * Whether a rule's fieldPath is `.name` / `['name']` steps that each name a property the schema declares (or
 * any key under additionalProperties), as upstream's ValidFieldPath requires; list indices are not allowed.
 */
export function fieldPathResolves(schema: JSONSchemaProps, fieldPath: string): boolean {
  if (!/^(\.[A-Za-z_][\w-]*|\['[^']+'\])+$/.test(fieldPath)) return false;
  let node: JSONSchemaProps | undefined = schema;
  for (const match of fieldPath.matchAll(/\.([^.[]+)|\['([^']+)'\]/g)) {
    const name = match[1] ?? match[2] ?? "";
    node = node?.properties?.[name] ?? additionalSchema(node ?? {});
    if (!node) return false;
  }
  return true;
}

/** `.spec.x` or `['a.b']` relative to the node path, rendered as field.Path renders it. */
export function joinFieldPath(path: string, fieldPath: string): string {
  let out = path;
  for (const match of fieldPath.matchAll(/\.([^.[]+)|\['([^']+)'\]/g)) {
    const name = match[1] ?? match[2] ?? "";
    out = out === "" ? name : `${out}.${name}`;
  }
  return out;
}
