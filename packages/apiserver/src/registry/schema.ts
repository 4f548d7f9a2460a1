import { builtinDefinitions, isRecord, type OpenAPIDefinition, schemaRef } from "../schemas/kind-schema.js";

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
  /** resource.Quantity: a string, or a JSON number (Go's decoder takes `0.5` as `"0.5"`). */
  | "quantity"
  | { readonly map: Schema }
  | { readonly array: Schema }
  | { readonly fields: Readonly<Record<string, Schema>> };

/** The first type problem in `value`, as "path: expected X, got Y", or undefined. */
export function typeProblem(value: unknown, schema: Schema, path: string): string | undefined {
  if (value === null || value === undefined || schema === "any") return undefined;
  if (typeof schema === "string")
    return scalarFits(value, schema)
      ? undefined
      : `${path || "<root>"}: expected ${scalarName(schema)}, got ${describe(value)}`;
  if ("array" in schema) {
    if (!Array.isArray(value)) return `${path}: expected array, got ${describe(value)}`;
    for (let i = 0; i < value.length; i++) {
      // A null element is no absent field: the code below would read it as an object or a string.
      if (value[i] === null && schema.array !== "any")
        return `${path}[${i}]: expected ${elementName(schema.array)}, got null`;
      const problem = typeProblem(value[i], schema.array, `${path}[${i}]`);
      if (problem) return problem;
    }
    return undefined;
  }
  if (typeof value !== "object" || Array.isArray(value))
    return `${path || "<root>"}: expected object, got ${describe(value)}`;
  const record = value as Record<string, unknown>;
  if ("map" in schema) {
    for (const key of Object.keys(record)) {
      const problem = typeProblem(record[key], schema.map, `${path}[${JSON.stringify(key)}]`);
      if (problem) return problem;
    }
    return undefined;
  }
  // The value's members, not the schema's: a derived schema declares far more fields than a body holds.
  const fields = schema.fields;
  for (const name of Object.keys(record)) {
    if (!Object.hasOwn(fields, name)) continue;
    const problem = typeProblem(record[name], fields[name] as Schema, path ? `${path}.${name}` : name);
    if (problem) return problem;
  }
  return undefined;
}

function scalarFits(value: unknown, schema: Exclude<Schema, object>): boolean {
  switch (schema) {
    case "string":
      return typeof value === "string";
    case "integer":
      return Number.isSafeInteger(value);
    case "int32":
      return Number.isInteger(value) && (value as number) >= -2147483648 && (value as number) <= 2147483647;
    case "boolean":
      return typeof value === "boolean";
    case "number":
      return typeof value === "number";
    case "intOrString":
      return typeof value === "string" || Number.isInteger(value);
    case "quantity":
      return typeof value === "string" || typeof value === "number";
    default:
      return true;
  }
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
 * checks `metadata` against, for built-in and custom kinds alike.
 */
export function objectMetaSchema(): Schema {
  return schemaOfDefinition("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta");
}

/**
 * The decoder's schema of a built-in kind, derived from Kubernetes' OpenAPI
 * document: every declared field with its JSON type. `metadata` is left out:
 * the decoder checks it first, against {@link objectMetaSchema}.
 */
export function builtinDecoderSchema(definitionName: string): Schema {
  const root = schemaOfDefinition(definitionName);
  if (typeof root === "string" || !("fields" in root)) return root;
  const { metadata: _checkedFirst, ...fields } = root.fields;
  return { fields };
}

/** resource.Quantity is `type: string`, but Go's decoder also reads a JSON number (`cpu: 0.5`). */
const quantityDefinition = "io.k8s.apimachinery.pkg.api.resource.Quantity";

const derived = new Map<string, Schema>();

const emptyStructs = new Set([
  "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceSubresourceStatus",
]);

function schemaOfDefinition(name: string): Schema {
  const known = derived.get(name);
  if (known !== undefined) return known;
  if (name === quantityDefinition) return "quantity";
  const definition = builtinDefinitions()[name];
  if (definition === undefined) return "any";
  // An empty Go struct: the document says only `type: object`, as it does for free-form values
  // (RawExtension, FieldsV1), but Go's decoder refuses anything that is not an object.
  if (emptyStructs.has(name)) return { fields: {} };
  if (!isRecord(definition.properties)) {
    const schema = schemaOf(definition);
    derived.set(name, schema);
    return schema;
  }
  // Registered before its fields are compiled, so recursive definitions (JSONSchemaProps) end.
  const fields: Record<string, Schema> = {};
  derived.set(name, { fields });
  for (const [field, property] of Object.entries(definition.properties))
    fields[field] = isRecord(property) ? schemaOf(property) : "any";
  return derived.get(name) as Schema;
}

function schemaOf(schema: OpenAPIDefinition): Schema {
  const ref = schemaRef(schema);
  if (ref !== undefined) return schemaOfDefinition(ref);
  switch (schema.type) {
    case "string":
      return schema.format === "int-or-string" ? "intOrString" : "string";
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
