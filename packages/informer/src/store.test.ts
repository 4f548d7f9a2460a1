import { type DeepReadonly, DeletedFinalStateUnknown, type Pod } from "@reconcile/api";
import { pod as buildPod } from "@reconcile/api/testing";
import { describe, expect, it } from "vitest";
import { createIndexer, createStore, IndexError, type IndexFunc, namespaceIndex } from "./store.js";

const pod = (namespace: string, name: string, labels: Record<string, string> = {}): Pod =>
  buildPod(name, { namespace, labels });

const byLabelValues: IndexFunc<Pod> = (p) => {
  const value = p.metadata?.labels?.users;
  return value === undefined ? [] : value.split(",");
};

function names(objects: readonly DeepReadonly<Pod>[]): string[] {
  return objects.map((p) => p.metadata!.name!).sort();
}

describe("Store", () => {
  it("adds, updates, gets, lists and deletes by namespace/name key", () => {
    const store = createStore<Pod>();
    store.add(pod("a", "x"));
    store.add(pod("b", "x"));
    store.update(pod("a", "x", { v: "2" }));
    expect(store.size).toBe(2);
    expect(store.getByKey("a/x")?.metadata?.labels).toEqual({ v: "2" });
    expect(store.get(pod("b", "x"))).toEqual(pod("b", "x"));
    expect(store.listKeys().sort()).toEqual(["a/x", "b/x"]);
    store.delete(pod("a", "x"));
    expect(store.getByKey("a/x")).toBeUndefined();
    store.delete(pod("nope", "x"));
    expect(store.list()).toEqual([pod("b", "x")]);
  });

  it("deletes by a tombstone's key", () => {
    const store = createStore<Pod>();
    store.add(pod("a", "x"));
    store.delete(new DeletedFinalStateUnknown("a/x", pod("a", "x")));
    expect(store.size).toBe(0);
  });

  it("replace swaps the whole content", () => {
    const store = createStore<Pod>();
    store.add(pod("a", "old"));
    store.replace([pod("a", "new1"), pod("a", "new2")], "5");
    expect(store.listKeys().sort()).toEqual(["a/new1", "a/new2"]);
  });

  it("rejects an object without a name", () => {
    const store = createStore<Pod>();
    expect(() => store.add({ metadata: {} })).toThrow("no metadata.name");
    expect(store.size).toBe(0);
  });
});

describe("Indexer", () => {
  it("indexes by namespace out of the box", () => {
    const indexer = createIndexer<Pod>();
    indexer.add(pod("a", "x"));
    indexer.add(pod("a", "y"));
    indexer.add(pod("b", "z"));
    expect(indexer.indexKeys(namespaceIndex, "a")).toEqual(["a/x", "a/y"]);
    expect(names(indexer.byIndex(namespaceIndex, "b"))).toEqual(["z"]);
    expect(indexer.listIndexFuncValues(namespaceIndex).sort()).toEqual(["a", "b"]);
  });

  it("supports multi-valued index functions (upstream TestMultiIndexKeys)", () => {
    const indexer = createIndexer<Pod>({ indexers: { byUser: byLabelValues } });
    indexer.add(pod("ns", "one", { users: "ernie,bert" }));
    indexer.add(pod("ns", "two", { users: "bert,oscar" }));
    indexer.add(pod("ns", "tre", { users: "ernie,elmo" }));
    expect(indexer.indexKeys("byUser", "ernie")).toEqual(["ns/one", "ns/tre"]);
    expect(indexer.indexKeys("byUser", "bert")).toEqual(["ns/one", "ns/two"]);
    expect(indexer.indexKeys("byUser", "elmo")).toEqual(["ns/tre"]);
    expect(indexer.indexKeys("byUser", "oscar")).toEqual(["ns/two"]);
    expect(indexer.indexKeys("byUser", "nobody")).toEqual([]);
    expect(names(indexer.index("byUser", pod("ns", "q", { users: "elmo,oscar" })))).toEqual(["tre", "two"]);

    indexer.update(pod("ns", "tre", { users: "ernie" }));
    expect(indexer.indexKeys("byUser", "elmo")).toEqual([]);
    expect(indexer.listIndexFuncValues("byUser").sort()).toEqual(["bert", "ernie", "oscar"]);

    indexer.delete(pod("ns", "two"));
    expect(indexer.indexKeys("byUser", "bert")).toEqual(["ns/one"]);
    expect(indexer.indexKeys("byUser", "oscar")).toEqual([]);
    expect(indexer.listIndexFuncValues("byUser").sort()).toEqual(["bert", "ernie"]);
  });

  it("index() deduplicates objects that match several values", () => {
    const indexer = createIndexer<Pod>({ indexers: { byUser: byLabelValues } });
    indexer.add(pod("ns", "one", { users: "ernie,bert" }));
    expect(names(indexer.index("byUser", pod("ns", "q", { users: "ernie,bert" })))).toEqual(["one"]);
  });

  it("drops empty index sets so churning values do not leak (kubernetes#84959)", () => {
    const indexer = createIndexer<Pod>();
    for (let i = 0; i < 10; i++) {
      indexer.add(pod(`ns-${i}`, "x"));
      indexer.delete(pod(`ns-${i}`, "x"));
    }
    expect(indexer.listIndexFuncValues(namespaceIndex)).toEqual([]);
  });

  it("replace rebuilds every index", () => {
    const indexer = createIndexer<Pod>({ indexers: { byUser: byLabelValues } });
    indexer.add(pod("a", "x", { users: "ernie" }));
    indexer.replace([pod("b", "y", { users: "bert" })], "1");
    expect(indexer.listIndexFuncValues(namespaceIndex)).toEqual(["b"]);
    expect(indexer.listIndexFuncValues("byUser")).toEqual(["bert"]);
    expect(indexer.byIndex("byUser", "ernie")).toEqual([]);
  });

  it("addIndexers on a populated store indexes what is there (upstream TestAddIndexerAfterAdd)", () => {
    const indexer = createIndexer<Pod>();
    indexer.add(pod("ns", "one", { users: "ernie" }));
    indexer.addIndexers({ byUser: byLabelValues });
    expect(indexer.indexKeys("byUser", "ernie")).toEqual(["ns/one"]);
    expect(Object.keys(indexer.getIndexers()).sort()).toEqual(["byUser", "namespace"]);
  });

  it("rejects an indexer whose name is taken, changing nothing", () => {
    const indexer = createIndexer<Pod>({ indexers: { byUser: byLabelValues } });
    expect(() => indexer.addIndexers({ other: byLabelValues, byUser: byLabelValues })).toThrow(
      "indexer conflict: byUser",
    );
    expect(() => createIndexer<Pod>({ indexers: { namespace: byLabelValues } })).toThrow(
      "indexer conflict: namespace",
    );
    expect(Object.keys(indexer.getIndexers()).sort()).toEqual(["byUser", "namespace"]);
  });

  it("rejects unknown index names on index, byIndex and indexKeys; listIndexFuncValues is empty", () => {
    const indexer = createIndexer<Pod>();
    expect(() => indexer.byIndex("nope", "x")).toThrow(IndexError);
    expect(() => indexer.byIndex("nope", "x")).toThrow("Index with name nope does not exist");
    expect(() => indexer.indexKeys("nope", "x")).toThrow("Index with name nope does not exist");
    expect(() => indexer.index("nope", pod("a", "b"))).toThrow("Index with name nope does not exist");
    expect(indexer.listIndexFuncValues("nope")).toEqual([]);
    let caught: unknown;
    try {
      indexer.byIndex("nope", "x");
    } catch (error) {
      caught = error;
    }
    expect(IndexError.isInstance(caught)).toBe(true);
    expect((caught as IndexError).code).toBe("informer.index");
  });

  it("a throwing index function rejects the write and leaves the store as it was", () => {
    const indexer = createIndexer<Pod>({
      indexers: {
        picky: (p) => {
          if (p.metadata?.name === "bad") throw new Error("no bad pods");
          return ["ok"];
        },
      },
    });
    indexer.add(pod("a", "good"));
    expect(() => indexer.add(pod("a", "bad"))).toThrow(
      'unable to calculate an index entry for index "picky"',
    );
    expect(indexer.listKeys()).toEqual(["a/good"]);
    expect(indexer.indexKeys(namespaceIndex, "a")).toEqual(["a/good"]);
  });

  it("can be created without the namespace index", () => {
    const indexer = createIndexer<Pod>({ namespaceIndex: false });
    expect(indexer.getIndexers()).toEqual({});
  });
});
