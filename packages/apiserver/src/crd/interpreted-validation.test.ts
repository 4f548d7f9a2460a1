import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SchemaErrors } from "./errors.js";
import type { JSONSchemaProps } from "./schema.js";
import { validateOpenAPI } from "./validation.js";

const keys = ["a", "b", "c", "d/e"];

const json: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.integer({ min: -20, max: 20 }),
    fc.double({ min: -20, max: 20, noNaN: true, noDefaultInfinity: true }),
    fc.constantFrom("", "a", "abc", "Always", "25%", "2026-01-01T00:00:00Z", "x".repeat(12), "é😀"),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(fc.constantFrom(...keys), tie("value"), { maxKeys: 4 }),
  ),
})).value;

const scalar: fc.Arbitrary<JSONSchemaProps> = fc.oneof(
  fc.record(
    {
      type: fc.constant("string"),
      maxLength: fc.integer({ min: 0, max: 5 }),
      minLength: fc.integer({ min: 0, max: 5 }),
      pattern: fc.constantFrom("^a", "b$", "^[a-z]+$"),
      format: fc.constantFrom("date-time", "uuid", "int-or-string", "byte"),
      enum: fc.constant(["a", "Always", "abc"] as unknown[]),
      nullable: fc.boolean(),
    },
    { requiredKeys: ["type"] },
  ),
  fc.record(
    {
      type: fc.constantFrom("integer", "number"),
      maximum: fc.integer({ min: -5, max: 10 }),
      minimum: fc.integer({ min: -10, max: 5 }),
      exclusiveMaximum: fc.boolean(),
      exclusiveMinimum: fc.boolean(),
      multipleOf: fc.constantFrom(1, 2, 0.5, 3),
      nullable: fc.boolean(),
    },
    { requiredKeys: ["type"] },
  ),
  fc.constant<JSONSchemaProps>({ type: "boolean" }),
  fc.constant<JSONSchemaProps>({
    "x-kubernetes-int-or-string": true,
    anyOf: [{ type: "integer" }, { type: "string" }],
  }),
);

const schema: fc.Arbitrary<JSONSchemaProps> = fc.letrec<{ node: JSONSchemaProps }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    scalar,
    fc.record(
      {
        type: fc.constant("array"),
        items: tie("node"),
        maxItems: fc.integer({ min: 0, max: 3 }),
        minItems: fc.integer({ min: 0, max: 3 }),
      },
      { requiredKeys: ["type", "items"] },
    ),
    fc.record(
      {
        type: fc.constant("object"),
        properties: fc.dictionary(fc.constantFrom(...keys), tie("node"), { minKeys: 1, maxKeys: 3 }),
        required: fc.subarray(keys),
        maxProperties: fc.integer({ min: 0, max: 3 }),
        minProperties: fc.integer({ min: 0, max: 3 }),
      },
      { requiredKeys: ["type", "properties"] },
    ),
    fc.record({ type: fc.constant("object"), additionalProperties: tie("node") }),
    fc.record({
      type: fc.constant("string"),
      anyOf: fc.array(fc.record({ maxLength: fc.integer({ min: 0, max: 3 }) }), {
        minLength: 1,
        maxLength: 3,
      }),
    }),
    fc.record({
      type: fc.constant("integer"),
      oneOf: fc.array(fc.record({ minimum: fc.integer({ min: -5, max: 5 }) }), {
        minLength: 1,
        maxLength: 3,
      }),
    }),
    fc.record({ type: fc.constant("string"), not: fc.record({ enum: fc.constant(["a"] as unknown[]) }) }),
    fc.record({
      type: fc.constant("integer"),
      allOf: fc.array(fc.record({ maximum: fc.integer({ min: -5, max: 5 }) }), {
        minLength: 1,
        maxLength: 2,
      }),
    }),
  ),
})).node;

function messages(value: unknown, root: JSONSchemaProps, engine: "compiled" | "interpreted"): string[] {
  const errors = new SchemaErrors();
  validateOpenAPI(value, root, errors, "spec", engine);
  return errors.list.map((error) => error.message);
}

describe("the interpreted schema validator", () => {
  it("reports exactly what the compiled one reports, in the same order, for any schema and value", () => {
    fc.assert(
      fc.property(schema, json, (root, value) => {
        expect(messages(value, root, "interpreted")).toEqual(messages(value, root, "compiled"));
      }),
      { numRuns: 3_000, seed: 20261128 },
    );
  });

  it("validates an object against a schema of 10,000 properties with patterns without compiling it", () => {
    const properties: Record<string, JSONSchemaProps> = {};
    for (let i = 0; i < 10_000; i++) properties[`f${i}`] = { type: "string", pattern: "^[a-z]+$" };
    const wide: JSONSchemaProps = { type: "object", properties };
    const errors = new SchemaErrors();
    validateOpenAPI(
      { spec: { f1: "abc", f9999: "ABC" } },
      { type: "object", properties: { spec: wide } },
      errors,
    );
    expect(errors.list.map((e) => e.message)).toEqual([
      "spec.f9999: Invalid value: \"ABC\": spec.f9999 in body should match '^[a-z]+$'",
    ]);
  });
});
