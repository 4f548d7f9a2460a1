import { describe, expect, it } from "vitest";
import { age, humanDuration } from "./human-duration.js";

const s = 1000;
const m = 60 * s;
const h = 60 * m;
const d = 24 * h;

describe("humanDuration", () => {
  it.each([
    [-2 * s, "<invalid>"],
    [-1 * s, "0s"],
    [0, "0s"],
    [119 * s, "119s"],
    [2 * m, "2m"],
    [3 * m + 20 * s, "3m20s"],
    [10 * m + 59 * s, "10m"],
    [179 * m, "179m"],
    [3 * h, "3h"],
    [5 * h + 12 * m, "5h12m"],
    [47 * h + 59 * m, "47h"],
    [3 * d, "3d"],
    [3 * d + 4 * h, "3d4h"],
    [8 * d, "8d"],
    [400 * d, "400d"],
    [730 * d, "2y"],
    [740 * d, "2y10d"],
    [3000 * d, "8y"],
  ])("%i ms prints as %s", (ms, expected) => {
    expect(humanDuration(ms)).toBe(expected);
  });

  it("an absent or unparsable timestamp has an unknown age", () => {
    expect(age(undefined, 0)).toBe("<unknown>");
    expect(age("not a date", 0)).toBe("<unknown>");
    expect(age("2026-01-01T00:00:00Z", Date.parse("2026-01-01T00:05:00Z"))).toBe("5m");
  });
});
