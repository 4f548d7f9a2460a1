import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { type SchemaErrors, showValue } from "./errors.js";
import { checkedFormat, validatedFormats } from "./formats.js";
import { interpretSchema, type SchemaFailure } from "./interpreted-validation.js";
import { re2Engine } from "./re2.js";
import {
  additionalSchema,
  isIntOrStringIdiom,
  isObject,
  itemSchema,
  type JSONSchemaProps,
  subtreeHas,
} from "./schema.js";

/**
 * Validates a value against a structural schema with kube-openapi's messages, e.g.
 * `spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"`.
 * `path` is the field path of `value` (empty for a whole object).
 */
export function validateOpenAPI(
  value: unknown,
  schema: JSONSchemaProps,
  errors: SchemaErrors,
  path = "",
  engine: "auto" | "compiled" | "interpreted" = "auto",
): void {
  const interpret = engine === "interpreted" || (engine === "auto" && isLarge(schema));
  // A schema Ajv cannot compile is interpreted: the interpreter reports what Ajv would.
  const validate = interpret ? undefined : compiled(schema);
  if (validate === undefined) {
    for (const failure of interpretSchema(value, schema)) report(failure, value, path, errors);
    return;
  }
  if (validate(value)) return;
  for (const error of validate.errors ?? []) report(error, value, path, errors);
}

/**
 * Does, once and ahead of the first object, the work a schema's validation
 * would do on first use: compiles it (or finds it is to be interpreted) and
 * notes which of its subtrees hold list types, embedded resources, rules and
 * defaults. The CRD controller calls it when it starts serving a version, so
 * no request pays for it.
 */
export function prepareValidation(schema: JSONSchemaProps): void {
  if (!isLarge(schema)) compiled(schema);
  for (const feature of ["listTypes", "embedded", "rules", "defaults"] as const) subtreeHas(schema, feature);
  const status = schema.properties?.status;
  if (isObject(status) && !isLarge(status)) compiled(status);
}

/**
 * Schemas of more nodes than this, or nesting deeper than {@link compileDepthLimit}, are
 * interpreted rather than compiled: Ajv compiles about 4,000 nodes a second, all in one turn of
 * the event loop, so a wide schema (10,000 properties) blocked every request for seconds, and its
 * code generation slows with depth (a 250-deep chain took 60 ms).
 */
const compileLimit = 256;
const compileDepthLimit = 32;
const sizes = new WeakMap<JSONSchemaProps, boolean>();

function isLarge(schema: JSONSchemaProps): boolean {
  let large = sizes.get(schema);
  if (large === undefined) {
    // Counted without recursion, stopping at a limit: the count is bounded whatever the schema.
    let nodes = 0;
    let deepest = 0;
    const stack: Array<[unknown, number]> = [[schema, 1]];
    while (stack.length > 0 && nodes <= compileLimit && deepest <= compileDepthLimit) {
      const [node, depth] = stack.pop()!;
      if (!isObject(node)) continue;
      nodes++;
      deepest = Math.max(deepest, depth);
      const s = node as JSONSchemaProps;
      const children: unknown[] = [
        ...Object.values(s.properties ?? {}),
        s.items,
        s.additionalProperties,
        s.not,
      ];
      for (const list of [s.allOf, s.anyOf, s.oneOf]) if (list) children.push(...list);
      for (const child of children) if (isObject(child)) stack.push([child, depth + 1]);
    }
    large = nodes > compileLimit || deepest > compileDepthLimit;
    sizes.set(schema, large);
  }
  return large;
}

/**
 * Duplicates in `x-kubernetes-list-type: set` and `map` lists: only the second and later occurrences are
 * reported, `spec.tags[2]: Duplicate value: "a"`, and for maps the value holds every key field.
 */
export function validateListTypes(
  value: unknown,
  schema: JSONSchemaProps,
  errors: SchemaErrors,
  path = "",
): void {
  if (value === null || value === undefined || !subtreeHas(schema, "listTypes")) return;
  if (Array.isArray(value)) {
    const items = itemSchema(schema);
    const listType = schema["x-kubernetes-list-type"];
    if (listType === "set" || listType === "map") {
      const keys = schema["x-kubernetes-list-map-keys"] ?? [];
      const seen = new Set<string>();
      value.forEach((item, i) => {
        const identity =
          listType === "set"
            ? item
            : Object.fromEntries(keys.map((k) => [k, isObject(item) ? (item[k] ?? null) : null]));
        const key =
          typeof identity === "object" && identity !== null
            ? JSON.stringify(identity)
            : `${typeof identity}:${identity}`;
        if (seen.has(key)) errors.duplicate(`${path}[${i}]`, identity);
        seen.add(key);
      });
    }
    if (items)
      for (const [i, item] of value.entries()) validateListTypes(item, items, errors, `${path}[${i}]`);
    return;
  }
  if (!isObject(value)) return;
  const additional = additionalSchema(schema);
  for (const key in value) {
    const childSchema = schema.properties?.[key] ?? additional;
    if (childSchema && subtreeHas(childSchema, "listTypes"))
      validateListTypes(value[key], childSchema, errors, join(path, key));
  }
}

/**
 * `x-kubernetes-embedded-resource` objects need `apiVersion` and `kind`, and the kind, lower-cased, must be a
 * DNS-1035 label (apiextensions-apiserver's embedded-resource validation).
 */
export function validateEmbeddedResources(
  value: unknown,
  schema: JSONSchemaProps,
  errors: SchemaErrors,
  path = "",
): void {
  if (!subtreeHas(schema, "embedded")) return;
  if (Array.isArray(value)) {
    const items = itemSchema(schema);
    if (items)
      for (const [i, item] of value.entries())
        validateEmbeddedResources(item, items, errors, `${path}[${i}]`);
    return;
  }
  if (!isObject(value)) return;
  if (schema["x-kubernetes-embedded-resource"] === true) {
    if (typeof value.apiVersion !== "string" || value.apiVersion === "") {
      errors.required(join(path, "apiVersion"), "must not be empty");
    }
    if (typeof value.kind !== "string" || value.kind === "") {
      errors.required(join(path, "kind"), "must not be empty");
    } else if (!/^[a-z]([-a-z0-9]*[a-z0-9])?$/.test(value.kind.toLowerCase())) {
      errors.invalid(
        join(path, "kind"),
        value.kind,
        "may have mixed case, but should otherwise match: [a-z]([-a-z0-9]*[a-z0-9])?",
      );
    }
  }
  const additional = additionalSchema(schema);
  for (const [key, child] of Object.entries(value)) {
    const childSchema = schema.properties?.[key] ?? additional;
    if (childSchema) validateEmbeddedResources(child, childSchema, errors, join(path, key));
  }
}

// `pattern` runs on RE2 (linear time), as kube-apiserver's Go regexp does.
// The schema is not checked against JSON Schema's meta-schema: the CRD's own validation has checked it
// (structural rules, typed decoding of JSONSchemaProps), and the meta-schema's check is quadratic in an
// enum's length (20,000 values took 1.5 s).
const ajv = new Ajv({
  allErrors: true,
  strict: false,
  validateFormats: true,
  validateSchema: false,
  code: { regExp: re2Engine },
});
for (const [name, check] of validatedFormats) ajv.addFormat(name, { type: "string", validate: check });

/** Each schema's compiled validator, or `null` where compiling failed (remembered too: it is tried once). */
const cache = new WeakMap<JSONSchemaProps, ValidateFunction | null>();

function compiled(schema: JSONSchemaProps): ValidateFunction | undefined {
  let validate = cache.get(schema);
  if (validate === undefined) {
    try {
      validate = ajv.compile(toAjv(schema));
    } catch {
      validate = null;
    }
    cache.set(schema, validate);
  }
  return validate ?? undefined;
}

/**
 * Restates a Kubernetes schema in JSON Schema draft-07: nullable and int-or-string become type lists, the
 * boolean exclusive bounds become numeric ones, formats kube-openapi does not check are dropped, extensions
 * and documentation are left out. Pruning already removed undeclared fields, so `additionalProperties` is
 * only carried when it is a schema.
 */
function toAjv(schema: JSONSchemaProps): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const intOrString = schema["x-kubernetes-int-or-string"] === true;
  let types: string[] | undefined = intOrString
    ? ["integer", "string"]
    : schema.type
      ? [schema.type]
      : undefined;
  if (types && schema.nullable) types = [...types, "null"];
  if (types) out.type = types.length === 1 ? types[0] : types;
  const check = checkedFormat(schema);
  if (schema.format && check) {
    // Registered under the schema's own spelling, so the message names the format as the schema does.
    if (!ajv.formats[schema.format]) ajv.addFormat(schema.format, { type: "string", validate: check });
    out.format = schema.format;
  }
  if (schema.enum) out.enum = schema.nullable ? [...schema.enum, null] : schema.enum;
  if (schema.maximum !== undefined) {
    if (schema.exclusiveMaximum) out.exclusiveMaximum = schema.maximum;
    else out.maximum = schema.maximum;
  }
  if (schema.minimum !== undefined) {
    if (schema.exclusiveMinimum) out.exclusiveMinimum = schema.minimum;
    else out.minimum = schema.minimum;
  }
  for (const key of [
    "multipleOf",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "maxProperties",
    "minProperties",
    "required",
  ] as const) {
    if (schema[key] !== undefined) out[key] = schema[key];
  }
  const items = itemSchema(schema);
  if (items) out.items = toAjv(items);
  if (schema.properties) {
    out.properties = Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k, toAjv(v)]));
  }
  const additional = additionalSchema(schema);
  if (additional) out.additionalProperties = toAjv(additional);
  // The int-or-string idiom `anyOf: [{type: integer}, {type: string}]` is what the type list already says.
  if (schema.allOf && !(intOrString && isIntOrStringIdiom(schema.allOf[0]?.anyOf))) {
    out.allOf = schema.allOf.map(toAjv);
  }
  if (schema.anyOf && !(intOrString && isIntOrStringIdiom(schema.anyOf))) out.anyOf = schema.anyOf.map(toAjv);
  if (schema.oneOf) out.oneOf = schema.oneOf.map(toAjv);
  if (schema.not) out.not = toAjv(schema.not);
  return out;
}

function report(error: ErrorObject | SchemaFailure, root: unknown, base: string, errors: SchemaErrors): void {
  const { path, value } = locate(root, error.instancePath, base);
  // The detail names the datum relative to the validated value (a /status write says `replicas`, at `status.replicas`).
  const name = locate(root, error.instancePath, "").path;
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "type": {
      const expected = ([] as string[]).concat(p.type as string | string[]).filter((t) => t !== "null");
      const actual = jsonType(value);
      errors.typeInvalid(path, actual, `${name} in body must be of type ${expected.join(",")}: "${actual}"`);
      return;
    }
    case "required":
      errors.required(join(path, String(p.missingProperty)));
      return;
    case "enum":
      errors.notSupported(
        path,
        value,
        (p.allowedValues as unknown[]).filter((v) => v !== null),
      );
      return;
    case "minimum":
      errors.invalid(path, value, `${name} in body should be greater than or equal to ${p.limit}`);
      return;
    case "exclusiveMinimum":
      errors.invalid(path, value, `${name} in body should be greater than ${p.limit}`);
      return;
    case "maximum":
      errors.invalid(path, value, `${name} in body should be less than or equal to ${p.limit}`);
      return;
    case "exclusiveMaximum":
      errors.invalid(path, value, `${name} in body should be less than ${p.limit}`);
      return;
    case "multipleOf":
      errors.invalid(path, value, `${name} in body should be a multiple of ${p.multipleOf}`);
      return;
    case "minLength":
      errors.invalid(path, value, `${name} in body should be at least ${p.limit} chars long`);
      return;
    case "maxLength":
      errors.tooLong(path, p.limit as number);
      return;
    case "pattern":
      errors.invalid(path, value, `${name} in body should match '${p.pattern}'`);
      return;
    case "format":
      errors.invalid(path, value, `${name} in body must be of type ${p.format}: ${showValue(value)}`);
      return;
    case "minItems":
      errors.invalid(
        path,
        (value as unknown[]).length,
        `${name} in body should have at least ${p.limit} items`,
      );
      return;
    case "maxItems":
      errors.tooMany(path, (value as unknown[]).length, p.limit as number);
      return;
    case "minProperties":
      errors.invalid(
        path,
        Object.keys(value as object).length,
        `${name} in body should have at least ${p.limit} properties`,
      );
      return;
    case "maxProperties":
      errors.tooMany(path, Object.keys(value as object).length, p.limit as number);
      return;
    case "oneOf":
      errors.invalid(
        "",
        "",
        `"${name}" must validate one and only one schema (oneOf). ${p.passingSchemas ? "Found more than one valid" : "Found none valid"}`,
      );
      return;
    case "anyOf":
      errors.invalid("", "", `"${name}" must validate at least one schema (anyOf)`);
      return;
    case "not":
      errors.invalid("", "", `"${name}" must not validate the schema (not)`);
      return;
    default:
      errors.invalid(path, value, `${name} in body ${error.message ?? "is invalid"}`);
  }
}

/** Follows a JSON pointer through the data, naming list items `[i]` and object keys `.key`. */
function locate(root: unknown, pointer: string, base: string): { path: string; value: unknown } {
  let path = base;
  let value = root;
  if (pointer === "") return { path, value };
  for (const raw of pointer.slice(1).split("/")) {
    const segment = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (Array.isArray(value)) {
      path = `${path}[${segment}]`;
      value = value[Number(segment)];
    } else {
      path = join(path, segment);
      value = isObject(value) ? value[segment] : undefined;
    }
  }
  return { path, value };
}

/** The JSON type of a datum as kube-openapi names it: whole numbers are `integer`. */
export function jsonType(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

function join(path: string, key: string): string {
  return path === "" ? key : `${path}.${key}`;
}
