import { StatusError, secrets } from "@reconcile/api";
import { afterAll, describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";
import { builtinDefinitions, isRecord, type OpenAPIDefinition, schemaRef } from "../schemas/kind-schema.js";

// Every field of every built-in kind the server serves, each given a value of a JSON type
// Go's decoder refuses for it: the answer must be a 400, never a 201, a 422 or a 500.

const server = new ApiServer();
afterAll(() => server.close());

/** A field's type as Go's decoder reads it. */
type FieldType =
  | {
      kind: "scalar";
      type: "string" | "integer" | "number" | "boolean" | "intOrString" | "quantity" | "time" | "bytes";
    }
  | { kind: "struct"; definition: string }
  | { kind: "array" }
  | { kind: "map" }
  | { kind: "any" };

interface FieldCase {
  /** Segments to the field: names, or `[]` for a list's one item, `{}` for a map's one value. */
  path: string[];
  type: FieldType;
}

const quantity = "io.k8s.apimachinery.pkg.api.resource.Quantity";
const times = ["io.k8s.apimachinery.pkg.apis.meta.v1.Time", "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime"];

function typeOf(schema: OpenAPIDefinition): FieldType {
  const ref = schemaRef(schema);
  if (ref === quantity) return { kind: "scalar", type: "quantity" };
  if (ref !== undefined && times.includes(ref)) return { kind: "scalar", type: "time" };
  if (ref !== undefined) {
    const definition = builtinDefinitions()[ref];
    if (definition === undefined) return { kind: "any" };
    if (isRecord(definition.properties)) return { kind: "struct", definition: ref };
    return typeOf(definition);
  }
  switch (schema.type) {
    case "string":
      if (schema.format === "byte") return { kind: "scalar", type: "bytes" };
      return { kind: "scalar", type: schema.format === "int-or-string" ? "intOrString" : "string" };
    case "integer":
    case "number":
    case "boolean":
      return { kind: "scalar", type: schema.type };
    case "array":
      return { kind: "array" };
    case "object":
      return isRecord(schema.additionalProperties) ? { kind: "map" } : { kind: "any" };
    default:
      return { kind: "any" };
  }
}

/** Every field below a definition, depth first, each definition once per path (they recurse). */
function fieldCases(definition: string, path: string[] = [], seen: string[] = []): FieldCase[] {
  const out: FieldCase[] = [];
  const properties = builtinDefinitions()[definition]?.properties;
  if (!isRecord(properties) || seen.includes(definition)) return out;
  for (const [name, property] of Object.entries(properties)) {
    if (!isRecord(property)) continue;
    if (path.length === 0 && (name === "apiVersion" || name === "kind")) continue;
    out.push(...casesOf(property, [...path, name], [...seen, definition]));
  }
  return out;
}

function casesOf(schema: OpenAPIDefinition, path: string[], seen: string[]): FieldCase[] {
  const type = typeOf(schema);
  const out: FieldCase[] = [{ path, type }];
  if (type.kind === "struct") out.push(...fieldCases(type.definition, path, seen));
  const ref = schemaRef(schema);
  const resolved = ref === undefined ? schema : (builtinDefinitions()[ref] ?? schema);
  if (type.kind === "array" && isRecord(resolved.items))
    out.push(...casesOf(resolved.items, [...path, "[]"], seen));
  if (type.kind === "map" && isRecord(resolved.additionalProperties))
    out.push(...casesOf(resolved.additionalProperties, [...path, "{}"], seen));
  return out;
}

/** Values of every JSON type Go's decoder refuses for a field of this type, and text its own decoders refuse. */
function wrongValues(type: FieldType): unknown[] {
  switch (type.kind) {
    case "struct":
    case "map":
      return ["text", 7, true, [1]];
    case "array":
      return ["text", 7, true, { a: 1 }];
    case "any":
      return [];
    case "scalar":
      switch (type.type) {
        case "string":
          return [7, true, [1], { a: 1 }];
        case "integer":
          return ["7", true, [1], { a: 1 }, 1.5];
        case "number":
          return ["7", true, [1], { a: 1 }];
        case "boolean":
          return ["true", 1, [1], { a: 1 }];
        case "intOrString":
          return [true, [1], { a: 1 }, 1.5];
        case "quantity":
          return [true, [1], { a: 1 }, "abc", "1Qi"];
        case "time":
          return [7, true, [1], { a: 1 }, "yesterday", "2026-13-01T00:00:00Z"];
        case "bytes":
          return [7, true, { a: 1 }, "!!!", [300]];
      }
  }
}

/** A body holding `value` at `path`, with the least around it that reaches there. */
function bodyWith(path: readonly string[], value: unknown, name: string): Record<string, unknown> {
  let inner: unknown = value;
  for (let i = path.length - 1; i >= 0; i--) {
    const segment = path[i]!;
    if (segment === "[]") inner = [inner];
    else if (segment === "{}") inner = { key: inner };
    else inner = { [segment]: inner };
  }
  const body = inner as Record<string, unknown>;
  if (path[0] !== "metadata") return { ...body, metadata: { name } };
  // The wrong value is the metadata or in it: a name beside it where one fits.
  return isRecord(body.metadata) && path[1] !== "name" ? { metadata: { ...body.metadata, name } } : body;
}

const kinds = server.definitions.list().filter((definition) => definition.openAPI !== undefined);

describe("typed decoding of every built-in kind", () => {
  it("knows Kubernetes' schema of every kind it serves", () => {
    const unknown = server.definitions.list().filter((definition) => definition.openAPI === undefined);
    // ComponentStatus has no definition in the document: it is computed when read, never written.
    expect(unknown.map((definition) => definition.descriptor.kind).sort()).toEqual(["ComponentStatus"]);
    expect(kinds.length).toBe(52);
  });

  it.each(
    kinds.map((d) => [`${d.descriptor.group || "core"}/${d.descriptor.kind}`, d] as const),
  )("%s: a wrongly typed value at any field is a 400", async (_label, definition) => {
    const descriptor = definition.descriptor;
    const client = server.client().resource(descriptor, descriptor.namespaced ? "default" : undefined);
    const wrong: string[] = [];
    let tried = 0;
    for (const field of fieldCases(definition.openAPI!.name)) {
      for (const value of wrongValues(field.type)) {
        tried++;
        const body = bodyWith(field.path, value, `t${tried}`);
        let outcome: string;
        try {
          await client.create(body as never);
          outcome = "201";
        } catch (error) {
          if (!StatusError.isInstance(error)) outcome = `threw ${String(error)}`;
          else if (error.status.code === 400) continue;
          else outcome = `${error.status.code} ${error.status.message}`;
        }
        wrong.push(`${field.path.join(".")} = ${JSON.stringify(value)}: ${outcome}`);
      }
    }
    expect(tried).toBeGreaterThan(0);
    expect(wrong).toEqual([]);
  });
});

describe("typed decoding words its errors as kube-apiserver's decoder does", () => {
  const pod = (spec: Record<string, unknown>, metadata: Record<string, unknown> = {}) => ({
    metadata: { name: "p", ...metadata },
    spec: { containers: [{ name: "c", image: "i" }], ...spec },
  });
  const container = (fields: Record<string, unknown>) =>
    pod({ containers: [{ name: "c", image: "i", ...fields }] });
  const cases: Array<[string, string, Record<string, unknown>, string]> = [
    [
      "a list for a map",
      "services",
      { metadata: { name: "s" }, spec: { selector: ["app"], ports: [{ port: 80 }] } },
      'Service in version "v1" cannot be handled as a Service: json: cannot unmarshal array into Go struct field ServiceSpec.spec.selector of type map[string]string',
    ],
    [
      "an object for a map's string value",
      "services",
      { metadata: { name: "s" }, spec: { selector: { matchLabels: { app: "web" } } } },
      'Service in version "v1" cannot be handled as a Service: json: cannot unmarshal object into Go struct field ServiceSpec.spec.selector of type string',
    ],
    [
      "an object for a list",
      "services",
      { metadata: { name: "s" }, spec: { ports: { port: 80 } } },
      'Service in version "v1" cannot be handled as a Service: json: cannot unmarshal object into Go struct field ServiceSpec.spec.ports of type []v1.ServicePort',
    ],
    [
      "a bool for an int-or-string",
      "services",
      { metadata: { name: "s" }, spec: { ports: [{ port: 80, targetPort: true }] } },
      'Service in version "v1" cannot be handled as a Service: json: cannot unmarshal bool into Go struct field ServicePort.spec.ports.targetPort of type int32',
    ],
    [
      "a string for a list element",
      "pods",
      pod({ containers: ["nginx"] }),
      'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal string into Go struct field PodSpec.spec.containers of type v1.Container',
    ],
    [
      "a number for a string deep in a list",
      "pods",
      container({ env: [{ name: "A", value: 1 }] }),
      'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal number into Go struct field EnvVar.spec.containers.env.value of type string',
    ],
    [
      "a number for a named string type",
      "pods",
      container({ ports: [{ containerPort: 80, protocol: 6 }] }),
      'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal number into Go struct field ContainerPort.spec.containers.ports.protocol of type v1.Protocol',
    ],
    [
      "a string for a named map type",
      "pods",
      container({ resources: { limits: "1 cpu" } }),
      'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal string into Go struct field ResourceRequirements.spec.containers.resources.limits of type v1.ResourceList',
    ],
    [
      "a fraction for an int32",
      "pods",
      pod({ priority: 1.5 }),
      'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal number 1.5 into Go struct field PodSpec.spec.priority of type int32',
    ],
    [
      "a number for a label value",
      "pods",
      pod({}, { labels: { tier: 1 } }),
      'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string',
    ],
    [
      "a quantity that does not parse",
      "pods",
      container({ resources: { requests: { cpu: "one" } } }),
      "Pod in version \"v1\" cannot be handled as a Pod: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    ],
    [
      "a quantity with an unknown suffix",
      "pods",
      container({ resources: { requests: { memory: "1iK" } } }),
      'Pod in version "v1" cannot be handled as a Pod: unable to parse quantity\'s suffix',
    ],
    [
      "a time that does not parse",
      "pods",
      pod({}, { deletionTimestamp: "tomorrow" }),
      'Pod in version "v1" cannot be handled as a Pod: parsing time "tomorrow" as "2006-01-02T15:04:05Z07:00": cannot parse "tomorrow" as "2006"',
    ],
    [
      "a number for a time",
      "pods",
      pod({}, { creationTimestamp: 1767225600 }),
      'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal number into Go struct field ObjectMeta.metadata.creationTimestamp of type string',
    ],
    [
      "a micro time without its six digits",
      "leases",
      { metadata: { name: "l" }, spec: { acquireTime: "2026-01-01T00:00:00Z" } },
      'Lease in version "v1" cannot be handled as a Lease: parsing time "2026-01-01T00:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000"',
    ],
    [
      "a month out of range",
      "leases",
      { metadata: { name: "l" }, spec: { renewTime: "2026-13-01T00:00:00.000000Z" } },
      'Lease in version "v1" cannot be handled as a Lease: parsing time "2026-13-01T00:00:00.000000Z": month out of range',
    ],
    [
      "secret data that is no base64",
      "secrets",
      { metadata: { name: "s" }, data: { key: "c2VjcmV0!" } },
      'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 8',
    ],
    [
      "a number for secret data",
      "secrets",
      { metadata: { name: "s" }, data: { key: 7 } },
      'Secret in version "v1" cannot be handled as a Secret: json: cannot unmarshal number into Go struct field Secret.data of type []uint8',
    ],
    [
      "a bool for a ConfigMap's data",
      "configmaps",
      { metadata: { name: "c" }, data: { enabled: true } },
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal bool into Go struct field ConfigMap.data of type string',
    ],
  ];

  it.each(cases)("%s", async (_name, plural, body, message) => {
    const definition =
      server.definitions.get({ group: "", version: "v1", plural }) ??
      server.definitions.get({ group: "coordination.k8s.io", version: "v1", plural });
    const client = server.client().resource(definition!.descriptor, "default");
    const error = await client.create(body as never).then(
      () => undefined,
      (rejected: unknown) => rejected,
    );
    expect(StatusError.isInstance(error) && error.status).toMatchObject({
      code: 400,
      reason: "BadRequest",
      message,
    });
  });

  it("reads secret data written as a JSON array of bytes, as Go's decoder does, and stores it as base64", async () => {
    const client = server.client().resource(secrets, "default");
    const created = await client.create({ metadata: { name: "bytes" }, data: { key: [104, 105] as never } });
    expect(created.data).toEqual({ key: "aGk=" });
  });
});
