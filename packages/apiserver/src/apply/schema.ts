import type { Scalar } from "./fieldpath.js";

/**
 * What server-side apply needs to know of a type: structured-merge-diff's
 * schema, reduced to list types, map keys, atomicity and declared fields.
 */
export type TypeNode =
  | { kind: "scalar" }
  /** Anything: objects are granular maps of `deduced`, lists are atomic (SMD's deduced type). */
  | { kind: "deduced" }
  | StructType
  | { kind: "map"; values: TypeNode; atomic?: boolean }
  | { kind: "list"; listType: "atomic" }
  | { kind: "list"; listType: "set" }
  | {
      kind: "list";
      listType: "map";
      keys: readonly string[];
      /** Defaults of key fields (ContainerPort.protocol is `TCP`), used when an item omits them. */
      keyDefaults?: Readonly<Record<string, Scalar>>;
      items: TypeNode;
      /** Present (as null) in Go's zero value: a non-omitempty list such as PodSpec.containers. */
      zero?: boolean;
    };

export interface StructType {
  kind: "struct";
  fields: Readonly<Record<string, TypeNode>>;
  /** An atomic struct (LabelSelector, OwnerReference) is owned and replaced whole. */
  atomic?: boolean;
  /**
   * The type of keys that are not declared. Default `deduced`: we do not carry
   * every built-in field, so an undeclared one is tracked as an untyped value
   * rather than refused (upstream answers 500 "field not declared in schema").
   */
  rest?: TypeNode;
  /**
   * The struct exists in Go's zero value (a non-pointer field), so an Update
   * that creates it does not own the node itself (§1.3 of the apply digest).
   */
  zero?: boolean;
}

export const scalar: TypeNode = { kind: "scalar" };
export const deduced: TypeNode = { kind: "deduced" };
export const atomicList: TypeNode = { kind: "list", listType: "atomic" };
export const setList: TypeNode = { kind: "list", listType: "set" };

export function struct(
  fields: Record<string, TypeNode>,
  options: Partial<Omit<StructType, "kind" | "fields">> = {},
): StructType {
  return { kind: "struct", fields, ...options };
}

export function mapOf(values: TypeNode, atomic = false): TypeNode {
  return atomic ? { kind: "map", values, atomic } : { kind: "map", values };
}

export function keyedList(
  keys: readonly string[],
  items: TypeNode,
  keyDefaults?: Record<string, Scalar>,
): TypeNode {
  return keyDefaults === undefined
    ? { kind: "list", listType: "map", keys, items }
    : { kind: "list", listType: "map", keys, items, keyDefaults };
}

/** The child type of a struct or map key, and whether the key is a declared struct field. */
export function fieldType(type: TypeNode, name: string): { type: TypeNode; declared: boolean } {
  if (type.kind === "struct") {
    const declared = type.fields[name];
    if (declared !== undefined) return { type: declared, declared: true };
    return { type: type.rest ?? deduced, declared: false };
  }
  if (type.kind === "map") return { type: type.values, declared: false };
  return { type: deduced, declared: false };
}

/** The child type of a struct or map key ({@link fieldType} without the allocation, for hot walks). */
export function childType(type: TypeNode, name: string): TypeNode {
  if (type.kind === "struct") return type.fields[name] ?? type.rest ?? deduced;
  if (type.kind === "map") return type.values;
  return deduced;
}

/** A `deduced` type made concrete by the value it describes. */
export function resolve(type: TypeNode, value: unknown): TypeNode {
  if (type.kind !== "deduced") return type;
  if (Array.isArray(value)) return atomicList;
  if (typeof value === "object" && value !== null) return deducedMap;
  return scalar;
}

const deducedMap = mapOf(deduced);

/** The parts of an OpenAPI v3 schema (a CRD's structural schema) that decide merge semantics. */
export interface OpenAPISchema {
  type?: string;
  properties?: Record<string, OpenAPISchema>;
  additionalProperties?: OpenAPISchema | boolean;
  items?: OpenAPISchema;
  default?: unknown;
  "x-kubernetes-list-type"?: "atomic" | "set" | "map";
  "x-kubernetes-list-map-keys"?: string[];
  "x-kubernetes-map-type"?: "atomic" | "granular";
  "x-kubernetes-preserve-unknown-fields"?: boolean;
  "x-kubernetes-embedded-resource"?: boolean;
  "x-kubernetes-int-or-string"?: boolean;
}

/**
 * Merge semantics from an OpenAPI schema, as kube-openapi's `schemaconv` derives
 * them for CRDs: arrays without `x-kubernetes-list-type` are atomic (CRDs have no
 * patch strategies), preserve-unknown and schemaless objects are deduced.
 * `metadata` is ObjectMeta at the root and in embedded resources.
 */
export function typeFromOpenAPI(schema: OpenAPISchema | undefined, root = true): TypeNode {
  if (schema === undefined) return deduced;
  if (root || schema["x-kubernetes-embedded-resource"]) {
    const inner = typeFromOpenAPI({ ...schema, "x-kubernetes-embedded-resource": false }, false);
    const fields = inner.kind === "struct" ? inner.fields : {};
    return struct(
      { ...fields, apiVersion: scalar, kind: scalar, metadata: objectMeta },
      inner.kind === "struct" ? { rest: inner.rest ?? deduced } : {},
    );
  }
  if (schema.type === "array") {
    const listType = schema["x-kubernetes-list-type"] ?? "atomic";
    if (listType === "set") return setList;
    if (listType === "map") {
      const keys = schema["x-kubernetes-list-map-keys"] ?? [];
      const keyDefaults: Record<string, Scalar> = {};
      for (const key of keys) {
        const value = schema.items?.properties?.[key]?.default;
        if (value !== undefined) keyDefaults[key] = value as Scalar;
      }
      return keyedList(keys, typeFromOpenAPI(schema.items, false), keyDefaults);
    }
    return atomicList;
  }
  if (
    schema.type === "object" ||
    schema.properties !== undefined ||
    schema.additionalProperties !== undefined
  ) {
    const atomic = schema["x-kubernetes-map-type"] === "atomic";
    const preserve = schema["x-kubernetes-preserve-unknown-fields"] === true;
    const additional = schema.additionalProperties;
    if (schema.properties !== undefined) {
      const fields: Record<string, TypeNode> = {};
      for (const [name, property] of Object.entries(schema.properties))
        fields[name] = typeFromOpenAPI(property, false);
      const rest = typeof additional === "object" ? typeFromOpenAPI(additional, false) : deduced;
      return struct(
        fields,
        atomic ? { atomic, rest } : { rest: preserve || additional !== undefined ? rest : deduced },
      );
    }
    if (typeof additional === "object") return mapOf(typeFromOpenAPI(additional, false), atomic);
    return atomic ? mapOf(deduced, true) : deduced;
  }
  if (schema.type === undefined && schema["x-kubernetes-preserve-unknown-fields"]) return deduced;
  return scalar;
}

/** ObjectMeta's merge semantics, at the root of every kind and of embedded resources. */
export const objectMeta = struct(
  {
    labels: mapOf(scalar),
    annotations: mapOf(scalar),
    finalizers: setList,
    ownerReferences: keyedList(["uid"], struct({}, { atomic: true })),
    managedFields: atomicList,
  },
  { zero: true },
);
