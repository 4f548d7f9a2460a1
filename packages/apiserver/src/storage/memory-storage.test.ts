import type { KubeObject } from "@reconcile/api";
import { FakeClock } from "@reconcile/clock";
import { describe, expect, it } from "vitest";
import { MemoryStorage } from "./memory-storage.js";
import { StorageError, type StorageEvent, type StorageWatcher } from "./storage.js";
import { describeStorageConformance } from "./testing/storage-conformance.js";

function withText(name: string, text: string): KubeObject {
  return { metadata: { name, namespace: "ns" }, data: { text } } as KubeObject;
}

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

  describe("memory budget", () => {
    /** A ConfigMap of about `bytes` bytes of JSON. */
    const large = (name: string, bytes: number, version = 0): KubeObject =>
      ({
        metadata: { name, namespace: "ns" },
        data: { blob: String(version).padEnd(bytes, "x") },
      }) as KubeObject;
    const mib = 1024 * 1024;

    it("refuses an object over maxObjectBytes with ObjectTooLarge naming the limit; nothing changes", async () => {
      const storage = new MemoryStorage({ maxObjectBytes: 10_000 });
      await storage.create(key("a"), large("a", 5_000));
      const refused = (write: Promise<unknown>) =>
        write.then(
          () => "stored",
          (error: StorageError) => [error.storageCode, error.message],
        );
      expect(await refused(storage.create(key("b"), large("b", 10_000)))).toEqual([
        "ObjectTooLarge",
        expect.stringMatching(/^the object is 100\d\d bytes of JSON; limit is 10000$/),
      ]);
      expect(await refused(storage.update(key("a"), large("a", 20_000)))).toEqual([
        "ObjectTooLarge",
        expect.stringMatching(/limit is 10000$/),
      ]);
      // Bytes, not characters: 6,000 two-byte characters are 12,000 bytes.
      expect(await refused(storage.create(key("c"), withText("c", "é".repeat(6_000))))).toEqual([
        "ObjectTooLarge",
        expect.stringMatching(/^the object is 120\d\d bytes/),
      ]);
      expect(await storage.currentRevision()).toBe(1);
      expect((await storage.get(key("a")))?.metadata?.resourceVersion).toBe("1");
      expect(await storage.get(key("b"))).toBeUndefined();
      expect(storage.historyLength).toBe(1);
    });

    it("keeps the history within historyBytes under churn of large objects, and expires what left it", async () => {
      const storage = new MemoryStorage({ historyBytes: 8 * mib });
      const objectBytes = 1_000_000;
      await storage.create(key("big"), large("big", objectBytes));
      let largest = 0;
      for (let version = 1; version <= 100; version++) {
        await storage.update(key("big"), large("big", objectBytes, version));
        largest = Math.max(largest, storage.historyBytes);
      }
      expect(largest).toBeLessThanOrEqual(8 * mib);
      // Eight objects of ~1,000,100 bytes fit in 8 MiB: seven changes and the state the oldest replaced.
      expect(storage.historyLength).toBe(7);
      expect(storage.historyBytes).toBeGreaterThan(8 * objectBytes);
      expect(storage.compactedRevision).toBe(101 - 7);
      const old = storage.watch("/core/pods/", { fromRevision: 1 });
      expect(await drain(old, 2)).toEqual(["ERROR too old resource version: 1 (94)"]);
      // The delete holds nothing new: the change that wrote the object is still in the history.
      await storage.delete(key("big"));
      expect(storage.historyLength).toBe(8);
      expect(storage.historyBytes).toBeLessThanOrEqual(8 * mib);
    });

    it("counts a replaced state the history keeps alive, once, where it is held", async () => {
      const storage = new MemoryStorage({ historyBytes: 4 * mib });
      const objectBytes = 1_000_000;
      for (const name of ["a", "b", "c", "d"]) await storage.create(key(name), large(name, objectBytes));
      expect(storage.historyLength).toBe(4);
      // The update keeps a's first state alive (as its previous) after a's ADDED leaves: five
      // objects would be held, so b's ADDED goes too.
      await storage.update(key("a"), large("a", objectBytes, 1));
      expect(storage.historyLength).toBe(3);
      expect(storage.compactedRevision).toBe(2);
      expect(storage.historyBytes).toBeGreaterThan(4 * objectBytes);
      expect(storage.historyBytes).toBeLessThanOrEqual(4 * mib);
      // A delete holds nothing new while the change that wrote the object is in the history.
      const before = storage.historyBytes;
      await storage.delete(key("c"));
      expect(storage.historyBytes).toBe(before);
      // Continue tokens still see the replaced state within the history.
      const list = await storage.list("/core/pods/ns/", { revision: 4 });
      expect(list.items.map((item) => item.metadata?.resourceVersion)).toEqual(["1", "2", "3", "4"]);
    });

    it("keeps the newest change even when it alone is larger than the budget", async () => {
      const storage = new MemoryStorage({ historyBytes: 1_000 });
      await storage.create(key("a"), large("a", 3_000));
      await storage.create(key("b"), large("b", 2_000));
      expect(storage.historyLength).toBe(1);
      expect(storage.historyBytes).toBeGreaterThan(2_000);
      expect(storage.compactedRevision).toBe(1);
    });

    it("closes a watcher whose unread events left the history with one ERROR Expired, dropping its backlog", async () => {
      const storage = new MemoryStorage({ historyBytes: 50_000 });
      const slow = storage.watch("/core/pods/", { fromRevision: 0 });
      const fast = storage.watch("/core/pods/", { fromRevision: 0 });
      const seen: string[] = [];
      const reading = (async () => {
        for await (const event of fast) {
          seen.push(summary(event));
          if (seen.length === 10) return;
        }
      })();
      for (let i = 0; i < 10; i++) {
        await storage.create(key(`p${i}`), large(`p${i}`, 10_000));
        await new Promise((resolve) => setImmediate(resolve));
      }
      await reading;
      expect(seen).toHaveLength(10);
      expect(fast.closeReason).toBe("stopped");
      // Revision 1 left the history when the fifth object came in: the slow watcher had not read it.
      expect(slow.closeReason).toBe("too old resource version: 0 (1)");
      expect(await drain(slow, 10)).toEqual(["ERROR too old resource version: 0 (1)"]);
    });
  });
});
