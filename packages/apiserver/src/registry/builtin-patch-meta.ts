import {
  builtinDefinitions,
  isMergeStrategy,
  isRecord,
  type OpenAPIDefinition,
  schemaRef,
} from "../schemas/kind-schema.js";
import { atomicPatchMeta, type PatchMeta } from "./strategic-merge-patch.js";

/**
 * The strategic merge patch's view of a built-in kind, derived from
 * Kubernetes' OpenAPI document: each list's `x-kubernetes-patch-strategy`
 * and `x-kubernetes-patch-merge-key` at its own position, as apimachinery's
 * `PatchMetaFromOpenAPI` reads them (a Service's `ports` merge on `port`, a
 * container's on `containerPort`). Compiled once per definition.
 */
export function builtinPatchMeta(definitionName: string): PatchMeta {
  return metaOfDefinition(definitionName);
}

const derived = new Map<string, PatchMeta>();

function metaOfDefinition(name: string): PatchMeta {
  const known = derived.get(name);
  if (known !== undefined) return known;
  const definition = builtinDefinitions()[name];
  if (definition === undefined) return atomicPatchMeta;
  if (!isRecord(definition.properties)) {
    const meta = metaOf(definition);
    derived.set(name, meta);
    return meta;
  }
  // Registered before its fields are compiled, so recursive definitions (JSONSchemaProps) end.
  const fields = new Map<string, PatchMeta>();
  derived.set(name, structMeta(fields));
  for (const [field, property] of Object.entries(definition.properties))
    if (isRecord(property)) fields.set(field, metaOf(property));
  return derived.get(name) as PatchMeta;
}

function metaOf(schema: OpenAPIDefinition): PatchMeta {
  const ref = schemaRef(schema);
  if (ref !== undefined) return metaOfDefinition(ref);
  if (schema.type === "array") {
    const items = isRecord(schema.items) ? metaOf(schema.items) : atomicPatchMeta;
    const merges = isMergeStrategy(schema["x-kubernetes-patch-strategy"]);
    const key = schema["x-kubernetes-patch-merge-key"];
    if (!merges && items === atomicPatchMeta) return atomicPatchMeta;
    const mergeKey = merges && typeof key === "string" ? key : undefined;
    return {
      field: () => atomicPatchMeta,
      items: () => items,
      mergeKey: () => mergeKey,
      mergesScalars: merges && mergeKey === undefined,
    };
  }
  if (isRecord(schema.properties)) {
    const fields = new Map<string, PatchMeta>();
    for (const [field, property] of Object.entries(schema.properties))
      if (isRecord(property)) fields.set(field, metaOf(property));
    return structMeta(fields);
  }
  if (isRecord(schema.additionalProperties)) {
    const values = metaOf(schema.additionalProperties);
    if (values === atomicPatchMeta) return atomicPatchMeta;
    return {
      field: () => values,
      items: () => atomicPatchMeta,
      mergeKey: () => undefined,
      mergesScalars: false,
    };
  }
  return atomicPatchMeta;
}

function structMeta(fields: ReadonlyMap<string, PatchMeta>): PatchMeta {
  return {
    field: (name) => fields.get(name) ?? atomicPatchMeta,
    items: () => atomicPatchMeta,
    mergeKey: () => undefined,
    mergesScalars: false,
  };
}
