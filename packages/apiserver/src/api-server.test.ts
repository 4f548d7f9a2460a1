import {
  deployments,
  isAlreadyExists,
  isConflict,
  isNotFound,
  type KubeObject,
  leases,
  namespaces,
  type Pod,
  pods,
  replicaSets,
  type StatusError,
  type WatchEvent,
} from "@reconcile/api";
import { FakeClock } from "@reconcile/clock";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "./api-server.js";
import { MemoryStorage } from "./storage/memory-storage.js";

const servers: ApiServer[] = [];
function newServer(options: ConstructorParameters<typeof ApiServer>[0] = {}): ApiServer {
  const server = new ApiServer({ clock: new FakeClock(Date.UTC(2026, 0, 1)), ...options });
  servers.push(server);
  return server;
}
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

function pod(name: string, extra: Partial<Pod["spec"]> = {}, labels: Record<string, string> = {}): Pod {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, labels },
    spec: { containers: [{ name: "app", image: "nginx:1.27" }], ...extra },
  };
}

async function rejection(promise: Promise<unknown>): Promise<StatusError> {
  try {
    await promise;
  } catch (error) {
    return error as StatusError;
  }
  throw new Error("expected a rejection");
}

function summarize(event: WatchEvent<KubeObject>): string {
  const meta = (event.object as KubeObject).metadata;
  return `${event.type} ${meta?.name ?? ""}@${meta?.resourceVersion}`;
}

describe("ApiServer", () => {
  it("starts with the default, kube-system, kube-public and kube-node-lease namespaces", async () => {
    const client = newServer().client();
    const list = await client.resource(namespaces).list();
    expect(list.items.map((ns) => ns.metadata?.name)).toEqual([
      "default",
      "kube-node-lease",
      "kube-public",
      "kube-system",
    ]);
    expect(list.items.every((ns) => ns.status?.phase === "Active")).toBe(true);
  });

  it("fills uid, creationTimestamp and a resourceVersion on create; a pod has no generation (before 1.33)", async () => {
    const client = newServer().client().resource(pods, "default");
    const created = await client.create(pod("web"));
    expect(created.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.metadata?.creationTimestamp).toBe("2026-01-01T00:00:00Z");
    expect(created.metadata?.generation).toBeUndefined();
    expect(created.metadata?.namespace).toBe("default");
    expect(Number(created.metadata?.resourceVersion)).toBeGreaterThan(0);
    expect(await client.get("web")).toEqual(created);
  });

  it("hands out copies: changing a returned object does not change what is stored", async () => {
    const client = newServer().client().resource(pods, "default");
    const mine = pod("web", {}, { app: "web" });
    const created = await client.create(mine);
    mine.metadata!.labels!.changed = "by-caller";
    created.metadata!.labels!.changed = "by-caller";
    expect((await client.get("web")).metadata?.labels).toEqual({ app: "web" });
  });

  it("answers 409 AlreadyExists, 404 NotFound and 409 Conflict as kube-apiserver words them", async () => {
    const client = newServer().client().resource(pods, "default");
    const created = await client.create(pod("web"));
    const exists = await rejection(client.create(pod("web")));
    expect(isAlreadyExists(exists)).toBe(true);
    expect(exists.message).toBe('pods "web" already exists');
    const missing = await rejection(client.get("nope"));
    expect(isNotFound(missing)).toBe(true);
    expect(missing.message).toBe('pods "nope" not found');
    await client.update({ ...created, metadata: { ...created.metadata, labels: { a: "b" } } });
    const stale = await rejection(client.update(created));
    expect(isConflict(stale)).toBe(true);
    expect(stale.message).toBe(
      'Operation cannot be fulfilled on pods "web": the object has been modified; please apply your changes to the latest version and try again',
    );
  });

  it("generates a name from generateName with a 5-character suffix", async () => {
    const client = newServer().client().resource(pods, "default");
    const created = await client.create({ ...pod(""), metadata: { generateName: "web-" } });
    expect(created.metadata?.name).toMatch(/^web-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  });

  it("rejects objects in a namespace that does not exist", async () => {
    const client = newServer().client().resource(pods, "nowhere");
    const error = await rejection(client.create(pod("web")));
    expect(error.status.code).toBe(404);
    expect(error.message).toBe('namespaces "nowhere" not found');
  });

  it("lists one namespace or all, with resourceVersion of the list", async () => {
    const server = newServer();
    await server
      .client()
      .resource(namespaces)
      .create({ metadata: { name: "other" } });
    await server.client().resource(pods, "default").create(pod("a"));
    const last = await server.client().resource(pods, "other").create(pod("b"));
    const all = await server.client().resource(pods).list();
    expect(all.items.map((p) => p.metadata?.name)).toEqual(["a", "b"]);
    expect(all.metadata.resourceVersion).toBe(last.metadata?.resourceVersion);
    const inDefault = await server.client().resource(pods, "default").list();
    expect(inDefault.items.map((p) => p.metadata?.name)).toEqual(["a"]);
    expect(all.kind).toBe("PodList");
  });

  it("lists thousands of objects complete and in order (copied in chunks between event-loop turns)", async () => {
    const client = newServer().client().resource(leases, "default");
    const names = Array.from({ length: 4500 }, (_, i) => `lease-${String(i).padStart(4, "0")}`);
    for (const name of names) await client.create({ metadata: { name } });
    const list = await client.list();
    expect(list.items.map((lease) => lease.metadata?.name)).toEqual(names);
  });

  it("bumps generation on spec changes only and ignores status on the main resource", async () => {
    const client = newServer().client().resource(deployments, "default");
    const created = await client.create({
      metadata: { name: "web" },
      spec: {
        selector: { matchLabels: { app: "web" } },
        template: {
          metadata: { labels: { app: "web" } },
          spec: { containers: [{ name: "c", image: "nginx" }] },
        },
      },
    });
    const relabeled = await client.update({
      ...created,
      metadata: { ...created.metadata, labels: { x: "y" } },
      status: { replicas: 5 },
    });
    expect(relabeled.metadata?.generation).toBe(1);
    expect(relabeled.status).toEqual({});
    const scaled = await client.update({ ...relabeled, spec: { ...relabeled.spec!, replicas: 3 } });
    expect(scaled.metadata?.generation).toBe(2);
    const withStatus = await client.updateStatus({
      ...scaled,
      spec: { ...scaled.spec!, replicas: 9 },
      status: { replicas: 3 },
    });
    expect(withStatus.spec?.replicas).toBe(3);
    expect(withStatus.status).toEqual({ replicas: 3 });
    expect(withStatus.metadata?.generation).toBe(2);
  });

  it("writes nothing for an update that changes nothing", async () => {
    const client = newServer().client().resource(leases, "default");
    const created = await client.create({ metadata: { name: "l" }, spec: { holderIdentity: "a" } });
    const same = await client.update(created);
    expect(same.metadata?.resourceVersion).toBe(created.metadata?.resourceVersion);
  });

  it("watches from a resourceVersion: exactly the later changes, in order", async () => {
    const client = newServer().client().resource(pods, "default");
    const a = await client.create(pod("a"));
    const controller = new AbortController();
    const watch = await client.watch({
      resourceVersion: a.metadata?.resourceVersion,
      signal: controller.signal,
    });
    const b = await client.create(pod("b"));
    await client.update({ ...b, metadata: { ...b.metadata, labels: { v: "2" } } });
    await client.delete("a");
    const seen: string[] = [];
    for await (const event of watch) {
      seen.push(summarize(event));
      if (seen.length === 3) controller.abort();
    }
    const rv = Number(a.metadata?.resourceVersion);
    expect(seen).toEqual([`ADDED b@${rv + 1}`, `MODIFIED b@${rv + 2}`, `DELETED a@${rv + 3}`]);
  });

  it("answers a watch from a compacted resourceVersion with one ERROR 410 Expired event", async () => {
    const client = newServer({ historySize: 3 }).client().resource(pods, "default");
    for (const name of ["a", "b", "c", "d", "e"]) await client.create(pod(name));
    const watch = await client.watch({ resourceVersion: "1" });
    const events: WatchEvent<Pod>[] = [];
    for await (const event of watch) events.push(event);
    expect(events).toHaveLength(1);
    expect(events[0]!.type).toBe("ERROR");
    expect(events[0]!.object).toMatchObject({ kind: "Status", code: 410, reason: "Expired" });
    expect((events[0]!.object as { message: string }).message).toMatch(
      /^too old resource version: 1 \(\d+\)$/,
    );
  });

  it("closes a watch after timeoutSeconds on the clock", async () => {
    const clock = new FakeClock();
    const client = newServer({ clock }).client().resource(pods, "default");
    const watch = await client.watch({ resourceVersion: "0", timeoutSeconds: 30 });
    const iterating = (async () => {
      const events = [];
      for await (const event of watch) events.push(event);
      return events;
    })();
    await clock.advance(30_000);
    expect(await iterating).toEqual([]);
    expect(clock.pendingTimers()).toEqual([]);
  });

  it("never asks for a timer longer than setTimeout can hold (a longer one would fire at once)", async () => {
    const clock = new FakeClock();
    const client = newServer({ clock }).client().resource(pods, "default");
    const watch = await client.watch({ timeoutSeconds: 1_000_000_000 });
    expect(clock.pendingTimers().map((timer) => timer.in)).toEqual([2_147_483_647]);
    await watch[Symbol.asyncIterator]().return?.();
  });

  it("leaves no timer behind when the server closes watches nobody reads", async () => {
    const clock = new FakeClock();
    const server = newServer({ clock, bookmarkIntervalMs: 1000 });
    const client = server.client().resource(pods, "default");
    await client.watch({ timeoutSeconds: 60, allowWatchBookmarks: true });
    expect(clock.pendingTimers()).toHaveLength(2);
    await server.close();
    expect(clock.pendingTimers()).toEqual([]);
  });

  it("closes every watch on close()", async () => {
    const server = newServer();
    const watch = await server.client().resource(replicaSets).watch();
    const iterating = (async () => {
      for await (const _ of watch) {
        // nothing
      }
      return "ended";
    })();
    await server.close();
    expect(await iterating).toBe("ended");
  });

  it("ends the stream of a watcher that falls too far behind; resuming from its last version loses nothing", async () => {
    const client = newServer({ watchBufferSize: 3 }).client().resource(pods, "default");
    const start = await client.list();
    const slow = await client.watch({ resourceVersion: start.metadata.resourceVersion });
    const written: string[] = [];
    for (const name of ["a", "b", "c", "d", "e", "f"]) {
      const created = await client.create(pod(name));
      written.push(`ADDED ${name}@${created.metadata?.resourceVersion}`);
    }
    const seen: string[] = [];
    let error: unknown;
    for await (const event of slow) {
      if (event.type === "ERROR") error = event.object;
      else seen.push(summarize(event));
    }
    // It was sent what fit in its buffer, then one ERROR (429, so a reflector re-watches without relisting).
    expect(seen).toEqual(written.slice(0, 3));
    expect(error).toMatchObject({ kind: "Status", code: 429, reason: "TooManyRequests" });
    expect((error as { message: string }).message).toBe(
      "Too many requests: the watcher fell more than 3 events behind and was closed; watch again from the last resourceVersion read",
    );
    const controller = new AbortController();
    const resumed = await client.watch({
      resourceVersion: seen.at(-1)!.split("@")[1],
      signal: controller.signal,
    });
    for await (const event of resumed) {
      seen.push(summarize(event));
      if (seen.length === written.length) controller.abort();
    }
    expect(seen).toEqual(written);
  });

  it("delivers every event to each of 2,000 watchers", async () => {
    const client = newServer().client().resource(pods, "default");
    const start = await client.list();
    const readers: Promise<string[]>[] = [];
    for (let i = 0; i < 2000; i++) {
      const watch = await client.watch({ resourceVersion: start.metadata.resourceVersion });
      readers.push(
        (async () => {
          const names: string[] = [];
          for await (const event of watch) {
            names.push((event.object as KubeObject).metadata?.name ?? "");
            if (names.length === 20) break;
          }
          return names;
        })(),
      );
    }
    const expected: string[] = [];
    for (let i = 0; i < 20; i++) {
      expected.push(`p${i}`);
      await client.create(pod(`p${i}`));
    }
    const results = await Promise.all(readers);
    expect(results.every((names) => names.join() === expected.join())).toBe(true);
  });

  it("turns a failing storage into 500 InternalError answers, without crashing", async () => {
    class BrokenStorage extends MemoryStorage {
      override async create(): Promise<never> {
        throw new Error("disk on fire");
      }
    }
    const server = newServer({ storage: new BrokenStorage() });
    await server.flush();
    const error = await rejection(server.client().resource(pods, "default").list());
    expect(error.status.code).toBe(500);
    expect(error.message).toBe("Internal error occurred: disk on fire");
  });

  it("rejects a call whose signal has aborted with the signal's reason", async () => {
    const client = newServer().client().resource(pods, "default");
    const controller = new AbortController();
    controller.abort(new Error("gave up"));
    await expect(client.list({ signal: controller.signal })).rejects.toThrow("gave up");
  });
});

describe("ApiServer.listen", () => {
  it("serves the REST API over HTTP until the API server closes", async () => {
    const server = new ApiServer();
    const listening = await server.listen();
    expect(listening.host).toBe("127.0.0.1");
    const version = (await (await fetch(`${listening.url}/version`)).json()) as {
      major: string;
      minor: string;
    };
    expect(version).toMatchObject({ major: "1", minor: "32" });
    const namespaces = (await (await fetch(`${listening.url}/api/v1/namespaces`)).json()) as {
      items: { metadata: { name: string } }[];
    };
    expect(namespaces.items.map((ns) => ns.metadata.name).sort()).toEqual([
      "default",
      "kube-node-lease",
      "kube-public",
      "kube-system",
    ]);
    await server.close();
    expect(listening.server.listening).toBe(false);
    await expect(fetch(`${listening.url}/version`)).rejects.toThrow();
    await expect(server.listen()).rejects.toThrow("ApiServer.listen: the server is closed");
  });
});
