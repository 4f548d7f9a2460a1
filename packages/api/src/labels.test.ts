import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ReconcileError } from "./errors.js";
import {
  everything,
  labelSelectorAsSelector,
  labelsEqual,
  nonEmptySelectorMatches,
  nothing,
  parseSelector,
  selectorFromSet,
} from "./labels.js";
import { InvalidLabelSelectorError, SelectorParseError } from "./selector-errors.js";
import type { LabelSelector } from "./types.js";

const qualifiedNameRule =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const labelValueRule =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const subdomainRule =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

function parseError(text: string): SelectorParseError {
  try {
    parseSelector(text);
  } catch (error) {
    if (error instanceof SelectorParseError) return error;
    throw error;
  }
  throw new Error(`expected ${JSON.stringify(text)} to be rejected`);
}

describe("parseSelector", () => {
  it.each([
    ["", ""],
    ["   ", ""],
    ["x=a,y=b,z=c", "x=a,y=b,z=c"],
    ["z=c,y=b,x=a", "x=a,y=b,z=c"],
    ["x!=a,y=b", "x!=a,y=b"],
    ["x==a", "x==a"],
    ["x=", "x="],
    ["x= ", "x="],
    ["x=,z= ", "x=,z="],
    ["x= ,z= ", "x=,z="],
    ["!x", "!x"],
    [" ! x ", "!x"],
    ["x", "x"],
    ["x>1", "x>1"],
    ["x>1,z<5", "x>1,z<5"],
    ["x in (c,b,a)", "x in (a,b,c)"],
    ["  x  in ( b , a , b ) , y notin (z)  ", "x in (a,b),y notin (z)"],
    ["x\tin\n(a)", "x in (a)"],
    ["x in ()", "x in ()"],
    ["x in (,)", "x in ()"],
    ["x in (a,)", "x in (,a)"],
    ["x in (,a)", "x in (,a)"],
    ["x in (a,,b)", "x in (,a,b)"],
    ["in=notin", "in=notin"],
    ["x in (in,notin)", "x in (in,notin)"],
    ["example.com/app=web", "example.com/app=web"],
    ["b,a=1,!c", "a=1,b,!c"],
  ])("parses %j into the canonical %j", (text, canonical) => {
    const selector = parseSelector(text);
    expect(selector.toString()).toBe(canonical);
    expect(parseSelector(selector.toString()).toString()).toBe(canonical);
  });

  it("exposes requirements sorted by key with sorted, distinct values", () => {
    expect(parseSelector("z notin (b,a,b),a=1,m,!n,q>3,r<4").requirements()).toEqual([
      { key: "a", operator: "=", values: ["1"] },
      { key: "m", operator: "exists", values: [] },
      { key: "n", operator: "!", values: [] },
      { key: "q", operator: "gt", values: ["3"] },
      { key: "r", operator: "lt", values: ["4"] },
      { key: "z", operator: "notin", values: ["a", "b"] },
    ]);
  });

  it("keeps requirements on the same key in the order given", () => {
    expect(parseSelector("a!=2,a!=1").toString()).toBe("a!=2,a!=1");
  });

  it.each([
    ["x=a||y=b", "a||y", 2, `invalid label value "a||y" for key "x": ${labelValueRule}`],
    ["x==a==b", "==", 4, "found '==', expected: ',' or 'end of string'"],
    ["!x=a", "=", 2, "found '=', expected: ',' or 'end of string'"],
    ["x<a", "a", 2, "for 'Gt', 'Lt' operators, the value must be an integer"],
    ["x in ((", "(", 6, "found '(', expected: ',', ')' or identifier"],
    ["x,,y", ",", 2, "found ',', expected: identifier after ','"],
    ["x=a,", "", 4, "found end of string, expected: identifier after ','"],
    ["x in (a", "", 7, "found end of string, expected: ',' or ')'"],
    ["x in (a b)", "b", 8, "found 'b', expected: ',' or ')'"],
    ["x in (a,=)", "=", 8, "found '=', expected: ',', or identifier"],
    ["x y", "y", 2, "found 'y', expected: in, notin, =, ==, !=, gt, lt"],
    ["x in a", "a", 5, "found 'a', expected: '('"],
    ["x=(a)", "(", 2, "found '(', expected: identifier"],
    ["=a", "=", 0, "found '=', expected: !, identifier, or 'end of string'"],
    ["a=b c", "c", 4, "found 'c', expected: ',' or 'end of string'"],
    ["!", "", 1, "found end of string, expected: identifier"],
    ["-x=a", "-x", 0, `invalid label key "-x": name part ${qualifiedNameRule}`],
    ["a=b,x_=1", "x_", 4, `invalid label key "x_": name part ${qualifiedNameRule}`],
    [
      "a/b/c",
      "a/b/c",
      0,
      `invalid label key "a/b/c": a qualified name ${qualifiedNameRule} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ],
    [
      "Example.com/x=y",
      "Example.com/x",
      0,
      `invalid label key "Example.com/x": prefix part ${subdomainRule}`,
    ],
    ["/x", "/x", 0, `invalid label key "/x": prefix part must be non-empty`],
    ["a/", "a/", 0, `invalid label key "a/": name part must be non-empty; name part ${qualifiedNameRule}`],
    [
      `${"k".repeat(64)}=v`,
      "k".repeat(64),
      0,
      `invalid label key "${"k".repeat(64)}": name part must be no more than 63 characters`,
    ],
    [
      `k in (a, ${"v".repeat(64)})`,
      "v".repeat(64),
      9,
      `invalid label value "${"v".repeat(64)}" for key "k": must be no more than 63 characters`,
    ],
  ])("rejects %j naming the term %j at position %i", (text, term, position, reason) => {
    const error = parseError(text);
    expect(error.term).toBe(term);
    expect(error.position).toBe(position);
    expect(error.reason).toBe(reason);
    expect(error.selector).toBe(text);
    expect(error.message).toBe(
      `invalid label selector ${JSON.stringify(text)}: ${reason} (at position ${position})`,
    );
    expect(error.code).toBe("api.selector-parse");
    expect(SelectorParseError.isInstance(error)).toBe(true);
    expect(ReconcileError.isInstance(error)).toBe(true);
  });
});

it("parseSelector rejects a value that is not a string", () => {
  expect(() => parseSelector(undefined as never)).toThrow("a label selector must be a string, got undefined");
});

describe("Selector.matches", () => {
  it.each([
    ["", {}, true],
    ["", { x: "y" }, true],
    ["x=y", { x: "y" }, true],
    ["x==y", { x: "y" }, true],
    ["x=y,z=w", { x: "y", z: "w" }, true],
    ["x!=y,z!=w", { x: "z", z: "a" }, true],
    ["x!=y", {}, true],
    ["x=", { x: "" }, true],
    ["x!=", {}, true],
    ["x in (a,b)", { x: "b" }, true],
    ["x notin (a,b)", { x: "c" }, true],
    ["x notin (a,b)", {}, true],
    ["x", { x: "" }, true],
    ["!x", { y: "1" }, true],
    ["x>1", { x: "2" }, true],
    ["x<1", { x: "0" }, true],
    ["x>1", { x: "007" }, true],
    ["!constructor", {}, true],
    ["x=z", { x: "y" }, false],
    ["x=y", {}, false],
    ["x=", {}, false],
    ["x!=y", { x: "y" }, false],
    ["x=y,z=w", { x: "y", z: "a" }, false],
    ["x in (a,b)", { x: "c" }, false],
    ["x in (a,b)", {}, false],
    ["x notin (a,b)", { x: "a" }, false],
    ["x", {}, false],
    ["!x", { x: "" }, false],
    ["x>1", { x: "1" }, false],
    ["x>1", { x: "a" }, false],
    ["x>1", {}, false],
    ["x<1", { x: "1" }, false],
    ["constructor", {}, false],
    ["toString=x", {}, false],
  ])("%j on %j is %s", (text, labels, expected) => {
    expect(parseSelector(text).matches(labels)).toBe(expected);
  });

  it("treats missing labels as no labels", () => {
    expect(parseSelector("x!=y").matches(undefined)).toBe(true);
    expect(parseSelector("x").matches(undefined)).toBe(false);
  });
});

describe("everything, nothing and selectorFromSet", () => {
  it("everything selects every object and is empty", () => {
    expect(everything().matches({ a: "b" })).toBe(true);
    expect(everything().matches(undefined)).toBe(true);
    expect(everything().empty()).toBe(true);
    expect(everything().toString()).toBe("");
    expect(everything().requirements()).toEqual([]);
  });

  it("nothing selects no object and is not empty", () => {
    expect(nothing().matches({})).toBe(false);
    expect(nothing().matches({ a: "b" })).toBe(false);
    expect(nothing().empty()).toBe(false);
    expect(nothing().toString()).toBe("");
    expect(nothing().requirements()).toEqual([]);
  });

  it("selectorFromSet requires every label, in key order", () => {
    const selector = selectorFromSet({ b: "2", a: "1" });
    expect(selector.toString()).toBe("a=1,b=2");
    expect(selector.matches({ a: "1", b: "2", c: "3" })).toBe(true);
    expect(selector.matches({ a: "1" })).toBe(false);
    expect(selector.empty()).toBe(false);
  });

  it("selectorFromSet of no labels selects everything", () => {
    expect(selectorFromSet({}).empty()).toBe(true);
    expect(selectorFromSet(undefined).matches({ a: "b" })).toBe(true);
  });

  it("selectorFromSet rejects an invalid label value", () => {
    expect(() => selectorFromSet({ app: "a b" })).toThrow(
      new InvalidLabelSelectorError([`values[0][app]: Invalid value: "a b": ${labelValueRule}`]),
    );
  });

  it("requiresExactMatch reports the pinned value of =, == and one-value in", () => {
    const selector = parseSelector("a=1,b==2,c in (3),d in (4,5),e!=6,f");
    expect(selector.requiresExactMatch("a")).toBe("1");
    expect(selector.requiresExactMatch("b")).toBe("2");
    expect(selector.requiresExactMatch("c")).toBe("3");
    expect(selector.requiresExactMatch("d")).toBeUndefined();
    expect(selector.requiresExactMatch("e")).toBeUndefined();
    expect(selector.requiresExactMatch("f")).toBeUndefined();
    expect(selector.requiresExactMatch("g")).toBeUndefined();
  });
});

describe("labelSelectorAsSelector", () => {
  it.each<[string, LabelSelector, string, Record<string, string>, Record<string, string>]>([
    ["matchLabels", { matchLabels: { foo: "bar" } }, "foo=bar", { foo: "bar" }, { foo: "baz" }],
    [
      "matchLabels and In",
      {
        matchLabels: { foo: "bar" },
        matchExpressions: [{ key: "baz", operator: "In", values: ["qux", "norf"] }],
      },
      "baz in (norf,qux),foo=bar",
      { foo: "bar", baz: "norf" },
      { foo: "bar" },
    ],
    [
      "NotIn",
      { matchExpressions: [{ key: "baz", operator: "NotIn", values: ["qux"] }] },
      "baz notin (qux)",
      {},
      { baz: "qux" },
    ],
    ["Exists", { matchExpressions: [{ key: "baz", operator: "Exists" }] }, "baz", { baz: "" }, {}],
    [
      "DoesNotExist",
      { matchExpressions: [{ key: "baz", operator: "DoesNotExist", values: [] }] },
      "!baz",
      {},
      { baz: "x" },
    ],
  ])("converts %s", (_name, ls, text, selected, notSelected) => {
    const selector = labelSelectorAsSelector(ls);
    expect(selector.toString()).toBe(text);
    expect(selector.matches(selected)).toBe(true);
    expect(selector.matches(notSelected)).toBe(false);
  });

  it("reports a missing key or non-string values as invalid instead of crashing", () => {
    expect(() => labelSelectorAsSelector({ matchExpressions: [{ operator: "Exists" }] } as never)).toThrow(
      `key: Invalid value: "": name part must be non-empty; name part ${qualifiedNameRule}`,
    );
    expect(
      labelSelectorAsSelector({
        matchExpressions: [{ key: "a", operator: "In", values: [1] }],
      } as never).toString(),
    ).toBe("a in (1)");
    expect(() => labelSelectorAsSelector({ matchExpressions: [{ key: "a" }] } as never)).toThrow(
      "undefined is not a valid label selector operator",
    );
  });

  it("converts null and undefined to nothing and {} to everything", () => {
    expect(labelSelectorAsSelector(null)).toBe(nothing());
    expect(labelSelectorAsSelector(undefined)).toBe(nothing());
    expect(labelSelectorAsSelector({})).toBe(everything());
    expect(labelSelectorAsSelector({ matchLabels: {}, matchExpressions: [] })).toBe(everything());
  });

  it.each<[string, LabelSelector, string]>([
    [
      "an unknown operator",
      { matchExpressions: [{ key: "a", operator: "Gt", values: ["1"] }] },
      `"Gt" is not a valid label selector operator`,
    ],
    [
      "In without values",
      { matchExpressions: [{ key: "a", operator: "In", values: [] }] },
      "values: Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty",
    ],
    [
      "NotIn without values",
      { matchExpressions: [{ key: "a", operator: "NotIn" }] },
      "values: Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty",
    ],
    [
      "Exists with values",
      { matchExpressions: [{ key: "a", operator: "Exists", values: ["x"] }] },
      `values: Invalid value: []string{"x"}: values set must be empty for exists and does not exist`,
    ],
    [
      "an invalid key",
      { matchLabels: { "a b": "c" } },
      `key: Invalid value: "a b": name part ${qualifiedNameRule}`,
    ],
    [
      "an invalid value",
      { matchExpressions: [{ key: "app", operator: "In", values: ["ok", "-bad"] }] },
      `values[1][app]: Invalid value: "-bad": ${labelValueRule}`,
    ],
    [
      "an invalid key and value together",
      { matchLabels: { "a b": "c!" } },
      `[key: Invalid value: "a b": name part ${qualifiedNameRule}, values[0][a b]: Invalid value: "c!": ${labelValueRule}]`,
    ],
  ])("rejects %s with apimachinery's message", (_name, ls, message) => {
    let caught: unknown;
    try {
      labelSelectorAsSelector(ls);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(InvalidLabelSelectorError);
    expect((caught as InvalidLabelSelectorError).message).toBe(message);
    expect((caught as InvalidLabelSelectorError).code).toBe("api.invalid-label-selector");
    expect((caught as InvalidLabelSelectorError).legacyCode).toBe("selector.invalid");
    expect(InvalidLabelSelectorError.isInstance(caught)).toBe(true);
    expect(SelectorParseError.isInstance(caught)).toBe(false);
  });
});

describe("round trips", () => {
  const key = fc.constantFrom("a", "b", "app", "example.com/tier", "in", "x.y-z");
  const listValue = fc.constantFrom("1", "v", "web", "in", "notin", "A_b.c");
  const value = fc.oneof(fc.constant(""), listValue);
  const term = fc.oneof(
    fc.tuple(key, fc.constantFrom("=", "==", "!="), value).map(([k, op, v]) => `${k} ${op} ${v}`),
    fc
      .tuple(key, fc.constantFrom("in", "notin"), fc.array(listValue, { minLength: 1, maxLength: 4 }))
      .map(([k, op, vs]) => `${k} ${op} (${vs.join(", ")})`),
    fc.tuple(key, fc.constantFrom(">", "<"), fc.nat(99)).map(([k, op, n]) => `${k}${op}${n}`),
    key,
    key.map((k) => `!${k}`),
  );
  const labels = fc.dictionary(key, value, { maxKeys: 4 });

  it("parse → toString → parse gives the same string and the same matches", () => {
    fc.assert(
      fc.property(fc.array(term, { maxLength: 5 }), fc.array(labels, { maxLength: 5 }), (terms, samples) => {
        const first = parseSelector(terms.join(" , "));
        const second = parseSelector(first.toString());
        expect(second.toString()).toBe(first.toString());
        expect(second.requirements()).toEqual(first.requirements());
        for (const sample of samples) expect(second.matches(sample)).toBe(first.matches(sample));
      }),
    );
  });
});

describe("labelsEqual (upstream labels.Equals)", () => {
  it("same keys and values are equal whatever the order; a missing map is an empty one", () => {
    expect(labelsEqual({ a: "1", b: "2" }, { b: "2", a: "1" })).toBe(true);
    expect(labelsEqual(undefined, {})).toBe(true);
    expect(labelsEqual(null, undefined)).toBe(true);
  });
  it("a different value, a missing key or an extra key is not equal", () => {
    expect(labelsEqual({ a: "1" }, { a: "2" })).toBe(false);
    expect(labelsEqual({ a: "1" }, { b: "1" })).toBe(false);
    expect(labelsEqual({ a: "1" }, { a: "1", b: "" })).toBe(false);
    expect(labelsEqual({ a: "" }, {})).toBe(false);
    expect(labelsEqual({ toString: "x" }, { valueOf: "x" })).toBe(false);
  });
});

describe("nonEmptySelectorMatches", () => {
  it.each([
    [{ matchLabels: { app: "web" } }, { app: "web", tier: "x" }, true],
    [{ matchLabels: { app: "web" } }, { app: "api" }, false],
    [{ matchExpressions: [{ key: "app", operator: "Exists" }] }, { app: "web" }, true],
    [{}, { app: "web" }, false],
    [undefined, { app: "web" }, false],
    [{ matchExpressions: [{ key: "app", operator: "Bogus" }] }, { app: "web" }, false],
  ])("%j over %j is %s", (selector, labels, expected) => {
    expect(nonEmptySelectorMatches(selector, labels)).toBe(expected);
  });
});
