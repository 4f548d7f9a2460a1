import { describe, expect, it } from "vitest";
import { celGoMessage } from "./cel-issues.js";
import { SchemaCelTypes } from "./cel-types.js";
import { crdSchemaErrors } from "./crd.test-util.js";
import { validateCustomResource } from "./custom-resource.js";
import type { JSONSchemaProps, ValidationRule } from "./schema.js";

/** A rule as kube-apiserver 1.32 prints the internal ValidationRule in a field error (Go's `%#v`). */
function goRule(rule: string): string {
  return `apiextensions.ValidationRule{Rule:${JSON.stringify(rule)}, Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}`;
}

const crdErrors = crdSchemaErrors;

const at = "spec.validation.openAPIV3Schema";

/** A CronTab spec of every kind of field, the rules on the spec. */
function spec(rules: ValidationRule[]): JSONSchemaProps {
  return {
    type: "object",
    properties: {
      spec: {
        type: "object",
        "x-kubernetes-validations": rules,
        properties: {
          replicas: { type: "integer" },
          ratio: { type: "number" },
          paused: { type: "boolean" },
          image: { type: "string" },
          "dash-ed": { type: "string" },
          namespace: { type: "string" },
          port: { "x-kubernetes-int-or-string": true },
          startedAt: { type: "string", format: "date-time" },
          timeout: { type: "string", format: "duration" },
          payload: { type: "string", format: "byte" },
          tags: { type: "array", maxItems: 16, items: { type: "string", maxLength: 63 } },
          ports: {
            type: "array",
            maxItems: 16,
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
            items: {
              type: "object",
              required: ["name"],
              properties: { name: { type: "string", maxLength: 15 }, number: { type: "integer" } },
            },
          },
          labels: {
            type: "object",
            maxProperties: 16,
            additionalProperties: { type: "string", maxLength: 63 },
          },
          anything: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
          untyped: { "x-kubernetes-preserve-unknown-fields": true },
          template: {
            type: "object",
            "x-kubernetes-embedded-resource": true,
            "x-kubernetes-preserve-unknown-fields": true,
          },
        },
      },
    },
  };
}

/** The errors of one rule on the spec: [] when it checks. */
function ruleErrors(rule: string, extra: Partial<ValidationRule> = {}): string[] {
  return crdErrors(spec([{ rule, ...extra }]));
}

describe("rules are type-checked against the schema when the CRD is written", () => {
  it.each([
    "self.replicas > 1 && self.ratio < 0.5 && !self.paused",
    "self.image.startsWith('nginx') && self.dash__dash__ed != ''",
    "self.__namespace__ == 'default'",
    "type(self.port) == string || self.port > 0",
    "self.startedAt < timestamp('2030-01-01T00:00:00Z')",
    "self.timeout > duration('1s')",
    "size(self.payload) > 0",
    "self.tags.all(t, t.size() < 64)",
    "self.ports.exists(p, p.name == 'http' && p.number == 80)",
    "self.labels.all(k, self.labels[k] != '')",
    "self.template.apiVersion == 'v1' && self.template.metadata.name != ''",
    "self == oldSelf",
    "self.ports == oldSelf.ports",
    "self.?replicas.orValue(1) > 0",
    "has(self.image)",
    "has(self.labels.app) && has(self.template.metadata.name)",
    "has(self.anything)",
    "self.ports.all(p, has(p.name))",
    "has(oldSelf.image)",
    "self.replicas < 1.5",
  ])("accepts %s", (rule) => {
    expect(ruleErrors(rule)).toEqual([]);
  });

  const rule = `${at}.properties[spec].x-kubernetes-validations[0].rule`;
  it.each([
    ["self.replica > 1", "ERROR: <input>:1:5: undefined field 'replica'\n | self.replica > 1\n | ....^"],
    [
      "self.image == 1",
      "ERROR: <input>:1:12: found no matching overload for '_==_' applied to '(string, int)'\n | self.image == 1\n | ...........^",
    ],
    [
      "self.replicas == 1.0",
      "ERROR: <input>:1:15: found no matching overload for '_==_' applied to '(int, double)'\n | self.replicas == 1.0\n | ..............^",
    ],
    [
      "self.startedAt.startsWith('2020')",
      "ERROR: <input>:1:26: found no matching overload for 'startsWith' applied to 'google.protobuf.Timestamp.(string)'\n | self.startedAt.startsWith('2020')\n | .........................^",
    ],
    [
      "self.tags.exists(t, t > 1)",
      "ERROR: <input>:1:23: found no matching overload for '_>_' applied to '(string, int)'\n | self.tags.exists(t, t > 1)\n | ......................^",
    ],
    // An object that keeps unknown fields shows CEL only the ones it declares.
    [
      "self.anything.foo == 1",
      "ERROR: <input>:1:14: undefined field 'foo'\n | self.anything.foo == 1\n | .............^",
    ],
    // A property without a type is not exposed at all.
    [
      "self.ratio > 0.5 || self.untyped == 1",
      "ERROR: <input>:1:25: undefined field 'untyped'\n | self.ratio > 0.5 || self.untyped == 1\n | ........................^",
    ],
    // has() checks the field it tests as a selection, placed at its `(`; a selection below that at its `.`.
    ["has(self.nope)", "ERROR: <input>:1:4: undefined field 'nope'\n | has(self.nope)\n | ...^"],
    [
      "has(self.untyped) || true",
      "ERROR: <input>:1:4: undefined field 'untyped'\n | has(self.untyped) || true\n | ...^",
    ],
    [
      "self.replicas > 0 && has(self.template.metadata.labels)",
      "ERROR: <input>:1:25: undefined field 'labels'\n | self.replicas > 0 && has(self.template.metadata.labels)\n | ........................^",
    ],
    [
      "has(self.nope.deeper)",
      "ERROR: <input>:1:9: undefined field 'nope'\n | has(self.nope.deeper)\n | ........^",
    ],
    [
      "has(self.replicas.value)",
      "ERROR: <input>:1:4: type 'int' does not support field selection\n | has(self.replicas.value)\n | ...^",
    ],
    [
      "self.ports.all(p, has(p.nmae))",
      "ERROR: <input>:1:22: undefined field 'nmae'\n | self.ports.all(p, has(p.nmae))\n | .....................^",
    ],
    // An embedded resource's metadata shows name and generateName only.
    [
      "self.template.metadata.labels.size() > 0",
      "ERROR: <input>:1:23: undefined field 'labels'\n | self.template.metadata.labels.size() > 0\n | ......................^",
    ],
    [
      "self.replicas.value > 1",
      "ERROR: <input>:1:14: type 'int' does not support field selection\n | self.replicas.value > 1\n | .............^",
    ],
    [
      "replicas > 1",
      "ERROR: <input>:1:1: undeclared reference to 'replicas' (in container '')\n | replicas > 1\n | ^",
    ],
  ])("refuses %s", (expression, issue) => {
    expect(ruleErrors(expression)).toEqual([
      `${rule}: Invalid value: ${goRule(expression)}: compilation failed: ${issue}`,
    ]);
  });

  it("checks the result type with the declared types: an int is not a bool, a message must be a string", () => {
    expect(ruleErrors("self.replicas")).toEqual([
      `${rule}: Invalid value: apiextensions.ValidationRule{Rule:"self.replicas", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: cel expression must evaluate to a bool`,
    ]);
    expect(ruleErrors("true", { messageExpression: "self.replicas" })).toEqual([
      `${at}.properties[spec].x-kubernetes-validations[0].messageExpression: Invalid value: "self.replicas": messageExpression must evaluate to a string`,
    ]);
    expect(ruleErrors("true", { messageExpression: "self.nope" })).toEqual([
      `${at}.properties[spec].x-kubernetes-validations[0].messageExpression: Invalid value: "self.nope": messageExpression compilation failed: ERROR: <input>:1:5: undefined field 'nope'\n | self.nope\n | ....^`,
    ]);
  });

  it("types oldSelf as optional with optionalOldSelf", () => {
    expect(
      ruleErrors("!oldSelf.hasValue() || oldSelf.value().replicas <= self.replicas", {
        optionalOldSelf: true,
      }),
    ).toEqual([]);
    expect(ruleErrors("oldSelf.replicas <= self.replicas", { optionalOldSelf: true })).toEqual([
      `${rule}: Invalid value: apiextensions.ValidationRule{Rule:"oldSelf.replicas <= self.replicas", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(true)}: compilation failed: ERROR: <input>:1:18: found no matching overload for '_<=_' applied to '(optional_type(int), int)'\n | oldSelf.replicas <= self.replicas\n | .................^`,
    ]);
  });

  it("shows a custom resource's root as apiVersion, kind, metadata.name and metadata.generateName", () => {
    const root = (rules: ValidationRule[]): JSONSchemaProps => ({
      type: "object",
      "x-kubernetes-validations": rules,
    });
    expect(crdErrors(root([{ rule: "self.metadata.name.size() < 20 && self.kind == 'CronTab'" }]))).toEqual(
      [],
    );
    expect(crdErrors(root([{ rule: "self.metadata.namespace == 'a'" }]))).toEqual([
      `${at}.x-kubernetes-validations[0].rule: Invalid value: apiextensions.ValidationRule{Rule:"self.metadata.namespace == 'a'", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:14: undefined field 'namespace'\n | self.metadata.namespace == 'a'\n | .............^`,
    ]);
  });

  it("forbids oldSelf below a list whose items do not correlate (atomic or set), but not below a map list", () => {
    const lists: JSONSchemaProps = {
      type: "object",
      properties: {
        atomic: {
          type: "array",
          maxItems: 8,
          "x-kubernetes-validations": [{ rule: "self.size() >= oldSelf.size()" }],
          items: {
            type: "object",
            properties: {
              inner: {
                type: "array",
                maxItems: 8,
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["k"],
                items: {
                  type: "object",
                  required: ["k"],
                  properties: { k: { type: "string", maxLength: 8 } },
                  "x-kubernetes-validations": [{ rule: "self.k == oldSelf.k" }],
                },
              },
            },
          },
        },
        set: {
          type: "array",
          maxItems: 8,
          "x-kubernetes-list-type": "set",
          items: {
            type: "string",
            maxLength: 8,
            "x-kubernetes-validations": [{ rule: "self == oldSelf" }],
          },
        },
        keyed: {
          type: "array",
          maxItems: 8,
          "x-kubernetes-list-type": "map",
          "x-kubernetes-list-map-keys": ["k"],
          items: {
            type: "object",
            required: ["k"],
            properties: { k: { type: "string", maxLength: 8 } },
            "x-kubernetes-validations": [{ rule: "self.k == oldSelf.k" }],
          },
        },
      },
    };
    expect(crdErrors(lists)).toEqual([
      `${at}.properties[atomic].items.properties[inner].items.x-kubernetes-validations[0].rule: Invalid value: "self.k == oldSelf.k": oldSelf cannot be used on the uncorrelatable portion of the schema within ${at}.properties[atomic].items`,
      `${at}.properties[set].items.x-kubernetes-validations[0].rule: Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema within ${at}.properties[set].items`,
    ]);
  });
});

describe("formatted strings are CEL timestamps, durations and bytes at run time", () => {
  const schema = (rule: string) => spec([{ rule }]);
  const object = (fields: Record<string, unknown>) => ({
    apiVersion: "stable.example.com/v1",
    kind: "CronTab",
    metadata: { name: "x" },
    spec: fields,
  });
  it.each([
    ["self.startedAt.getFullYear() == 2024", { startedAt: "2024-05-01T10:00:00Z" }],
    ["self.startedAt < timestamp('2025-01-01T00:00:00Z')", { startedAt: "2024-05-01T10:00:00Z" }],
    ["self.timeout == duration('90s')", { timeout: "1m30s" }],
    ["self.payload == b'hello'", { payload: Buffer.from("hello").toString("base64") }],
  ])("%s", (rule, fields) => {
    expect(crdErrors(schema(rule))).toEqual([]);
    expect(validateCustomResource(object(fields), schema(rule)).map((e) => e.message)).toEqual([]);
    expect(validateCustomResource(object({}), schema(rule)).map((e) => e.message)).not.toEqual([]);
  });
});

describe("the declared types", () => {
  it("names object types by path, and gives each node upstream's type", () => {
    const schema = spec([]);
    const types = new SchemaCelTypes(schema);
    const fields = schema.properties!.spec!.properties!;
    expect(types.rootType).toBe("Self");
    expect(types.typeOf(schema.properties!.spec!)).toBe("Self_spec");
    expect(
      Object.fromEntries(Object.entries(fields).map(([name, node]) => [name, types.typeOf(node)])),
    ).toEqual({
      replicas: "int",
      ratio: "double",
      paused: "bool",
      image: "string",
      "dash-ed": "string",
      namespace: "string",
      port: "dyn",
      startedAt: "google.protobuf.Timestamp",
      timeout: "google.protobuf.Duration",
      payload: "bytes",
      tags: "list<string>",
      ports: "list<Self_spec_ports_items>",
      labels: "map<string, string>",
      anything: "Self_spec_anything",
      // not exposed: no field of its parent, and dyn if a rule sits on it
      untyped: "dyn",
      template: "Self_spec_template",
    });
    // Nodes are known by identity: another schema's node is not this one's.
    expect(types.typeOf(spec([]).properties!.spec!)).toBe("dyn");
  });

  it.each([
    ["No such key: foo", "undefined field 'foo'"],
    [
      "no such overload: list<int> + map<string, int>",
      "found no matching overload for '_+_' applied to '(list(int), map(string, int))'",
    ],
    [
      "found no matching overload for 'size(int)'",
      "found no matching overload for 'size' applied to '(int)'",
    ],
    [
      "found no matching overload for 'string.split(int, int)'",
      "found no matching overload for 'split' applied to 'string.(int, int)'",
    ],
    ["Unexpected token: EOF", "Unexpected token: EOF"],
  ])("writes %s as cel-go does", (message, expected) => {
    expect(celGoMessage(message)).toBe(expected);
  });
});
