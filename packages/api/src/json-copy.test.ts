import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { copyJson } from "./json-copy.js";

describe("copyJson", () => {
  it("copies as a JSON round trip does, sharing no object or array", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const copy = copyJson(value);
        expect(copy).toEqual(JSON.parse(JSON.stringify(value)));
        if (typeof value === "object" && value !== null) expect(copy).not.toBe(value);
      }),
    );
    const nested = { a: { b: [{ c: 1 }] } };
    const copy = copyJson(nested);
    copy.a.b[0]!.c = 2;
    expect(nested.a.b[0]!.c).toBe(1);
  });

  it("drops undefined members, writes -0 as 0, and keeps a parsed __proto__ member as an own member", () => {
    expect(copyJson({ a: undefined, b: 1 })).toEqual({ b: 1 });
    expect(Object.is(copyJson({ n: -0 }).n, 0)).toBe(true);
    expect(Object.keys(copyJson({ a: undefined, b: 1 }))).toEqual(["b"]);
    const copy = copyJson(JSON.parse('{"__proto__": {"polluted": true}}')) as Record<string, unknown>;
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.hasOwn(copy, "__proto__")).toBe(true);
    expect(copy.polluted).toBeUndefined();
    expect(JSON.stringify(copy)).toBe('{"__proto__":{"polluted":true}}');
  });

  it("shares a frozen value instead of copying it", () => {
    const frozen = Object.freeze({ "f:a": {} });
    const copy = copyJson({ tree: frozen, other: { x: 1 } });
    expect(copy.tree).toBe(frozen);
  });
});
