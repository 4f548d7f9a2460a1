import { describe, expect, it } from "vitest";
import { compileRules, escapeProperty } from "./cel.js";
import { validateCustomResource } from "./custom-resource.js";
import { SchemaErrors } from "./errors.js";
import type { JSONSchemaProps, ValidationRule } from "./schema.js";

function cr(spec: Record<string, unknown>, name = "x"): Record<string, unknown> {
  return { apiVersion: "stable.example.com/v1", kind: "CronTab", metadata: { name }, spec };
}

function schemaWith(spec: JSONSchemaProps, root: Partial<JSONSchemaProps> = {}): JSONSchemaProps {
  return { type: "object", properties: { spec }, ...root };
}

const replicasSpec = (rules: ValidationRule[]): JSONSchemaProps => ({
  type: "object",
  properties: { replicas: { type: "integer" }, maxReplicas: { type: "integer" } },
  "x-kubernetes-validations": rules,
});

function messages(object: Record<string, unknown>, schema: JSONSchemaProps, old?: Record<string, unknown>) {
  return validateCustomResource(object, schema, old).map((e) => e.message);
}

describe("x-kubernetes-validations", () => {
  it("reports a failed rule at its node with the schema type as value and the message as detail", () => {
    const schema = schemaWith(
      replicasSpec([
        { rule: "self.replicas <= self.maxReplicas", message: "replicas must be <= maxReplicas" },
      ]),
    );
    expect(messages(cr({ replicas: 5, maxReplicas: 3 }), schema)).toEqual([
      'spec: Invalid value: "object": replicas must be <= maxReplicas',
    ]);
    expect(messages(cr({ replicas: 3, maxReplicas: 3 }), schema)).toEqual([]);
  });

  it("says failed rule: <rule> without a message, and sees only name and generateName of the root's metadata", () => {
    const schema: JSONSchemaProps = {
      type: "object",
      "x-kubernetes-validations": [{ rule: 'self.metadata.name.startsWith("my-prefix")' }],
    };
    expect(messages(cr({}, "other"), schema)).toEqual([
      '<nil>: Invalid value: "object": failed rule: self.metadata.name.startsWith("my-prefix")',
    ]);
    expect(messages(cr({}, "my-prefix-a"), schema)).toEqual([]);
  });

  it("uses reason, fieldPath and messageExpression", () => {
    const schema = schemaWith(
      replicasSpec([
        {
          rule: "self.replicas >= 0",
          reason: "FieldValueForbidden",
          fieldPath: ".replicas",
          message: "no negatives",
        },
        {
          rule: "self.replicas < 100",
          messageExpression: "'replicas ' + string(self.replicas) + ' is too many'",
        },
        { rule: "self.maxReplicas != 7", reason: "FieldValueRequired", message: "not seven" },
        { rule: "self.maxReplicas != 7", reason: "FieldValueDuplicate", message: "dropped" },
      ]),
    );
    expect(messages(cr({ replicas: -1, maxReplicas: 1 }), schema)).toEqual([
      "spec.replicas: Forbidden: no negatives",
    ]);
    expect(messages(cr({ replicas: 100, maxReplicas: 7 }), schema)).toEqual([
      'spec: Invalid value: "object": replicas 100 is too many',
      "spec: Required value: not seven",
      'spec: Duplicate value: "object"',
    ]);
  });

  it("runs transition rules only on update, with oldSelf", () => {
    const schema = schemaWith({
      type: "object",
      properties: {
        mode: {
          type: "string",
          "x-kubernetes-validations": [{ rule: "self == oldSelf", message: "Value is immutable" }],
        },
      },
    });
    expect(messages(cr({ mode: "a" }), schema)).toEqual([]);
    expect(messages(cr({ mode: "b" }), schema, cr({ mode: "a" }))).toEqual([
      'spec.mode: Invalid value: "string": Value is immutable',
    ]);
    expect(messages(cr({ mode: "a" }), schema, cr({ mode: "a" }))).toEqual([]);
    // no old value to correlate with: the transition rule does not run
    expect(messages(cr({ mode: "b" }), schema, cr({}))).toEqual([]);
  });

  it("with optionalOldSelf, runs on create too and oldSelf is an optional", () => {
    const schema = schemaWith({
      type: "object",
      properties: {
        n: {
          type: "integer",
          "x-kubernetes-validations": [
            { rule: "self >= oldSelf.orValue(0)", optionalOldSelf: true, message: "may only grow" },
          ],
        },
      },
    });
    expect(messages(cr({ n: 1 }), schema)).toEqual([]);
    expect(messages(cr({ n: 1 }), schema, cr({ n: 2 }))).toEqual([
      'spec.n: Invalid value: "integer": may only grow',
    ]);
  });

  it("correlates items of map lists by key, and never runs rules on null", () => {
    const schema = schemaWith({
      type: "object",
      properties: {
        ports: {
          type: "array",
          "x-kubernetes-list-type": "map",
          "x-kubernetes-list-map-keys": ["name"],
          items: {
            type: "object",
            required: ["name"],
            properties: { name: { type: "string" }, port: { type: "integer" } },
            "x-kubernetes-validations": [{ rule: "self.port == oldSelf.port", message: "port is immutable" }],
          },
        },
        gone: { type: "string", nullable: true, "x-kubernetes-validations": [{ rule: "false" }] },
      },
    });
    const old = cr({
      ports: [
        { name: "a", port: 1 },
        { name: "b", port: 2 },
      ],
    });
    expect(
      messages(
        cr({
          ports: [
            { name: "b", port: 2 },
            { name: "a", port: 1 },
          ],
          gone: null,
        }),
        schema,
        old,
      ),
    ).toEqual([]);
    expect(
      messages(
        cr({
          ports: [
            { name: "b", port: 3 },
            { name: "c", port: 9 },
          ],
        }),
        schema,
        old,
      ),
    ).toEqual(['spec.ports[0]: Invalid value: "object": port is immutable']);
  });

  it("reports runtime errors with the rule, and escapes property names as the apiserver does", () => {
    const schema = schemaWith({
      type: "object",
      "x-preserve": true,
      properties: {
        namespace: { type: "string" },
        "a-b": { type: "string" },
        m: { type: "object", additionalProperties: { type: "string" } },
      },
      "x-kubernetes-validations": [
        { rule: "self.__namespace__ == self.a__dash__b", message: "must match" },
        { rule: "self.m.missing == 'x'" },
      ],
    });
    expect(messages(cr({ namespace: "n", "a-b": "n", m: {} }), schema)).toEqual([
      "spec: Invalid value: \"object\": no such key: missing evaluating rule: self.m.missing == 'x'",
    ]);
    expect(escapeProperty("namespace")).toBe("__namespace__");
    expect(escapeProperty("a.b-c/d__e")).toBe("a__dot__b__dash__c__slash__d__underscores__e");
    expect(escapeProperty("1abc")).toBeUndefined();
  });

  it("is skipped after blocking errors, with upstream's note", () => {
    const schema = schemaWith(replicasSpec([{ rule: "false" }]), { required: ["spec"] });
    expect(messages(cr({ replicas: "x" }), schema)).toEqual([
      'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"',
      '<nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
    ]);
  });

  it("compiles rules when the CRD is written and names bad ones", () => {
    const errors = new SchemaErrors();
    compileRules(
      {
        type: "object",
        "x-kubernetes-validations": [
          { rule: "self.a +" },
          { rule: "1 + 'a' == 2" },
          { rule: "'a'" },
          { rule: "true", reason: "Nope" },
          { rule: "true", optionalOldSelf: true },
          { rule: "true\n" },
        ],
      },
      errors,
      "spec.validation.openAPIV3Schema",
    );
    const out = errors.list.map((e) => e.message);
    const at = "spec.validation.openAPIV3Schema.x-kubernetes-validations";
    expect(out[0]).toMatch(
      new RegExp(
        `^${at.replaceAll(".", "\\.").replaceAll("[", "\\[")}\\[0\\]\\.rule: Invalid value: \\{"rule":"self\\.a \\+"\\}: compilation failed: ERROR: `,
      ),
    );
    expect(out[1]).toMatch(
      /\[1\]\.rule: Invalid value: .*compilation failed: ERROR: no such overload: int \+ string/,
    );
    expect(out[2]).toBe(
      `${at}[2].rule: Invalid value: {"rule":"'a'"}: cel expression must evaluate to a bool`,
    );
    expect(out[3]).toBe(
      `${at}[3].reason: Unsupported value: "Nope": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"`,
    );
    expect(out[4]).toBe(
      `${at}[4].optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule`,
    );
    expect(out[5]).toBe(
      `${at}[5].rule: Required value: message must be specified if rule contains line breaks`,
    );
    expect(out).toHaveLength(6);
  });
});
