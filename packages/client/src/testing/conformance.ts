import {
  type Deployment,
  deployments,
  isAlreadyExists,
  isConflict,
  isInvalid,
  isNotFound,
  type KubeObject,
  namespaces,
  type Pod,
  pods,
  StatusError,
  type WatchEvent,
} from "@reconcile/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Client, ResourceClient } from "../client.js";
import { listerWatcher } from "../lister-watcher.js";

/** What a conformance run needs: a client against a fresh server, and a way to shut it down. */
export interface ConformanceTarget {
  client: Client;
  close(): Promise<void>;
}

/**
 * The behaviour every `Client` implementation must show against a
 * Kubernetes-compatible server (the embedded one in process, the HTTP client
 * against the embedded server over HTTP, or a real cluster). Each test works
 * in a namespace of its own, so the suite can share one server.
 *
 * ```ts
 * describeClientConformance("in-process", async () => {
 *   const server = new ApiServer();
 *   return { client: server.client(), close: () => server.close() };
 * });
 * ```
 */
export function describeClientConformance(name: string, setup: () => Promise<ConformanceTarget>): void {
  describe(`Client conformance: ${name}`, () => {
    let target: ConformanceTarget;
    let counter = 0;
    beforeAll(async () => {
      target = await setup();
    });
    afterAll(async () => {
      await target?.close();
    });

    /** A fresh namespace for one test. */
    async function namespace(): Promise<string> {
      const ns = `conformance-${Date.now().toString(36)}-${counter++}`;
      await target.client.resource(namespaces).create({ metadata: { name: ns } });
      return ns;
    }

    async function podClient(): Promise<ResourceClient<Pod>> {
      return target.client.resource(pods, await namespace());
    }

    it("creates an object and reads back what the server stored", async () => {
      const client = await podClient();
      const created = await client.create(pod("web", { app: "web" }));
      expect(created.metadata?.name).toBe("web");
      expect(created.metadata?.namespace).toBe(client.namespace);
      expect(created.metadata?.uid).toBeTruthy();
      expect(created.metadata?.resourceVersion).toMatch(/^[0-9]+$/);
      expect(created.metadata?.creationTimestamp).toBeTruthy();
      expect(await client.get("web")).toEqual(created);
    });

    it("hands out objects the caller may change without changing the server's", async () => {
      const client = await podClient();
      const created = await client.create(pod("web", { app: "web" }));
      created.metadata!.labels!.app = "changed";
      const listed = await client.list();
      listed.items[0]!.metadata!.labels!.app = "changed";
      expect((await client.get("web")).metadata?.labels?.app).toBe("web");
    });

    it("fails with StatusErrors: 404 NotFound, 409 AlreadyExists, 409 Conflict, 422 Invalid", async () => {
      const client = await podClient();
      const created = await client.create(pod("web"));
      const notFound = await failure(client.get("missing"));
      expect(StatusError.isInstance(notFound) && isNotFound(notFound) && notFound.statusCode === 404).toBe(
        true,
      );
      const exists = await failure(client.create(pod("web")));
      expect(StatusError.isInstance(exists) && isAlreadyExists(exists) && exists.statusCode === 409).toBe(
        true,
      );
      await client.update(withLabels(created, { v: "2" }));
      const conflict = await failure(client.update(withLabels(created, { v: "3" })));
      expect(StatusError.isInstance(conflict) && isConflict(conflict) && conflict.statusCode === 409).toBe(
        true,
      );
      const invalid = await failure(client.create({ metadata: { name: "bad" }, spec: { containers: [] } }));
      expect(StatusError.isInstance(invalid) && isInvalid(invalid) && invalid.statusCode === 422).toBe(true);
      expect(
        (invalid as StatusError).details?.causes?.some((cause) => cause.field === "spec.containers"),
      ).toBe(true);
    });

    it("gives every write a higher resourceVersion", async () => {
      const client = await podClient();
      const versions: number[] = [];
      const a = await client.create(pod("a"));
      versions.push(Number(a.metadata?.resourceVersion));
      const b = await client.create(pod("b"));
      versions.push(Number(b.metadata?.resourceVersion));
      const a2 = await client.update(withLabels(a, { v: "2" }));
      versions.push(Number(a2.metadata?.resourceVersion));
      const deleted = await client.delete("b");
      if (deleted.kind === "object") versions.push(Number(deleted.object.metadata?.resourceVersion));
      for (let i = 1; i < versions.length; i++) expect(versions[i]).toBeGreaterThan(versions[i - 1]!);
    });

    it("bumps generation on spec changes only, and keeps status and spec apart", async () => {
      const client = target.client.resource(deployments, await namespace());
      const created = await client.create(deployment("web"));
      expect(created.metadata?.generation).toBe(1);
      const labeled = await client.update(withLabels(created, { a: "b" }));
      expect(labeled.metadata?.generation).toBe(1);
      const scaled = await client.update({
        ...labeled,
        spec: { ...labeled.spec!, replicas: 3 },
        status: { replicas: 7 },
      });
      expect(scaled.metadata?.generation).toBe(2);
      expect(scaled.status?.replicas).toBeUndefined();
      const status = await client.updateStatus({
        ...scaled,
        spec: { ...scaled.spec!, replicas: 9 },
        status: { replicas: 3 },
      });
      expect(status.spec?.replicas).toBe(3);
      expect(status.status?.replicas).toBe(3);
    });

    it("lists a namespace with label and field selectors", async () => {
      const client = await podClient();
      await client.create(pod("a", { app: "web" }));
      await client.create(pod("b", { app: "db" }));
      await client.create(pod("c", { app: "web" }));
      const names = (list: { items: KubeObject[] }) => list.items.map((item) => item.metadata?.name);
      expect(names(await client.list())).toEqual(["a", "b", "c"]);
      expect(names(await client.list({ labelSelector: "app=web" }))).toEqual(["a", "c"]);
      expect(names(await client.list({ labelSelector: "app notin (web)" }))).toEqual(["b"]);
      expect(names(await client.list({ fieldSelector: "metadata.name=b" }))).toEqual(["b"]);
    });

    it("paginates a list with limit and continue at one snapshot", async () => {
      const client = await podClient();
      for (const name of ["a", "b", "c", "d", "e"]) await client.create(pod(name));
      const first = await client.list({ limit: 2 });
      expect(first.items.map((p) => p.metadata?.name)).toEqual(["a", "b"]);
      expect(first.metadata.continue).toBeTruthy();
      await client.create(pod("bb"));
      const seen = [...first.items];
      let token = first.metadata.continue;
      while (token) {
        const page = await client.list({ limit: 2, continue: token });
        expect(page.metadata.resourceVersion).toBe(first.metadata.resourceVersion);
        seen.push(...page.items);
        token = page.metadata.continue;
      }
      expect(seen.map((p) => p.metadata?.name)).toEqual(["a", "b", "c", "d", "e"]);
    });

    it("watches from a resourceVersion: the later changes, in order, each with its own resourceVersion", async () => {
      const client = await podClient();
      const a = await client.create(pod("a"));
      const controller = new AbortController();
      const watch = await client.watch({
        resourceVersion: a.metadata?.resourceVersion,
        signal: controller.signal,
      });
      const b = await client.create(pod("b"));
      const b2 = await client.update(withLabels(b, { v: "2" }));
      const gone = await client.delete("a");
      const events = await take(watch, 3, controller);
      expect(events.map(describeEvent)).toEqual([
        `ADDED b@${b.metadata?.resourceVersion}`,
        `MODIFIED b@${b2.metadata?.resourceVersion}`,
        `DELETED a@${gone.kind === "object" ? gone.object.metadata?.resourceVersion : "?"}`,
      ]);
    });

    it("starts a watch without a resourceVersion with ADDED events for what exists", async () => {
      const client = await podClient();
      await client.create(pod("a"));
      await client.create(pod("b"));
      const controller = new AbortController();
      const watch = await client.watch({ signal: controller.signal });
      await client.create(pod("c"));
      const events = await take(watch, 3, controller);
      expect(events.map((e) => `${e.type} ${(e.object as KubeObject).metadata?.name}`).sort()).toEqual([
        "ADDED a",
        "ADDED b",
        "ADDED c",
      ]);
    });

    it("reports objects leaving and entering a watch's label selector as DELETED and ADDED", async () => {
      const client = await podClient();
      const created = await client.create(pod("a", { app: "db" }));
      const controller = new AbortController();
      const watch = await client.watch({
        resourceVersion: created.metadata?.resourceVersion,
        labelSelector: "app=web",
        signal: controller.signal,
      });
      const web = await client.update(withLabels(created, { app: "web" }));
      await client.update(withLabels(web, { app: "db" }));
      const events = await take(watch, 2, controller);
      expect(events.map((e) => e.type)).toEqual(["ADDED", "DELETED"]);
    });

    it("ends a watch's iteration when its signal aborts", async () => {
      const client = await podClient();
      const controller = new AbortController();
      const watch = await client.watch({ resourceVersion: "0", signal: controller.signal });
      const iterating = (async () => {
        const seen: WatchEvent<Pod>[] = [];
        for await (const event of watch) seen.push(event);
        return seen;
      })();
      controller.abort();
      expect(await iterating).toEqual([]);
    });

    it("applies merge, JSON and strategic merge patches", async () => {
      const client = target.client.resource(deployments, await namespace());
      const base = deployment("web");
      base.spec!.template.spec!.containers.push({ name: "sidecar", image: "envoy:1" });
      await client.create(base);
      const merged = await client.patch(
        "web",
        { metadata: { labels: { tier: "front" } } },
        { type: "merge" },
      );
      expect(merged.metadata?.labels).toEqual({ tier: "front" });
      const json = await client.patch("web", [{ op: "replace", path: "/spec/replicas", value: 2 }], {
        type: "json",
      });
      expect(json.spec?.replicas).toBe(2);
      const strategic = await client.patch(
        "web",
        { spec: { template: { spec: { containers: [{ name: "app", image: "nginx:2" }] } } } },
        { type: "strategic-merge" },
      );
      expect(strategic.spec?.template.spec?.containers.map((c) => `${c.name}=${c.image}`)).toEqual([
        "app=nginx:2",
        "sidecar=envoy:1",
      ]);
    });

    it("reads and writes the scale subresource", async () => {
      const client = target.client.resource(deployments, await namespace());
      await client.create(deployment("web"));
      const scale = await client.getScale("web");
      expect(scale.kind).toBe("Scale");
      expect(scale.spec?.replicas).toBe(1);
      expect(scale.status?.selector).toBe("app=web");
      const updated = await client.updateScale("web", { ...scale, spec: { replicas: 4 } });
      expect(updated.spec?.replicas).toBe(4);
      expect((await client.get("web")).spec?.replicas).toBe(4);
    });

    it("deletes one object and a collection by label selector", async () => {
      const client = await podClient();
      await client.create(pod("a", { app: "web" }));
      await client.create(pod("b", { app: "web" }));
      await client.create(pod("c", { app: "db" }));
      await client.delete("a");
      expect(isNotFound(await failure(client.get("a")))).toBe(true);
      await client.deleteCollection({ labelSelector: "app=web" });
      expect((await client.list()).items.map((p) => p.metadata?.name)).toEqual(["c"]);
      expect(isNotFound(await failure(client.delete("a")))).toBe(true);
    });

    it("rejects a call whose signal has already aborted", async () => {
      const client = await podClient();
      const controller = new AbortController();
      controller.abort(new Error("cancelled by the caller"));
      await expect(client.get("x", { signal: controller.signal })).rejects.toThrow("cancelled by the caller");
    });

    it("serves an informer's ListerWatcher: a list, then a watch from the list's resourceVersion", async () => {
      const client = await podClient();
      await client.create(pod("a", { app: "web" }));
      await client.create(pod("b", { app: "db" }));
      const lw = listerWatcher(target.client, pods, {
        namespace: client.namespace,
        labelSelector: "app=web",
      });
      const list = await lw.list({});
      expect(list.items.map((p) => p.metadata?.name)).toEqual(["a"]);
      const controller = new AbortController();
      const watch = await lw.watch({
        resourceVersion: list.metadata.resourceVersion,
        signal: controller.signal,
      });
      await client.create(pod("c", { app: "db" }));
      await client.create(pod("d", { app: "web" }));
      const events = await take(watch, 1, controller);
      expect(events.map((e) => `${e.type} ${(e.object as KubeObject).metadata?.name}`)).toEqual(["ADDED d"]);
    });
  });
}

function pod(name: string, labels: Record<string, string> = {}): Pod {
  return { metadata: { name, labels }, spec: { containers: [{ name: "app", image: "nginx:1.27" }] } };
}

function deployment(name: string): Deployment {
  return {
    metadata: { name },
    spec: {
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: "app", image: "nginx:1.27" }] },
      },
    },
  };
}

function withLabels<T extends KubeObject>(object: T, labels: Record<string, string>): T {
  return { ...object, metadata: { ...object.metadata, labels } };
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected the call to fail");
}

/** Reads `count` events, then aborts the watch. */
async function take<T extends KubeObject>(
  watch: AsyncIterable<WatchEvent<T>>,
  count: number,
  controller: AbortController,
): Promise<WatchEvent<T>[]> {
  const events: WatchEvent<T>[] = [];
  if (count === 0) return events;
  for await (const event of watch) {
    if (event.type === "BOOKMARK") continue;
    events.push(event);
    if (events.length === count) break;
  }
  controller.abort();
  return events;
}

function describeEvent(event: WatchEvent<KubeObject>): string {
  const meta = (event.object as KubeObject).metadata;
  return `${event.type} ${meta?.name}@${meta?.resourceVersion}`;
}
