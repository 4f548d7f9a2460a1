import { describe, expect, it } from "vitest";
import { validateCustomResource, validateCustomResourceStatus } from "./custom-resource.js";
import { SchemaErrors } from "./errors.js";
import type { JSONSchemaProps } from "./schema.js";
import { prepareValidation, validateOpenAPI } from "./validation.js";

function crWith(spec: Record<string, unknown>): Record<string, unknown> {
  return { apiVersion: "stable.example.com/v1", kind: "CronTab", metadata: { name: "x" }, spec };
}

function specSchema(
  properties: Record<string, JSONSchemaProps>,
  extra: JSONSchemaProps = {},
): JSONSchemaProps {
  return { type: "object", properties: { spec: { type: "object", properties, ...extra } } };
}

function messages(
  spec: Record<string, unknown>,
  properties: Record<string, JSONSchemaProps>,
  extra?: JSONSchemaProps,
) {
  return validateCustomResource(crWith(spec), specSchema(properties, extra)).map((e) => e.message);
}

describe("OpenAPI validation of custom resources, in kube-openapi's words", () => {
  it.each<[string, Record<string, unknown>, Record<string, JSONSchemaProps>, string]>([
    [
      "type",
      { size: "three" },
      { size: { type: "integer" } },
      'spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"',
    ],
    [
      "type of a float in an integer field",
      { size: 1.5 },
      { size: { type: "integer" } },
      'spec.size: Invalid value: "number": spec.size in body must be of type integer: "number"',
    ],
    [
      "int-or-string",
      { port: true },
      { port: { "x-kubernetes-int-or-string": true } },
      'spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"',
    ],
    [
      "enum",
      { color: "purple" },
      { color: { type: "string", enum: ["red", "green"] } },
      'spec.color: Unsupported value: "purple": supported values: "red", "green"',
    ],
    [
      "minimum",
      { size: -1 },
      { size: { type: "integer", minimum: 0 } },
      "spec.size: Invalid value: -1: spec.size in body should be greater than or equal to 0",
    ],
    [
      "exclusive minimum",
      { size: 0 },
      { size: { type: "integer", minimum: 0, exclusiveMinimum: true } },
      "spec.size: Invalid value: 0: spec.size in body should be greater than 0",
    ],
    [
      "maximum",
      { size: 11 },
      { size: { type: "integer", maximum: 10 } },
      "spec.size: Invalid value: 11: spec.size in body should be less than or equal to 10",
    ],
    [
      "exclusive maximum",
      { size: 10 },
      { size: { type: "integer", maximum: 10, exclusiveMaximum: true } },
      "spec.size: Invalid value: 10: spec.size in body should be less than 10",
    ],
    [
      "multipleOf",
      { n: 7 },
      { n: { type: "integer", multipleOf: 5 } },
      "spec.n: Invalid value: 7: spec.n in body should be a multiple of 5",
    ],
    [
      "minLength",
      { name: "ab" },
      { name: { type: "string", minLength: 3 } },
      'spec.name: Invalid value: "ab": spec.name in body should be at least 3 chars long',
    ],
    [
      "maxLength",
      { name: "abcdef" },
      { name: { type: "string", maxLength: 5 } },
      "spec.name: Too long: may not be more than 5 bytes",
    ],
    [
      "pattern",
      { name: "ABC" },
      { name: { type: "string", pattern: "^[a-z]+$" } },
      "spec.name: Invalid value: \"ABC\": spec.name in body should match '^[a-z]+$'",
    ],
    [
      "format",
      { ts: "bogus" },
      { ts: { type: "string", format: "date-time" } },
      'spec.ts: Invalid value: "bogus": spec.ts in body must be of type date-time: "bogus"',
    ],
    [
      "minItems",
      { list: ["a"] },
      { list: { type: "array", items: { type: "string" }, minItems: 2 } },
      "spec.list: Invalid value: 1: spec.list in body should have at least 2 items",
    ],
    [
      "maxItems",
      { list: ["a", "b", "c", "d"] },
      { list: { type: "array", items: { type: "string" }, maxItems: 3 } },
      "spec.list: Too many: 4: must have at most 3 items",
    ],
    [
      "minProperties",
      { m: {} },
      { m: { type: "object", additionalProperties: { type: "string" }, minProperties: 1 } },
      "spec.m: Invalid value: 0: spec.m in body should have at least 1 properties",
    ],
    [
      "maxProperties",
      { m: { a: "1", b: "2", c: "3" } },
      { m: { type: "object", additionalProperties: { type: "string" }, maxProperties: 2 } },
      "spec.m: Too many: 3: must have at most 2 items",
    ],
    [
      "a null item of a non-nullable array",
      { items: [null] },
      { items: { type: "array", items: { type: "object" } } },
      'spec.items[0]: Invalid value: "null": spec.items[0] in body must be of type object: "null"',
    ],
    [
      "an item deep in a list",
      { list: [{ port: 1 }, { port: "x" }] },
      { list: { type: "array", items: { type: "object", properties: { port: { type: "integer" } } } } },
      'spec.list[1].port: Invalid value: "string": spec.list[1].port in body must be of type integer: "string"',
    ],
  ])("%s", (_name, spec, properties, expected) => {
    expect(messages(spec, properties)).toContain(expected);
  });

  it("reports a missing required property at its own path", () => {
    expect(messages({}, { image: { type: "string" } }, { required: ["image"] })).toEqual([
      "spec.image: Required value",
    ]);
  });

  it("keeps an explicit null where the schema is nullable and rejects it otherwise", () => {
    expect(messages({ a: null }, { a: { type: "string", nullable: true } })).toEqual([]);
    expect(messages({ a: null }, { a: { type: "string" } })[0]).toBe(
      'spec.a: Invalid value: "null": spec.a in body must be of type string: "null"',
    );
  });

  it("accepts what the schema allows, int-or-string both ways and formats it does not check", () => {
    const properties: Record<string, JSONSchemaProps> = {
      port: { "x-kubernetes-int-or-string": true, anyOf: [{ type: "integer" }, { type: "string" }] },
      size: { type: "integer", format: "int32" },
      ratio: { type: "number", format: "double" },
      when: { type: "string", format: "date-time" },
      ip: { type: "string", format: "ipv4" },
      odd: { type: "string", format: "no-such-format" },
    };
    expect(
      messages(
        { port: 80, size: 3, ratio: 0.5, when: "2024-01-02T03:04:05Z", ip: "10.0.0.1", odd: "?" },
        properties,
      ),
    ).toEqual([]);
    expect(messages({ port: "http" }, properties)).toEqual([]);
  });

  it.each<[string, string, boolean]>([
    ["ipv4", "10.0.0.1", true],
    ["ipv4", "10.0.0.256", false],
    ["ipv6", "::1", true],
    ["cidr", "10.0.0.0/8", true],
    ["cidr", "10.0.0.0/33", false],
    ["mac", "01:23:45:67:89:ab", true],
    ["uuid", "123e4567-e89b-12d3-a456-426614174000", true],
    ["uuid", "not-a-uuid", false],
    ["byte", "aGVsbG8=", true],
    ["byte", "!!", false],
    ["date", "2024-02-29", true],
    ["date", "2023-02-29", false],
    ["duration", "1h30m", true],
    ["duration", "soon", false],
    ["hostname", "a.example.com", true],
    ["hostname", "-a", false],
    ["email", "a@example.com", true],
    ["uri", "https://example.com/x", true],
    ["uri", "not a uri", false],
    ["datetime", "2024-01-02T03:04:05.5+01:00", true],
  ])("format %s: %s valid=%s", (format, value, valid) => {
    expect(messages({ v: value }, { v: { type: "string", format } })).toHaveLength(valid ? 0 : 1);
  });

  it("reports oneOf and anyOf failures without a field", () => {
    const out = messages(
      { a: "x" },
      { a: { type: "string" } },
      { oneOf: [{ required: ["b"] }, { required: ["c"] }] },
    );
    expect(out).toContain(
      '<nil>: Invalid value: "": "spec" must validate one and only one schema (oneOf). Found none valid',
    );
    const any = messages({ a: "x" }, { a: { type: "string" } }, { anyOf: [{ required: ["b"] }] });
    expect(any).toContain('<nil>: Invalid value: "": "spec" must validate at least one schema (anyOf)');
  });

  it("finds duplicates in set and map lists, from the second occurrence on", () => {
    const properties: Record<string, JSONSchemaProps> = {
      tags: { type: "array", items: { type: "string" }, "x-kubernetes-list-type": "set" },
      ports: {
        type: "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
        items: {
          type: "object",
          required: ["name"],
          properties: { name: { type: "string" }, port: { type: "integer" } },
        },
      },
    };
    expect(
      messages(
        {
          tags: ["a", "b", "a", "a"],
          ports: [
            { name: "http", port: 1 },
            { name: "http", port: 2 },
          ],
        },
        properties,
      ),
    ).toEqual([
      'spec.tags[2]: Duplicate value: "a"',
      'spec.tags[3]: Duplicate value: "a"',
      'spec.ports[1]: Duplicate value: {"name":"http"}',
    ]);
  });

  it("waives list duplicates on update when the old object had them already", () => {
    const schema = specSchema({
      tags: { type: "array", items: { type: "string" }, "x-kubernetes-list-type": "set" },
    });
    const old = crWith({ tags: ["a", "a"] });
    expect(validateCustomResource(crWith({ tags: ["a", "a", "b"] }), schema, old)).toEqual([]);
    expect(
      validateCustomResource(crWith({ tags: ["a", "a"] }), schema, crWith({ tags: ["a"] })),
    ).toHaveLength(1);
  });

  it("requires apiVersion and kind of embedded resources", () => {
    const out = messages(
      { template: { metadata: { name: "a" } }, other: { apiVersion: "v1", kind: "Not_A_Kind" } },
      {
        template: {
          type: "object",
          "x-kubernetes-embedded-resource": true,
          "x-kubernetes-preserve-unknown-fields": true,
        },
        other: {
          type: "object",
          "x-kubernetes-embedded-resource": true,
          "x-kubernetes-preserve-unknown-fields": true,
        },
      },
    );
    expect(out).toEqual([
      "spec.template.apiVersion: Required value: must not be empty",
      "spec.template.kind: Required value: must not be empty",
      'spec.other.kind: Invalid value: "Not_A_Kind": may have mixed case, but should otherwise match: [a-z]([-a-z0-9]*[a-z0-9])?',
    ]);
  });

  it("validates a status write with the status schema and keeps the status path", () => {
    const schema: JSONSchemaProps = {
      type: "object",
      properties: { status: { type: "object", properties: { replicas: { type: "integer", minimum: 0 } } } },
    };
    const out = validateCustomResourceStatus(
      { apiVersion: "a/v1", kind: "K", status: { replicas: -1 } },
      schema,
    );
    expect(out.map((e) => e.message)).toEqual([
      "status.replicas: Invalid value: -1: replicas in body should be greater than or equal to 0",
    ]);
  });
});

describe("prepareValidation", () => {
  it("prepares a schema ahead of its first object, and a schema Ajv cannot compile without throwing", () => {
    // Run by the CRD controller in a turn of its own: a throw there would end the process.
    const broken: JSONSchemaProps = {
      type: "object",
      properties: { name: { type: "string", pattern: "(" } },
    };
    expect(() => prepareValidation(broken)).not.toThrow();
    const fine: JSONSchemaProps = { type: "object", properties: { size: { type: "integer", minimum: 1 } } };
    prepareValidation(fine);
    const errors = new SchemaErrors();
    validateOpenAPI({ size: 0 }, fine, errors);
    expect(errors.list.map((error) => error.message)).toEqual([
      "size: Invalid value: 0: size in body should be greater than or equal to 1",
    ]);
  });
});
