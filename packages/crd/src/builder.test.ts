import { describe, expect, it } from "vitest";
import { builderFor, buildersForDefinitions } from "./builder.js";
import { defineCustomResource } from "./define.js";
import { type JSONSchemaProps, k, toStructuralSchema } from "./schema.js";

const website = defineCustomResource({
  group: "example.com",
  kind: "Website",
  version: {
    name: "v1",
    spec: k.Object({
      html: k.String({ description: "The page served at /." }),
      replicas: k.Optional(k.Integer({ default: 2, minimum: 0 })),
      port: k.Optional(k.IntOrString()),
      tier: k.Optional(k.Enum(["free", "paid"])),
      headers: k.Optional(k.Record(k.String(), k.String())),
      "dns-name": k.Optional(k.Nullable(k.String())),
    }),
    status: k.Object({ ready: k.Optional(k.Boolean()) }),
  },
});

describe("buildersForDefinitions", () => {
  it("says each served version's schema as k code with its inferred type", () => {
    expect(
      buildersForDefinitions([website.crd]),
    ).toBe(`// Generated from CustomResourceDefinitions by reconcile-crd. Edit freely: this is now your schema.
import { k, type Static } from "@reconcile/crd";

export const WebsiteV1Schema = k.Object({
  spec: k.Object({
    html: k.String({ description: "The page served at /." }),
    replicas: k.Optional(k.Integer({ default: 2, minimum: 0 })),
    port: k.Optional(k.IntOrString()),
    tier: k.Optional(k.Enum(["free", "paid"])),
    headers: k.Optional(k.Record(k.String(), k.String())),
    "dns-name": k.Optional(k.Nullable(k.String())),
  }),
  status: k.Optional(k.Object({
    ready: k.Optional(k.Boolean()),
  })),
});
export type WebsiteV1 = Static<typeof WebsiteV1Schema>;
`);
  });

  it("qualifies a kind two groups of the set share with its group", () => {
    const other = defineCustomResource({
      group: "networking.example.org",
      kind: "Website",
      version: { name: "v1beta1", spec: k.Object({}) },
    });
    const out = buildersForDefinitions([website.crd, other.crd]);
    expect(out).toContain("export const ExampleComWebsiteV1Schema = k.Object({");
    expect(out).toContain("export const NetworkingExampleOrgWebsiteV1beta1Schema = k.Object({");
  });
});

describe("builderFor", () => {
  // Each schema, turned into k code and back, is itself again.
  const cases: [string, JSONSchemaProps, string][] = [
    ["a string", { type: "string", maxLength: 63 }, "k.String({ maxLength: 63 })"],
    [
      "an integer enum",
      { type: "integer", enum: [1, 2] },
      'k.Unsafe<1 | 2>({ type: "integer", enum: [1, 2] })',
    ],
    [
      "int-or-string with a pattern",
      {
        "x-kubernetes-int-or-string": true,
        anyOf: [{ type: "integer" }, { type: "string" }],
        pattern: "^[0-9]+%?$",
      },
      'k.IntOrString({ pattern: "^[0-9]+%?$" })',
    ],
    [
      "a list map",
      {
        type: "array",
        items: { type: "object", required: ["name"], properties: { name: { type: "string" } } },
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
      },
      'k.Array(k.Object({\n  name: k.String(),\n}), { "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"] })',
    ],
    [
      "an object of any fields",
      { type: "object", "x-kubernetes-preserve-unknown-fields": true },
      'k.Unsafe<{ [key: string]: unknown }>({ type: "object", "x-kubernetes-preserve-unknown-fields": true })',
    ],
    [
      "a field of any value",
      { "x-kubernetes-preserve-unknown-fields": true },
      'k.Unsafe<unknown>({ "x-kubernetes-preserve-unknown-fields": true })',
    ],
    [
      "value validations beside the type",
      {
        type: "object",
        properties: { a: { type: "string" }, b: { type: "string" } },
        oneOf: [{ required: ["a"] }, { required: ["b"] }],
        "x-kubernetes-validations": [{ rule: "has(self.a) || has(self.b)", message: "a or b" }],
      },
      'k.Object({\n  a: k.Optional(k.String()),\n  b: k.Optional(k.String()),\n}, {\n  oneOf: [{ required: ["a"] }, { required: ["b"] }],\n  "x-kubernetes-validations": [{ rule: "has(self.a) || has(self.b)", message: "a or b" }],\n})',
    ],
    [
      "a required name with no property",
      { type: "object", required: ["a", "b"], properties: { a: { type: "string" } } },
      'k.Object({\n  a: k.Optional(k.String()),\n}, { required: ["a", "b"] })',
    ],
  ];
  it.each(cases)("%s", (_name, schema, code) => {
    expect(builderFor(schema, "")).toBe(code);
    const value = new Function("k", `return ${code.replace(/k\.Unsafe<[^>]*>/g, "k.Unsafe")};`)(k);
    expect(toStructuralSchema(value)).toEqual(schema);
  });
});
