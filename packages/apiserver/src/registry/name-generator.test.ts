import { describe, expect, it } from "vitest";
import { randomSuffix } from "./name-generator.js";

describe("randomSuffix", () => {
  it("draws five characters of apimachinery's alphabet, left to right", () => {
    const draws = [0, 0.5, 0.999, 0.04, 0.75];
    let i = 0;
    // Alphabet "bcdfghjklmnpqrstvwxz2456789": 0 → b, 0.5 → index 13 (r), 0.999 → 9, 0.04 → index 1 (c), 0.75 → index 20 (2).
    expect(randomSuffix(() => draws[i++]!)).toBe("br9c2");
    expect(i).toBe(5);
    expect(randomSuffix()).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  });
});
