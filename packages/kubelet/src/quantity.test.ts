import { describe, expect, it } from "vitest";
import { milliCpu, wholeUnits } from "./quantity.js";

describe("kubelet quantities", () => {
  it("reads cpu in millicores, rounding up as MilliValue does", () => {
    expect(milliCpu("250m")).toBe(250);
    expect(milliCpu("1.5")).toBe(1500);
    expect(milliCpu(2)).toBe(2000);
    expect(milliCpu("1n")).toBe(1);
    expect(milliCpu("0.0001")).toBe(1);
  });

  it("reads other quantities in whole units, rounding up as Value does", () => {
    expect(wholeUnits("128Mi")).toBe(128 * 2 ** 20);
    expect(wholeUnits("1k")).toBe(1000);
    expect(wholeUnits("1e3")).toBe(1000);
    expect(wholeUnits("500m")).toBe(1);
    expect(wholeUnits(110)).toBe(110);
  });

  it("counts an absent or malformed quantity as zero, as an unset request", () => {
    expect(milliCpu(undefined)).toBe(0);
    expect(wholeUnits(undefined)).toBe(0);
    expect(milliCpu("lots")).toBe(0);
    expect(wholeUnits("12Qi")).toBe(0);
  });
});
