import { parseQuantity, Quantity, QuantityError } from "@reconcile/api";
import { builtinGoFieldTypes, builtinGoNamedTypes } from "../schemas/builtin-tables.js";
import { builtinDefinitions, isRecord, type OpenAPIDefinition, schemaRef } from "../schemas/kind-schema.js";
import { goBase64Error } from "./go-base64.js";
import { goTimeParseError, rfc3339Layout, rfc3339MicroLayout } from "./go-time.js";

/**
 * The shape of the fields the server reads, for the "decode" step: a value of
 * the wrong type is rejected with 400 BadRequest naming the field, as
 * kube-apiserver rejects a body its JSON decoder cannot read. Fields not
 * listed are kept as they are; `null` counts as absent, as in Go.
 */
export type Schema =
  | "string"
  | "integer"
  | "int32"
  | "boolean"
  | "number"
  | "any"
  | "intOrString"
  /** resource.Quantity: a string, or a JSON number (Go's decoder takes `0.5` as `"0.5"`), that parses as one. */
  | "quantity"
  /** metav1.Time: an RFC 3339 string. */
  | "time"
  /** metav1.MicroTime: an RFC 3339 string with exactly six fractional digits. */
  | "microTime"
  /** Go's []byte: a base64 string (or a JSON array of bytes, which is read into one). */
  | "bytes"
  | { readonly map: Schema }
  | { readonly array: Schema }
  | { readonly fields: Readonly<Record<string, Schema>>; readonly go?: GoStruct | undefined };

/**
 * A built-in struct's Go name and the Go type of each field, as reflect
 * prints them: what a type error names, in the words of Go's encoding/json.
 */
export interface GoStruct {
  readonly name: string;
  readonly types: Readonly<Record<string, string>>;
}

/**
 * The first problem Go's decoder would report in `value`, or undefined. With
 * Go types known (the built-in kinds) it is worded as kube-apiserver words it
 * (`json: cannot unmarshal array into Go struct field ServiceSpec.spec.selector
 * of type map[string]string`), else as `path: expected X, got Y`. A JSON array
 * of bytes in a `bytes` field is replaced, in place, by its base64 text.
 */
export function typeProblem(value: unknown, schema: Schema, path: string): string | undefined {
  // Nearly every body decodes: a first walk keeps no path, and only a body with a problem is
  // walked again to word it (what the first walk rewrote, canonical quantities and base64
  // bytes, reads the same the second time).
  const quick = new GoDecoder(path, false);
  if (quick.value(value, schema, undefined, undefined) === undefined && quick.saved === undefined)
    return undefined;
  const decoder = new GoDecoder(path, true);
  return decoder.value(value, schema, undefined, undefined) ?? decoder.saved;
}

/** How a step of a path is written: `.field`, `[index]`, `["key"]`. */
type Step = typeof fieldStep | typeof indexStep | typeof keyStep;
const fieldStep = 0;
const indexStep = 1;
const keyStep = 2;

/**
 * One walk of a body as Go's decoder makes it: the first type error is kept
 * and the walk goes on; the error of a type that decodes itself (a quantity, a
 * time, an int-or-string: their `UnmarshalJSON`) ends it at once and wins.
 * The path is kept as steps and written only for an error.
 */
class GoDecoder {
  saved: string | undefined;
  /** The JSON names of the struct fields down to here: Go's `Field`, without indices or keys. */
  readonly #fields: string[] = [];
  /** The Go struct whose field is being read: Go's `Struct`. */
  #struct: string | undefined;
  readonly #root: string;
  readonly #steps: Step[] = [];
  readonly #names: Array<string | number> = [];

  /** Whether the path is kept (for the wording of a problem); a walk without finds problems only. */
  readonly #tracking: boolean;

  constructor(root: string, tracking: boolean) {
    this.#root = root;
    this.#tracking = tracking;
  }

  /** Reads `value`, at the path of the steps taken; returns an error that ends decoding. */
  value(
    value: unknown,
    schema: Schema,
    goType: string | undefined,
    container?: Container,
    key?: number | string,
  ): Stop {
    if (value === null || value === undefined || schema === "any") return undefined;
    if (typeof schema === "string") return this.#scalar(value, schema, goType, container, key);
    if ("array" in schema) {
      if (!Array.isArray(value)) return this.#mismatch(value, goType, "array");
      const element = elementType(goType);
      for (let i = 0; i < value.length; i++) {
        this.#enter(indexStep, i);
        // A null element is no absent field: the code below would read it as an object or a string.
        const stop =
          value[i] === null && schema.array !== "any"
            ? this.#save(`${this.#path()}: expected ${elementName(schema.array)}, got null`)
            : this.value(value[i], schema.array, element, value, i);
        this.#leave();
        if (stop !== undefined) return stop;
      }
      return undefined;
    }
    if (typeof value !== "object" || Array.isArray(value)) return this.#mismatch(value, goType, "object");
    const record = value as Record<string, unknown>;
    if ("map" in schema) {
      const valueType = mapValueType(goType);
      // for…in, not Object.keys: no array per object (a body's objects are plain, with no inherited members).
      for (const key in record) {
        this.#enter(keyStep, key);
        const stop = this.value(record[key], schema.map, valueType, record, key);
        this.#leave();
        if (stop !== undefined) return stop;
      }
      if (goType === "v1.ResourceList") roundUpToMilli(record);
      return undefined;
    }
    // The value's members, not the schema's: a derived schema declares far more fields than a body holds.
    const table = fieldTable(schema);
    const outer = this.#struct;
    let stop: Stop;
    for (const name in record) {
      const field = table.get(name);
      if (field === undefined) continue;
      this.#enter(fieldStep, name, schema.go?.name);
      stop = this.value(record[name], field.schema, field.goType, record, name);
      this.#leave();
      if (stop !== undefined) break;
    }
    this.#struct = outer;
    return stop;
  }

  /** Steps into `name`; a struct field also names its Go struct and joins Go's `Field`. */
  #enter(step: Step, name: string | number, struct?: string): void {
    if (!this.#tracking) return;
    this.#steps.push(step);
    this.#names.push(name);
    if (step === fieldStep) {
      this.#struct = struct;
      this.#fields.push(name as string);
    }
  }

  #leave(): void {
    if (!this.#tracking) return;
    if (this.#steps.pop() === fieldStep) this.#fields.pop();
    this.#names.pop();
  }

  /** The path of the steps taken, as an error names it. */
  #path(): string {
    let path = this.#root;
    for (let i = 0; i < this.#steps.length; i++) {
      const name = this.#names[i]!;
      switch (this.#steps[i]) {
        case fieldStep:
          path = path ? `${path}.${name}` : String(name);
          break;
        case indexStep:
          path += `[${name}]`;
          break;
        default:
          path += `[${JSON.stringify(name)}]`;
      }
    }
    return path;
  }

  #scalar(
    value: unknown,
    schema: Exclude<Schema, object>,
    goType: string | undefined,
    container?: Container,
    key?: number | string,
  ): Stop {
    switch (schema) {
      case "string":
        return typeof value === "string" ? undefined : this.#mismatch(value, goType, "string");
      case "boolean":
        return typeof value === "boolean" ? undefined : this.#mismatch(value, goType, "boolean");
      case "number":
        return typeof value === "number" ? undefined : this.#mismatch(value, goType, "number");
      case "integer":
      case "int32":
        return fitsInteger(value, schema) ? undefined : this.#mismatch(value, goType, schema);
      case "intOrString":
        // Anything but a string is read as an int32, and IntOrString's own error ends decoding.
        if (typeof value === "string" || fitsInteger(value, "int32")) return undefined;
        return this.#describe(value, goType === undefined ? undefined : "int32", "integer or string");
      case "quantity": {
        const problem = quantityError(value);
        // Go writes a quantity back in its canonical form (`0.5` is `500m`, `1024Mi` is `1Gi`).
        if (problem === undefined && container !== undefined && key !== undefined) {
          const canonical = canonicalQuantity(value as string | number);
          if (canonical !== value) (container as Record<string | number, unknown>)[key] = canonical;
        }
        return problem;
      }
      case "time":
      case "microTime":
        if (typeof value !== "string")
          return this.#describe(value, goType === undefined ? undefined : "string", "RFC 3339 string");
        return goTimeParseError(value, schema === "time" ? rfc3339Layout : rfc3339MicroLayout);
      case "bytes":
        return this.#bytes(value, goType, container, key);
      default:
        return undefined;
    }
  }

  /** A []byte: base64 text, or a JSON array of bytes, which Go reads element by element (kept as base64). */
  #bytes(value: unknown, goType: string | undefined, container?: Container, key?: number | string): Stop {
    if (typeof value === "string") {
      const problem = goBase64Error(value);
      if (problem !== undefined) this.#save(problem);
      return undefined;
    }
    if (!Array.isArray(value)) return this.#mismatch(value, goType, "base64 string");
    const bytes: number[] = [];
    for (let i = 0; i < value.length; i++) {
      const byte = value[i] ?? 0;
      if (fitsInteger(byte, "uint8")) bytes.push(byte as number);
      else {
        this.#enter(indexStep, i);
        this.#mismatch(byte, goType === undefined ? undefined : "uint8", "uint8");
        this.#leave();
      }
    }
    if (bytes.length === value.length && container !== undefined && key !== undefined)
      (container as Record<string | number, unknown>)[key] = Buffer.from(bytes).toString("base64");
    return undefined;
  }

  /** Keeps the first type error, as Go's `saveError`; decoding goes on. */
  #mismatch(value: unknown, goType: string | undefined, expected: string): undefined {
    if (this.saved === undefined) this.#save(this.#describe(value, goType, expected));
    return undefined;
  }

  #save(problem: string): undefined {
    this.saved ??= problem;
    return undefined;
  }

  /** Go's UnmarshalTypeError where the Go types are known, else `path: expected X, got Y`. */
  #describe(value: unknown, goType: string | undefined, expected: string): string {
    if (goType !== undefined && this.#struct !== undefined) {
      const numeric = typeof value === "number" && numericGoKinds.has(goKind(goType));
      const valueName = Array.isArray(value)
        ? "array"
        : typeof value === "boolean"
          ? "bool"
          : numeric
            ? `number ${String(value)}`
            : typeof value;
      return `json: cannot unmarshal ${valueName} into Go struct field ${this.#struct}.${this.#fields.join(".")} of type ${goTypeName(goType)}`;
    }
    return `${this.#path() || "<root>"}: expected ${expected}, got ${describe(value)}`;
  }
}

type StructSchema = Extract<Schema, { fields: unknown }>;

/** A struct's fields with their Go types, by name: one lookup per member read. */
function fieldTable(schema: StructSchema): Map<string, { schema: Schema; goType: string | undefined }> {
  let table = fieldTables.get(schema);
  if (table === undefined) {
    table = new Map();
    for (const [name, field] of Object.entries(schema.fields))
      table.set(name, { schema: field, goType: schema.go?.types[name] });
    fieldTables.set(schema, table);
  }
  return table;
}

const fieldTables = new WeakMap<StructSchema, Map<string, { schema: Schema; goType: string | undefined }>>();

/** An error that ends decoding, or undefined to go on. */
type Stop = string | undefined;
/** What holds a value, with its index or key: a []byte read from an array is put back there as base64. */
type Container = unknown[] | Record<string, unknown>;

const integerRanges = {
  integer: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  int32: [-2147483648, 2147483647],
  uint8: [0, 255],
} as const;

function fitsInteger(value: unknown, kind: keyof typeof integerRanges): boolean {
  if (!Number.isInteger(value)) return false;
  const range = integerRanges[kind];
  return (value as number) >= range[0] && (value as number) <= range[1];
}

/** resource.Quantity's `UnmarshalJSON`: the JSON text, unquoted and trimmed, must parse as a quantity. */
function quantityError(value: unknown): Stop {
  if (typeof value === "string" && plainQuantity.test(value)) return undefined;
  if (typeof value !== "string" && typeof value !== "number") return quantityFormatWrong;
  try {
    parseQuantity(typeof value === "string" ? value.trim() : String(value));
    return undefined;
  } catch (error) {
    return QuantityError.isInstance(error) ? error.problem : quantityFormatWrong;
  }
}

/**
 * `SetDefaults_ResourceList`, which every resource list of the built-in kinds takes: a quantity
 * finer than a milli-unit is rounded up to one (`100u` is `1m`).
 */
function roundUpToMilli(list: Record<string, unknown>): void {
  for (const key in list) {
    const value = list[key];
    if (typeof value !== "string" || !finerThanMilli.test(value)) continue;
    const quantity = parseQuantity(value);
    const milli = quantity.milliValue();
    // Past 2^53 milli-units a float cannot say the count; such a value is left as it was written.
    if (Number.isSafeInteger(milli)) list[key] = new Quantity(milli, -3, quantity.format).toString();
  }
}

/** Canonical forms that may hold less than a milli-unit: micro and nano suffixes, negative exponents. */
const finerThanMilli = /[un]$|e-/;

/** The canonical form of a quantity that parses, as resource.Quantity's MarshalJSON writes it; remembered. */
function canonicalQuantity(value: string | number): string {
  let canonical = canonicalForms.get(value);
  if (canonical === undefined) {
    canonical = parseQuantity(typeof value === "string" ? value.trim() : String(value)).toString();
    if (canonicalForms.size >= 4096) canonicalForms.clear();
    canonicalForms.set(value, canonical);
  }
  return canonical;
}

const canonicalForms = new Map<string | number, string>();

/** Quantities as most are written (`100m`, `128Mi`, `2`): they parse, so the exact parser is spared. */
const plainQuantity = /^[0-9]{1,15}(?:m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$/;

const quantityFormatWrong =
  "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

const numericGoKinds = new Set([
  "int",
  "int8",
  "int16",
  "int32",
  "int64",
  "uint",
  "uint8",
  "uint16",
  "uint32",
  "uint64",
  "float32",
  "float64",
]);

/** A Go type with its outer pointers taken off and named non-struct types resolved: what kind of value it holds. */
function goKind(goType: string): string {
  let type = goType.replace(/^\*+/, "");
  for (let named = builtinGoNamedTypes[type]; named !== undefined; named = builtinGoNamedTypes[type])
    type = named.replace(/^\*+/, "");
  return type === "byte" ? "uint8" : type;
}

/** The type a type error names: the pointer Go's decoder follows is off, `byte` is reflect's `uint8`. */
function goTypeName(goType: string): string {
  return goType.replace(/^\*+/, "").replace(/\bbyte\b/g, "uint8");
}

function elementType(goType: string | undefined): string | undefined {
  if (goType === undefined) return undefined;
  if (elementTypes.has(goType)) return elementTypes.get(goType);
  const element = elementTypeOf(goType);
  elementTypes.set(goType, element);
  return element;
}

function elementTypeOf(goType: string): string | undefined {
  const kind = goKind(goType);
  return kind.startsWith("[]") ? kind.slice(2) : undefined;
}

function mapValueType(goType: string | undefined): string | undefined {
  if (goType === undefined) return undefined;
  if (mapValueTypes.has(goType)) return mapValueTypes.get(goType);
  const valueType = mapValueTypeOf(goType);
  mapValueTypes.set(goType, valueType);
  return valueType;
}

/** Element and value types by Go type: the built-in types are a fixed, small set. */
const elementTypes = new Map<string, string | undefined>();
const mapValueTypes = new Map<string, string | undefined>();

function mapValueTypeOf(goType: string): string | undefined {
  const kind = goKind(goType);
  if (!kind.startsWith("map[")) return undefined;
  let depth = 0;
  for (let i = 3; i < kind.length; i++) {
    if (kind[i] === "[") depth++;
    else if (kind[i] === "]" && --depth === 0) return kind.slice(i + 1);
  }
  return undefined;
}

function scalarName(schema: Exclude<Schema, object>): string {
  if (schema === "intOrString") return "integer or string";
  if (schema === "quantity") return "quantity (a string or a number)";
  return schema;
}

function elementName(schema: Schema): string {
  if (typeof schema === "string") return scalarName(schema);
  return "array" in schema ? "array" : "object";
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return "array";
  if (typeof value === "number" && !Number.isSafeInteger(value)) return `number ${value}`;
  if (typeof value === "number" && (value < -2147483648 || value > 2147483647)) return `number ${value}`;
  return typeof value === "string" ? `string ${JSON.stringify(value).slice(0, 60)}` : typeof value;
}

/**
 * ObjectMeta's schema, derived as every built-in shape is: what the decoder
 * checks a custom kind's `metadata` against.
 */
export function objectMetaSchema(): Schema {
  return schemaOfDefinition("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta");
}

/** The decoder's schema of a built-in kind, derived from Kubernetes' OpenAPI document and Go types. */
export function builtinDecoderSchema(definitionName: string): Schema {
  return schemaOfDefinition(definitionName);
}

/** Whether a schema declares `metadata` (a built-in kind's does; "any" and hand-written ones may not). */
export function declaresMetadata(schema: Schema): boolean {
  return typeof schema === "object" && "fields" in schema && Object.hasOwn(schema.fields, "metadata");
}

const selfDecoding: Readonly<Record<string, Schema>> = {
  // resource.Quantity is `type: string`, but Go's decoder also reads a JSON number (`cpu: 0.5`).
  "io.k8s.apimachinery.pkg.api.resource.Quantity": "quantity",
  "io.k8s.apimachinery.pkg.apis.meta.v1.Time": "time",
  "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime": "microTime",
};

const derived = new Map<string, Schema>();

const emptyStructs = new Set([
  "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceSubresourceStatus",
]);

function schemaOfDefinition(name: string): Schema {
  const known = derived.get(name);
  if (known !== undefined) return known;
  const own = selfDecoding[name];
  if (own !== undefined) return own;
  const definition = builtinDefinitions()[name];
  if (definition === undefined) return "any";
  const goTypes = builtinGoFieldTypes[name];
  const go =
    goTypes === undefined ? undefined : { name: name.slice(name.lastIndexOf(".") + 1), types: goTypes };
  // An empty Go struct: the document says only `type: object`, as it does for free-form values
  // (RawExtension, FieldsV1), but Go's decoder refuses anything that is not an object.
  if (emptyStructs.has(name)) return { fields: {}, go };
  if (!isRecord(definition.properties)) {
    const schema = schemaOf(definition);
    derived.set(name, schema);
    return schema;
  }
  // Registered before its fields are compiled, so recursive definitions (JSONSchemaProps) end.
  const fields: Record<string, Schema> = {};
  derived.set(name, { fields, go });
  for (const [field, property] of Object.entries(definition.properties))
    fields[field] = isRecord(property) ? schemaOf(property) : "any";
  return derived.get(name) as Schema;
}

function schemaOf(schema: OpenAPIDefinition): Schema {
  const ref = schemaRef(schema);
  if (ref !== undefined) return schemaOfDefinition(ref);
  switch (schema.type) {
    case "string":
      if (schema.format === "int-or-string") return "intOrString";
      return schema.format === "byte" ? "bytes" : "string";
    case "integer":
      return schema.format === "int32" ? "int32" : "integer";
    case "number":
      return "number";
    case "boolean":
      return "boolean";
    case "array":
      return { array: isRecord(schema.items) ? schemaOf(schema.items) : "any" };
    case "object": {
      if (isRecord(schema.properties)) {
        const fields: Record<string, Schema> = {};
        for (const [field, property] of Object.entries(schema.properties))
          fields[field] = isRecord(property) ? schemaOf(property) : "any";
        return { fields };
      }
      const additional = schema.additionalProperties;
      return isRecord(additional) ? { map: schemaOf(additional) } : "any";
    }
    default:
      // Definitions with no type (apiextensions' JSON, JSONSchemaPropsOrArray) hold anything.
      return "any";
  }
}
