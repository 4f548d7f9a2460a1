import { isInternalError, isTimeout, type KubeObject, type StatusError } from "@reconcile/api";
import { StorageError, type StorageEvent, type StorageWatcher } from "@reconcile/apiserver";
import { FakeClock } from "@reconcile/clock";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { describeStorageConformance } from "../../apiserver/src/storage/testing/storage-conformance.js";
import { createEtcdClient } from "./client.js";
import { type EtcdCluster, startEtcd } from "./etcd-process.js";
import { EtcdStorage, type EtcdStorageOptions } from "./etcd-storage.js";
import { silenceableProxy } from "./proxy.test-util.js";

let etcd: EtcdCluster;
let prefixes = 0;
const opened: EtcdStorage[] = [];

beforeAll(async () => {
  etcd = await startEtcd({ progressNotifyIntervalMs: 200 });
});

afterEach(() => {
  for (const storage of opened.splice(0)) storage.close();
});

afterAll(async () => {
  await etcd?.stop();
});

/** A storage with a prefix of its own on the file's etcd: empty, with global revisions. */
function storage(options: Partial<EtcdStorageOptions> = {}): EtcdStorage {
  const created = new EtcdStorage({
    endpoints: etcd.endpoints,
    prefix: `/t${++prefixes}`,
    compactionIntervalMs: 0,
    ...options,
  });
  opened.push(created);
  return created;
}

describeStorageConformance("etcd", () => storage());

function pod(name: string, extra: Record<string, unknown> = {}): KubeObject {
  return { apiVersion: "v1", kind: "Pod", metadata: { name, namespace: "ns", ...extra } } as KubeObject;
}

async function take(watcher: StorageWatcher, count: number): Promise<StorageEvent[]> {
  // Reads through the iterator without ending the watch (a for-await `break` would stop it).
  const iterator = watcher[Symbol.asyncIterator]();
  const events: StorageEvent[] = [];
  while (events.length < count) {
    const next = await iterator.next();
    if (next.done) break;
    events.push(next.value);
  }
  return events;
}

const show = (e: StorageEvent) =>
  e.type === "BOOKMARK" || e.type === "ERROR"
    ? e.type
    : `${e.type} ${e.object?.metadata?.name}@${e.object?.metadata?.resourceVersion}`;

describe("EtcdStorage on etcd", () => {
  it("keeps objects where kube-apiserver does, as JSON without the resourceVersion", async () => {
    const s = storage();
    const root = s.layout.root;
    const created = await s.create("/core/pods/ns/a", pod("a", { resourceVersion: "77" }));
    await s.create("/apps/deployments/ns/d", { metadata: { name: "d", namespace: "ns" } });
    await s.create("/core/nodes/n1", { metadata: { name: "n1" } });
    const keys = (await s.client.getAll().prefix(root).keys()).sort();
    expect(keys).toEqual([`${root}deployments/ns/d`, `${root}minions/n1`, `${root}pods/ns/a`]);
    const stored = JSON.parse((await s.client.get(`${root}pods/ns/a`).string())!);
    expect(stored).toEqual({ apiVersion: "v1", kind: "Pod", metadata: { name: "a", namespace: "ns" } });
    const kv = (await s.client.kv.range({ key: Buffer.from(`${root}pods/ns/a`) })).kvs[0]!;
    expect(created.metadata?.resourceVersion).toBe(kv.mod_revision);
    expect((await s.get("/core/pods/ns/a"))?.metadata?.resourceVersion).toBe(kv.mod_revision);
  });

  it("refuses keys with a dot segment, which could name another object's path", async () => {
    const s = storage();
    for (const key of ["/core/pods/ns/..", "/core/pods/../secrets/x", "/core/pods/ns/."]) {
      await expect(s.create(key, pod("x"))).rejects.toThrow(`invalid key: ${key}`);
    }
    expect((await s.list("/")).items).toEqual([]);
  });

  it("pages through one snapshot: later pages read at the first page's revision", async () => {
    const s = storage();
    for (const name of ["a", "b", "c", "d"]) await s.create(`/core/pods/ns/${name}`, pod(name));
    const first = await s.list("/core/pods/", { limit: 2 });
    expect(first.items.map((o) => o.metadata?.name)).toEqual(["a", "b"]);
    expect(first.nextKey).toBe("/core/pods/ns/b\u0000");
    expect(first.remaining).toBe(2);
    await s.delete("/core/pods/ns/c");
    await s.create("/core/pods/ns/e", pod("e"));
    const second = await s.list("/core/pods/", {
      limit: 2,
      startKey: first.nextKey,
      revision: first.revision,
    });
    expect(second.items.map((o) => o.metadata?.name)).toEqual(["c", "d"]);
    expect(second.revision).toBe(first.revision);
    expect(second.nextKey).toBeUndefined();
    const now = await s.list("/core/pods/", { startKey: first.nextKey });
    expect(now.items.map((o) => o.metadata?.name)).toEqual(["d", "e"]);
  });

  it("counts only matching items against the limit and grows the page it reads (1, 2, 4 … keys)", async () => {
    const s = storage();
    for (let batch = 0; batch < 10; batch++) {
      await Promise.all(
        Array.from({ length: 100 }, (_, j) => {
          const i = batch * 100 + j;
          return s.create(`/core/pods/ns/pod-${String(i).padStart(3, "0")}`, pod(`pod-${i}`));
        }),
      );
    }
    const range = vi.spyOn(s.client.kv, "range");
    const result = await s.list("/core/pods/", {
      limit: 1,
      predicate: (o) => o.metadata?.name === "pod-999",
    });
    expect(result.items.map((o) => o.metadata?.name)).toEqual(["pod-999"]);
    expect(result.nextKey).toBeUndefined();
    // 1+2+4+…+512 = 1023 keys: exactly 10 calls, as upstream's test pins.
    expect(range).toHaveBeenCalledTimes(10);
    // With a filter a next key is given while keys remain, matching or not (etcd cannot tell).
    const filtered = await s.list("/core/pods/", {
      limit: 1,
      predicate: (o) => o.metadata?.name === "pod-5",
    });
    expect(filtered.items.map((o) => o.metadata?.name)).toEqual(["pod-5"]);
    expect(filtered.nextKey).toBe("/core/pods/ns/pod-005\u0000");
    expect(filtered.remaining).toBeUndefined();
  });

  it("answers a list at a compacted revision with Expired and at a future one with TooLargeResourceVersion", async () => {
    const s = storage();
    const a = await s.create("/core/pods/ns/a", pod("a"));
    await s.update("/core/pods/ns/a", pod("a", { labels: { x: "y" } }));
    const current = await s.currentRevision();
    await s.client.kv.compact({ revision: current });
    const old = Number(a.metadata?.resourceVersion);
    await expect(s.list("/core/pods/", { revision: old })).rejects.toSatisfy(
      (e) =>
        StorageError.is(e, "Expired") &&
        e.message === "The resourceVersion for the provided list is too old.",
    );
    // At the compacted revision itself the state is still there.
    expect((await s.list("/core/pods/", { revision: current })).items).toHaveLength(1);
    await expect(s.list("/core/pods/", { revision: current + 100 })).rejects.toSatisfy(
      (e) =>
        StorageError.is(e, "TooLargeResourceVersion") &&
        e.message === `Too large resource version: ${current + 100}, current: ${current}`,
    );
  });

  it("fails a write over etcd's request limit with etcd's text as a 500, and the next write goes through", async () => {
    const s = storage();
    const big = pod("big", { annotations: { blob: "x".repeat(1_600_000) } });
    const failure = await s.create("/core/pods/ns/big", big).catch((e: unknown) => e);
    expect(isInternalError(failure) || (failure as StatusError).status?.code === 500).toBe(true);
    expect((failure as StatusError).status.message).toBe("etcdserver: request is too large");
    // No circuit breaker: the storage is not locked out after failures.
    for (let i = 0; i < 4; i++) await s.create(`/core/pods/ns/big`, big).catch(() => {});
    const small = await s.create("/core/pods/ns/small", pod("small"));
    expect(small.metadata?.resourceVersion).toMatch(/^\d+$/);
    expect(await s.get("/core/pods/ns/big")).toBeUndefined();
  });

  it("translates changes for a filtered watch: entering, leaving, deleting", async () => {
    const s = storage();
    const base = await s.currentRevision();
    const watcher = s.watch("/core/pods/", {
      fromRevision: base,
      predicate: (o) => o.metadata?.labels?.app === "web",
    });
    await s.create("/core/pods/ns/a", pod("a", { labels: { app: "web" } }));
    await s.update("/core/pods/ns/a", pod("a", { labels: { app: "db" } }));
    await s.update("/core/pods/ns/a", pod("a", { labels: { app: "web" } }));
    await s.delete("/core/pods/ns/a");
    const events = await take(watcher, 4);
    expect(events.map((e) => `${e.type}@${e.revision - base}:${e.object?.metadata?.labels?.app}`)).toEqual([
      "ADDED@1:web",
      "DELETED@2:web",
      "ADDED@3:web",
      "DELETED@4:web",
    ]);
  });

  it("ends a watch from a compacted revision with one ERROR Expired", async () => {
    const s = storage();
    const first = await s.create("/core/pods/ns/a", pod("a"));
    await s.update("/core/pods/ns/a", pod("a"));
    await s.update("/core/pods/ns/a", pod("a"));
    const current = await s.currentRevision();
    await s.client.kv.compact({ revision: current });
    const watcher = s.watch("/core/pods/", { fromRevision: Number(first.metadata?.resourceVersion) });
    const events: StorageEvent[] = [];
    for await (const event of watcher) events.push(event);
    expect(events.map((e) => [e.type, e.error?.storageCode, e.error?.message])).toEqual([
      ["ERROR", "Expired", "The resourceVersion for the provided watch is too old."],
    ]);
    // From the compacted revision itself a watch still starts (kube RV C−1 ↔ etcd start C).
    const fine = s.watch("/core/pods/", { fromRevision: current - 1 });
    expect((await take(fine, 1)).map(show)).toEqual([`MODIFIED a@${current}`]);
  });

  it("turns etcd progress notifications into BOOKMARKs for the watch cache", async () => {
    const s = storage();
    const created = await s.create("/core/pods/ns/a", pod("a"));
    const watcher = s.watchWithProgress(
      "/core/pods/",
      { fromRevision: Number(created.metadata?.resourceVersion) },
      true,
    );
    const [bookmark] = await take(watcher, 1);
    expect(bookmark?.type).toBe("BOOKMARK");
    expect(bookmark!.revision).toBeGreaterThanOrEqual(Number(created.metadata?.resourceVersion));
    watcher.stop();
  });

  it("sends BOOKMARKs at the last revision seen every bookmarkIntervalMs", async () => {
    const clock = new FakeClock();
    const s = storage({ clock });
    const created = await s.create("/core/pods/ns/a", pod("a"));
    const rv = Number(created.metadata?.resourceVersion);
    const watcher = s.watch("/core/pods/", { fromRevision: rv - 1, bookmarkIntervalMs: 1_000 });
    const [added] = await take(watcher, 1);
    expect(show(added!)).toBe(`ADDED a@${rv}`);
    await clock.advance(1_000);
    const [bookmark] = await take(watcher, 1);
    expect(bookmark).toEqual({ type: "BOOKMARK", revision: rv });
    watcher.stop();
  });

  it("stops the etcd watch when the watcher is stopped", async () => {
    const s = storage();
    const watcher = s.watch("/core/pods/", { fromRevision: await s.currentRevision() });
    await s.create("/core/pods/ns/a", pod("a"));
    expect((await take(watcher, 1)).map((e) => e.type)).toEqual(["ADDED"]);
    watcher.stop();
    await s.create("/core/pods/ns/b", pod("b"));
    const next = await watcher[Symbol.asyncIterator]().next();
    expect(next.done).toBe(true);
    expect(watcher.closeReason).toBe("stopped");
  });

  it("times out with a 504 naming etcd's reason when no member can be reached, and acknowledges nothing", async () => {
    const s = new EtcdStorage({
      endpoints: "http://127.0.0.1:9",
      compactionIntervalMs: 0,
      requestTimeoutMs: 300,
    });
    opened.push(s);
    const failure = await s.create("/core/pods/ns/a", pod("a")).catch((e: unknown) => e);
    expect((failure as StatusError).status.code).toBe(504);
    expect((failure as StatusError).status.message).toMatch(
      /^Timeout: request did not complete within requested timeout - context deadline exceeded \(etcd: No connection established/,
    );
  });

  it("fails with a 504 Timeout once the request deadline passes on a member that does not answer", async () => {
    // The member is reached through a proxy that stops passing bytes on both
    // ways: from the client's side, a member that holds its connection and
    // never answers (a stopped process, a partition). A proxy rather than a
    // stopped etcd process, so the test does not depend on when the kernel
    // stops every thread of the process under load.
    const proxy = await silenceableProxy(new URL(etcd.endpoints[0]!));
    try {
      const prefix = `/t${++prefixes}`;
      const setup = storage({ prefix });
      const s = storage({ endpoints: [proxy.url], prefix, requestTimeoutMs: 500 });
      await setup.create("/core/pods/ns/a", pod("a"));
      expect((await s.get("/core/pods/ns/a"))?.metadata?.name).toBe("a");
      proxy.silence();
      const read = await s.get("/core/pods/ns/a").catch((e: unknown) => e);
      expect(isTimeout(read), String(read)).toBe(true);
      expect((read as StatusError).status.message).toMatch(
        /^Timeout: request did not complete within requested timeout - context deadline exceeded/,
      );
      const write = await s.update("/core/pods/ns/a", pod("a")).catch((e: unknown) => e);
      expect(isTimeout(write), String(write)).toBe(true);
    } finally {
      await proxy.close();
    }
  });

  it("reports a full etcd (NOSPACE) as a 500 with etcd's text while reads go on", async () => {
    const own = await startEtcd({ quotaBackendBytes: 8 * 1024 * 1024 });
    try {
      const client = createEtcdClient(own.endpoints);
      const s = new EtcdStorage({ client, compactionIntervalMs: 0 });
      opened.push(s);
      await s.create("/core/pods/ns/a", pod("a"));
      let failure: unknown;
      for (let i = 0; i < 40 && failure === undefined; i++) {
        await s
          .create(
            `/core/pods/ns/fill-${i}`,
            pod(`fill-${i}`, { annotations: { blob: "x".repeat(1_000_000) } }),
          )
          .catch((e: unknown) => {
            failure = e;
          });
      }
      expect((failure as StatusError).status).toMatchObject({
        code: 500,
        message: "etcdserver: mvcc: database space exceeded",
      });
      expect((await s.get("/core/pods/ns/a"))?.metadata?.name).toBe("a");
      client.close();
    } finally {
      await own.stop();
    }
  });

  it("resumes a watch across an etcd kill -9 and restart without losing or repeating an event", async () => {
    const own = await startEtcd();
    try {
      const s = new EtcdStorage({
        endpoints: own.endpoints,
        compactionIntervalMs: 0,
        requestTimeoutMs: 5_000,
      });
      opened.push(s);
      const base = await s.currentRevision();
      const watcher = s.watch("/core/pods/", { fromRevision: base });
      for (let i = 0; i < 5; i++) await s.create(`/core/pods/ns/before-${i}`, pod(`before-${i}`));
      const early = await take(watcher, 2);
      await own.members[0]!.kill();
      await own.members[0]!.restart();
      for (let i = 0; i < 5; i++) await s.create(`/core/pods/ns/after-${i}`, pod(`after-${i}`));
      const rest = await take(watcher, 8);
      expect(
        [...early, ...rest].map((e) => `${e.type} ${e.object?.metadata?.name}@${e.revision - base}`),
      ).toEqual([
        ...Array.from({ length: 5 }, (_, i) => `ADDED before-${i}@${i + 1}`),
        ...Array.from({ length: 5 }, (_, i) => `ADDED after-${i}@${i + 6}`),
      ]);
      watcher.stop();
    } finally {
      await own.stop();
    }
  });
});
