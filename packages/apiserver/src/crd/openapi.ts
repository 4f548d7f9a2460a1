import type { ResourceDescriptor } from "@reconcile/api";
import {
  builtinDefinitions,
  type KindSchema,
  type OpenAPIDefinition,
  referencedDefinitions,
} from "../schemas/kind-schema.js";
import { prune } from "./pruning.js";
import type { JSONSchemaProps, JsonObject } from "./schema.js";

const objectMeta = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

/**
 * A custom kind's schema as kube-apiserver publishes it (apiextensions-apiserver's
 * `builder.BuildOpenAPIV3`): the version's structural schema under the name of
 * the reversed group, version and kind (`com.example.stable.v1.CronTab`), with
 * `apiVersion` and `kind` described as TypeMeta, `metadata` a reference to
 * ObjectMeta, and the group-version-kind extension `kubectl explain` looks
 * for. Unknown fields are found by the CRD's pruning.
 */
export function customKindSchema(descriptor: ResourceDescriptor, schema: JSONSchemaProps): KindSchema {
  const name = [...descriptor.group.split(".").reverse(), descriptor.version, descriptor.kind].join(".");
  let definitions: Readonly<Record<string, OpenAPIDefinition>> | undefined;
  return {
    name,
    definitions() {
      definitions ??= {
        [name]: publishedSchema(descriptor, schema),
        ...referencedDefinitions(builtinDefinitions(), objectMeta),
      };
      return definitions;
    },
    pruneUnknownFields(object) {
      return prune(object as JsonObject, schema);
    },
  };
}

function publishedSchema(descriptor: ResourceDescriptor, schema: JSONSchemaProps): OpenAPIDefinition {
  const { properties, ...rest } = withIntOrStringUnfolded(schema) as JSONSchemaProps;
  const { metadata: declaredMetadata, apiVersion: _a, kind: _k, ...declared } = properties ?? {};
  return {
    ...rest,
    type: "object",
    properties: {
      apiVersion: {
        description:
          "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources",
        type: "string",
      },
      kind: {
        description:
          "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds",
        type: "string",
      },
      metadata: {
        $ref: `#/definitions/${objectMeta}`,
        description:
          declaredMetadata?.description ??
          "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
      },
      ...declared,
    },
    "x-kubernetes-group-version-kind": [
      { group: descriptor.group, kind: descriptor.kind, version: descriptor.version },
    ],
  };
}

/**
 * `x-kubernetes-int-or-string` nodes as kube-apiserver publishes them, with
 * `anyOf: [{type: integer}, {type: string}]` when they say nothing of their own.
 */
function withIntOrStringUnfolded(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withIntOrStringUnfolded);
  if (schema === null || typeof schema !== "object") return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "properties" && value !== null && typeof value === "object")
      out[key] = Object.fromEntries(
        Object.entries(value).map(([name, child]) => [name, withIntOrStringUnfolded(child)]),
      );
    else if (key === "items" || key === "additionalProperties" || key === "not")
      out[key] = withIntOrStringUnfolded(value);
    else if (key === "allOf" || key === "anyOf" || key === "oneOf") out[key] = withIntOrStringUnfolded(value);
    else out[key] = value;
  }
  if (out["x-kubernetes-int-or-string"] === true && out.anyOf === undefined && out.allOf === undefined)
    out.anyOf = [{ type: "integer" }, { type: "string" }];
  return out;
}
