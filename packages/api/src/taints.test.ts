import type { Taint, Toleration } from "kubernetes-types/core/v1.js";
import { describe, expect, it } from "vitest";
import { matchTaint, taintExists, toleratesTaint } from "./taints.js";

describe("toleratesTaint (upstream TestTolerationToleratesTaint)", () => {
  const taint: Taint = { key: "foo", value: "bar", effect: "NoExecute" };
  const cases: { name: string; toleration: Toleration; expected: boolean }[] = [
    {
      name: "empty effect tolerates every effect",
      toleration: { key: "foo", operator: "Exists" },
      expected: true,
    },
    {
      name: "a different effect does not",
      toleration: { key: "foo", operator: "Exists", effect: "NoSchedule" },
      expected: false,
    },
    {
      name: "a different key does not",
      toleration: { key: "baz", operator: "Exists", effect: "NoExecute" },
      expected: false,
    },
    {
      name: "Equal with the same value",
      toleration: { key: "foo", operator: "Equal", value: "bar" },
      expected: true,
    },
    {
      name: "Equal with another value",
      toleration: { key: "foo", operator: "Equal", value: "qux" },
      expected: false,
    },
    { name: "no operator means Equal", toleration: { key: "foo", value: "bar" }, expected: true },
    {
      name: "empty key with Exists tolerates everything",
      toleration: { operator: "Exists" },
      expected: true,
    },
    {
      name: "an unknown operator tolerates nothing",
      toleration: { key: "foo", operator: "Gt", value: "1" },
      expected: false,
    },
  ];
  for (const c of cases) {
    it(c.name, () => expect(toleratesTaint(c.toleration, taint)).toBe(c.expected));
  }
});

describe("matchTaint and taintExists (upstream Taint.MatchTaint, TaintExists)", () => {
  it("key and effect make a taint; value and timeAdded do not", () => {
    const taint: Taint = { key: "k", value: "a", effect: "NoExecute" };
    expect(
      matchTaint(taint, { key: "k", value: "b", effect: "NoExecute", timeAdded: "2026-01-01T00:00:00Z" }),
    ).toBe(true);
    expect(matchTaint(taint, { key: "k", value: "a", effect: "NoSchedule" })).toBe(false);
    expect(taintExists([{ key: "x", effect: "NoSchedule" }, taint], { key: "k", effect: "NoExecute" })).toBe(
      true,
    );
    expect(taintExists(undefined, taint)).toBe(false);
  });
});
