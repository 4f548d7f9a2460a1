import { describe, expect, it } from "vitest";
import { applyDefaults } from "./defaulting.js";
import type { JSONSchemaProps } from "./schema.js";

const withA = (value: unknown): JSONSchemaProps => ({ properties: { a: { default: value } } });

// apiextensions-apiserver's defaulting TestDefault table.
describe("structural defaulting", () => {
  it.each<[string, string, JSONSchemaProps, string]>([
    ["scalar", "4", { default: "foo" }, "4"],
    ["scalar array", "[1,2]", { items: { default: "foo" } }, "[1,2]"],
    [
      "object array",
      '[{"a":1},{"b":1},{"c":1}]',
      { items: { properties: { a: { default: "A" }, b: { default: "B" }, c: { default: "C" } } } },
      '[{"a":1,"b":"B","c":"C"},{"a":"A","b":1,"c":"C"},{"a":"A","b":"B","c":1}]',
    ],
    [
      "object array object",
      '{"array":[{"a":1},{"b":2}],"object":{"a":1},"additionalProperties":{"x":{"a":1},"y":{"b":2}}}',
      {
        properties: {
          array: { items: { properties: { a: { default: "A" }, b: { default: "B" } } } },
          object: { properties: { a: { default: "N" }, b: { default: "O" } } },
          additionalProperties: {
            additionalProperties: { properties: { a: { default: "alpha" }, b: { default: "beta" } } },
          },
          foo: { default: "bar" },
        },
      },
      '{"array":[{"a":1,"b":"B"},{"a":"A","b":2}],"object":{"a":1,"b":"O"},"additionalProperties":{"x":{"a":1,"b":"beta"},"y":{"a":"alpha","b":2}},"foo":"bar"}',
    ],
    [
      "empty and null",
      '[{},{"a":1},{"a":0},{"a":0.0},{"a":""},{"a":null},{"a":[]},{"a":{}}]',
      { items: withA("A") },
      '[{"a":"A"},{"a":1},{"a":0},{"a":0.0},{"a":""},{"a":"A"},{"a":[]},{"a":{}}]',
    ],
    ["null in nullable list", "[null]", { nullable: true, items: withA("A") }, "[null]"],
    ["null in non-nullable list", "[null]", { items: { default: "A" } }, '["A"]'],
    [
      "null in nullable object",
      '{"a": null}',
      { properties: { a: { nullable: true, default: "A" } } },
      '{"a": null}',
    ],
    ["null in non-nullable object", '{"a": null}', { properties: { a: { default: "A" } } }, '{"a": "A"}'],
    [
      "null in nullable object with additionalProperties",
      '{"a": null}',
      { additionalProperties: { nullable: true, default: "A" } },
      '{"a": null}',
    ],
    [
      "null in non-nullable object with additionalProperties",
      '{"a": null}',
      { additionalProperties: { default: "A" } },
      '{"a": "A"}',
    ],
    ["null unknown field", '{"a": null}', { additionalProperties: true }, '{"a": null}'],
  ])("%s", (_name, input, schema, expected) => {
    const value = JSON.parse(input);
    applyDefaults(value, schema);
    expect(value).toEqual(JSON.parse(expected));
  });

  it("defaults inside a default, and copies defaults rather than sharing them", () => {
    const schema: JSONSchemaProps = {
      type: "object",
      properties: {
        spec: {
          type: "object",
          default: {},
          properties: {
            size: { type: "integer", default: 3 },
            tags: { type: "array", default: ["a"], items: { type: "string" } },
          },
        },
      },
    };
    const first: Record<string, unknown> = {};
    const second: Record<string, unknown> = {};
    applyDefaults(first, schema);
    applyDefaults(second, schema);
    expect(first).toEqual({ spec: { size: 3, tags: ["a"] } });
    (first.spec as { tags: string[] }).tags.push("b");
    expect(second).toEqual({ spec: { size: 3, tags: ["a"] } });
    expect(schema.properties?.spec?.default).toEqual({});
  });

  it("never defaults the root's metadata", () => {
    const value: Record<string, unknown> = {};
    applyDefaults(value, {
      type: "object",
      properties: { metadata: { type: "object", default: { name: "x" } } },
    });
    expect(value).toEqual({});
  });
});
