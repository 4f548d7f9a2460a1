import type { SchemaErrors } from "./errors.js";
import type { JSONSchemaProps } from "./schema.js";

// The list and map type markers (x-kubernetes-list-type, -list-map-keys, -map-type), checked as
// upstream's validateStructuralInvariants does.

export function checkListType(schema: JSONSchemaProps, path: string, errors: SchemaErrors): void {
  const listType = schema["x-kubernetes-list-type"];
  const keys = schema["x-kubernetes-list-map-keys"];
  if (listType !== undefined) {
    if (!["atomic", "set", "map"].includes(listType)) {
      errors.notSupported(`${path}.x-kubernetes-list-type`, listType, ["atomic", "set", "map"]);
    } else if (schema.type !== "array") {
      errors.invalid(
        `${path}.type`,
        schema.type ?? "",
        "must be array if x-kubernetes-list-type is specified",
      );
    }
  }
  if (keys?.length && listType !== "map") {
    errors.invalid(
      `${path}.x-kubernetes-list-type`,
      listType ?? "",
      "must be map if x-kubernetes-list-map-keys is non-empty",
    );
  }
  const items = Array.isArray(schema.items) ? undefined : schema.items;
  if (listType === "map") {
    if (!keys?.length) {
      errors.required(
        `${path}.x-kubernetes-list-map-keys`,
        "must not be empty if x-kubernetes-list-type is map",
      );
    }
    if (items && items.type !== "object") {
      errors.invalid(
        `${path}.items.type`,
        items.type ?? "",
        "must be object if parent array's x-kubernetes-list-type is map",
      );
    }
    const seen = new Set<string>();
    for (const [i, key] of (keys ?? []).entries()) {
      if (seen.has(key)) errors.duplicate(`${path}.x-kubernetes-list-map-keys[${i}]`, key);
      seen.add(key);
      const property = items?.properties?.[key];
      if (!property) {
        errors.invalid(
          `${path}.x-kubernetes-list-map-keys`,
          keys,
          "entries must all be names of item properties",
        );
        continue;
      }
      if (!["string", "integer", "number", "boolean"].includes(property.type ?? "")) {
        errors.invalid(
          `${path}.items.properties[${key}].type`,
          property.type ?? "",
          "must be a scalar type if parent array's x-kubernetes-list-type is map",
        );
      }
      if (property.nullable) {
        errors.forbidden(
          `${path}.items.properties[${key}].nullable`,
          "this property is in x-kubernetes-list-map-keys, so it cannot be nullable",
        );
      }
      if (property.default === undefined && !items?.required?.includes(key)) {
        errors.required(
          `${path}.items.properties[${key}].default`,
          "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
        );
      }
    }
  }
  if (listType === "set" && items && (items.type === "object" || items.type === "array")) {
    const atomic =
      items.type === "object"
        ? items["x-kubernetes-map-type"] === "atomic"
        : items["x-kubernetes-list-type"] === "atomic";
    if (!atomic) {
      const field = items.type === "object" ? "x-kubernetes-map-type" : "x-kubernetes-list-type";
      errors.invalid(
        `${path}.items.${field}`,
        items[field] ?? "",
        "must be atomic as item of a list with x-kubernetes-list-type=set",
      );
    }
  }
  if ((listType === "set" || listType === "map") && items?.nullable) {
    errors.forbidden(
      `${path}.items.nullable`,
      `cannot be nullable when x-kubernetes-list-type is ${listType}`,
    );
  }
}

export function checkMapType(schema: JSONSchemaProps, path: string, errors: SchemaErrors): void {
  const mapType = schema["x-kubernetes-map-type"];
  if (mapType === undefined) return;
  if (mapType !== "atomic" && mapType !== "granular") {
    errors.notSupported(`${path}.x-kubernetes-map-type`, mapType, ["atomic", "granular"]);
  } else if (schema.type !== "object") {
    errors.invalid(`${path}.type`, schema.type ?? "", "must be object if x-kubernetes-map-type is specified");
  }
}
