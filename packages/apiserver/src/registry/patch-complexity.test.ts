import { describe, expect, it, vi } from "vitest";

// Counts the deep comparisons and copies a patch makes: a merge that searched the
// list for every patch element compared elements a quadratic number of times,
// and one that copied each level it descended copied deep values once per level.
const comparisons = vi.hoisted(() => ({ count: 0 }));
const copies = vi.hoisted(() => ({ bytes: 0 }));
vi.mock("./json.js", async (importOriginal) => {
  const original = await importOriginal<typeof import("../json.js")>();
  return {
    ...original,
    jsonEqual: (a: unknown, b: unknown) => {
      comparisons.count++;
      return original.jsonEqual(a, b);
    },
    copyJson: <T>(value: T): T => {
      copies.bytes += JSON.stringify(value)?.length ?? 0;
      return original.copyJson(value);
    },
  };
});

const { mergePatch, strategicMergePatch } = await import("./patch.js");

describe("strategic merge patch of long lists", () => {
  const count = 2_000;
  const env = () => Array.from({ length: count }, (_, i) => ({ name: `VAR_${i}`, value: `${i}` }));

  it("merges by merge key and applies $setElementOrder without comparing elements pairwise", () => {
    const original = { spec: { containers: [{ name: "app", env: env() }] } };
    const reversed = env()
      .reverse()
      .map(({ name }) => ({ name }));
    const changed = env().map(({ name }) => ({ name, value: "changed" }));
    comparisons.count = 0;
    const result = strategicMergePatch(original, {
      spec: { containers: [{ name: "app", "$setElementOrder/env": reversed, env: changed }] },
    }) as typeof original;
    expect(result.spec.containers[0]!.env).toEqual(reversed.map(({ name }) => ({ name, value: "changed" })));
    expect(comparisons.count).toBeLessThanOrEqual(count);
  });

  it("deletes from primitive lists and merges finalizers without comparing elements pairwise", () => {
    const finalizers = Array.from({ length: count }, (_, i) => `f${i}`);
    comparisons.count = 0;
    const deleted = strategicMergePatch(
      { metadata: { finalizers } },
      { metadata: { "$deleteFromPrimitiveList/finalizers": finalizers.filter((_, i) => i % 2 === 0) } },
    ) as { metadata: { finalizers: string[] } };
    expect(deleted.metadata.finalizers).toEqual(finalizers.filter((_, i) => i % 2 === 1));
    const merged = strategicMergePatch(
      { metadata: { finalizers } },
      { metadata: { finalizers: [...finalizers].reverse() } },
    ) as {
      metadata: { finalizers: string[] };
    };
    expect(merged.metadata.finalizers).toEqual(finalizers);
    expect(comparisons.count).toBeLessThanOrEqual(count);
  });
});

describe("merge patches of deep objects", () => {
  it("copy the original once, however deep the patch reaches", () => {
    const depth = 200;
    let original: Record<string, unknown> = { blob: "x".repeat(10_000) };
    let patch: Record<string, unknown> = { added: true };
    for (let i = 0; i < depth; i++) {
      original = { a: original };
      patch = { a: patch };
    }
    copies.bytes = 0;
    const result = mergePatch(original, patch);
    let leaf = result as Record<string, unknown>;
    for (let i = 0; i < depth; i++) leaf = leaf.a as Record<string, unknown>;
    expect(leaf).toEqual({ blob: "x".repeat(10_000), added: true });
    expect(copies.bytes).toBeLessThanOrEqual(2 * JSON.stringify(original).length);
    copies.bytes = 0;
    expect(strategicMergePatch(original, patch)).toEqual(result);
    expect(copies.bytes).toBeLessThanOrEqual(2 * JSON.stringify(original).length);
  });
});
