import { type ConfigMap, configMaps } from "@reconcile/api";
import { describeClientConformance } from "@reconcile/client/testing";
import { describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";

describeClientConformance("in-process client of ApiServer", async () => {
  const server = new ApiServer();
  return { client: server.client(), close: () => server.close() };
});

describe("managedFields through the in-process client", () => {
  it("hands out the stored FieldsV1 trees frozen and shared, and takes them back on update", async () => {
    const server = new ApiServer();
    try {
      const client = server.client().resource(configMaps, "default");
      const template = (name: string): ConfigMap => ({
        metadata: { name, labels: { app: "web" } },
        data: { a: "1" },
      });
      const a = await client.create(template("a"));
      const b = await client.create(template("b"));
      const treeOf = (object: ConfigMap) => object.metadata?.managedFields?.[0]?.fieldsV1 as object;
      expect(treeOf(a)).toBe(treeOf(b));
      expect(Object.isFrozen(treeOf(a))).toBe(true);
      expect(treeOf(await client.get("a"))).toBe(treeOf(a));

      // A value the same manager owns changes: ownership (and so the tree) stays.
      const changed = await client.update({ ...a, data: { a: "2" } });
      expect(changed.data).toEqual({ a: "2" });
      expect(treeOf(changed)).toBe(treeOf(a));
      // A new field: a new tree, and the other object keeps the old one.
      const grown = await client.update({ ...changed, data: { a: "2", b: "3" } });
      expect(grown.metadata?.managedFields?.[0]?.fieldsV1).toEqual({
        "f:data": { ".": {}, "f:a": {}, "f:b": {} },
        "f:metadata": { "f:labels": { ".": {}, "f:app": {} } },
      });
      expect(treeOf(await client.get("b"))).toBe(treeOf(b));
      // The shared trees come back unchanged in a later read of the whole list, copied or not.
      const list = await client.list();
      expect(list.items.map((item) => Object.keys(treeOf(item)).sort())).toEqual([
        ["f:data", "f:metadata"],
        ["f:data", "f:metadata"],
      ]);
    } finally {
      await server.close();
    }
  });
});

describe("a shared in-process client", () => {
  it("hands out objects uncopied, where the server's own client copies each", async () => {
    const server = new ApiServer();
    try {
      await server
        .client()
        .resource(configMaps, "default")
        .create({ metadata: { name: "a" }, data: { k: "v" } });
      const shared = server.client({ shared: true }).resource(configMaps, "default");
      const copying = server.client().resource(configMaps, "default");
      expect(await shared.get("a")).toBe(await shared.get("a"));
      expect(await copying.get("a")).not.toBe(await copying.get("a"));
      expect(await copying.get("a")).toEqual(await shared.get("a"));
    } finally {
      await server.close();
    }
  });
});

describe("lists and watches that accept frozen objects (acceptFrozen)", () => {
  it("hand every such caller one frozen copy of each object version, while other reads stay private copies", async () => {
    const server = new ApiServer();
    const stop = new AbortController();
    try {
      const client = server.client().resource(configMaps, "default");
      const other = server.client({ userAgent: "other" }).resource(configMaps, "default");
      const created = await client.create({ metadata: { name: "a" }, data: { k: "v" } });

      const first = (await client.list({ acceptFrozen: true })).items[0]!;
      const second = (await other.list({ acceptFrozen: true })).items[0]!;
      expect(second).toBe(first);
      expect(Object.isFrozen(first)).toBe(true);
      expect(Object.isFrozen(first.metadata)).toBe(true);
      expect(Object.isFrozen(first.data)).toBe(true);
      expect(first).toEqual(created);
      expect(() => {
        (first.data as Record<string, string>).k = "changed";
      }).toThrow(TypeError);

      // A read that does not accept frozen objects gets a copy of its own, free to change.
      const own = (await client.list()).items[0]!;
      expect(own).not.toBe(first);
      expect(Object.isFrozen(own.data)).toBe(false);
      own.data!.k = "mine";
      expect((await client.get("a")).data).toEqual({ k: "v" });

      // Two watches from the same version see the next write as one frozen object.
      const from = created.metadata!.resourceVersion!;
      const watches = await Promise.all(
        [client, other].map((c) =>
          c.watch({ resourceVersion: from, acceptFrozen: true, signal: stop.signal }),
        ),
      );
      const updated = await client.update({ ...created, data: { k: "w" } });
      const events = await Promise.all(
        watches.map(async (watch) => (await watch[Symbol.asyncIterator]().next()).value),
      );
      expect(events.map((event) => event.type)).toEqual(["MODIFIED", "MODIFIED"]);
      expect(events[1].object).toBe(events[0].object);
      expect(Object.isFrozen(events[0].object.data)).toBe(true);
      expect(events[0].object).toEqual(updated);
      // The list now hands out the new version's copy, the same one the watches got.
      expect((await other.list({ acceptFrozen: true })).items[0]).toBe(events[0].object);
    } finally {
      stop.abort();
      await server.close();
    }
  });
});
