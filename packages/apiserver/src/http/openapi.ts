import { createHash } from "node:crypto";
import type { ResourceDescriptor } from "@reconcile/api";
import type { ResourceDefinition } from "../kinds/definition.js";
import { builtinKindSchema, type KindSchema, type OpenAPIDefinition } from "../schemas/kind-schema.js";
import { encodeOpenAPIV2, openAPIV2Document } from "../schemas/openapi-v2.js";
import { groupVersions } from "./discovery.js";

/**
 * The OpenAPI v3 documents kubectl downloads: before `create`, `apply`,
 * `replace` and `edit` it looks for a PATCH operation tagged with the kind's
 * group-version-kind and a `fieldValidation` parameter (`QueryParamVerifierV3`),
 * and then leaves validation to the server (`?fieldValidation=Strict`);
 * `kubectl explain` walks the kind's schema under `components.schemas`.
 */
export interface OpenApiDocuments {
  /** `GET /openapi/v3`. */
  index: object;
  /** `GET /openapi/v3/{path}` by path (`api/v1`, `apis/apps/v1`). */
  byPath: ReadonlyMap<string, object>;
  /** `GET /openapi/v2`: every kind's definitions in one document, as JSON and as gnostic protobuf; built on first use. */
  v2(): { json: object; protobuf: Buffer };
}

/**
 * One document per served group-version, holding the schemas of its kinds
 * (a definition's `openAPI`; for a bare descriptor, Kubernetes' own schema of
 * its kind, if any) and every schema they reference, in OpenAPI v3's form:
 * `#/components/schemas/<name>` references, wrapped in `allOf` where the
 * property adds a description, as kube-apiserver publishes them.
 */
export function openApiDocuments(
  kinds: readonly (ResourceDefinition | ResourceDescriptor)[],
): OpenApiDocuments {
  const schemaOf = new Map<ResourceDescriptor, KindSchema | undefined>();
  /** Kinds that take no strategic merge patch (custom resources): their PATCH operation leaves it out, so kubectl does not send one. */
  const noStrategicMerge = new Set<ResourceDescriptor>();
  const descriptors: ResourceDescriptor[] = [];
  for (const kind of kinds) {
    if ("descriptor" in kind) {
      descriptors.push(kind.descriptor);
      schemaOf.set(kind.descriptor, kind.openAPI);
      if (kind.patchMeta === undefined) noStrategicMerge.add(kind.descriptor);
    } else {
      descriptors.push(kind);
      schemaOf.set(kind, builtinKindSchema(kind.group, kind.version, kind.kind));
    }
  }
  const byPath = new Map<string, object>();
  const paths: Record<string, { serverRelativeURL: string }> = {};
  const allDefinitions: Record<string, OpenAPIDefinition> = {};
  for (const gv of groupVersions(descriptors)) {
    const path = gv.group === "" ? `api/${gv.version}` : `apis/${gv.group}/${gv.version}`;
    const operations: Record<string, object> = {};
    const schemas: Record<string, object> = {};
    for (const resource of gv.resources) {
      const item = resource.namespaced
        ? `/${path}/namespaces/{namespace}/${resource.plural}/{name}`
        : `/${path}/${resource.plural}/{name}`;
      const kindSchema = schemaOf.get(resource);
      const bodySchema = kindSchema
        ? { $ref: `#/components/schemas/${kindSchema.name}` }
        : { type: "object" };
      operations[item] = { patch: patchOperation(resource, bodySchema, !noStrategicMerge.has(resource)) };
      if (kindSchema === undefined) continue;
      for (const [name, definition] of Object.entries(kindSchema.definitions())) {
        if (!Object.hasOwn(schemas, name)) schemas[name] = toOpenAPIV3(definition);
        allDefinitions[name] ??= definition;
      }
    }
    const document = {
      openapi: "3.0.0",
      info: { title: "Kubernetes", version: "v1.32.0" },
      paths: operations,
      components: { schemas: sortedByKey(schemas) },
    };
    const hash = createHash("sha512")
      .update(JSON.stringify(document))
      .digest("hex")
      .slice(0, 32)
      .toUpperCase();
    byPath.set(path, document);
    paths[path] = { serverRelativeURL: `/openapi/v3/${path}?hash=${hash}` };
  }
  let v2: { json: object; protobuf: Buffer } | undefined;
  return {
    index: { paths },
    byPath,
    v2() {
      if (v2 === undefined) {
        const json = openAPIV2Document(allDefinitions);
        v2 = { json, protobuf: encodeOpenAPIV2(json) };
      }
      return v2;
    },
  };
}

function patchOperation(resource: ResourceDescriptor, bodySchema: object, strategicMerge: boolean): object {
  return {
    operationId: `patch${resource.kind}`,
    "x-kubernetes-group-version-kind": {
      group: resource.group,
      version: resource.version,
      kind: resource.kind,
    },
    "x-kubernetes-action": "patch",
    parameters: [
      { name: "fieldValidation", in: "query", schema: { type: "string", uniqueItems: true } },
      { name: "fieldManager", in: "query", schema: { type: "string", uniqueItems: true } },
    ],
    requestBody: {
      content: {
        "application/apply-patch+yaml": { schema: { type: "object" } },
        "application/json-patch+json": { schema: { type: "object" } },
        "application/merge-patch+json": { schema: { type: "object" } },
        ...(strategicMerge
          ? { "application/strategic-merge-patch+json": { schema: { type: "object" } } }
          : {}),
      },
    },
    responses: {
      "200": { description: "OK", content: { "application/json": { schema: bodySchema } } },
    },
  };
}

/**
 * A schema as OpenAPI v3 carries it: references into `#/components/schemas/`,
 * and a reference with siblings (a property's description) as `allOf: [{$ref}]`
 * beside them, as kube-openapi's v3 builder writes it.
 */
function toOpenAPIV3(schema: OpenAPIDefinition): object {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "$ref" && typeof value === "string") continue;
    out[key] = convertChild(key, value);
  }
  const ref = schema.$ref;
  if (typeof ref !== "string") return out;
  const v3ref = `#/components/schemas/${ref.slice(ref.lastIndexOf("/") + 1)}`;
  return Object.keys(out).length === 0 ? { $ref: v3ref } : { allOf: [{ $ref: v3ref }], ...out };
}

function convertChild(key: string, value: unknown): unknown {
  // Only these keywords hold schemas; `properties` and `patternProperties` map names to schemas.
  if (key === "properties" || key === "patternProperties" || key === "definitions") {
    return isRecord(value)
      ? Object.fromEntries(
          Object.entries(value).map(([name, child]) => [name, isRecord(child) ? toOpenAPIV3(child) : child]),
        )
      : value;
  }
  if (key === "items" || key === "additionalProperties" || key === "not")
    return isRecord(value) ? toOpenAPIV3(value) : value;
  if (key === "allOf" || key === "anyOf" || key === "oneOf")
    return Array.isArray(value)
      ? value.map((child) => (isRecord(child) ? toOpenAPIV3(child) : child))
      : value;
  return value;
}

function sortedByKey<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
