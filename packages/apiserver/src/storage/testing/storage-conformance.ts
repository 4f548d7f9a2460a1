import type { KubeObject } from "@reconcile/api";
import { afterEach, describe, expect, it } from "vitest";
import { type Storage, StorageError, type StorageEvent, type StorageWatcher } from "../storage.js";

/**
 * The behaviour every `Storage` must show, whatever keeps the data: the
 * in-memory storage runs it, and a durable backend (etcd) must pass it
 * unchanged. `create` gives a fresh, empty storage for each test.
 * Compaction, watcher buffer limits and bookmark timing are configured
 * differently per backend and are tested beside each implementation.
 */
export function describeStorageConformance(name: string, create: () => Storage | Promise<Storage>): void {
  describe(`Storage conformance: ${name}`, () => {
    const opened: Storage[] = [];
    afterEach(() => {
      for (const storage of opened.splice(0)) storage.close();
    });
    async function fresh(): Promise<{ storage: Storage; base: number }> {
      const storage = await create();
      opened.push(storage);
      return { storage, base: await storage.currentRevision() };
    }

    it("gives every write the next global revision, across resources", async () => {
      const { storage, base } = await fresh();
      const a = await storage.create(key("a"), obj("a"));
      const b = await storage.create("/apps/deployments/ns/b", obj("b"));
      const a2 = await storage.update(key("a"), obj("a"));
      const gone = await storage.delete("/apps/deployments/ns/b");
      expect([a, b, a2, gone].map((o) => Number(o.metadata?.resourceVersion) - base)).toEqual([1, 2, 3, 4]);
      expect(await storage.currentRevision()).toBe(base + 4);
      expect((await storage.get(key("a")))?.metadata?.resourceVersion).toBe(String(base + 3));
      expect(await storage.get("/apps/deployments/ns/b")).toBeUndefined();
    });

    it("rejects a create on a taken key, writes with a stale revision, and writes to missing keys", async () => {
      const { storage, base } = await fresh();
      await storage.create(key("a"), obj("a"));
      await expect(storage.create(key("a"), obj("a"))).rejects.toSatisfy((e) =>
        StorageError.is(e, "KeyExists"),
      );
      await expect(storage.update(key("a"), obj("a"), base + 7)).rejects.toSatisfy((e) =>
        StorageError.is(e, "Conflict"),
      );
      await expect(storage.delete(key("a"), base + 7)).rejects.toSatisfy((e) =>
        StorageError.is(e, "Conflict"),
      );
      await expect(storage.update(key("b"), obj("b"))).rejects.toSatisfy((e) =>
        StorageError.is(e, "KeyNotFound"),
      );
      await expect(storage.delete(key("b"))).rejects.toSatisfy((e) => StorageError.is(e, "KeyNotFound"));
      expect(await storage.currentRevision()).toBe(base + 1);
      await storage.update(key("a"), obj("a", { v: "2" }), base + 1);
    });

    it("lists in key order under a prefix, paginating with a next key and a remaining count", async () => {
      const { storage } = await fresh();
      for (const name of ["c", "a", "b", "d"]) await storage.create(key(name), obj(name));
      await storage.create("/core/pods/other/x", obj("x"));
      const first = await storage.list("/core/pods/ns/", { limit: 3 });
      expect(first.items.map((o) => o.metadata?.name)).toEqual(["a", "b", "c"]);
      expect(first.remaining).toBe(1);
      const second = await storage.list("/core/pods/ns/", { limit: 3, startKey: first.nextKey });
      expect(second.items.map((o) => o.metadata?.name)).toEqual(["d"]);
      expect(second.nextKey).toBeUndefined();
      expect((await storage.list("/core/pods/")).items).toHaveLength(5);
      const filtered = await storage.list("/core/pods/", { predicate: (o) => o.metadata?.name !== "b" });
      expect(filtered.items.map((o) => o.metadata?.name)).toEqual(["a", "c", "d", "x"]);
    });

    it("serves the state at an older revision, and refuses one in the future", async () => {
      const { storage, base } = await fresh();
      await storage.create(key("a"), obj("a", { v: "1" }));
      await storage.create(key("b"), obj("b"));
      await storage.update(key("a"), obj("a", { v: "2" }));
      await storage.delete(key("b"));
      await storage.create(key("c"), obj("c"));
      const old = await storage.list("/core/pods/", { revision: base + 2 });
      expect(old.items.map((o) => [o.metadata?.name, o.metadata?.labels?.v ?? ""])).toEqual([
        ["a", "1"],
        ["b", ""],
      ]);
      expect(old.revision).toBe(base + 2);
      await expect(storage.list("/core/pods/", { revision: base + 99 })).rejects.toSatisfy((e) =>
        StorageError.is(e, "TooLargeResourceVersion"),
      );
    });

    it("replays exactly the changes after the requested revision, then goes live", async () => {
      const { storage, base } = await fresh();
      await storage.create(key("a"), obj("a"));
      await storage.create(key("b"), obj("b"));
      await storage.update(key("a"), obj("a"));
      const watcher = storage.watch("/core/pods/", { fromRevision: base + 1 });
      await storage.delete(key("b"));
      expect(await drain(watcher, 3, base)).toEqual(["ADDED b@2", "MODIFIED a@3", "DELETED b@4"]);
      watcher.stop();
    });

    it("starts a watch without a revision with synthetic ADDED events for the current state", async () => {
      const { storage, base } = await fresh();
      await storage.create(key("b"), obj("b"));
      await storage.create(key("a"), obj("a"));
      const watcher = storage.watch("/core/pods/");
      await storage.update(key("b"), obj("b"));
      expect(await drain(watcher, 3, base)).toEqual(["ADDED a@2", "ADDED b@1", "MODIFIED b@3"]);
      watcher.stop();
    });

    it("reports an object that stops matching as DELETED and one that starts matching as ADDED", async () => {
      const { storage, base } = await fresh();
      const watcher = storage.watch("/core/pods/", {
        fromRevision: base,
        predicate: (o) => o.metadata?.labels?.app === "web",
      });
      await storage.create(key("a"), obj("a", { app: "db" }));
      await storage.update(key("a"), obj("a", { app: "web" }));
      await storage.update(key("a"), obj("a", { app: "web", x: "y" }));
      await storage.update(key("a"), obj("a", { app: "db" }));
      await storage.delete(key("a"));
      expect(await drain(watcher, 3, base)).toEqual(["ADDED a@2", "MODIFIED a@3", "DELETED a@4"]);
      watcher.stop();
    });

    it("sees only the keys under the watched prefix", async () => {
      const { storage, base } = await fresh();
      const watcher = storage.watch("/core/pods/ns/", { fromRevision: base });
      await storage.create("/core/pods/other/x", obj("x"));
      await storage.create("/core/podsx/ns/y", obj("y"));
      await storage.create(key("a"), obj("a"));
      expect(await drain(watcher, 1, base)).toEqual(["ADDED a@3"]);
      watcher.stop();
    });

    it("ends every watch on close", async () => {
      const { storage } = await fresh();
      const watcher = storage.watch("/");
      storage.close();
      expect(await drain(watcher, 1, 0)).toEqual([]);
      expect(watcher.closeReason).toBeDefined();
    });
  });
}

function obj(name: string, labels: Record<string, string> = {}): KubeObject {
  return { metadata: { name, namespace: "ns", labels } };
}

function key(name: string): string {
  return `/core/pods/ns/${name}`;
}

/** Reads up to `count` events; versions are shown relative to `base`. */
async function drain(watcher: StorageWatcher, count: number, base: number): Promise<string[]> {
  const out: string[] = [];
  const iterator = watcher[Symbol.asyncIterator]();
  for (let i = 0; i < count; i++) {
    const next = await iterator.next();
    if (next.done) break;
    out.push(summary(next.value, base));
  }
  return out;
}

function summary(event: StorageEvent, base: number): string {
  if (event.type === "ERROR") return `ERROR ${event.error?.message}`;
  if (event.type === "BOOKMARK") return `BOOKMARK ${event.revision - base}`;
  return `${event.type} ${event.object?.metadata?.name}@${Number(event.object?.metadata?.resourceVersion) - base}`;
}
