import { Environment } from "@marcbachmann/cel-js";
import { additionalSchema, isObject, itemSchema, type JSONSchemaProps } from "./schema.js";

/**
 * A JSON value as CEL sees it under its schema: integers are CEL ints (BigInt), numbers doubles, object
 * properties renamed by the CEL escaping rules (`namespace` → `__namespace__`, `a-b` → `a__dash__b`), and a
 * resource root shows only apiVersion, kind, metadata.name and metadata.generateName.
 */
export function toCEL(value: unknown, schema: JSONSchemaProps | undefined, resource: boolean): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === "number") {
    const integer =
      schema?.type === "integer" ||
      (schema?.["x-kubernetes-int-or-string"] === true && Number.isInteger(value));
    return integer ? BigInt(value) : value;
  }
  if (Array.isArray(value)) {
    const items = schema ? itemSchema(schema) : undefined;
    return value.map((item) => toCEL(item, items, items?.["x-kubernetes-embedded-resource"] === true));
  }
  if (typeof value === "string")
    return schema?.format === undefined ? value : formatted(value, schema.format);
  if (!isObject(value)) return value;
  const out: Record<string, unknown> = {};
  const additional = schema ? additionalSchema(schema) : undefined;
  for (const key in value) {
    const child = value[key];
    if (resource && key === "metadata") {
      if (isObject(child)) {
        const meta: Record<string, unknown> = {};
        if (child.name !== undefined) meta.name = child.name;
        if (child.generateName !== undefined) meta.generateName = child.generateName;
        out.metadata = meta;
      }
      continue;
    }
    const declared = schema?.properties?.[key];
    if (declared) {
      const name = escapeProperty(key);
      if (name !== undefined)
        out[name] = toCEL(child, declared, declared["x-kubernetes-embedded-resource"] === true);
    } else if (additional || !schema?.properties) {
      out[key] = toCEL(child, additional, false);
    }
  }
  return out;
}

const durationOf = new Environment().registerVariable("text", "string").parse("duration(text)");

/**
 * A string as CEL sees it under its format: `byte` → bytes, `duration` →
 * duration, `date`/`date-time` → timestamp. Format validation ran first; a
 * value that still does not parse stays a string.
 */
function formatted(value: string, format: string): unknown {
  switch (format) {
    case "byte":
      return new Uint8Array(Buffer.from(value, "base64"));
    case "duration":
      try {
        return durationOf({ text: value });
      } catch {
        return value;
      }
    case "date":
    case "date-time": {
      const time = new Date(value);
      return Number.isNaN(time.getTime()) ? value : time;
    }
    default:
      return value;
  }
}

const celKeywords = new Set(
  "true false null in as break const continue else for function if import let loop package namespace return var void while".split(
    " ",
  ),
);

/** apiserver's CEL property-name escaping; undefined for names CEL cannot reach. */
export function escapeProperty(name: string): string | undefined {
  // The same few field names recur in every object of a kind: escape each once.
  const known = escaped.get(name);
  if (known !== undefined || escaped.has(name)) return known;
  const result = escapeName(name);
  if (escaped.size >= maxEscaped) escaped.clear();
  escaped.set(name, result);
  return result;
}

const escaped = new Map<string, string | undefined>();
const maxEscaped = 10_000;

function escapeName(name: string): string | undefined {
  if (celKeywords.has(name)) return `__${name}__`;
  if (!/^[A-Za-z_][A-Za-z0-9_.\-/]*$/.test(name)) return undefined;
  return name
    .replaceAll("__", "__underscores__")
    .replaceAll(".", "__dot__")
    .replaceAll("-", "__dash__")
    .replaceAll("/", "__slash__");
}
