import { describe, expect, it } from "vitest";
import { jsonEqual } from "./json-equal.js";

describe("jsonEqual", () => {
  it("compares JSON values deeply, whatever the order of object members", () => {
    expect(jsonEqual({ a: 1, b: [1, { c: "x" }] }, { b: [1, { c: "x" }], a: 1 })).toBe(true);
    expect(jsonEqual({ a: 1 }, { a: 2 })).toBe(false);
    expect(jsonEqual([1, 2], [2, 1])).toBe(false);
    expect(jsonEqual(null, null)).toBe(true);
    expect(jsonEqual(null, {})).toBe(false);
    expect(jsonEqual([], {})).toBe(false);
    expect(jsonEqual({}, [])).toBe(false);
    expect(jsonEqual("1", 1)).toBe(false);
  });

  it("a member set to undefined is absent, as JSON writes it", () => {
    expect(jsonEqual({ a: 1, b: undefined }, { a: 1 })).toBe(true);
    expect(jsonEqual({ a: 1 }, { a: 1, b: undefined })).toBe(true);
    expect(jsonEqual({ a: undefined }, { b: undefined })).toBe(true);
    expect(jsonEqual({ a: 1, b: undefined }, { a: 1, c: 2 })).toBe(false);
    // As many members on each side, some undefined.
    expect(jsonEqual({ a: 1, b: undefined }, { c: undefined, a: 1 })).toBe(true);
    expect(jsonEqual({ a: undefined, b: 1 }, { b: 1, c: 2 })).toBe(false);
    expect(jsonEqual({ a: 1, b: 2 }, { a: 1, c: undefined })).toBe(false);
    expect(jsonEqual({ a: 1, c: undefined }, { a: 1, b: 2 })).toBe(false);
  });
});
