import type { CustomResourceDefinition } from "kubernetes-types/apiextensions/v1.js";
import type { JSONSchemaProps } from "./schema.js";
import { capitalize, docComment, groupQualifiers, identifier, typeOf } from "./typegen.js";

/**
 * A CRD's schemas as `k` builder code, so that a kind someone else defined
 * can be owned in TypeScript: per served version a `k.Object` (the whole
 * object, `apiVersion` to `status`) and its type inferred from it. Turned
 * back into a schema (`toStructuralSchema`), each gives the CRD's schema
 * again: that round trip is tested on real projects' CRDs.
 */
export function buildersForDefinitions(crds: readonly CustomResourceDefinition[]): string {
  const lines = [
    "// Generated from CustomResourceDefinitions by reconcile-crd. Edit freely: this is now your schema.",
    'import { k, type Static } from "@reconcile/crd";',
    "",
  ];
  const qualifiers = groupQualifiers(crds);
  for (const crd of crds) {
    for (const version of crd.spec.versions.filter((v) => v.served)) {
      const schema = version.schema?.openAPIV3Schema as JSONSchemaProps | undefined;
      if (schema === undefined) continue;
      const name = identifier(
        `${qualifiers.get(crd) ?? ""}${crd.spec.names.kind}${capitalize(version.name)}`,
      );
      if (schema.description) lines.push(...docComment(schema.description, ""));
      lines.push(`export const ${name}Schema = ${builderFor(schema, "")};`);
      lines.push(`export type ${name} = Static<typeof ${name}Schema>;`, "");
    }
  }
  return `${lines.join("\n").trimEnd()}\n`;
}

/** Keys a builder call says by itself; every other key of a node goes into its options. */
const said: Record<string, readonly string[]> = {
  object: ["type", "properties", "required"],
  record: ["type", "additionalProperties"],
  array: ["type", "items"],
  enum: ["type", "enum"],
  intOrString: ["x-kubernetes-int-or-string", "anyOf"],
  scalar: ["type"],
};

/** The `k` expression whose structural schema is `schema`. */
export function builderFor(schema: JSONSchemaProps, indent: string): string {
  if (schema.nullable === true) {
    const { nullable: _nullable, ...rest } = schema;
    return `k.Nullable(${builderFor(rest, indent)})`;
  }
  if (schema["x-kubernetes-int-or-string"] === true && isIntOrStringUnion(schema.anyOf)) {
    return call("k.IntOrString", [], options(schema, said.intOrString!, indent));
  }
  if (schema.type === "object" && schema.properties !== undefined) {
    return objectBuilder(schema, indent);
  }
  if (schema.type === "object" && typeof schema.additionalProperties === "object") {
    const value = builderFor(schema.additionalProperties, indent);
    return call("k.Record", ["k.String()", value], options(schema, said.record!, indent));
  }
  if (schema.type === "array" && schema.items !== undefined) {
    return call("k.Array", [builderFor(schema.items, indent)], options(schema, said.array!, indent));
  }
  if (
    schema.type === "string" &&
    Array.isArray(schema.enum) &&
    schema.enum.every((v) => typeof v === "string")
  ) {
    return call("k.Enum", [literal(schema.enum, indent)], options(schema, said.enum!, indent));
  }
  const scalar = { string: "k.String", integer: "k.Integer", number: "k.Number", boolean: "k.Boolean" }[
    schema.type ?? ""
  ];
  if (scalar !== undefined && schema.enum === undefined) {
    return call(scalar, [], options(schema, said.scalar!, indent));
  }
  // Anything else (an object of unknown fields, a field without a type, an
  // enum of numbers) is said as it is, with the type it has.
  return `k.Unsafe<${typeOf(schema, indent)}>(${literal(schema, indent)})`;
}

function objectBuilder(schema: JSONSchemaProps, indent: string): string {
  const inner = `${indent}  `;
  const properties = schema.properties ?? {};
  // A required name with no property of its own cannot be said by k.Optional:
  // then every field is optional to TypeBox and the list stays as it is.
  const keepList = (schema.required ?? []).some((name) => properties[name] === undefined);
  const required = new Set(keepList ? [] : (schema.required ?? []));
  const fields = Object.entries(properties).map(([name, property]) => {
    const value = builderFor(property, inner);
    return `${inner}${propertyKey(name)}: ${required.has(name) ? value : `k.Optional(${value})`},`;
  });
  const body = fields.length === 0 ? "{}" : `{\n${fields.join("\n")}\n${indent}}`;
  return call("k.Object", [body], options(schema, keepList ? ["type", "properties"] : said.object!, indent));
}

function options(schema: JSONSchemaProps, skip: readonly string[], indent: string): string | undefined {
  const rest = Object.fromEntries(Object.entries(schema).filter(([key]) => !skip.includes(key)));
  return Object.keys(rest).length === 0 ? undefined : literal(rest, indent);
}

function call(builder: string, args: string[], optionsText: string | undefined): string {
  return `${builder}(${[...args, ...(optionsText === undefined ? [] : [optionsText])].join(", ")})`;
}

/** A JSON value as code: identifier keys unquoted, on one line unless it is long. */
function literal(value: unknown, indent: string): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  const inner = `${indent}  `;
  const parts = Array.isArray(value)
    ? value.map((item) => literal(item, inner))
    : Object.entries(value).map(([key, item]) => `${propertyKey(key)}: ${literal(item, inner)}`);
  const [open, close] = Array.isArray(value) ? ["[", "]"] : ["{ ", " }"];
  if (parts.length === 0) return Array.isArray(value) ? "[]" : "{}";
  const flat = `${open}${parts.join(", ")}${close}`;
  if (flat.length <= 100 && !flat.includes("\n")) return flat;
  return `${open.trim()}\n${parts.map((part) => `${inner}${part},`).join("\n")}\n${indent}${close.trim()}`;
}

function propertyKey(name: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : JSON.stringify(name);
}

function isIntOrStringUnion(anyOf: JSONSchemaProps[] | undefined): boolean {
  return (
    anyOf === undefined ||
    (anyOf.length === 2 &&
      anyOf[0]?.type === "integer" &&
      anyOf[1]?.type === "string" &&
      Object.keys(anyOf[0]).length === 1 &&
      Object.keys(anyOf[1]).length === 1)
  );
}
