import { limitRanges } from "@reconcile/api";
import { FakeClock } from "@reconcile/clock";
import { describe, expect, it } from "vitest";
import { MemoryStorage } from "../storage/memory-storage.js";
import { ListCache, WriteCountingStorage } from "./read-cache.js";

const limits = (name: string) => ({
  apiVersion: "v1",
  kind: "LimitRange",
  metadata: { name, namespace: "default" },
});

describe("admission's list cache", () => {
  it("serves a list again until a write through the counting storage touches its collection", async () => {
    const inner = new MemoryStorage();
    const storage = new WriteCountingStorage(inner);
    const cache = new ListCache(storage);
    await storage.create("/core/limitranges/default/a", limits("a"));
    const first = await cache.list("/core/limitranges/default/");
    expect(first.map((o) => o.metadata?.name)).toEqual(["a"]);
    // A write to another collection leaves the list as it was: the same array.
    await storage.create("/core/configmaps/default/x", { metadata: { name: "x", namespace: "default" } });
    expect(await cache.list("/core/limitranges/default/")).toBe(first);
    expect(storage.writesTo("/core/configmaps/")).toBe(1);
    // A write to its collection, in any namespace, makes it read again.
    await storage.create("/core/limitranges/other/b", {
      ...limits("b"),
      metadata: { name: "b", namespace: "other" },
    });
    const again = await cache.list("/core/limitranges/default/");
    expect(again).not.toBe(first);
    await storage.create("/core/limitranges/default/c", limits("c"));
    expect((await cache.list("/core/limitranges/default/")).map((o) => o.metadata?.name)).toEqual(["a", "c"]);
    expect((await cache.get("/core/limitranges/default/", "c"))?.metadata?.name).toBe("c");
    expect(await cache.get("/core/limitranges/default/", "z")).toBeUndefined();
    // A failed write counts too: it may have changed the collection as far as this server knows.
    await expect(storage.create("/core/limitranges/default/c", limits("c"))).rejects.toThrow();
    expect(storage.writesTo("/core/limitranges/")).toBe(4);
    inner.close();
  });

  it("keeps an object a plugin wrote back in its list, unless another write came between", async () => {
    const inner = new MemoryStorage();
    const storage = new WriteCountingStorage(inner);
    const cache = new ListCache(storage);
    let lists = 0;
    const list = inner.list.bind(inner);
    inner.list = (...args) => {
      lists++;
      return list(...args);
    };
    await storage.create("/core/resourcequotas/default/q", limits("q"));
    await storage.create("/core/resourcequotas/default/r", limits("r"));
    const prefix = "/core/resourcequotas/default/";
    const [q] = await cache.list(prefix);
    // The plugin's own write: the list is served with it, not read again.
    const before = cache.writes(prefix);
    const written = await storage.update(`${prefix}q`, { ...q!, data: { used: "1" } } as never);
    cache.replaced(prefix, written, before);
    const after = await cache.list(prefix);
    expect(lists).toBe(1);
    expect(after.map((o) => [o.metadata?.name, (o as { data?: unknown }).data])).toEqual([
      ["q", { used: "1" }],
      ["r", undefined],
    ]);
    expect(await cache.get(prefix, "q")).toBe(written);
    // Another write to the collection between the plugin's read and its write: read again.
    const stale = cache.writes(prefix);
    await storage.create("/core/resourcequotas/other/s", { metadata: { name: "s", namespace: "other" } });
    const again = await storage.update(`${prefix}q`, { ...written, data: { used: "2" } } as never);
    cache.replaced(prefix, again, stale);
    expect((await cache.get(prefix, "q")) as unknown).toMatchObject({ data: { used: "2" } });
    expect(lists).toBe(2);
    inner.close();
  });

  it("answers at once while its list is current, and reads it again a second after on the server's clock", async () => {
    const inner = new MemoryStorage();
    const storage = new WriteCountingStorage(inner);
    const clock = new FakeClock(0);
    const cache = new ListCache(storage, clock);
    await storage.create("/core/limitranges/default/a", limits("a"));
    const prefix = "/core/limitranges/default/";
    const read = cache.list(prefix);
    expect(read).toBeInstanceOf(Promise);
    const first = await read;
    // Current: the same array, not a promise of it.
    expect(cache.list(prefix)).toBe(first);
    expect(cache.get(prefix, "a")).toBe(first[0]);
    await clock.advance(999);
    expect(cache.list(prefix)).toBe(first);
    // Another API server on the same storage may have written: after a second the list is read again.
    await clock.advance(1);
    const again = cache.list(prefix);
    expect(again).toBeInstanceOf(Promise);
    expect(await again).not.toBe(first);
    expect(cache.list(prefix)).toBe(await again);
    inner.close();
  });

  it("reads the clock once per task however many lists a write's plugins read, and names a prefix by resource and namespace", async () => {
    const inner = new MemoryStorage();
    const storage = new WriteCountingStorage(inner);
    const clock = new FakeClock(0);
    let readings = 0;
    const now = clock.now.bind(clock);
    clock.now = () => {
      readings++;
      return now();
    };
    const cache = new ListCache(storage, clock);
    await storage.create("/core/limitranges/default/a", limits("a"));
    await cache.list("/core/limitranges/default/");
    await cache.list("/core/namespaces/");
    readings = 0;
    // By resource and namespace: the same prefix, made once.
    const byResource = cache.prefixOf(limitRanges, "default");
    expect(byResource).toBe(cache.prefixOf(limitRanges, "default"));
    expect(byResource.prefix).toBe("/core/limitranges/default/");
    expect(cache.get(byResource, "a")).toMatchObject({ metadata: { name: "a" } });
    expect(cache.list("/core/limitranges/default/")).toHaveLength(1);
    expect(cache.list("/core/namespaces/")).toEqual([]);
    expect(readings).toBe(1);
    // The next task reads it again.
    await Promise.resolve();
    expect(cache.get(byResource, "b")).toBeUndefined();
    expect(readings).toBe(2);
    // clear() makes every list, however named, be read afresh.
    cache.clear();
    expect(cache.get(byResource, "a")).toBeInstanceOf(Promise);
    expect(cache.list("/core/namespaces/")).toBeInstanceOf(Promise);
    inner.close();
  });
});
