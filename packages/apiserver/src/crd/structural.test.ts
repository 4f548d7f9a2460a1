import { describe, expect, it } from "vitest";
import type { JSONSchemaProps } from "./schema.js";
import { validateStructuralSchema } from "./structural.js";

const at = "spec.validation.openAPIV3Schema";
const check = (schema: unknown) => validateStructuralSchema(schema, at).list.map((e) => e.message);
const withSpec = (spec: JSONSchemaProps): JSONSchemaProps => ({ type: "object", properties: { spec } });

describe("structural schema rules", () => {
  it.each<[string, unknown, string[]]>([
    ["a structural schema", withSpec({ type: "object", properties: { a: { type: "string" } } }), []],
    ["missing root type", {}, [`${at}.type: Required value: must not be empty at the root`]],
    [
      "non-object root",
      { type: "integer" },
      [`${at}.type: Invalid value: "integer": must be object at the root`],
    ],
    [
      "unknown type",
      withSpec({ type: "foo" }),
      [
        `${at}.properties[spec].type: Unsupported value: "foo": supported values: "array", "boolean", "integer", "number", "object", "string"`,
      ],
    ],
    [
      "null type",
      withSpec({ type: "null" }),
      [`${at}.properties[spec].type: Forbidden: type cannot be set to null, use nullable as an alternative`],
    ],
    [
      "missing item type",
      withSpec({ type: "array", items: {} }),
      [`${at}.properties[spec].items.type: Required value: must not be empty for specified array items`],
    ],
    [
      "array without items",
      withSpec({ type: "array" }),
      [`${at}.properties[spec].items: Required value: must be specified`],
    ],
    [
      "items as a list",
      withSpec({ type: "array", items: [{ type: "string" }] }),
      [`${at}.properties[spec].items: Forbidden: items must be a schema object and not an array`],
    ],
    [
      "additionalProperties with properties",
      withSpec({
        type: "object",
        properties: { a: { type: "string" } },
        additionalProperties: { type: "string" },
      }),
      [
        `${at}.properties[spec].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive`,
      ],
    ],
    [
      "additionalProperties at the root",
      { type: "object", additionalProperties: { type: "string" } },
      [`${at}.additionalProperties: Forbidden: must not be used at the root`],
    ],
    [
      "nullable root",
      { type: "object", nullable: true },
      [`${at}.nullable: Forbidden: nullable cannot be true at the root`],
    ],
    [
      "$ref",
      withSpec({ type: "object", $ref: "#/x" }),
      [`${at}.properties[spec].$ref: Forbidden: $ref is not supported`],
    ],
    [
      "uniqueItems",
      withSpec({ type: "array", items: { type: "string" }, uniqueItems: true }),
      [
        `${at}.properties[spec].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic`,
      ],
    ],
    [
      "preserve-unknown-fields false",
      withSpec({ type: "object", "x-kubernetes-preserve-unknown-fields": false }),
      [
        `${at}.properties[spec].x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined`,
      ],
    ],
    [
      "int-or-string with preserve-unknown-fields",
      withSpec({ "x-kubernetes-int-or-string": true, "x-kubernetes-preserve-unknown-fields": true }),
      [
        `${at}.properties[spec].x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if x-kubernetes-int-or-string is true`,
      ],
    ],
    [
      "the int-or-string idiom",
      withSpec({ "x-kubernetes-int-or-string": true, anyOf: [{ type: "integer" }, { type: "string" }] }),
      [],
    ],
    [
      "type in a value validation",
      withSpec({
        type: "object",
        properties: { a: { type: "string" } },
        anyOf: [{ type: "object", description: "x" }],
      }),
      [
        `${at}.properties[spec].anyOf[0].type: Forbidden: must be empty to be structural`,
        `${at}.properties[spec].anyOf[0].description: Forbidden: must be empty to be structural`,
      ],
    ],
    [
      "a value validation naming an undeclared property",
      withSpec({
        type: "object",
        properties: { a: { type: "string" } },
        not: { properties: { b: { pattern: "x" } } },
      }),
      [
        `${at}.properties[spec].properties[b]: Required value: because it is defined in ${at}.properties[spec].not.properties[b]`,
      ],
    ],
    [
      "embedded resource without properties",
      withSpec({ type: "object", "x-kubernetes-embedded-resource": true }),
      [
        `${at}.properties[spec].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields`,
      ],
    ],
    [
      "metadata with more than name",
      {
        type: "object",
        properties: { metadata: { type: "object", properties: { labels: { type: "object" } } } },
      },
      [
        `${at}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified`,
      ],
    ],
    [
      "metadata with a name pattern",
      {
        type: "object",
        properties: { metadata: { type: "object", properties: { name: { type: "string", maxLength: 10 } } } },
      },
      [],
    ],
    [
      "a default for kind",
      { type: "object", properties: { kind: { type: "string", default: "X" } } },
      [`${at}.properties[kind].default: Forbidden: must not be set in top-level kind`],
    ],
    [
      "a bad pattern",
      withSpec({ type: "string", pattern: "(?=a)" }),
      [
        `${at}.properties[spec].pattern: Invalid value: "(?=a)": must be a valid regular expression, but isn't: error parsing regexp: invalid or unsupported Perl syntax: \`(?=\``,
      ],
    ],
    [
      "an unknown list type",
      withSpec({ type: "array", items: { type: "string" }, "x-kubernetes-list-type": "bag" }),
      [
        `${at}.properties[spec].x-kubernetes-list-type: Unsupported value: "bag": supported values: "atomic", "set", "map"`,
      ],
    ],
    [
      "a map list without keys",
      withSpec({ type: "array", items: { type: "object" }, "x-kubernetes-list-type": "map" }),
      [
        `${at}.properties[spec].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map`,
      ],
    ],
    [
      "a map-list key neither required nor defaulted",
      withSpec({
        type: "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
        items: { type: "object", properties: { name: { type: "string" } } },
      }),
      [
        `${at}.properties[spec].items.properties[name].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property`,
      ],
    ],
    [
      "a set of granular objects",
      withSpec({ type: "array", "x-kubernetes-list-type": "set", items: { type: "object" } }),
      [
        `${at}.properties[spec].items.x-kubernetes-map-type: Invalid value: "": must be atomic as item of a list with x-kubernetes-list-type=set`,
      ],
    ],
    [
      "map keys without list-type map",
      withSpec({ type: "array", items: { type: "object" }, "x-kubernetes-list-map-keys": ["a"] }),
      [
        `${at}.properties[spec].x-kubernetes-list-type: Invalid value: "": must be map if x-kubernetes-list-map-keys is non-empty`,
      ],
    ],
  ])("%s", (_name, schema, expected) => {
    expect(check(schema)).toEqual(expected);
  });
});
