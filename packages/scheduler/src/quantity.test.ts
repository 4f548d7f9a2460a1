import { describe, expect, it } from "vitest";
import { milliValue, parseQuantity, QuantityError, value } from "./quantity.js";

describe("quantities", () => {
  it.each([
    ["100m", 100, 1],
    ["1", 1000, 1],
    ["1.5", 1500, 2],
    ["0.1", 100, 1],
    ["2", 2000, 2],
    ["1k", 1_000_000, 1000],
    ["500Mi", 524_288_000_000, 524_288_000],
    ["32Gi", 34_359_738_368_000, 34_359_738_368],
    ["1e3", 1_000_000, 1000],
    ["1E3", 1_000_000, 1000],
    ["5M", 5_000_000_000, 5_000_000],
    ["1Ki", 1_024_000, 1024],
    ["1u", 1, 1],
    ["250n", 1, 1],
    ["0", 0, 0],
  ])("%s is %d milli, %d rounded up", (quantity, milli, whole) => {
    expect(milliValue(quantity)).toBe(milli);
    expect(value(quantity)).toBe(whole);
  });

  it("takes numbers as they are, and rejects malformed strings with a clear error", () => {
    expect(parseQuantity(3)).toBe(3);
    for (const bad of ["", "abc", "1.2.3", "5 Gi", "1Gb", "--1"]) {
      expect(() => parseQuantity(bad)).toThrow(QuantityError);
    }
    expect(() => parseQuantity("1Gb")).toThrow(`got "1Gb"`);
  });
});
