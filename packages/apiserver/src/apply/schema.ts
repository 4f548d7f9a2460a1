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

// Built-in kinds. No npm package ships the upstream OpenAPI with its
// x-kubernetes-* extensions, so the facts are written here from the Go types'
// markers (patchMergeKey, listType, structType=atomic, +default).

const conditions = keyedList(["type"], struct({}));
const labelSelector = struct({}, { atomic: true });

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

const objectMetaInTemplate = struct(objectMeta.fields as Record<string, TypeNode>, { zero: true });

const container = struct({
  ports: keyedList(["containerPort", "protocol"], struct({}), { protocol: "TCP" }),
  env: keyedList(["name"], struct({})),
  volumeMounts: keyedList(["mountPath"], struct({})),
  volumeDevices: keyedList(["devicePath"], struct({})),
  resizePolicy: keyedList(["resourceName"], struct({})),
  args: atomicList,
  command: atomicList,
  envFrom: atomicList,
  resources: struct({
    limits: mapOf(scalar),
    requests: mapOf(scalar),
    claims: keyedList(["name"], struct({})),
  }),
});

const podSpec = struct(
  {
    containers: { ...keyedList(["name"], container), zero: true } as TypeNode,
    initContainers: keyedList(["name"], container),
    ephemeralContainers: keyedList(["name"], container),
    volumes: keyedList(["name"], struct({})),
    imagePullSecrets: keyedList(["name"], struct({})),
    tolerations: atomicList,
    hostAliases: keyedList(["ip"], struct({})),
    topologySpreadConstraints: keyedList(["topologyKey", "whenUnsatisfiable"], struct({ labelSelector })),
    resourceClaims: keyedList(["name"], struct({})),
    schedulingGates: keyedList(["name"], struct({})),
    nodeSelector: mapOf(scalar),
    readinessGates: atomicList,
    affinity: struct({
      podAffinity: struct({ requiredDuringSchedulingIgnoredDuringExecution: atomicList }),
      podAntiAffinity: struct({ requiredDuringSchedulingIgnoredDuringExecution: atomicList }),
    }),
  },
  { zero: true },
);

const podTemplateSpec = struct({ metadata: objectMetaInTemplate, spec: podSpec }, { zero: true });

const podStatus = struct(
  {
    conditions,
    podIPs: keyedList(["ip"], struct({})),
    hostIPs: keyedList(["ip"], struct({})),
    containerStatuses: atomicList,
    initContainerStatuses: atomicList,
    ephemeralContainerStatuses: atomicList,
  },
  { zero: true },
);

const workloadStatus = struct({ conditions }, { zero: true });

function root(fields: Record<string, TypeNode>): StructType {
  return struct({ apiVersion: scalar, kind: scalar, metadata: objectMeta, ...fields });
}

const servicePorts = keyedList(["port", "protocol"], struct({}), { protocol: "TCP" });

/** Merge semantics of the built-in kinds, by `group/version, Kind` (core: `v1, Kind`). */
export const builtinTypes: ReadonlyMap<string, StructType> = new Map<string, StructType>([
  ["v1/Pod", root({ spec: podSpec, status: podStatus })],
  ["v1/PodTemplate", root({ template: podTemplateSpec })],
  ["v1/ConfigMap", root({ data: mapOf(scalar), binaryData: mapOf(scalar) })],
  ["v1/Secret", root({ data: mapOf(scalar), stringData: mapOf(scalar) })],
  [
    "v1/Namespace",
    root({
      spec: struct({ finalizers: atomicList }, { zero: true }),
      status: struct({ conditions }, { zero: true }),
    }),
  ],
  [
    "v1/Service",
    root({
      spec: struct(
        {
          ports: servicePorts,
          selector: mapOf(scalar, true),
          clusterIPs: atomicList,
          ipFamilies: atomicList,
          externalIPs: atomicList,
          loadBalancerSourceRanges: atomicList,
        },
        { zero: true },
      ),
      status: struct({ conditions, loadBalancer: struct({ ingress: atomicList }) }, { zero: true }),
    }),
  ],
  ["v1/ServiceAccount", root({ secrets: keyedList(["name"], struct({})), imagePullSecrets: atomicList })],
  [
    "v1/Node",
    root({
      spec: struct({ taints: atomicList, podCIDRs: setList }, { zero: true }),
      status: struct(
        {
          conditions,
          addresses: keyedList(["type"], struct({})),
          capacity: mapOf(scalar),
          allocatable: mapOf(scalar),
          images: atomicList,
        },
        { zero: true },
      ),
    }),
  ],
  [
    "v1/Endpoints",
    root({
      subsets: atomicList,
    }),
  ],
  ...["Deployment", "ReplicaSet", "StatefulSet", "DaemonSet"].map(
    (kind) =>
      [
        `apps/v1/${kind}`,
        root({
          spec: struct(
            {
              selector: labelSelector,
              template: podTemplateSpec,
              strategy: struct({ rollingUpdate: struct({}) }, { zero: true }),
              updateStrategy: struct({ rollingUpdate: struct({}) }, { zero: true }),
              volumeClaimTemplates: atomicList,
            },
            { zero: true },
          ),
          status: workloadStatus,
        }),
      ] as const,
  ),
  [
    "batch/v1/Job",
    root({
      spec: struct({ selector: labelSelector, template: podTemplateSpec }, { zero: true }),
      status: workloadStatus,
    }),
  ],
  ["coordination.k8s.io/v1/Lease", root({ spec: struct({}, { zero: true }) })],
  ["discovery.k8s.io/v1/EndpointSlice", root({ endpoints: atomicList, ports: atomicList })],
]);

/** The type for an apiVersion and kind: a built-in's table, or ObjectMeta over a deduced body. */
export function typeFor(apiVersion: string, kind: string): StructType {
  return builtinTypes.get(`${apiVersion}/${kind}`) ?? root({});
}
