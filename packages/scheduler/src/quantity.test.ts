import { describe, expect, it } from "vitest";
import { milliValue, parseQuantity, QuantityError, value } from "./quantity.js";

describe("the deprecated quantity names, now @reconcile/api's", () => {
  it.each([
    ["100m", 100, 1],
    ["1.5", 1500, 2],
    ["500Mi", 524_288_000_000, 524_288_000],
    ["32Gi", 34_359_738_368_000, 34_359_738_368],
    ["1e3", 1_000_000, 1000],
    ["250n", 1, 1],
    ["0", 0, 0],
  ])("%s is %d milli, %d rounded up", (quantity, milli, whole) => {
    expect(milliValue(quantity)).toBe(milli);
    expect(value(quantity)).toBe(whole);
  });

  it("parseQuantity still returns a number, takes numbers as they are, and rejects malformed strings", () => {
    expect(parseQuantity(3)).toBe(3);
    expect(parseQuantity("1.5Ki")).toBe(1536);
    for (const bad of ["", "abc", "1.2.3", "5 Gi", "1Gb", "--1"]) {
      expect(() => parseQuantity(bad)).toThrow(QuantityError);
    }
    expect(() => parseQuantity("1Gb")).toThrow(`got "1Gb"`);
    expect(() => parseQuantity(Number.POSITIVE_INFINITY)).toThrow(QuantityError);
  });
});
