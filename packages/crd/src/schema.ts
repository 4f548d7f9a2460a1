import { type SchemaOptions, type Static, type TSchema, type TUnsafe, Type } from "@sinclair/typebox";

/**
 * A Kubernetes structural schema node (`JSONSchemaProps` of
 * apiextensions.k8s.io/v1), as a CustomResourceDefinition carries it.
 */
export interface JSONSchemaProps {
  type?: string;
  format?: string;
  description?: string;
  default?: unknown;
  enum?: unknown[];
  nullable?: boolean;
  properties?: Record<string, JSONSchemaProps>;
  additionalProperties?: JSONSchemaProps | boolean;
  items?: JSONSchemaProps;
  required?: string[];
  anyOf?: JSONSchemaProps[];
  allOf?: JSONSchemaProps[];
  oneOf?: JSONSchemaProps[];
  not?: JSONSchemaProps;
  [extension: `x-kubernetes-${string}`]: unknown;
  [other: string]: unknown;
}

/** A CEL rule of `x-kubernetes-validations`. */
export interface ValidationRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  reason?: "FieldValueInvalid" | "FieldValueForbidden" | "FieldValueRequired" | "FieldValueDuplicate";
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

/** Options every Kubernetes helper takes: TypeBox's (description, default, …) plus CEL rules. */
export interface KubernetesOptions extends SchemaOptions {
  "x-kubernetes-validations"?: ValidationRule[];
}

/**
 * The schema builder: TypeBox's `Type` (objects, strings, integers, arrays,
 * optional fields, defaults, formats, min/max…) plus Kubernetes' own
 * extensions. Each value is a JSON schema whose TypeScript type TypeBox
 * infers, so the kind's type is never written a second time.
 */
export const k: typeof Type & ReturnType<typeof kubernetes> = Object.assign(
  Object.create(null),
  Type,
  kubernetes(),
);

function kubernetes() {
  return {
    /** `x-kubernetes-int-or-string`: a port or a percentage (`3` or `"25%"`). */
    IntOrString: (options: KubernetesOptions = {}): TUnsafe<number | string> =>
      Type.Unsafe<number | string>({
        ...options,
        "x-kubernetes-int-or-string": true,
        anyOf: [{ type: "integer" }, { type: "string" }],
      }),
    /** A resource quantity (`"500m"`, `"1Gi"`, `2`), as Kubernetes' own types declare it. */
    Quantity: (options: KubernetesOptions = {}): TUnsafe<number | string> =>
      Type.Unsafe<number | string>({
        ...options,
        "x-kubernetes-int-or-string": true,
        anyOf: [{ type: "integer" }, { type: "string" }],
        pattern:
          "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$",
      }),
    /** A string among `values` (`enum`, which Kubernetes wants in place of a union of literals). */
    Enum: <const V extends readonly string[]>(
      values: V,
      options: KubernetesOptions = {},
    ): TUnsafe<V[number]> => Type.Unsafe<V[number]>({ ...options, type: "string", enum: [...values] }),
    /** An object whose fields are kept as they are (`x-kubernetes-preserve-unknown-fields`). */
    PreserveUnknown: (options: KubernetesOptions = {}): TUnsafe<Record<string, unknown>> =>
      Type.Unsafe<Record<string, unknown>>({
        ...options,
        type: "object",
        "x-kubernetes-preserve-unknown-fields": true,
      }),
    /** A whole Kubernetes object inside this one (`x-kubernetes-embedded-resource`): apiVersion, kind, metadata. */
    EmbeddedResource: (options: KubernetesOptions = {}): TUnsafe<EmbeddedObject> =>
      Type.Unsafe<EmbeddedObject>({
        ...options,
        type: "object",
        "x-kubernetes-embedded-resource": true,
        "x-kubernetes-preserve-unknown-fields": true,
      }),
    /** A list merged by `keys` (`x-kubernetes-list-type: map`), as `containers` by `name`. */
    ListMap: <T extends TSchema>(
      item: T,
      keys: readonly (keyof Static<T> & string)[],
      options: KubernetesOptions = {},
    ) =>
      Type.Array(item, {
        ...options,
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": [...keys],
      }),
    /** A list of unique scalars (`x-kubernetes-list-type: set`). */
    ListSet: <T extends TSchema>(item: T, options: KubernetesOptions = {}) =>
      Type.Array(item, { ...options, "x-kubernetes-list-type": "set" }),
    /** A map replaced whole on apply (`x-kubernetes-map-type: atomic`). */
    AtomicMap: <T extends TSchema>(value: T, options: KubernetesOptions = {}) =>
      Type.Record(Type.String(), value, { ...options, "x-kubernetes-map-type": "atomic" }),
    /** `schema` that may also be null (`nullable: true`). */
    Nullable: <T extends TSchema>(schema: T): TUnsafe<Static<T> | null> =>
      Type.Unsafe<Static<T> | null>({ ...schema, nullable: true }),
  };
}

/** What an embedded resource holds. */
export interface EmbeddedObject {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string>; [key: string]: unknown };
  [key: string]: unknown;
}

/** A schema that cannot be a Kubernetes structural schema, with the path of the offending node. */
export class NonStructuralSchemaError extends TypeError {
  constructor(
    readonly path: string,
    reason: string,
  ) {
    super(`${path || "<root>"}: ${reason}`);
    this.name = "NonStructuralSchemaError";
  }
}

const passThrough = new Set([
  "type",
  "format",
  "description",
  "default",
  "enum",
  "nullable",
  "required",
  "title",
  "example",
  "pattern",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minLength",
  "maxLength",
  "minItems",
  "maxItems",
  "uniqueItems",
  "minProperties",
  "maxProperties",
  "externalDocs",
  // Value validations: no types of their own, only further checks of the node's value.
  "allOf",
  "not",
]);

/**
 * The Kubernetes structural schema of a TypeBox schema: `Type.Record` becomes
 * `additionalProperties`, a union of literals an `enum`, `const` a one-value
 * `enum`, `Type.Null` in a union `nullable`; TypeBox's bookkeeping is
 * dropped. Anything a structural schema cannot say (a union of objects,
 * `$ref`, tuples, `not` at a type's place) throws {@link NonStructuralSchemaError}
 * naming the field.
 */
export function toStructuralSchema(schema: TSchema | JSONSchemaProps, path = ""): JSONSchemaProps {
  const node = schema as Record<string, unknown>;
  if (typeof node !== "object" || node === null) throw new NonStructuralSchemaError(path, "not a schema");
  for (const unsupported of ["$ref", "prefixItems", "if", "then", "else"]) {
    if (node[unsupported] !== undefined) {
      throw new NonStructuralSchemaError(
        path,
        `${unsupported} is not allowed in a Kubernetes structural schema`,
      );
    }
  }
  const union = (node.anyOf ?? node.oneOf) as Record<string, unknown>[] | undefined;
  // On a node with a type of its own, anyOf and oneOf are value validations
  // (`anyOf: [{required: [a]}, {required: [b]}]`); without one, a TypeBox union.
  const validations = node.type !== undefined;
  if (union !== undefined && !validations && node["x-kubernetes-int-or-string"] !== true) {
    return fromUnion(node, union, path);
  }
  const out: JSONSchemaProps = {};
  for (const [key, value] of Object.entries(node)) {
    if (
      passThrough.has(key) ||
      key.startsWith("x-kubernetes-") ||
      (validations && (key === "anyOf" || key === "oneOf"))
    ) {
      out[key] = structuredClone(value);
    }
  }
  if (node.const !== undefined) {
    out.enum = [node.const];
    out.type ??= jsonTypeOf(node.const);
  }
  if (node["x-kubernetes-int-or-string"] === true) {
    out.anyOf = [{ type: "integer" }, { type: "string" }];
    delete out.type;
    return out;
  }
  if (node.type === "array" && Array.isArray(node.items)) {
    throw new NonStructuralSchemaError(path, "a tuple is not allowed: give the list one item schema");
  }
  if (node.items !== undefined) out.items = toStructuralSchema(node.items as TSchema, `${path}[*]`);
  if (node.properties !== undefined) {
    out.properties = {};
    for (const [name, child] of Object.entries(node.properties as Record<string, TSchema>)) {
      out.properties[name] = toStructuralSchema(child, path === "" ? name : `${path}.${name}`);
    }
  }
  const patterns = node.patternProperties as Record<string, TSchema> | undefined;
  if (patterns !== undefined) {
    const values = Object.values(patterns);
    if (values.length !== 1) throw new NonStructuralSchemaError(path, "a map must have one value schema");
    out.additionalProperties = toStructuralSchema(values[0]!, `${path}[*]`);
    out.type = "object";
  } else if (typeof node.additionalProperties === "object") {
    out.additionalProperties = toStructuralSchema(node.additionalProperties as TSchema, `${path}[*]`);
  }
  if (out.type === undefined && out["x-kubernetes-preserve-unknown-fields"] !== true) {
    throw new NonStructuralSchemaError(
      path,
      "every field needs a type (or x-kubernetes-preserve-unknown-fields)",
    );
  }
  if (out.type === "null") throw new NonStructuralSchemaError(path, "a field cannot be only null");
  return out;
}

/** A union: of string or number literals → enum; with null → nullable; anything else is not structural. */
function fromUnion(
  node: Record<string, unknown>,
  union: Record<string, unknown>[],
  path: string,
): JSONSchemaProps {
  const nonNull = union.filter((member) => member.type !== "null");
  const nullable = nonNull.length < union.length;
  const extra: JSONSchemaProps = {};
  for (const key of ["description", "default", "x-kubernetes-validations"]) {
    if (node[key] !== undefined) extra[key] = structuredClone(node[key]);
  }
  if (nonNull.length > 0 && nonNull.every((member) => member.const !== undefined)) {
    const types = new Set(nonNull.map((member) => jsonTypeOf(member.const)));
    if (types.size !== 1) throw new NonStructuralSchemaError(path, "an enum's values must all have one type");
    return {
      type: [...types][0]!,
      enum: nonNull.map((member) => member.const),
      ...(nullable ? { nullable: true } : {}),
      ...extra,
    };
  }
  if (nonNull.length === 1) {
    return {
      ...toStructuralSchema(nonNull[0] as TSchema, path),
      ...(nullable ? { nullable: true } : {}),
      ...extra,
    };
  }
  throw new NonStructuralSchemaError(
    path,
    "a union of different types is not a structural schema: use one object with optional fields, k.IntOrString or k.Enum",
  );
}

function jsonTypeOf(value: unknown): string {
  if (typeof value === "string") return "string";
  if (typeof value === "boolean") return "boolean";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return "object";
}
