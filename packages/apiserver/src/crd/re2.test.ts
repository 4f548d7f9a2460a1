import { afterEach, describe, expect, it } from "vitest";
import { call, closeCrdServers, crdCondition, startCrdServer } from "./crd.test-util.js";
import { SchemaErrors } from "./errors.js";
import { re2FindAll, re2Matches } from "./re2.js";
import { validateOpenAPI } from "./validation.js";

afterEach(closeCrdServers);

// With JavaScript's backtracking RegExp each of these took 4× longer per two more
// characters (6.3 s at 31): 10,000 would not finish. RE2 is linear in the input.
const hostile = `${"a".repeat(10_000)}!`;

const crd = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "traps.example.com" },
  spec: {
    group: "example.com",
    scope: "Namespaced",
    names: { kind: "Trap", plural: "traps" },
    versions: [
      {
        name: "v1",
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: "object",
            properties: {
              spec: {
                type: "object",
                properties: {
                  pattern: { type: "string", maxLength: 20_000, pattern: "^(a+)+$" },
                  cel: {
                    type: "string",
                    maxLength: 20_000,
                    "x-kubernetes-validations": [
                      { rule: "!self.matches('^(a+)+$')", message: "matches" },
                      { rule: "self.find('(a|aa)+b') == ''", message: "find" },
                      { rule: "self.findAll('(a*)*b').size() == 0", message: "findAll" },
                      { rule: "!matches(self, '^(a|a)*$')", message: "global matches" },
                    ],
                  },
                },
              },
            },
          },
        },
      },
    ],
  },
};

describe("user-supplied regular expressions run on RE2", () => {
  it("answers a pathological pattern and pathological CEL at once, with the schema's verdict", async () => {
    const { api, http } = await startCrdServer();
    const created = await call(http, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd);
    expect(created.code).toBe(201);
    await crdCondition(api, "traps.example.com", "Established");
    const path = "/apis/example.com/v1/namespaces/default/traps";
    const byPattern = await call(http, "POST", path, { metadata: { name: "a" }, spec: { pattern: hostile } });
    expect(byPattern.code).toBe(422);
    expect(byPattern.body.message).toBe(
      `Trap.example.com "a" is invalid: spec.pattern: Invalid value: "${hostile}": spec.pattern in body should match '^(a+)+$'`,
    );
    const byCel = await call(http, "POST", path, { metadata: { name: "b" }, spec: { cel: hostile } });
    expect(byCel.code).toBe(201);
    const matching = await call(http, "POST", path, {
      metadata: { name: "c" },
      spec: { pattern: "aaaa", cel: "aaab" },
    });
    expect(matching.code).toBe(422);
    expect(matching.body.details.causes.map((c: { message: string }) => c.message)).toEqual([
      'Invalid value: "string": find',
      'Invalid value: "string": findAll',
    ]);
  });

  it("refuses at CRD write what RE2 refuses, with Go's messages", async () => {
    const { http } = await startCrdServer();
    const bad = structuredClone(crd);
    const spec = bad.spec.versions[0]!.schema.openAPIV3Schema.properties.spec.properties;
    spec.pattern.pattern = "(a)\\1";
    const answer = await call(http, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", bad);
    expect(answer.code).toBe(422);
    expect(answer.body.message).toContain(
      `spec.validation.openAPIV3Schema.properties[spec].properties[pattern].pattern: Invalid value: "(a)\\\\1": must be a valid regular expression, but isn't: error parsing regexp: invalid escape sequence: \`\\1\``,
    );
  });

  it("checks each field against its own pattern (compiled schemas key patterns by their text)", () => {
    const schema = {
      type: "object",
      properties: { x: { type: "string", pattern: "^a" }, y: { type: "string", pattern: "b$" } },
    };
    const errors = new SchemaErrors();
    validateOpenAPI({ x: "abc", y: "xb" }, schema, errors, "", "compiled");
    expect(errors.list).toEqual([]);
    validateOpenAPI({ x: "ab", y: "ba" }, schema, errors, "", "compiled");
    expect(errors.list.map((e) => e.message)).toEqual([
      "y: Invalid value: \"ba\": y in body should match 'b$'",
    ]);
  });

  it("finds as Go's regexp finds", () => {
    expect(re2Matches("xaby", "ab")).toBe(true);
    expect(re2Matches("xaby", "^ab")).toBe(false);
    expect(re2FindAll("a1b22c333", "[0-9]+", -1)).toEqual(["1", "22", "333"]);
    expect(re2FindAll("a1b22c333", "[0-9]+", 2)).toEqual(["1", "22"]);
  });
});
