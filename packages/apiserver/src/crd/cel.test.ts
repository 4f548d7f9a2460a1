import { describe, expect, it } from "vitest";
import { compileRules, escapeProperty } from "./cel.js";
import { crdSchemaErrors } from "./crd.test-util.js";
import { validateCustomResource } from "./custom-resource.js";
import { SchemaErrors } from "./errors.js";
import type { JSONSchemaProps, ValidationRule } from "./schema.js";

/** A rule as kube-apiserver 1.32 prints the internal ValidationRule in a field error (Go's `%#v`). */
function goRule(rule: string): string {
  return `apiextensions.ValidationRule{Rule:${JSON.stringify(rule)}, Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}`;
}

/** `goRule(rule)` as a regular expression's source. */
function goRulePattern(rule: string): string {
  return goRule(rule).replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

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
        `^${at.replaceAll(".", "\\.").replaceAll("[", "\\[")}\\[0\\]\\.rule: Invalid value: ${goRulePattern("self.a +")}: compilation failed: ERROR: `,
      ),
    );
    expect(out[1]).toBe(
      `${at}[1].rule: Invalid value: apiextensions.ValidationRule{Rule:"1 + 'a' == 2", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:3: found no matching overload for '_+_' applied to '(int, string)'\n | 1 + 'a' == 2\n | ..^`,
    );
    expect(out[2]).toBe(
      `${at}[2].rule: Invalid value: apiextensions.ValidationRule{Rule:"'a'", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: cel expression must evaluate to a bool`,
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

/** Each rule runs on spec `{ empty: [], text: "..." }`; a passing rule adds no error. */
function ruleErrors(rules: ValidationRule[], spec: Record<string, unknown> = {}): string[] {
  const schema = schemaWith({
    type: "object",
    properties: {
      empty: { type: "array", items: { type: "integer" } },
      numbers: { type: "array", items: { type: "integer" } },
      text: { type: "string" },
    },
    "x-kubernetes-validations": rules,
  });
  return messages(cr(spec), schema);
}

describe("Kubernetes CEL libraries", () => {
  // Cases from k8s.io/apiserver/pkg/cel/library's lists, regex, urls and quantity tests.
  const passing = [
    // lists
    "[1, 2, 3].isSorted()",
    "![3, 2, 1].isSorted()",
    "['a', 'b', 'b'].isSorted()",
    "[1.0, 2.5].isSorted()",
    "[1, 2, 3].sum() == 6",
    "[1.5, 2.5].sum() == 4.0",
    "self.empty.sum() == 0",
    "[4, 1, 3].min() == 1",
    "[4, 1, 3].max() == 4",
    "['b', 'a'].min() == 'a'",
    "[1, 2, 3, 2].indexOf(2) == 1",
    "[1, 2, 3, 2].lastIndexOf(2) == 3",
    "[1, 2].indexOf(9) == -1",
    "['a', 'b'].lastIndexOf('c') == -1",
    // regex
    "'abc 123'.find('[0-9]+') == '123'",
    "'abc'.find('[0-9]+') == ''",
    "'123 abc 456'.findAll('[0-9]+') == ['123', '456']",
    "'123 abc 456'.findAll('[0-9]+', 1) == ['123']",
    "'123 abc 456'.findAll('[0-9]+', 0).size() == 0",
    "'abc'.findAll('[0-9]+').size() == 0",
    // urls
    "url('https://example.com:80/').getHost() == 'example.com:80'",
    "url('https://example.com/').getScheme() == 'https'",
    "url('https://[::1]:80/').getHost() == '[::1]:80'",
    "url('https://[::1]:80/').getHostname() == '::1'",
    "url('https://example.com:80/').getHostname() == 'example.com'",
    "url('https://example.com:80/').getPort() == '80'",
    "url('https://example.com/').getPort() == ''",
    "url('/absolute-path').getEscapedPath() == '/absolute-path'",
    "url('https://example.com/path with spaces/').getEscapedPath() == '/path%20with%20spaces/'",
    "url('https://example.com/?k=a&k=b&x=1').getQuery() == {'k': ['a', 'b'], 'x': ['1']}",
    "url('https://example.com/').getQuery().size() == 0",
    "isURL('https://user:pass@example.com:80/path?query=val#fragment')",
    "isURL('/absolute-path')",
    "!isURL('example.com')",
    "!isURL('https://example.com:port/')",
    // quantity
    "isQuantity('1.3')",
    "isQuantity('50Mi')",
    "!isQuantity('1.3.4')",
    "!isQuantity('-1Mi1')",
    "quantity('50M').isGreaterThan(quantity('50Mi')) == false",
    "quantity('50Mi').isGreaterThan(quantity('50M'))",
    "quantity('50M').isLessThan(quantity('50Mi'))",
    "quantity('50Mi').compareTo(quantity('50M')) == 1",
    "quantity('50M').compareTo(quantity('50M')) == 0",
    "quantity('1') == quantity('1000m')",
    "quantity('1').add(quantity('500m')) == quantity('1500m')",
    "quantity('1').add(1) == quantity('2')",
    "quantity('1').sub(quantity('500m')) == quantity('500m')",
    "quantity('1').sub(2) == quantity('-1')",
    "quantity('-5').sign() == -1",
    "quantity('0').sign() == 0",
    "quantity('50k').asInteger() == 50000",
    "quantity('50k').isInteger()",
    "!quantity('50m').isInteger()",
    "quantity('50m').asApproximateFloat() == 0.05",
  ];
  it.each(passing)("%s", (rule) => {
    expect(ruleErrors([{ rule }], { empty: [] })).toEqual([]);
  });

  it("accepts a rule whose result type depends on the data, and checks it when it runs", () => {
    const errors = new SchemaErrors();
    compileRules(
      { type: "object", "x-kubernetes-validations": [{ rule: "self.flags.min()" }] },
      errors,
      "root",
    );
    expect(errors.list).toEqual([]);
  });

  it("reports library errors at the rule's node", () => {
    expect(
      ruleErrors(
        [
          { rule: "self.empty.min() == 0" },
          { rule: "self.empty.max() == 0", message: "needs items" },
          { rule: "url('example.com').getHost() == ''" },
          { rule: "quantity('50m').asInteger() == 0" },
          { rule: "quantity('abc').sign() == 0" },
        ],
        { empty: [] },
      ),
    ).toEqual([
      'spec: Invalid value: "object": min called on empty list evaluating rule: self.empty.min() == 0',
      'spec: Invalid value: "object": max called on empty list evaluating rule: needs items',
      "spec: Invalid value: \"object\": URL parse error during conversion from string: parse \"example.com\": invalid URI for request evaluating rule: url('example.com').getHost() == ''",
      "spec: Invalid value: \"object\": cannot convert value to integer evaluating rule: quantity('50m').asInteger() == 0",
      "spec: Invalid value: \"object\": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$' evaluating rule: quantity('abc').sign() == 0",
    ]);
  });

  it("lets rules use the libraries on the object's fields", () => {
    const rules = [
      { rule: "self.numbers.isSorted()", message: "numbers must be sorted" },
      { rule: "self.numbers.sum() <= 10", messageExpression: "'sum is ' + string(self.numbers.sum())" },
      { rule: "isURL(self.text)", message: "text must be a URL" },
    ];
    expect(ruleErrors(rules, { numbers: [1, 2, 3], text: "https://example.com" })).toEqual([]);
    expect(ruleErrors(rules, { numbers: [9, 2], text: "nope" })).toEqual([
      'spec: Invalid value: "object": numbers must be sorted',
      'spec: Invalid value: "object": sum is 11',
      'spec: Invalid value: "object": text must be a URL',
    ]);
  });
});

describe("runtime cost limits", () => {
  const numbers = Array.from({ length: 400 }, (_, i) => i);

  it("stops a rule past the per-call limit and runs no further rules", () => {
    const nested = "self.numbers.all(x, self.numbers.all(y, self.numbers.all(z, x + y + z >= 0)))";
    expect(ruleErrors([{ rule: nested }, { rule: "false", message: "not reached" }], { numbers })).toEqual([
      `spec: Invalid value: "object": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: ${nested}`,
    ]);
  });

  it("shares one budget across the rules of an object and stops when it runs out", () => {
    // each rule stays under the per-call limit; together they pass the object's budget
    const square = { rule: "self.numbers.all(x, self.numbers.all(y, x + y >= 0))" };
    const rules = [...Array.from({ length: 30 }, () => square), { rule: "false", message: "not reached" }];
    const numbers = Array.from({ length: 300 }, (_, i) => i);
    expect(ruleErrors(rules, { numbers })).toEqual([
      'spec: Invalid value: "object": validation failed due to running out of cost budget, no further validation rules will be run',
    ]);
    expect(ruleErrors([square, square, { rule: "false", message: "reached" }], { numbers })).toEqual([
      'spec: Invalid value: "object": reached',
    ]);
  });
});

describe("estimated cost at CRD write", () => {
  const crdErrors = crdSchemaErrors;
  const at = "spec.validation.openAPIV3Schema";
  const listOf = (items: JSONSchemaProps, bounds: Partial<JSONSchemaProps> = {}): JSONSchemaProps => ({
    type: "object",
    properties: { spec: { type: "object", properties: { list: { type: "array", items, ...bounds } } } },
  });
  const nested = "self.list.all(x, self.list.all(y, x == y))";

  it("forbids a rule whose worst case exceeds the per-expression budget, and accepts it with maxItems", () => {
    const unbounded = listOf({ type: "string" });
    (unbounded.properties?.spec as JSONSchemaProps)["x-kubernetes-validations"] = [{ rule: nested }];
    expect(crdErrors(unbounded)).toEqual([
      `${at}.properties[spec].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`,
      // it counts towards the schema's total as well, as upstream's
      `${at}.properties[spec].x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema`,
      `${at}: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`,
    ]);
    const bounded = listOf({ type: "string", maxLength: 64 }, { maxItems: 100 });
    (bounded.properties?.spec as JSONSchemaProps)["x-kubernetes-validations"] = [{ rule: nested }];
    expect(crdErrors(bounded)).toEqual([]);
  });

  it("multiplies a rule's cost by the sizes of the lists around its node", () => {
    const item = (maxLength?: number): JSONSchemaProps => ({
      type: "string",
      ...(maxLength ? { maxLength } : {}),
      "x-kubernetes-validations": [{ rule: "self.matches('^[a-z]+$')" }],
    });
    expect(crdErrors(listOf(item(), { maxItems: 1000 }))).toEqual([
      `${at}.properties[spec].properties[list].items.x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of 31.5x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`,
      `${at}.properties[spec].properties[list].items.x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema`,
      `${at}: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of 3.1x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`,
    ]);
    expect(crdErrors(listOf(item(253), { maxItems: 1000 }))).toEqual([]);
  });

  it("forbids a messageExpression over budget the same way", () => {
    const schema = listOf({ type: "string" });
    (schema.properties?.spec as JSONSchemaProps)["x-kubernetes-validations"] = [
      { rule: "true", messageExpression: "self.list.map(x, self.list.map(y, x + y)).size() > 0 ? 'a' : 'b'" },
    ];
    expect(crdErrors(schema)).toEqual([
      `${at}.properties[spec].x-kubernetes-validations[0].messageExpression: Forbidden: estimated messageExpression cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`,
    ]);
  });

  it("forbids a schema whose rules together exceed the per-schema budget, naming the four most expensive", () => {
    // each rule alone is within 10,000,000; twenty of them are not within 100,000,000
    const properties: Record<string, JSONSchemaProps> = {};
    for (let i = 0; i < 20; i++) {
      properties[`f${i}`] = {
        type: "array",
        maxItems: 1000,
        items: { type: "string", maxLength: 40_000 },
        "x-kubernetes-validations": [{ rule: "self.all(x, x.contains('a') && x.contains('b'))" }],
      };
    }
    const out = crdErrors({ type: "object", properties: { spec: { type: "object", properties } } });
    expect(out.filter((m) => m.includes("contributed to"))).toHaveLength(4);
    expect(out.at(-1)).toMatch(
      new RegExp(
        `^${at.replaceAll(".", "\\.")}: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of \\d\\.\\d+x \\(try simplifying the rule`,
      ),
    );
    expect(out).toHaveLength(5);
  });
});

describe("format library", () => {
  const passing = [
    "format.named('dns1123Label').hasValue()",
    "!format.named('nope').hasValue()",
    "!format.dns1123Label().validate('my-name').hasValue()",
    "format.dns1123Label().validate('My_Name').hasValue()",
    "!format.dns1123LabelPrefix().validate('my-name-').hasValue()",
    "format.dns1123Label().validate('my-name-').hasValue()",
    "!format.dns1123Subdomain().validate('example.com').hasValue()",
    "!format.dns1035Label().validate('abc-1').hasValue()",
    "format.dns1035Label().validate('1abc').hasValue()",
    "!format.qualifiedName().validate('example.com/name').hasValue()",
    "!format.labelValue().validate('').hasValue()",
    "format.labelValue().validate('-x').hasValue()",
    "!format.uri().validate('https://example.com/x').hasValue()",
    "format.uri().validate('example').value() == ['invalid URI']",
    "!format.uuid().validate('98c73526-7b15-4e0c-aacd-a47816efaedc').hasValue()",
    "format.uuid().validate('98c73526').value() == ['does not match the UUID format']",
    "!format.byte().validate('aGVsbG8=').hasValue()",
    "format.byte().validate('a').hasValue()",
    "!format.date().validate('2024-02-29').hasValue()",
    "format.date().validate('2023-02-29').hasValue()",
    "!format.datetime().validate('2024-02-29T12:00:00Z').hasValue()",
    "format.datetime().validate('2024-02-29 12:00').hasValue()",
    "format.named('uuid').value().validate('x').hasValue()",
  ];
  it.each(passing)("%s", (rule) => {
    expect(ruleErrors([{ rule }])).toEqual([]);
  });

  it("reports the validator's problems through messageExpression", () => {
    expect(
      ruleErrors(
        [
          {
            rule: "!format.dns1123Label().validate(self.text).hasValue()",
            messageExpression: "format.dns1123Label().validate(self.text).value().join(', ')",
          },
        ],
        { text: "Bad_Name" },
      ),
    ).toEqual([
      `spec: Invalid value: "object": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
    ]);
  });
});

describe("IP and CIDR libraries", () => {
  // Cases from k8s.io/apiserver/pkg/cel/library's ip and cidr tests.
  const passing = [
    "isIP('192.168.0.1')",
    "isIP('2001:db8::68')",
    "!isIP('192.168.0.01')",
    "!isIP('::ffff:192.168.0.1')",
    "!isIP('fe80::1%eth0')",
    "!isIP('1.2.3')",
    "ip('192.168.0.1').family() == 4",
    "ip('2001:db8::68').family() == 6",
    "ip.isCanonical('2001:db8::68')",
    "!ip.isCanonical('2001:DB8::68')",
    "!ip.isCanonical('2001:db8:0:0:0:0:0:68')",
    "string(ip('2001:DB8:0:0:0:0:0:68')) == '2001:db8::68'",
    "string(ip('2001:db8:0:0:1:0:0:1')) == '2001:db8::1:0:0:1'",
    "ip('0.0.0.0').isUnspecified()",
    "ip('::').isUnspecified()",
    "ip('127.0.0.1').isLoopback()",
    "ip('::1').isLoopback()",
    "ip('224.0.0.1').isLinkLocalMulticast()",
    "ip('ff02::1').isLinkLocalMulticast()",
    "ip('169.254.169.254').isLinkLocalUnicast()",
    "ip('fe80::1').isLinkLocalUnicast()",
    "ip('192.168.0.1').isGlobalUnicast()",
    "!ip('255.255.255.255').isGlobalUnicast()",
    "!ip('224.0.0.1').isGlobalUnicast()",
    "ip('2001:db8::68').isGlobalUnicast()",
    "ip('127.0.0.1') == ip('127.0.0.1')",
    "isCIDR('192.168.0.0/24')",
    "!isCIDR('192.168.0.0/33')",
    "!isCIDR('192.168.0.0')",
    "cidr('192.168.0.0/24').containsIP('192.168.0.1')",
    "!cidr('192.168.0.0/24').containsIP('192.168.1.1')",
    "cidr('192.168.0.0/24').containsIP(ip('192.168.0.1'))",
    "!cidr('192.168.0.0/24').containsIP('::1')",
    "cidr('192.168.0.0/16').containsCIDR('192.168.10.0/24')",
    "!cidr('192.168.0.0/24').containsCIDR('192.168.0.0/16')",
    "cidr('192.168.0.0/24').containsCIDR(cidr('192.168.0.0/24'))",
    "cidr('2001:db8::/32').containsIP('2001:db8::1')",
    "cidr('192.168.0.1/24').ip() == ip('192.168.0.1')",
    "cidr('192.168.0.1/24').masked() == cidr('192.168.0.0/24')",
    "string(cidr('2001:db8::1/32').masked()) == '2001:db8::/32'",
    "cidr('192.168.0.0/24').prefixLength() == 24",
  ];
  it.each(passing)("%s", (rule) => {
    expect(ruleErrors([{ rule }])).toEqual([]);
  });

  it("refuses what upstream's parser refuses, with its error", () => {
    expect(
      ruleErrors([
        { rule: "ip('::ffff:1.2.3.4').family() == 6" },
        { rule: "cidr('1.2.3.4/33').prefixLength() == 1" },
      ]),
    ).toEqual([
      'spec: Invalid value: "object": IPv4-mapped IPv6 address "::ffff:1.2.3.4" is not allowed evaluating rule: ip(\'::ffff:1.2.3.4\').family() == 6',
      'spec: Invalid value: "object": network address "1.2.3.4/33" parse error during conversion from string: netip.ParsePrefix("1.2.3.4/33"): invalid prefix evaluating rule: cidr(\'1.2.3.4/33\').prefixLength() == 1',
    ]);
  });
});

describe("fieldPath at CRD write", () => {
  it("must name declared properties (or map keys), with no list indices", () => {
    const errors = new SchemaErrors();
    compileRules(
      {
        type: "object",
        properties: {
          a: { type: "object", properties: { b: { type: "string" } } },
          m: { type: "object", additionalProperties: { type: "string" } },
          l: { type: "array", items: { type: "string" } },
        },
        "x-kubernetes-validations": [
          { rule: "true", fieldPath: ".a.b" },
          { rule: "true", fieldPath: ".m['any.key']" },
          { rule: "true", fieldPath: ".a.c" },
          { rule: "true", fieldPath: ".l[0]" },
          { rule: "true", fieldPath: "a" },
        ],
      },
      errors,
      "root",
    );
    expect(errors.list.map((e) => e.message)).toEqual([
      'root.x-kubernetes-validations[2].fieldPath: Invalid value: ".a.c": fieldPath must be a valid path',
      'root.x-kubernetes-validations[3].fieldPath: Invalid value: ".l[0]": fieldPath must be a valid path',
      'root.x-kubernetes-validations[4].fieldPath: Invalid value: "a": fieldPath must be a valid path',
    ]);
  });
});
