import type { KubeObject } from "@reconcile/api";
import { FakeClock } from "@reconcile/clock";
import { describe, expect, it } from "vitest";
import { MemoryStorage } from "./memory-storage.js";
import { StorageError, type StorageEvent, type StorageWatcher } from "./storage.js";
import { describeStorageConformance } from "./testing/storage-conformance.js";

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

describeStorageConformance("MemoryStorage", () => new MemoryStorage());

describe("MemoryStorage", () => {
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
    await expect(storage.list("/core/pods/", { revision: 2 })).rejects.toThrow(
      "too old resource version: 2 (3)",
    );
  });

  it("sends one ERROR Expired event and ends a watch from a revision older than the history", async () => {
    const storage = new MemoryStorage({ historySize: 2 });
    for (const name of ["a", "b", "c", "d"]) await storage.create(key(name), obj(name));
    const watcher = storage.watch("/core/pods/", { fromRevision: 1 });
    expect(await drain(watcher, 5)).toEqual(["ERROR too old resource version: 1 (2)"]);
    expect(watcher.closeReason).toBe("too old resource version: 1 (2)");
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
