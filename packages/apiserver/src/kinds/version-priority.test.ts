import { describe, expect, it } from "vitest";
import { byVersionPriority, compareKubeAwareVersions } from "./version-priority.js";

describe("compareKubeAwareVersions", () => {
  it("orders versions as apimachinery documents: GA, beta, alpha, then the rest in reverse string order", () => {
    const sorted = [
      "v10",
      "v2",
      "v1",
      "v11beta2",
      "v10beta3",
      "v3beta1",
      "v12alpha1",
      "v11alpha2",
      "foo1",
      "foo10",
    ];
    expect(byVersionPriority([...sorted].reverse())).toEqual(sorted);
    expect(byVersionPriority([...sorted.slice(5), ...sorted.slice(0, 5)])).toEqual(sorted);
  });

  it.each([
    ["v1", "v1", 0],
    ["v2", "v1", 1],
    ["v1", "v2beta1", 1],
    ["v1beta2", "v1beta1", 1],
    ["v2alpha1", "v1beta1", -1],
    ["v1", "foo", 1],
    ["abc", "abd", 1],
    ["v1.1", "v1", -1],
  ])("compares %s with %s: sign %i", (a, b, sign) => {
    expect(Math.sign(compareKubeAwareVersions(a, b))).toBe(sign);
    expect(Math.sign(compareKubeAwareVersions(b, a))).toBe(-sign || 0);
  });
});
