import { events, type KubeObject, type Pod, pods } from "@reconcile/api";
import { FakeClock } from "@reconcile/clock";
import { afterEach, describe, expect, it } from "vitest";
import { closeServers, newServer, pod, rejection } from "./registry.test-util.js";

afterEach(closeServers);

describe("list", () => {
  it("filters by label and field selectors", async () => {
    const client = newServer().client().resource(pods, "default");
    await client.create(pod("a", { labels: { app: "web" }, nodeName: "n1" }));
    await client.create(pod("b", { labels: { app: "web" } }));
    await client.create(pod("c", { labels: { app: "db" }, nodeName: "n1" }));
    const names = async (options: { labelSelector?: string; fieldSelector?: string }) =>
      (await client.list(options)).items.map((p) => p.metadata?.name);
    expect(await names({ labelSelector: "app=web" })).toEqual(["a", "b"]);
    expect(await names({ labelSelector: "app in (db)" })).toEqual(["c"]);
    expect(await names({ fieldSelector: "spec.nodeName=n1" })).toEqual(["a", "c"]);
    expect(await names({ labelSelector: "app=web", fieldSelector: "spec.nodeName=n1" })).toEqual(["a"]);
    expect(await names({ fieldSelector: "metadata.name!=a" })).toEqual(["b", "c"]);
  });

  it("selects events by involvedObject fields, as kubectl describe asks", async () => {
    const client = newServer().client().resource(events, "default");
    await client.create({
      metadata: { name: "e1" },
      involvedObject: { kind: "Pod", name: "web", namespace: "default", uid: "u1" },
      reason: "Started",
    });
    await client.create({
      metadata: { name: "e2" },
      involvedObject: { kind: "Pod", name: "db", namespace: "default", uid: "u2" },
      reason: "Started",
    });
    const list = await client.list({
      fieldSelector: "involvedObject.name=web,involvedObject.namespace=default,involvedObject.uid=u1",
    });
    expect(list.items.map((e) => e.metadata?.name)).toEqual(["e1"]);
  });

  it("paginates with continue tokens bound to the first page's snapshot", async () => {
    const client = newServer().client().resource(pods, "default");
    for (const name of ["a", "b", "c", "d", "e"]) await client.create(pod(name));
    const first = await client.list({ limit: 2 });
    expect(first.items.map((p) => p.metadata?.name)).toEqual(["a", "b"]);
    expect(first.metadata.remainingItemCount).toBe(3);
    // Changes after the first page do not show up in later pages.
    await client.delete("c");
    await client.create(pod("bb"));
    const second = await client.list({ limit: 2, continue: first.metadata.continue });
    expect(second.items.map((p) => p.metadata?.name)).toEqual(["c", "d"]);
    expect(second.metadata.resourceVersion).toBe(first.metadata.resourceVersion);
    const third = await client.list({ limit: 2, continue: second.metadata.continue });
    expect(third.items.map((p) => p.metadata?.name)).toEqual(["e"]);
    expect(third.metadata.continue).toBeUndefined();
  });

  it("answers 410 Expired for a continue token whose snapshot has left the history", async () => {
    const client = newServer({ historySize: 3 }).client().resource(pods, "default");
    for (const name of ["a", "b", "c"]) await client.create(pod(name));
    const first = await client.list({ limit: 1 });
    for (const name of ["d", "e", "f", "g"]) await client.create(pod(name));
    const error = await rejection(client.list({ limit: 1, continue: first.metadata.continue }));
    expect(error.status.code).toBe(410);
    expect(error.reason).toBe("Expired");
    expect(error.message).toMatch(/^The provided continue parameter is too old/);
  });

  it("serves a paginated list at a resourceVersion exactly at that version, and 410 once it has left the history", async () => {
    // kube-apiserver: resourceVersion other than "0" with a limit and no resourceVersionMatch means Exact.
    const client = newServer({ historySize: 3 }).client().resource(pods, "default");
    await client.create(pod("a"));
    const at = (await client.list()).metadata.resourceVersion;
    await client.create(pod("b"));
    const page = await client.list({ resourceVersion: at, limit: 5 });
    expect(page.metadata.resourceVersion).toBe(at);
    expect(page.items.map((p) => p.metadata?.name)).toEqual(["a"]);
    for (const name of ["c", "d", "e"]) await client.create(pod(name));
    const error = await rejection(client.list({ resourceVersion: at, limit: 5 }));
    expect(error.status.code).toBe(410);
    expect(error.reason).toBe("Expired");
    // Without a limit it stays "not older than": the current state.
    expect((await client.list({ resourceVersion: at })).items).toHaveLength(5);
  });

  it("answers 504 Timeout with a ResourceVersionTooLarge cause for a resourceVersion in the future", async () => {
    const client = newServer().client().resource(pods, "default");
    const error = await rejection(client.list({ resourceVersion: "999" }));
    expect(error.status.code).toBe(504);
    expect(error.reason).toBe("Timeout");
    expect(error.message).toMatch(/^Timeout: Too large resource version: 999, current: \d+$/);
    expect(error.status.details?.causes).toEqual([
      { reason: "ResourceVersionTooLarge", message: "Too large resource version" },
    ]);
  });

  it("answers a watch from a resourceVersion in the future with 504 Timeout (the reflector relists)", async () => {
    const client = newServer().client().resource(pods, "default");
    const error = await rejection(client.watch({ resourceVersion: "999" }));
    expect(error.status.code).toBe(504);
    expect(error.status.details?.causes?.[0]?.reason).toBe("ResourceVersionTooLarge");
  });

  it("serves resourceVersionMatch=Exact from the history", async () => {
    const client = newServer().client().resource(pods, "default");
    const a = await client.create(pod("a"));
    await client.create(pod("b"));
    const list = await client.list({
      resourceVersion: a.metadata?.resourceVersion,
      resourceVersionMatch: "Exact",
    });
    expect(list.items.map((p) => p.metadata?.name)).toEqual(["a"]);
  });
});

describe("watch with selectors", () => {
  it("sends DELETED when an object stops matching and ADDED when it starts", async () => {
    const client = newServer().client().resource(pods, "default");
    const created = await client.create(pod("a", { labels: { app: "db" } }));
    const controller = new AbortController();
    const watch = await client.watch({
      resourceVersion: created.metadata?.resourceVersion,
      labelSelector: "app=web",
      signal: controller.signal,
    });
    const web = await client.update({
      ...created,
      metadata: { ...created.metadata, labels: { app: "web" } },
    });
    await client.update({ ...web, metadata: { ...web.metadata, labels: { app: "db" } } });
    const seen: string[] = [];
    for await (const event of watch) {
      seen.push(`${event.type} ${(event.object as Pod).metadata?.labels?.app}`);
      if (seen.length === 2) controller.abort();
    }
    expect(seen).toEqual(["ADDED web", "DELETED web"]);
  });

  it("sends bookmarks when allowed, on the injected clock", async () => {
    const clock = new FakeClock();
    const client = newServer({ clock, bookmarkIntervalMs: 5000 }).client().resource(pods, "default");
    const controller = new AbortController();
    const watch = await client.watch({
      resourceVersion: "0",
      allowWatchBookmarks: true,
      signal: controller.signal,
    });
    const current = await client.create(pod("a"));
    await clock.advance(5000);
    const seen: KubeObject[] = [];
    for await (const event of watch) {
      seen.push({ type: event.type, ...(event.object as KubeObject) } as KubeObject);
      if (seen.length === 2) controller.abort();
    }
    expect(seen[1]).toEqual({
      type: "BOOKMARK",
      apiVersion: "v1",
      kind: "Pod",
      metadata: { resourceVersion: current.metadata?.resourceVersion },
    });
  });
});
