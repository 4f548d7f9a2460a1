import type { KubeObject } from "@reconcile/api";
import { FakeClock } from "@reconcile/clock";
import { describe, expect, it } from "vitest";
import { MemoryStorage } from "./memory-storage.js";
import { StorageError, type StorageEvent, type StorageWatcher } from "./storage.js";

function obj(name: string, labels: Record<string, string> = {}): KubeObject {
  return { metadata: { name, namespace: "ns", labels } };
}

const key = (name: string) => `/core/pods/ns/${name}`;

function summary(event: StorageEvent): string {
  if (event.type === "ERROR") return `ERROR ${event.error?.message}`;
  if (event.type === "BOOKMARK") return `BOOKMARK ${event.revision}`;
  return `${event.type} ${event.object?.metadata?.name}@${event.object?.metadata?.resourceVersion}`;
}

/** Reads what the watcher has queued right now, without waiting. */
async function drain(watcher: StorageWatcher, count: number): Promise<string[]> {
  const out: string[] = [];
  const iterator = watcher[Symbol.asyncIterator]();
  for (let i = 0; i < count; i++) {
    const next = await iterator.next();
    if (next.done) break;
    out.push(summary(next.value));
  }
  return out;
}

describe("MemoryStorage", () => {
  it("gives every write the next global revision, across resources", async () => {
    const storage = new MemoryStorage();
    const a = await storage.create(key("a"), obj("a"));
    const b = await storage.create("/apps/deployments/ns/b", obj("b"));
    const a2 = await storage.update(key("a"), obj("a"));
    const gone = await storage.delete("/apps/deployments/ns/b");
    expect([a, b, a2, gone].map((o) => o.metadata?.resourceVersion)).toEqual(["1", "2", "3", "4"]);
    expect(await storage.currentRevision()).toBe(4);
  });

  it("rejects a create on a taken key and writes with a stale revision", async () => {
    const storage = new MemoryStorage();
    await storage.create(key("a"), obj("a"));
    await expect(storage.create(key("a"), obj("a"))).rejects.toSatisfy((e) =>
      StorageError.is(e, "KeyExists"),
    );
    await expect(storage.update(key("a"), obj("a"), 7)).rejects.toSatisfy((e) =>
      StorageError.is(e, "Conflict"),
    );
    await expect(storage.delete(key("a"), 7)).rejects.toSatisfy((e) => StorageError.is(e, "Conflict"));
    await expect(storage.update(key("b"), obj("b"))).rejects.toSatisfy((e) =>
      StorageError.is(e, "KeyNotFound"),
    );
    expect(await storage.currentRevision()).toBe(1);
  });

  it("lists in key order under a prefix, paginating with a next key and a remaining count", async () => {
    const storage = new MemoryStorage();
    for (const name of ["c", "a", "b", "d"]) await storage.create(key(name), obj(name));
    await storage.create("/core/pods/other/x", obj("x"));
    const first = await storage.list("/core/pods/ns/", { limit: 3 });
    expect(first.items.map((o) => o.metadata?.name)).toEqual(["a", "b", "c"]);
    expect(first.remaining).toBe(1);
    const second = await storage.list("/core/pods/ns/", { limit: 3, startKey: first.nextKey });
    expect(second.items.map((o) => o.metadata?.name)).toEqual(["d"]);
    expect(second.nextKey).toBeUndefined();
    expect((await storage.list("/core/pods/")).items).toHaveLength(5);
  });

  it("reconstructs the state at an older revision from the history", async () => {
    const storage = new MemoryStorage();
    await storage.create(key("a"), obj("a", { v: "1" }));
    await storage.create(key("b"), obj("b"));
    await storage.update(key("a"), obj("a", { v: "2" }));
    await storage.delete(key("b"));
    await storage.create(key("c"), obj("c"));
    const atTwo = await storage.list("/core/pods/", { revision: 2 });
    expect(atTwo.items.map((o) => [o.metadata?.name, o.metadata?.labels?.v ?? ""])).toEqual([
      ["a", "1"],
      ["b", ""],
    ]);
    expect(atTwo.revision).toBe(2);
  });

  it("answers Expired for a snapshot older than the history and TooLargeResourceVersion for the future", async () => {
    const storage = new MemoryStorage({ historySize: 2 });
    for (const name of ["a", "b", "c", "d"]) await storage.create(key(name), obj(name));
    await expect(storage.list("/core/pods/", { revision: 1 })).rejects.toThrow(
      "too old resource version: 1 (2)",
    );
    expect((await storage.list("/core/pods/", { revision: 2 })).items).toHaveLength(2);
    await expect(storage.list("/core/pods/", { revision: 9 })).rejects.toSatisfy((e) =>
      StorageError.is(e, "TooLargeResourceVersion"),
    );
  });

  it("stops serving a snapshot once its revision leaves the history, even one read before", async () => {
    const storage = new MemoryStorage({ historySize: 2 });
    await storage.create(key("a"), obj("a"));
    await storage.create(key("b"), obj("b"));
    await storage.create(key("c"), obj("c"));
    expect((await storage.list("/core/pods/", { revision: 2 })).items).toHaveLength(2);
    await storage.create(key("d"), obj("d"));
    await storage.create(key("e"), obj("e"));
    await expect(storage.list("/core/pods/", { revision: 2 })).rejects.toThrow("too old resource version: 2 (3)");
  });

  it("replays exactly the changes after the requested revision, then goes live", async () => {
    const storage = new MemoryStorage();
    await storage.create(key("a"), obj("a"));
    await storage.create(key("b"), obj("b"));
    await storage.update(key("a"), obj("a"));
    const watcher = storage.watch("/core/pods/", { fromRevision: 1 });
    await storage.delete(key("b"));
    expect(await drain(watcher, 3)).toEqual(["ADDED b@2", "MODIFIED a@3", "DELETED b@4"]);
    watcher.stop();
  });

  it("starts a watch without a revision with synthetic ADDED events for the current state", async () => {
    const storage = new MemoryStorage();
    await storage.create(key("b"), obj("b"));
    await storage.create(key("a"), obj("a"));
    const watcher = storage.watch("/core/pods/");
    await storage.update(key("b"), obj("b"));
    expect(await drain(watcher, 3)).toEqual(["ADDED a@2", "ADDED b@1", "MODIFIED b@3"]);
    watcher.stop();
  });

  it("sends one ERROR Expired event and ends a watch from a revision older than the history", async () => {
    const storage = new MemoryStorage({ historySize: 2 });
    for (const name of ["a", "b", "c", "d"]) await storage.create(key(name), obj(name));
    const watcher = storage.watch("/core/pods/", { fromRevision: 1 });
    expect(await drain(watcher, 5)).toEqual(["ERROR too old resource version: 1 (2)"]);
    expect(watcher.closeReason).toBe("too old resource version: 1 (2)");
  });

  it("reports an object that stops matching as DELETED and one that starts matching as ADDED", async () => {
    const storage = new MemoryStorage();
    const watcher = storage.watch("/core/pods/", {
      fromRevision: 0,
      predicate: (o) => o.metadata?.labels?.app === "web",
    });
    await storage.create(key("a"), obj("a", { app: "db" }));
    await storage.update(key("a"), obj("a", { app: "web" }));
    await storage.update(key("a"), obj("a", { app: "web", x: "y" }));
    await storage.update(key("a"), obj("a", { app: "db" }));
    await storage.delete(key("a"));
    expect(await drain(watcher, 3)).toEqual(["ADDED a@2", "MODIFIED a@3", "DELETED a@4"]);
    watcher.stop();
  });

  it("closes a watcher that falls too far behind without holding up the others", async () => {
    const storage = new MemoryStorage({ watchBufferSize: 2 });
    const slow = storage.watch("/core/pods/", { fromRevision: 0 });
    const fast = storage.watch("/core/pods/", { fromRevision: 0 });
    const seen: string[] = [];
    const reading = (async () => {
      for await (const event of fast) {
        seen.push(summary(event));
        if (seen.length === 4) return;
      }
    })();
    for (const name of ["a", "b", "c", "d"]) {
      await storage.create(key(name), obj(name));
      await new Promise((resolve) => setImmediate(resolve));
    }
    await reading;
    expect(seen).toEqual(["ADDED a@1", "ADDED b@2", "ADDED c@3", "ADDED d@4"]);
    expect(slow.closeReason).toMatch(/fell more than 2 events behind/);
    // What it had queued before it was closed can still be read, then one ERROR says why it ends.
    expect(await drain(slow, 10)).toEqual([
      "ADDED a@1",
      "ADDED b@2",
      "ERROR the watcher fell more than 2 events behind and was closed; watch again from the last resourceVersion read",
    ]);
  });

  it("sends bookmarks with the current revision at the interval on the clock", async () => {
    const clock = new FakeClock();
    const storage = new MemoryStorage({ clock });
    const watcher = storage.watch("/core/pods/", { fromRevision: 0, bookmarkIntervalMs: 1000 });
    await storage.create("/core/nodes/n1", obj("n1"));
    await clock.advance(1000);
    await storage.create(key("a"), obj("a"));
    await clock.advance(1000);
    expect(await drain(watcher, 3)).toEqual(["BOOKMARK 1", "ADDED a@2", "BOOKMARK 2"]);
    watcher.stop();
    expect(clock.pendingTimers()).toEqual([]);
  });

  it("ends every watch on close", async () => {
    const storage = new MemoryStorage();
    const watcher = storage.watch("/");
    storage.close();
    expect(await drain(watcher, 1)).toEqual([]);
    expect(watcher.closeReason).toBe("storage closed");
  });
});
