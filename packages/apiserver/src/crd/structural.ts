import { errorMessage } from "@reconcile/api";
import { SchemaErrors } from "./errors.js";
import { re2 } from "./re2.js";
import { isObject, type JSONSchemaProps } from "./schema.js";
import { checkListType, checkMapType } from "./structural-list-type.js";

/**
 * Checks that a CRD version's `openAPIV3Schema` is structural, with apiextensions-apiserver's rules and
 * messages (`…type: Required value: must not be empty for specified object fields` and so on). `path` is where
 * the schema sits in the CRD, e.g. `spec.validation.openAPIV3Schema`.
 */
export function validateStructuralSchema(schema: unknown, path: string): SchemaErrors {
  const errors = new SchemaErrors();
  if (!isObject(schema)) {
    errors.required(path, "schemas are required");
    return errors;
  }
  const root = schema as JSONSchemaProps;
  if (root.type === undefined || root.type === "") {
    errors.required(`${path}.type`, "must not be empty at the root");
  } else if (root.type !== "object") {
    errors.invalid(`${path}.type`, root.type, "must be object at the root");
  }
  if (root.nullable === true) errors.forbidden(`${path}.nullable`, "nullable cannot be true at the root");
  if (root.additionalProperties !== undefined && root["x-kubernetes-preserve-unknown-fields"] !== true) {
    errors.forbidden(`${path}.additionalProperties`, "must not be used at the root");
  }
  checkNode(root, path, errors, { root: true, context: "root" });
  checkRootMetadata(root, path, errors);
  return errors;
}

type Context = "root" | "property" | "items" | "additional";

interface Where {
  root?: boolean;
  context: Context;
  embeddedMetadata?: boolean | undefined;
}

const types = ["array", "boolean", "integer", "number", "object", "string"];

const unsupported: Record<string, string> = {
  id: "id is not supported",
  $schema: "$schema is not supported",
  $ref: "$ref is not supported",
  patternProperties: "patternProperties is not supported",
  dependencies: "dependencies is not supported",
  additionalItems: "additionalItems is not supported",
  definitions: "definitions is not supported",
};

/**
 * One node of a structural schema and all below it, as apiextensions'
 * `ValidateStructural`: keywords a structural schema may not use, its type,
 * its `x-kubernetes-*` extensions, its children, its list and map types, then
 * the value validations under `allOf`/`anyOf`/`oneOf`/`not`.
 */
function checkNode(schema: JSONSchemaProps, path: string, errors: SchemaErrors, where: Where): void {
  const intOrString = schema["x-kubernetes-int-or-string"] === true;
  checkKeywords(schema, path, errors);
  checkType(schema, path, errors, where);
  checkExtensions(schema, path, errors, where);
  if (schema.pattern !== undefined) checkPattern(schema.pattern, `${path}.pattern`, errors);

  checkChildren(schema, path, errors, where);
  checkListType(schema, path, errors);
  checkMapType(schema, path, errors);

  // The node's structure is collected only where a value validation needs it (a walk per node would
  // be quadratic in a deep schema).
  let structure: Structure | undefined;
  const structuralProps = () => {
    structure ??= collectStructure(schema);
    return structure;
  };
  for (const key of ["allOf", "anyOf", "oneOf"] as const) {
    for (const [i, sub] of (schema[key] ?? []).entries()) {
      checkValueValidation(
        sub,
        `${path}.${key}[${i}]`,
        errors,
        structuralProps(),
        intOrString && key === "anyOf" && i < 2,
      );
    }
  }
  if (isObject(schema.not)) checkValueValidation(schema.not, `${path}.not`, errors, structuralProps(), false);
}

/** Keywords a structural schema may not use: unsupported ones, and `uniqueItems: true`. */
function checkKeywords(schema: JSONSchemaProps, path: string, errors: SchemaErrors): void {
  for (const [key, detail] of Object.entries(unsupported)) {
    if (schema[key] !== undefined) errors.forbidden(`${path}.${key}`, detail);
  }
  if (schema.uniqueItems === true) {
    errors.forbidden(
      `${path}.uniqueItems`,
      "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
    );
  }
}

/** The node's type: one of the JSON types, not `null`, and present below the root unless nothing needs it. */
function checkType(schema: JSONSchemaProps, path: string, errors: SchemaErrors, where: Where): void {
  const intOrString = schema["x-kubernetes-int-or-string"] === true;
  const preserve = schema["x-kubernetes-preserve-unknown-fields"];
  if (schema.type === "null") {
    errors.forbidden(`${path}.type`, "type cannot be set to null, use nullable as an alternative");
  } else if (schema.type !== undefined && schema.type !== "" && !types.includes(schema.type)) {
    errors.notSupported(`${path}.type`, schema.type, types);
  } else if (
    (schema.type === undefined || schema.type === "") &&
    !where.root &&
    !intOrString &&
    preserve !== true
  ) {
    if (where.context === "items")
      errors.required(`${path}.type`, "must not be empty for specified array items");
    else errors.required(`${path}.type`, "must not be empty for specified object fields");
  }
}

/** The `x-kubernetes-preserve-unknown-fields`, `-int-or-string` and `-embedded-resource` rules. */
function checkExtensions(schema: JSONSchemaProps, path: string, errors: SchemaErrors, where: Where): void {
  const intOrString = schema["x-kubernetes-int-or-string"] === true;
  const preserve = schema["x-kubernetes-preserve-unknown-fields"];
  const embedded = schema["x-kubernetes-embedded-resource"] === true;
  if (preserve === false)
    errors.invalid(`${path}.x-kubernetes-preserve-unknown-fields`, false, "must be true or undefined");
  if (intOrString && preserve === true) {
    errors.invalid(
      `${path}.x-kubernetes-preserve-unknown-fields`,
      true,
      "must be false if x-kubernetes-int-or-string is true",
    );
  }
  if (intOrString && embedded) {
    errors.invalid(
      `${path}.x-kubernetes-embedded-resource`,
      true,
      "must be false if x-kubernetes-int-or-string is true",
    );
  }
  if (embedded) {
    if (schema.type !== "object")
      errors.invalid(
        `${path}.type`,
        schema.type ?? "",
        "must be object if x-kubernetes-embedded-resource is true",
      );
    if (!schema.properties && preserve !== true) {
      errors.required(
        `${path}.properties`,
        "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
      );
    }
    if (schema.additionalProperties !== undefined) {
      errors.forbidden(
        `${path}.additionalProperties`,
        "must not be used if x-kubernetes-embedded-resource is set",
      );
    }
    if (where.embeddedMetadata)
      errors.forbidden(
        `${path}.x-kubernetes-embedded-resource`,
        "must not be used inside of resource metadata",
      );
  }
}

/** The node's items, properties and additionalProperties, each checked as a node of its own. */
function checkChildren(schema: JSONSchemaProps, path: string, errors: SchemaErrors, where: Where): void {
  const embedded = schema["x-kubernetes-embedded-resource"] === true;
  if (schema.type === "array") {
    if (schema.items === undefined) errors.required(`${path}.items`, "must be specified");
  }
  if (Array.isArray(schema.items)) {
    errors.forbidden(`${path}.items`, "items must be a schema object and not an array");
  } else if (isObject(schema.items)) {
    checkNode(schema.items, `${path}.items`, errors, {
      context: "items",
      embeddedMetadata: where.embeddedMetadata,
    });
  }

  if (
    schema.properties &&
    schema.additionalProperties !== undefined &&
    schema.additionalProperties !== true
  ) {
    errors.forbidden(
      `${path}.additionalProperties`,
      "additionalProperties and properties are mutual exclusive",
    );
  }
  for (const [name, child] of Object.entries(schema.properties ?? {})) {
    if (!isObject(child)) continue;
    const insideMetadata = where.embeddedMetadata || (embedded && name === "metadata");
    checkNode(child, `${path}.properties[${name}]`, errors, {
      context: "property",
      embeddedMetadata: insideMetadata,
    });
    if ((embedded || where.root) && (name === "apiVersion" || name === "kind") && child.type !== "string") {
      errors.invalid(`${path}.properties[${name}].type`, child.type ?? "", "must be string");
    }
  }
  if (isObject(schema.additionalProperties)) {
    checkNode(schema.additionalProperties as JSONSchemaProps, `${path}.additionalProperties`, errors, {
      context: "additional",
      embeddedMetadata: where.embeddedMetadata,
    });
  }
}

/** Keywords a value validation (allOf/anyOf/oneOf/not) must leave out, with upstream's wording. */
const forbiddenInValueValidation: [string, string][] = [
  ["type", "must be empty to be structural"],
  ["title", "must be empty to be structural"],
  ["description", "must be empty to be structural"],
  ["additionalProperties", "must be undefined to be structural"],
  ["default", "must be undefined to be structural"],
  ["nullable", "must be false to be structural"],
  ["x-kubernetes-preserve-unknown-fields", "must be false to be structural"],
  ["x-kubernetes-embedded-resource", "must be false to be structural"],
  ["x-kubernetes-int-or-string", "must be false to be structural"],
  ["x-kubernetes-list-type", "must be undefined to be structural"],
  ["x-kubernetes-map-type", "must be undefined to be structural"],
  ["x-kubernetes-list-map-keys", "must be empty to be structural"],
  ["x-kubernetes-validations", "must be empty to be structural"],
];

interface Structure {
  properties: Map<string, Structure>;
  items?: Structure | undefined;
}

function collectStructure(schema: JSONSchemaProps): Structure {
  const properties = new Map<string, Structure>();
  for (const [name, child] of Object.entries(schema.properties ?? {}))
    properties.set(name, collectStructure(child));
  const items = isObject(schema.items) ? collectStructure(schema.items) : undefined;
  return { properties, items };
}

function checkValueValidation(
  schema: JSONSchemaProps,
  path: string,
  errors: SchemaErrors,
  structure: Structure | undefined,
  intOrStringIdiom: boolean,
): void {
  if (!isObject(schema)) return;
  for (const [key, detail] of forbiddenInValueValidation) {
    const value = schema[key];
    if (value === undefined || value === false || (Array.isArray(value) && value.length === 0)) continue;
    // `anyOf: [{type: integer}, {type: string}]` is how int-or-string is spelled for older clients.
    if (intOrStringIdiom && key === "type" && (value === "integer" || value === "string")) continue;
    errors.forbidden(`${path}.${key}`, detail);
  }
  for (const [name, child] of Object.entries(schema.properties ?? {})) {
    const structural = structure?.properties.get(name);
    if (!structural) {
      errors.required(
        `${path.replace(/\.(allOf|anyOf|oneOf)\[\d+\]$|\.not$/, "")}.properties[${name}]`,
        `because it is defined in ${path}.properties[${name}]`,
      );
    }
    if (name === "metadata")
      errors.forbidden(`${path}.properties[metadata]`, "must not be specified in a nested context");
    checkValueValidation(child, `${path}.properties[${name}]`, errors, structural, false);
  }
  if (isObject(schema.items)) {
    if (!structure?.items)
      errors.required(
        `${path.replace(/\.(allOf|anyOf|oneOf)\[\d+\]$|\.not$/, "")}.items`,
        `because it is defined in ${path}.items`,
      );
    checkValueValidation(schema.items, `${path}.items`, errors, structure?.items, false);
  }
  for (const key of ["allOf", "anyOf", "oneOf"] as const) {
    for (const [i, sub] of (schema[key] ?? []).entries()) {
      checkValueValidation(sub, `${path}.${key}[${i}]`, errors, structure, false);
    }
  }
  if (isObject(schema.not)) checkValueValidation(schema.not, `${path}.not`, errors, structure, false);
}

/** The root's `metadata` may only say `type: object` and constrain `name`/`generateName`. */
function checkRootMetadata(root: JSONSchemaProps, path: string, errors: SchemaErrors): void {
  const metadata = root.properties?.metadata;
  for (const name of ["metadata", "apiVersion", "kind"]) {
    const property = root.properties?.[name];
    if (property?.default !== undefined) {
      errors.forbidden(`${path}.properties[${name}].default`, `must not be set in top-level ${name}`);
    }
  }
  if (!metadata) return;
  const allowedKeys = new Set(["type", "properties"]);
  const extra = Object.keys(metadata).filter((k) => !allowedKeys.has(k) && k !== "default");
  const extraProperties = Object.keys(metadata.properties ?? {}).filter(
    (k) => k !== "name" && k !== "generateName",
  );
  const badChild = Object.values(metadata.properties ?? {}).some(
    (child) => child.type !== undefined && child.type !== "string",
  );
  if (metadata.type !== "object" || extra.length > 0 || extraProperties.length > 0 || badChild) {
    errors.forbidden(
      `${path}.properties[metadata]`,
      "must not specify anything other than name and generateName, but metadata is implicitly specified",
    );
  }
}

/** Patterns are Go RE2 expressions upstream: compiled by RE2 here too, with its syntax rules and messages. */
function checkPattern(pattern: string, path: string, errors: SchemaErrors): void {
  try {
    re2(pattern);
  } catch (error) {
    errors.invalid(path, pattern, `must be a valid regular expression, but isn't: ${errorMessage(error)}`);
  }
}
