import type { Pod } from "@reconcile/api";
import { createIndexer } from "@reconcile/informer";
import { describe, expect, it } from "vitest";
import { ensureIndex } from "./informer-types.js";

describe("ensureIndex", () => {
  it("adds an index once: a second controller asking for it keeps the first function, where a second add would throw", () => {
    const indexer = createIndexer<Pod>();
    indexer.add({ metadata: { name: "a", namespace: "ns" }, spec: { nodeName: "n1", containers: [] } });
    ensureIndex(indexer, "node", (pod) => (pod.spec?.nodeName ? [pod.spec.nodeName] : []));
    ensureIndex(indexer, "node", () => ["elsewhere"]);
    expect(indexer.byIndex("node", "n1").map((pod) => pod.metadata?.name)).toEqual(["a"]);
    expect(indexer.byIndex("node", "elsewhere")).toEqual([]);
    expect(() => indexer.addIndexers({ node: () => [] })).toThrow();
  });
});
