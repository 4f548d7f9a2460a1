import {
  builtinDefinitionName,
  builtinDefinitions,
  isMergeStrategy,
  isRecord,
  type OpenAPIDefinition,
  schemaRef,
} from "../schemas/kind-schema.js";
import type { Scalar } from "./fieldpath.js";
import {
  atomicList,
  deduced,
  keyedList,
  mapOf,
  objectMeta,
  type StructType,
  scalar,
  setList,
  struct,
  type TypeNode,
} from "./schema.js";

/**
 * Server-side apply's type of a built-in kind, derived from Kubernetes'
 * OpenAPI document as kube-openapi's `schemaconv` converts it: a list's
 * `x-kubernetes-list-type` first, else its patch strategy (`merge` with a
 * merge key is a map keyed by it, without one a set), else atomic;
 * `x-kubernetes-map-type: atomic` structs and maps are atomic; an object
 * with no declared shape is deduced. Compiled once per definition.
 */
export function builtinApplyType(definitionName: string): StructType {
  const type = typeOfDefinition(definitionName);
  return type.kind === "struct" ? type : struct({ apiVersion: scalar, kind: scalar, metadata: objectMeta });
}

/** The type for an apiVersion and kind: a built-in kind's, or ObjectMeta over a deduced body. */
export function typeFor(apiVersion: string, kind: string): StructType {
  const slash = apiVersion.indexOf("/");
  const name =
    slash < 0
      ? builtinDefinitionName("", apiVersion, kind)
      : builtinDefinitionName(apiVersion.slice(0, slash), apiVersion.slice(slash + 1), kind);
  return name === undefined
    ? struct({ apiVersion: scalar, kind: scalar, metadata: objectMeta })
    : builtinApplyType(name);
}

// Facts of the Go types that the OpenAPI v2 document cannot say; the server follows the Go type.

/**
 * Struct fields that are Go values (not pointers) in every built-in type, so
 * present in the zero value that server-side apply compares a create against
 * (upstream's v3 document marks them `default: {}`; the v2 one does not).
 */
const valueStructFields: ReadonlySet<string> = new Set([
  "metadata",
  "spec",
  "status",
  "template",
  "strategy",
  "updateStrategy",
]);

/** Defaults of list-map key fields (`+default="TCP"`, absent from v2), used when an item omits them. */
const keyDefaults: Readonly<Record<string, Readonly<Record<string, Scalar>>>> = {
  "io.k8s.api.core.v1.ContainerPort": { protocol: "TCP" },
  "io.k8s.api.core.v1.ServicePort": { protocol: "TCP" },
};

const derived = new Map<string, TypeNode>();

function typeOfDefinition(name: string): TypeNode {
  const known = derived.get(name);
  if (known !== undefined) return known;
  const definition = builtinDefinitions()[name];
  if (definition === undefined) return deduced;
  if (!isRecord(definition.properties)) {
    const type = typeOf(definition);
    derived.set(name, type);
    return type;
  }
  // Registered before its fields are compiled, so recursive definitions (JSONSchemaProps) end.
  const fields: Record<string, TypeNode> = {};
  const type = struct(fields, definition["x-kubernetes-map-type"] === "atomic" ? { atomic: true } : {});
  derived.set(name, type);
  const required = new Set(Array.isArray(definition.required) ? definition.required : []);
  for (const [field, property] of Object.entries(definition.properties))
    if (isRecord(property)) fields[field] = inZeroValue(typeOf(property), field, required.has(field));
  return type;
}

function typeOf(schema: OpenAPIDefinition): TypeNode {
  const ref = schemaRef(schema);
  if (ref !== undefined) return typeOfDefinition(ref);
  if (schema.type === "array") return listType(schema);
  const atomic = schema["x-kubernetes-map-type"] === "atomic";
  if (isRecord(schema.properties)) {
    const fields: Record<string, TypeNode> = {};
    for (const [field, property] of Object.entries(schema.properties))
      if (isRecord(property)) fields[field] = typeOf(property);
    return struct(fields, atomic ? { atomic } : {});
  }
  if (isRecord(schema.additionalProperties)) return mapOf(typeOf(schema.additionalProperties), atomic);
  if (schema.type === "object") return atomic ? mapOf(deduced, true) : deduced;
  // Definitions with no type (apiextensions' JSON, JSONSchemaPropsOrArray) hold anything.
  return schema.type === undefined ? deduced : scalar;
}

function listType(schema: OpenAPIDefinition): TypeNode {
  const items = isRecord(schema.items) ? schema.items : {};
  const declared = schema["x-kubernetes-list-type"];
  const merges = isMergeStrategy(schema["x-kubernetes-patch-strategy"]);
  const mergeKey = schema["x-kubernetes-patch-merge-key"];
  const mapKeys = schema["x-kubernetes-list-map-keys"];
  let keys: readonly string[] | undefined;
  if (declared === "map") keys = Array.isArray(mapKeys) ? (mapKeys as string[]) : [];
  else if (declared === undefined && merges && typeof mergeKey === "string") keys = [mergeKey];
  if (keys !== undefined) {
    const itemDefinition = schemaRef(items);
    return keyedList(
      keys,
      typeOf(items),
      itemDefinition === undefined ? undefined : keyDefaults[itemDefinition],
    );
  }
  if (declared === "set" || (declared === undefined && merges)) return setList;
  return atomicList;
}

/** A field's type as its struct holds it: a Go value struct and a required (non-omitempty) keyed list exist in the zero value. */
function inZeroValue(type: TypeNode, field: string, required: boolean): TypeNode {
  if (type.kind === "struct" && valueStructFields.has(field)) return { ...type, zero: true };
  if (type.kind === "list" && type.listType === "map" && required) return { ...type, zero: true };
  return type;
}
