import type { CustomResourceDefinition } from "kubernetes-types/apiextensions/v1.js";
import type { JSONSchemaProps } from "./schema.js";

/**
 * TypeScript for CustomResourceDefinitions, as kopium and `kfc crd` generate
 * it: per served version an interface extending `KubeObject` (the storage
 * version takes the kind's name, others get the version as a suffix), with
 * each description as a doc comment, and a `defineResource` descriptor the
 * client, informers and the controller builder take.
 */
export function typesForDefinitions(crds: readonly CustomResourceDefinition[]): string {
  const lines = [
    "// Generated from CustomResourceDefinitions by reconcile-crd. Do not edit.",
    'import { defineResource, type KubeObject } from "@reconcile/api";',
    "",
  ];
  const qualifiers = groupQualifiers(crds);
  for (const crd of crds) lines.push(...typesForDefinition(crd, qualifiers.get(crd) ?? ""));
  return `${lines.join("\n").trimEnd()}\n`;
}

/**
 * For CRDs whose kind or plural another CRD of the set also has (Istio's
 * and the Gateway API's `Gateway`), the group in PascalCase, which their
 * names then start with (`NetworkingIstioIoGateway`); "" for the others.
 */
export function groupQualifiers(
  crds: readonly CustomResourceDefinition[],
): Map<CustomResourceDefinition, string> {
  const count = new Map<string, number>();
  const keys = (crd: CustomResourceDefinition) => [
    `kind:${crd.spec.names.kind.toLowerCase()}`,
    `plural:${crd.spec.names.plural}`,
  ];
  for (const crd of crds) for (const key of keys(crd)) count.set(key, (count.get(key) ?? 0) + 1);
  return new Map(
    crds.map((crd) => [
      crd,
      keys(crd).some((key) => (count.get(key) ?? 0) > 1)
        ? crd.spec.group.split(/[.-]/).map(capitalize).join("")
        : "",
    ]),
  );
}

function typesForDefinition(crd: CustomResourceDefinition, qualifier: string): string[] {
  const { group, names, scope } = crd.spec;
  const out: string[] = [];
  for (const version of crd.spec.versions.filter((v) => v.served)) {
    const kindName = `${qualifier}${names.kind}`;
    const typeName = version.storage ? kindName : `${kindName}${capitalize(version.name)}`;
    const schema = (version.schema?.openAPIV3Schema ?? {
      type: "object",
      "x-kubernetes-preserve-unknown-fields": true,
    }) as JSONSchemaProps;
    const body = Object.entries(schema.properties ?? {}).filter(
      ([name]) => name !== "apiVersion" && name !== "kind" && name !== "metadata",
    );
    if (schema.description) out.push(...docComment(schema.description, ""));
    out.push(`export interface ${typeName} extends KubeObject {`);
    for (const [name, property] of body) {
      if (property.description) out.push(...docComment(property.description, "  "));
      const optional = schema.required?.includes(name) ? "" : "?";
      out.push(`  ${propertyName(name)}${optional}: ${typeOf(property, "  ")};`);
    }
    if (schema["x-kubernetes-preserve-unknown-fields"] === true) out.push("  [key: string]: unknown;");
    out.push("}", "");
    const subresources = [
      ...(version.subresources?.status ? ['"status"'] : []),
      ...(version.subresources?.scale ? ['"scale"'] : []),
    ];
    const descriptor = [
      `  group: ${JSON.stringify(group)},`,
      `  version: ${JSON.stringify(version.name)},`,
      `  kind: ${JSON.stringify(names.kind)},`,
      `  plural: ${JSON.stringify(names.plural)},`,
      ...(names.singular ? [`  singular: ${JSON.stringify(names.singular)},`] : []),
      `  namespaced: ${scope === "Namespaced"},`,
      ...(names.shortNames?.length ? [`  shortNames: ${JSON.stringify(names.shortNames)},`] : []),
      ...(names.categories?.length ? [`  categories: ${JSON.stringify(names.categories)},`] : []),
      ...(subresources.length ? [`  subresources: [${subresources.join(", ")}],`] : []),
    ];
    const plural = qualifier === "" ? names.plural : `${lowerFirst(qualifier)}${capitalize(names.plural)}`;
    const constName = version.storage
      ? lowerFirst(plural)
      : `${lowerFirst(plural)}${capitalize(version.name)}`;
    out.push(
      `export const ${identifier(constName)} = defineResource<${typeName}>({`,
      ...descriptor,
      "});",
      "",
    );
  }
  return out;
}

/** The TypeScript type of one structural schema node. */
export function typeOf(schema: JSONSchemaProps, indent: string): string {
  let type = baseType(schema, indent);
  if (schema.nullable === true) type = `${type} | null`;
  return type;
}

function baseType(schema: JSONSchemaProps, indent: string): string {
  if (schema["x-kubernetes-int-or-string"] === true) return "number | string";
  if (schema["x-kubernetes-embedded-resource"] === true) return "KubeObject & { [key: string]: unknown }";
  if (Array.isArray(schema.enum) && schema.enum.length > 0) {
    return schema.enum.map((value) => JSON.stringify(value)).join(" | ");
  }
  switch (schema.type) {
    case "string":
      return "string";
    case "integer":
    case "number":
      return "number";
    case "boolean":
      return "boolean";
    case "array": {
      const item = schema.items === undefined ? "unknown" : typeOf(schema.items, indent);
      return /[|&]/.test(item) ? `(${item})[]` : `${item}[]`;
    }
    case "object":
      return objectType(schema, indent);
    default:
      return "unknown";
  }
}

function objectType(schema: JSONSchemaProps, indent: string): string {
  const properties = Object.entries(schema.properties ?? {});
  const additional = schema.additionalProperties;
  const preserve = schema["x-kubernetes-preserve-unknown-fields"] === true;
  if (properties.length === 0) {
    if (typeof additional === "object") return `{ [key: string]: ${typeOf(additional, indent)} }`;
    return "{ [key: string]: unknown }";
  }
  const inner = `${indent}  `;
  const lines = ["{"];
  for (const [name, property] of properties) {
    if (property.description) lines.push(...docComment(property.description, inner));
    const optional = schema.required?.includes(name) ? "" : "?";
    lines.push(`${inner}${propertyName(name)}${optional}: ${typeOf(property, inner)};`);
  }
  if (preserve) lines.push(`${inner}[key: string]: unknown;`);
  lines.push(`${indent}}`);
  return lines.join("\n");
}

export function docComment(text: string, indent: string): string[] {
  const body = text.replace(/\*\//g, "*\\/").trim().split("\n");
  if (body.length === 1) return [`${indent}/** ${body[0]} */`];
  return [`${indent}/**`, ...body.map((line) => `${indent} *${line ? ` ${line}` : ""}`), `${indent} */`];
}

function propertyName(name: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : JSON.stringify(name);
}

export function identifier(name: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9_$]/g, "_");
  return /^[0-9]/.test(cleaned) ? `_${cleaned}` : cleaned;
}

export function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}
