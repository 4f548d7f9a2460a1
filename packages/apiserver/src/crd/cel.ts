import { Environment, Optional } from "@marcbachmann/cel-js";
import { type SchemaErrors, showValue } from "./errors.js";
import {
  additionalSchema,
  isObject,
  itemSchema,
  type JSONSchemaProps,
  subtreeHas,
  type ValidationRule,
} from "./schema.js";

/**
 * Evaluates the `x-kubernetes-validations` rules of a schema over an object (and its previous version on
 * update), adding failures in apiextensions-apiserver's format:
 * `spec: Invalid value: "object": replicas must be <= maxReplicas`, or `failed rule: <rule>` without a message.
 *
 * Rules never run on `null`. A rule that reads `oldSelf` (a transition rule) runs only on update, where the old
 * value is correlatable (object fields, map values, items of `x-kubernetes-list-type: map` lists matched by
 * key), unless `optionalOldSelf` makes `oldSelf` an optional that is empty on create.
 */
export function validateCEL(
  value: unknown,
  old: unknown,
  schema: JSONSchemaProps,
  errors: SchemaErrors,
  path = "",
): void {
  walk(value, old, schema, errors, path, true);
}

/** Compiles every rule of a schema, as CRD validation does; each failure names the rule's path. */
export function compileRules(schema: JSONSchemaProps, errors: SchemaErrors, path: string): void {
  (schema["x-kubernetes-validations"] ?? []).forEach((rule, i) => {
    const at = `${path}.x-kubernetes-validations[${i}]`;
    if (typeof rule.rule !== "string" || rule.rule.trim() === "") {
      errors.required(`${at}.rule`);
      return;
    }
    const compiled = compile(rule.rule);
    if (compiled instanceof Error) {
      errors.invalid(`${at}.rule`, rule, `compilation failed: ERROR: ${firstLine(compiled.message)}`);
    } else if (compiled.type !== "bool" && compiled.type !== "dyn") {
      errors.invalid(`${at}.rule`, rule, "cel expression must evaluate to a bool");
    }
    if (rule.rule.includes("\n") && !rule.message) {
      errors.required(`${at}.rule`, "message must be specified if rule contains line breaks");
    }
    if (rule.message !== undefined && (rule.message.trim() === "" || rule.message.includes("\n"))) {
      errors.invalid(
        `${at}.message`,
        rule.message,
        rule.message.trim() === ""
          ? "message must be non-empty if specified"
          : "message must not contain line breaks",
      );
    }
    if (rule.messageExpression !== undefined) {
      const message = compile(rule.messageExpression);
      if (message instanceof Error) {
        errors.invalid(
          `${at}.messageExpression`,
          rule.messageExpression,
          `messageExpression compilation failed: ERROR: ${firstLine(message.message)}`,
        );
      } else if (message.type !== "string" && message.type !== "dyn") {
        errors.invalid(
          `${at}.messageExpression`,
          rule.messageExpression,
          "messageExpression must evaluate to a string",
        );
      }
    }
    if (rule.reason !== undefined && !reasons.has(rule.reason)) {
      errors.notSupported(`${at}.reason`, rule.reason, [...reasons].sort());
    }
    if (rule.optionalOldSelf && !usesOldSelf(rule.rule)) {
      errors.invalid(`${at}.optionalOldSelf`, true, "may not be set if oldSelf is not used in rule");
    }
    if (rule.fieldPath !== undefined && !/^(\.[A-Za-z_][\w-]*|\['[^']+'\])+$/.test(rule.fieldPath)) {
      errors.invalid(`${at}.fieldPath`, rule.fieldPath, "fieldPath must be a valid path");
    }
  });
}

const reasons = new Set([
  "FieldValueInvalid",
  "FieldValueForbidden",
  "FieldValueRequired",
  "FieldValueDuplicate",
]);

const environment = new Environment({ enableOptionalTypes: true, homogeneousAggregateLiterals: true })
  .registerVariable("self", "dyn")
  .registerVariable("oldSelf", "dyn");

interface Compiled {
  type: string;
  run: (context: Record<string, unknown>) => unknown;
}
const programs = new Map<string, Compiled | Error>();

function compile(expression: string): Compiled | Error {
  let program = programs.get(expression);
  if (program) return program;
  try {
    const parsed = environment.parse(expression);
    const checked = parsed.check();
    if (!checked.valid) program = checked.error ?? new Error("type check failed");
    else program = { type: checked.type ?? "dyn", run: (context) => parsed(context) };
  } catch (error) {
    program = error instanceof Error ? error : new Error(String(error));
  }
  programs.set(expression, program);
  return program;
}

function walk(
  value: unknown,
  old: unknown,
  schema: JSONSchemaProps,
  errors: SchemaErrors,
  path: string,
  resource: boolean,
): void {
  if (value === null || value === undefined || !subtreeHas(schema, "rules")) return;
  const rules = schema["x-kubernetes-validations"];
  if (rules?.length) {
    const self = toCEL(value, schema, resource);
    const oldSelf = old === undefined || old === null ? undefined : toCEL(old, schema, resource);
    for (const rule of rules) evaluate(rule, self, oldSelf, schema, errors, path);
  }
  if (Array.isArray(value)) {
    const items = itemSchema(schema);
    if (!items) return;
    const keys =
      schema["x-kubernetes-list-type"] === "map" ? (schema["x-kubernetes-list-map-keys"] ?? []) : undefined;
    value.forEach((item, i) => {
      const correlated = keys && Array.isArray(old) ? old.find((o) => sameKeys(o, item, keys)) : undefined;
      walk(
        item,
        correlated,
        items,
        errors,
        `${path}[${i}]`,
        items["x-kubernetes-embedded-resource"] === true,
      );
    });
    return;
  }
  if (!isObject(value)) return;
  const additional = additionalSchema(schema);
  for (const [key, child] of Object.entries(value)) {
    if (resource && key === "metadata") continue;
    const childSchema = schema.properties?.[key] ?? additional;
    if (!childSchema) continue;
    const oldChild = isObject(old) ? old[key] : undefined;
    const childPath = path === "" ? key : `${path}.${key}`;
    walk(
      child,
      oldChild,
      childSchema,
      errors,
      childPath,
      childSchema["x-kubernetes-embedded-resource"] === true,
    );
  }
}

function evaluate(
  rule: ValidationRule,
  self: unknown,
  oldSelf: unknown,
  schema: JSONSchemaProps,
  errors: SchemaErrors,
  path: string,
): void {
  const transition = usesOldSelf(rule.rule);
  if (transition && oldSelf === undefined && !rule.optionalOldSelf) return;
  const program = compile(rule.rule);
  if (program instanceof Error) return; // rejected when the CRD was written
  const context: Record<string, unknown> = { self };
  if (transition) context.oldSelf = rule.optionalOldSelf ? optional(oldSelf) : oldSelf;
  const field = rule.fieldPath ? joinFieldPath(path, rule.fieldPath) : path;
  const shown = schemaTypeName(schema);
  const subject = rule.message ?? rule.rule;
  let result: unknown;
  try {
    result = program.run(context);
  } catch (error) {
    const detail = `${lowerFirst(firstLine(error instanceof Error ? error.message : String(error)))} evaluating rule: ${subject}`;
    errors.invalid(field, shown, detail);
    return;
  }
  if (result === true) return;
  const detail = messageFor(rule, context) ?? `failed rule: ${rule.rule}`;
  switch (rule.reason ?? "FieldValueInvalid") {
    case "FieldValueForbidden":
      errors.forbidden(field, detail);
      return;
    case "FieldValueRequired":
      errors.required(field, detail);
      return;
    case "FieldValueDuplicate":
      errors.duplicate(field, shown);
      return;
    default:
      errors.push("FieldValueInvalid", field, `Invalid value: ${showValue(shown)}: ${detail}`);
  }
}

/** The detail of a failed rule: the messageExpression's result when usable, else `message`. */
function messageFor(rule: ValidationRule, context: Record<string, unknown>): string | undefined {
  if (rule.messageExpression) {
    const program = compile(rule.messageExpression);
    if (!(program instanceof Error)) {
      try {
        const text = program.run(context);
        if (typeof text === "string" && text.trim() !== "" && !text.includes("\n") && text.length <= 5120) {
          return text.trim();
        }
      } catch {
        // upstream falls back to message or the rule
      }
    }
  }
  return rule.message;
}

/**
 * A JSON value as CEL sees it under its schema: integers are CEL ints (BigInt), numbers doubles, object
 * properties renamed by the CEL escaping rules (`namespace` → `__namespace__`, `a-b` → `a__dash__b`), and a
 * resource root shows only apiVersion, kind, metadata.name and metadata.generateName.
 */
function toCEL(value: unknown, schema: JSONSchemaProps | undefined, resource: boolean): unknown {
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
  if (!isObject(value)) return value;
  const out: Record<string, unknown> = {};
  const additional = schema ? additionalSchema(schema) : undefined;
  for (const [key, child] of Object.entries(value)) {
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

const celKeywords = new Set(
  "true false null in as break const continue else for function if import let loop package namespace return var void while".split(
    " ",
  ),
);

/** apiserver's CEL property-name escaping; undefined for names CEL cannot reach. */
export function escapeProperty(name: string): string | undefined {
  if (celKeywords.has(name)) return `__${name}__`;
  if (!/^[A-Za-z_][A-Za-z0-9_.\-/]*$/.test(name)) return undefined;
  return name
    .replaceAll("__", "__underscores__")
    .replaceAll(".", "__dot__")
    .replaceAll("-", "__dash__")
    .replaceAll("/", "__slash__");
}

function optional(value: unknown): Optional<unknown> {
  return value === undefined ? Optional.none() : Optional.of(value);
}

function usesOldSelf(rule: string): boolean {
  return /\boldSelf\b/.test(rule);
}

function sameKeys(a: unknown, b: unknown, keys: readonly string[]): boolean {
  return isObject(a) && isObject(b) && keys.every((k) => JSON.stringify(a[k]) === JSON.stringify(b[k]));
}

/** The value a CEL error shows: the node's schema type, `""` for int-or-string. */
function schemaTypeName(schema: JSONSchemaProps): string {
  return schema["x-kubernetes-int-or-string"] ? "" : (schema.type ?? "");
}

/** `.spec.x` or `['a.b']` relative to the node path, rendered as field.Path renders it. */
function joinFieldPath(path: string, fieldPath: string): string {
  let out = path;
  for (const match of fieldPath.matchAll(/\.([^.[]+)|\['([^']+)'\]/g)) {
    const name = match[1] ?? match[2] ?? "";
    out = out === "" ? name : `${out}.${name}`;
  }
  return out;
}

function firstLine(text: string): string {
  return text.split("\n")[0] ?? text;
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}
