import { jsonEqual } from "@reconcile/api";
import { checkedFormat } from "./formats.js";
import { re2Matches } from "./re2.js";
import {
  additionalSchema,
  isIntOrStringIdiom,
  isObject,
  itemSchema,
  type JSONSchemaProps,
} from "./schema.js";

/** One failure, in the shape of Ajv's `ErrorObject` that the validator turns into a Kubernetes message. */
export interface SchemaFailure {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
}

/**
 * Validates without compiling: walks `value` beside `schema` and reports
 * what Ajv (`allErrors`) reports for the same draft-07 restatement of a
 * Kubernetes schema, in Ajv's order: the type; then `enum`, `not`, `anyOf`,
 * `oneOf`, `allOf`; then the number, string, array and object keywords. A
 * schema of thousands of properties costs nothing up front (compiling it
 * took seconds of one event loop), and the work per object is bounded by
 * the object, not the schema.
 */
export function interpretSchema(value: unknown, schema: JSONSchemaProps): SchemaFailure[] {
  const failures: SchemaFailure[] = [];
  check(value, schema, "", failures);
  return failures;
}

function check(value: unknown, schema: JSONSchemaProps, pointer: string, out: SchemaFailure[]): void {
  const fail = (keyword: string, params: Record<string, unknown>) =>
    out.push({ keyword, instancePath: pointer, params });
  const intOrString = schema["x-kubernetes-int-or-string"] === true;
  let types: string[] | undefined = intOrString
    ? ["integer", "string"]
    : schema.type
      ? [schema.type]
      : undefined;
  if (types && schema.nullable) types = [...types, "null"];
  // Ajv checks a single type with keywords of its own group (a string with a pattern) where that
  // group runs, after the keywords of any type; other types it checks first.
  const deferred = types?.length === 1 && groupUsed(schema, types[0]!) ? types[0] : undefined;
  const typeFailure = () => fail("type", { type: types!.length === 1 ? types![0] : types });
  if (types && deferred === undefined && !types.some((type) => hasType(value, type))) typeFailure();
  // Keywords of any type.
  if (schema.enum) {
    const allowed = schema.nullable ? [...schema.enum, null] : schema.enum;
    if (!allowed.some((candidate) => jsonEqual(candidate, value))) fail("enum", { allowedValues: allowed });
  }
  if (schema.not) {
    const inner: SchemaFailure[] = [];
    check(value, schema.not, pointer, inner);
    if (inner.length === 0) fail("not", {});
  }
  if (schema.anyOf && !(intOrString && isIntOrStringIdiom(schema.anyOf))) {
    const before = out.length;
    let passed = false;
    for (const branch of schema.anyOf) {
      const start = out.length;
      check(value, branch, pointer, out);
      if (out.length === start) passed = true;
    }
    if (passed) out.length = before;
    else fail("anyOf", {});
  }
  if (schema.oneOf) {
    const before = out.length;
    const passing: number[] = [];
    // As Ajv: the second branch that passes settles it, and later branches are not looked at.
    for (let i = 0; i < schema.oneOf.length && passing.length < 2; i++) {
      const start = out.length;
      check(value, schema.oneOf[i]!, pointer, out);
      if (out.length === start) passing.push(i);
    }
    if (passing.length === 1) out.length = before;
    else fail("oneOf", { passingSchemas: passing.length > 1 ? passing : null });
  }
  if (schema.allOf && !(intOrString && isIntOrStringIdiom(schema.allOf[0]?.anyOf))) {
    for (const branch of schema.allOf) check(value, branch, pointer, out);
  }
  for (const group of ["number", "string", "array", "object"] as const) {
    if (!groupUsed(schema, group)) continue;
    if (!hasGroupType(value, group)) {
      if (deferred === group) typeFailure();
      continue;
    }
    if (group === "number") checkNumber(value as number, schema, fail);
    else if (group === "string") checkString(value as string, schema, fail);
    else if (group === "array") checkArray(value as unknown[], schema, pointer, out, fail);
    else checkObject(value as Record<string, unknown>, schema, pointer, out, fail);
  }
}

/** Whether the schema has a keyword of Ajv's group of `type` (integer, boolean and null have none). */
function groupUsed(schema: JSONSchemaProps, type: string): boolean {
  switch (type) {
    case "number":
      return schema.maximum !== undefined || schema.minimum !== undefined || schema.multipleOf !== undefined;
    case "string":
      return (
        schema.maxLength !== undefined ||
        schema.minLength !== undefined ||
        schema.pattern !== undefined ||
        checkedFormat(schema) !== undefined
      );
    case "array":
      return (
        schema.maxItems !== undefined || schema.minItems !== undefined || itemSchema(schema) !== undefined
      );
    case "object":
      return (
        schema.maxProperties !== undefined ||
        schema.minProperties !== undefined ||
        schema.required !== undefined ||
        schema.properties !== undefined ||
        additionalSchema(schema) !== undefined
      );
    default:
      return false;
  }
}

function hasGroupType(value: unknown, group: "number" | "string" | "array" | "object"): boolean {
  if (group === "number") return typeof value === "number";
  if (group === "string") return typeof value === "string";
  if (group === "array") return Array.isArray(value);
  return isObject(value);
}

function checkArray(
  value: unknown[],
  schema: JSONSchemaProps,
  pointer: string,
  out: SchemaFailure[],
  fail: (k: string, p: Record<string, unknown>) => void,
): void {
  if (schema.maxItems !== undefined && value.length > schema.maxItems)
    fail("maxItems", { limit: schema.maxItems });
  if (schema.minItems !== undefined && value.length < schema.minItems)
    fail("minItems", { limit: schema.minItems });
  const items = itemSchema(schema);
  if (items) for (const [i, item] of value.entries()) check(item, items, `${pointer}/${i}`, out);
}

function checkNumber(
  value: number,
  schema: JSONSchemaProps,
  fail: (k: string, p: Record<string, unknown>) => void,
) {
  // Ajv's order: maximum, minimum, exclusiveMaximum, exclusiveMinimum, multipleOf.
  const { maximum, minimum } = schema;
  if (maximum !== undefined && !schema.exclusiveMaximum && !(value <= maximum)) {
    fail("maximum", { comparison: "<=", limit: maximum });
  }
  if (minimum !== undefined && !schema.exclusiveMinimum && !(value >= minimum)) {
    fail("minimum", { comparison: ">=", limit: minimum });
  }
  if (maximum !== undefined && schema.exclusiveMaximum && !(value < maximum)) {
    fail("exclusiveMaximum", { comparison: "<", limit: maximum });
  }
  if (minimum !== undefined && schema.exclusiveMinimum && !(value > minimum)) {
    fail("exclusiveMinimum", { comparison: ">", limit: minimum });
  }
  if (schema.multipleOf !== undefined) {
    // Ajv's test without multipleOfPrecision: the quotient must be what parseInt makes of it.
    const quotient = value / schema.multipleOf;
    if (quotient !== Number.parseInt(String(quotient), 10))
      fail("multipleOf", { multipleOf: schema.multipleOf });
  }
}

function checkString(
  value: string,
  schema: JSONSchemaProps,
  fail: (k: string, p: Record<string, unknown>) => void,
) {
  if (schema.maxLength !== undefined || schema.minLength !== undefined) {
    const length = codePoints(value);
    if (schema.maxLength !== undefined && length > schema.maxLength)
      fail("maxLength", { limit: schema.maxLength });
    if (schema.minLength !== undefined && length < schema.minLength)
      fail("minLength", { limit: schema.minLength });
  }
  if (schema.pattern !== undefined && !re2Matches(value, schema.pattern))
    fail("pattern", { pattern: schema.pattern });
  const valid = checkedFormat(schema);
  if (valid !== undefined && !valid(value)) fail("format", { format: schema.format });
}

function checkObject(
  value: Record<string, unknown>,
  schema: JSONSchemaProps,
  pointer: string,
  out: SchemaFailure[],
  fail: (k: string, p: Record<string, unknown>) => void,
): void {
  const count = Object.keys(value).length;
  if (schema.maxProperties !== undefined && count > schema.maxProperties) {
    fail("maxProperties", { limit: schema.maxProperties });
  }
  if (schema.minProperties !== undefined && count < schema.minProperties) {
    fail("minProperties", { limit: schema.minProperties });
  }
  for (const name of schema.required ?? []) {
    if (value[name] === undefined) fail("required", { missingProperty: name });
  }
  const properties = schema.properties ?? {};
  const additional = additionalSchema(schema);
  if (additional) {
    for (const key of Object.keys(value)) {
      if (!Object.hasOwn(properties, key))
        check(value[key], additional, `${pointer}/${escapePointer(key)}`, out);
    }
  }
  for (const [name, child] of Object.entries(properties)) {
    if (value[name] !== undefined) check(value[name], child, `${pointer}/${escapePointer(name)}`, out);
  }
}

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case "null":
      return value === null;
    case "string":
      return typeof value === "string";
    case "boolean":
      return typeof value === "boolean";
    case "integer":
      return typeof value === "number" && Number.isInteger(value);
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "array":
      return Array.isArray(value);
    case "object":
      return isObject(value);
    default:
      return true;
  }
}

function codePoints(text: string): number {
  let length = 0;
  for (const _ of text) length++;
  return length;
}

function escapePointer(key: string): string {
  return key.replaceAll("~", "~0").replaceAll("/", "~1");
}
