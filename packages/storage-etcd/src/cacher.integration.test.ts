import type { KubeObject } from "@reconcile/api";
import type { StorageEvent, StorageWatcher } from "@reconcile/apiserver";
import { FakeClock } from "@reconcile/clock";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { describeStorageConformance } from "../../apiserver/src/storage/testing/storage-conformance.js";
import { CachedStorage, type CachedStorageOptions } from "./cacher.js";
import { type EtcdCluster, startEtcd } from "./etcd-process.js";
import { EtcdStorage } from "./etcd-storage.js";

let etcd: EtcdCluster;
let prefixes = 0;
const opened: CachedStorage[] = [];

beforeAll(async () => {
  etcd = await startEtcd({ progressNotifyIntervalMs: 200 });
});

afterEach(() => {
  for (const storage of opened.splice(0)) storage.close();
});

afterAll(async () => {
  await etcd?.stop();
});

function cached(options: Partial<CachedStorageOptions> = {}): CachedStorage {
  const storage = new EtcdStorage({
    endpoints: etcd.endpoints,
    prefix: `/c${++prefixes}`,
    compactionIntervalMs: 0,
  });
  const created = new CachedStorage({ storage, ...options });
  opened.push(created);
  return created;
}

describeStorageConformance("etcd with the watch cache", () => cached());

function pod(name: string, labels: Record<string, string> = {}): KubeObject {
  return { metadata: { name, namespace: "ns", labels } };
}

async function take(watcher: StorageWatcher, count: number): Promise<StorageEvent[]> {
  const iterator = watcher[Symbol.asyncIterator]();
  const events: StorageEvent[] = [];
  while (events.length < count) {
    const next = await iterator.next();
    if (next.done) break;
    events.push(next.value);
  }
  return events;
}

const show = (base: number) => (e: StorageEvent) =>
  e.type === "ERROR"
    ? `ERROR ${e.error?.storageCode}: ${e.error?.message}`
    : e.type === "BOOKMARK"
      ? `BOOKMARK ${e.revision - base}`
      : `${e.type} ${e.object?.metadata?.name}@${Number(e.object?.metadata?.resourceVersion) - base}`;

describe("CachedStorage", () => {
  it("serves every watcher of a resource from one etcd watch", async () => {
    const s = cached();
    const subscribe = vi.spyOn(s.storage, "subscribe");
    const base = await s.currentRevision();
    const watchers = Array.from({ length: 200 }, (_, i) =>
      s.watch(i % 2 === 0 ? "/core/pods/" : "/core/pods/ns/", { fromRevision: base }),
    );
    await s.create("/core/pods/ns/a", pod("a"));
    await s.create("/core/pods/other/b", pod("b"));
    const seen = await Promise.all(watchers.map((w, i) => take(w, i % 2 === 0 ? 2 : 1)));
    expect(seen[0]!.map(show(base))).toEqual(["ADDED a@1", "ADDED b@2"]);
    expect(seen[1]!.map(show(base))).toEqual(["ADDED a@1"]);
    expect(seen.every((events, i) => events.length === (i % 2 === 0 ? 2 : 1))).toBe(true);
    expect(subscribe).toHaveBeenCalledTimes(1);
    expect(s.etcdWatchCount).toBe(1);
    s.watch("/apps/deployments/", {}).stop();
    expect(s.etcdWatchCount).toBe(2);
  });

  it("replays from its history and answers a revision that has left it with 410 naming the oldest", async () => {
    const s = cached({ historySize: 3 });
    const base = await s.currentRevision();
    // Start the cache, then make five changes: the history keeps the last three.
    const first = s.watch("/core/pods/", { fromRevision: base });
    for (const name of ["a", "b", "c", "d", "e"]) await s.create(`/core/pods/ns/${name}`, pod(name));
    await take(first, 5);
    const replay = s.watch("/core/pods/", { fromRevision: base + 2 });
    expect((await take(replay, 3)).map(show(base))).toEqual(["ADDED c@3", "ADDED d@4", "ADDED e@5"]);
    const tooOld = s.watch("/core/pods/", { fromRevision: base + 1 });
    expect((await take(tooOld, 2)).map(show(base))).toEqual([
      `ERROR Expired: too old resource version: ${base + 1} (${base + 2})`,
    ]);
  });

  it("keeps its histories within historyBytes: older changes leave, and a watcher still holding them gets 410", async () => {
    const s = cached({ historyBytes: 10_000 });
    const base = await s.currentRevision();
    const blob = "x".repeat(2_000);
    const fast = s.watch("/core/pods/", { fromRevision: base });
    const slow = s.watch("/core/pods/", { fromRevision: base });
    const names = ["a", "b", "c", "d", "e", "f", "g", "h"];
    const fastEvents: StorageEvent[] = [];
    for (const name of names) {
      await s.create(`/core/pods/ns/${name}`, { ...pod(name), data: { blob } } as KubeObject);
      fastEvents.push(...(await take(fast, 1)));
      expect(s.historyBytes).toBeLessThanOrEqual(10_000);
    }
    expect(fastEvents.map(show(base))).toEqual(names.map((name, i) => `ADDED ${name}@${i + 1}`));
    // About 2 KB a change: four fit. The slow watcher still held the first when it left: it was closed then.
    const slowEvents = (await take(slow, 20)).map(show(base));
    expect(slowEvents).toEqual([`ERROR Expired: too old resource version: ${base} (${base + 1})`]);
    const tooOld = s.watch("/core/pods/", { fromRevision: base + 3 });
    expect((await take(tooOld, 1)).map(show(base))).toEqual([
      `ERROR Expired: too old resource version: ${base + 3} (${base + 4})`,
    ]);
    const replay = s.watch("/core/pods/", { fromRevision: base + 4 });
    expect((await take(replay, 4)).map(show(base))).toEqual([
      "ADDED e@5",
      "ADDED f@6",
      "ADDED g@7",
      "ADDED h@8",
    ]);
  });

  it("closes a watcher that stops reading with WatcherTooSlow, while the others go on", async () => {
    const s = cached({ watchBufferSize: 5 });
    const base = await s.currentRevision();
    const slow = s.watch("/core/pods/", { fromRevision: base });
    const fast = s.watch("/core/pods/", { fromRevision: base });
    const names = ["a", "b", "c", "d", "e", "f", "g", "h"];
    // The fast reader takes each event before the next write (a burst larger than the buffer
    // can arrive in one etcd response and would close any watcher).
    const fastEvents: StorageEvent[] = [];
    for (const name of names) {
      await s.create(`/core/pods/ns/${name}`, pod(name));
      fastEvents.push(...(await take(fast, 1)));
    }
    expect(fastEvents.map(show(base))).toEqual(names.map((name, i) => `ADDED ${name}@${i + 1}`));
    const events = await take(slow, 10);
    expect(events.map((e) => e.type)).toEqual(["ADDED", "ADDED", "ADDED", "ADDED", "ADDED", "ERROR"]);
    expect(events[5]!.error?.storageCode).toBe("WatcherTooSlow");
  });

  it("filters with the previous state it holds: objects leaving a selection are DELETED", async () => {
    const s = cached();
    const base = await s.currentRevision();
    const watcher = s.watch("/core/pods/", {
      fromRevision: base,
      predicate: (o) => o.metadata?.labels?.app === "web",
    });
    await s.create("/core/pods/ns/a", pod("a", { app: "web" }));
    await s.update("/core/pods/ns/a", pod("a", { app: "db" }));
    await s.update("/core/pods/ns/a", pod("a", { app: "web" }));
    await s.delete("/core/pods/ns/a");
    await s.create("/core/pods/ns/a", pod("a", { app: "web" }));
    expect((await take(watcher, 5)).map(show(base))).toEqual([
      "ADDED a@1",
      "DELETED a@2",
      "ADDED a@3",
      "DELETED a@4",
      "ADDED a@5",
    ]);
  });

  it("sends BOOKMARKs at the cache's revision, advanced by etcd progress notifications", async () => {
    const clock = new FakeClock();
    const s = cached({ clock });
    const base = await s.currentRevision();
    const watcher = s.watch("/core/pods/", { fromRevision: base, bookmarkIntervalMs: 1_000 });
    await s.create("/core/pods/ns/a", pod("a"));
    expect((await take(watcher, 1)).map(show(base))).toEqual(["ADDED a@1"]);
    // A write to another resource moves etcd on; the pods cache learns of it from progress notifications.
    const other = await s.create("/apps/deployments/ns/d", pod("d"));
    await vi.waitFor(
      async () => {
        await clock.advance(1_000);
        const [bookmark] = await take(watcher, 1);
        expect(bookmark?.revision).toBe(Number(other.metadata?.resourceVersion));
      },
      { timeout: 5_000, interval: 50 },
    );
  });

  it("closes its watchers and lists anew when its etcd watch fails, then serves watches again", async () => {
    const s = cached();
    const base = await s.currentRevision();
    const watcher = s.watch("/core/pods/", { fromRevision: base });
    await s.create("/core/pods/ns/a", pod("a"));
    await take(watcher, 1);
    // A value that is not an object cannot be decoded: the cache's etcd watch ends.
    const badKey = `${s.storage.layout.root}pods/ns/bad`;
    await s.storage.client.put(badKey).value("not json");
    await s.storage.client.delete().key(badKey);
    const rest = await take(watcher, 5);
    expect(rest).toEqual([]);
    expect(watcher.closeReason).toBe("the watch cache is re-initialising");
    await s.create("/core/pods/ns/b", pod("b"));
    const again = s.watch("/core/pods/");
    expect((await take(again, 2)).map((e) => `${e.type} ${e.object?.metadata?.name}`)).toEqual([
      "ADDED a",
      "ADDED b",
    ]);
  });
});
