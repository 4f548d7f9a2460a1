import type { Taint, Toleration } from "kubernetes-types/core/v1.js";
import { describe, expect, it } from "vitest";
import {
  getMatchingTolerations,
  getMinTolerationTimeMs,
  getNoExecuteTaints,
  taintExists,
  taintSetDiff,
} from "./taints.js";

describe("getNoExecuteTaints (upstream TestFilterNoExecuteTaints)", () => {
  it("keeps only the NoExecute taints", () => {
    const taints: Taint[] = [
      { key: "one", value: "one", effect: "NoExecute" },
      { key: "two", value: "two", effect: "NoSchedule" },
    ];
    expect(getNoExecuteTaints(taints)).toEqual([{ key: "one", value: "one", effect: "NoExecute" }]);
  });
});

describe("getMinTolerationTimeMs (upstream TestGetMinTolerationTime)", () => {
  const cases: { name: string; tolerations: Toleration[]; expected: number }[] = [
    { name: "no tolerations: at once", tolerations: [], expected: 0 },
    { name: "none with seconds: for ever", tolerations: [{}], expected: -1 },
    {
      name: "the shortest of two",
      tolerations: [{ tolerationSeconds: 1 }, { tolerationSeconds: 2 }],
      expected: 1000,
    },
    { name: "seconds before unlimited", tolerations: [{ tolerationSeconds: 1 }, {}], expected: 1000 },
    { name: "unlimited before seconds", tolerations: [{}, { tolerationSeconds: 1 }], expected: 1000 },
    {
      name: "zero means at once",
      tolerations: [{ tolerationSeconds: 5 }, { tolerationSeconds: 0 }],
      expected: 0,
    },
    { name: "negative means at once", tolerations: [{ tolerationSeconds: -3 }], expected: 0 },
  ];
  for (const c of cases) {
    it(c.name, () => expect(getMinTolerationTimeMs(c.tolerations)).toBe(c.expected));
  }
});

describe("getMatchingTolerations", () => {
  const t1: Taint = { key: "k1", value: "v1", effect: "NoExecute" };
  const t2: Taint = { key: "k2", value: "v2", effect: "NoExecute" };
  const tol1: Toleration = { key: "k1", value: "v1", effect: "NoExecute", tolerationSeconds: 10 };
  const tolAll: Toleration = { operator: "Exists" };

  it("no taints are tolerated by nothing", () => {
    expect(getMatchingTolerations([], [tol1])).toEqual({ allTolerated: true, used: [] });
  });
  it("taints without tolerations are not tolerated", () => {
    expect(getMatchingTolerations([t1], [])).toEqual({ allTolerated: false, used: [] });
  });
  it("one untolerated taint spoils all", () => {
    expect(getMatchingTolerations([t1, t2], [tol1])).toEqual({ allTolerated: false, used: [] });
  });
  it("each taint uses the first toleration that tolerates it", () => {
    expect(getMatchingTolerations([t1, t2], [tol1, tolAll])).toEqual({
      allTolerated: true,
      used: [tol1, tolAll],
    });
  });
});

describe("taint sets", () => {
  it("match by key and effect, not value", () => {
    expect(
      taintExists([{ key: "a", value: "x", effect: "NoExecute" }], { key: "a", effect: "NoExecute" }),
    ).toBe(true);
    expect(taintExists([{ key: "a", effect: "NoSchedule" }], { key: "a", effect: "NoExecute" })).toBe(false);
    expect(taintExists(undefined, { key: "a", effect: "NoExecute" })).toBe(false);
  });
  it("taintSetDiff says what to add and what to remove (upstream TestTaintSetDiff)", () => {
    const a: Taint = { key: "a", effect: "NoSchedule" };
    const b: Taint = { key: "b", effect: "NoSchedule" };
    const c: Taint = { key: "c", effect: "NoSchedule" };
    expect(taintSetDiff([a, b], [b, c])).toEqual({ toAdd: [a], toRemove: [c] });
    expect(taintSetDiff([], [a])).toEqual({ toAdd: [], toRemove: [a] });
    expect(taintSetDiff([a], [a])).toEqual({ toAdd: [], toRemove: [] });
  });
});
