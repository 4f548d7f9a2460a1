import {
  configMaps,
  type Deployment,
  deployments,
  events,
  isInvalid,
  type KubeObject,
  leases,
  namespaces,
  nodes,
  type Pod,
  pods,
  type ReplicaSet,
  replicaSets,
  type StatusError,
} from "@reconcile/api";
import { FakeClock } from "@reconcile/clock";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";
import { MemoryStorage } from "../storage/memory-storage.js";

const servers: ApiServer[] = [];
function newServer(options: ConstructorParameters<typeof ApiServer>[0] = {}): ApiServer {
  const server = new ApiServer({ clock: new FakeClock(Date.UTC(2026, 0, 1)), ...options });
  servers.push(server);
  return server;
}
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

async function rejection(promise: Promise<unknown>): Promise<StatusError> {
  try {
    await promise;
  } catch (error) {
    return error as StatusError;
  }
  throw new Error("expected a rejection");
}

function deployment(name: string, patch: Partial<Deployment["spec"]> = {}): Deployment {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name },
    spec: {
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: "app", image: "nginx:1.27" }] },
      },
      ...patch,
    },
  };
}

function replicaSet(name: string, ownerUid?: string, blockOwnerDeletion = true): ReplicaSet {
  return {
    metadata: {
      name,
      labels: { app: name },
      ...(ownerUid
        ? {
            ownerReferences: [
              {
                apiVersion: "apps/v1",
                kind: "Deployment",
                name: "web",
                uid: ownerUid,
                controller: true,
                blockOwnerDeletion,
              },
            ],
          }
        : {}),
    },
    spec: {
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: "app", image: "nginx" }] },
      },
    },
  };
}

function pod(
  name: string,
  options: { nodeName?: string; owner?: KubeObject; labels?: Record<string, string> } = {},
): Pod {
  const owner = options.owner;
  return {
    metadata: {
      name,
      labels: options.labels ?? {},
      ...(owner
        ? {
            ownerReferences: [
              {
                apiVersion: owner.apiVersion!,
                kind: owner.kind!,
                name: owner.metadata!.name!,
                uid: owner.metadata!.uid!,
                controller: true,
                blockOwnerDeletion: true,
              },
            ],
          }
        : {}),
    },
    spec: {
      containers: [{ name: "app", image: "nginx" }],
      ...(options.nodeName ? { nodeName: options.nodeName } : {}),
    },
  };
}

describe("defaulting", () => {
  it("defaults a Deployment as kube-apiserver does", async () => {
    const created = await newServer().client().resource(deployments, "default").create(deployment("web"));
    expect(created.spec).toMatchObject({
      replicas: 1,
      revisionHistoryLimit: 10,
      progressDeadlineSeconds: 600,
      strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: "25%", maxSurge: "25%" } },
    });
    expect(created.spec?.template.spec).toMatchObject({
      restartPolicy: "Always",
      terminationGracePeriodSeconds: 30,
      dnsPolicy: "ClusterFirst",
      schedulerName: "default-scheduler",
    });
    expect(created.spec?.template.spec?.containers[0]).toMatchObject({
      imagePullPolicy: "IfNotPresent",
      terminationMessagePath: "/dev/termination-log",
      terminationMessagePolicy: "File",
    });
    expect(created.status).toEqual({});
  });

  it("defaults a ReplicaSet to 1 replica and a Pod to restartPolicy Always, grace 30 and phase Pending", async () => {
    const client = newServer().client();
    const rs = await client.resource(replicaSets, "default").create(replicaSet("rs"));
    expect(rs.spec?.replicas).toBe(1);
    const created = await client.resource(pods, "default").create({
      metadata: { name: "p" },
      spec: { containers: [{ name: "c", image: "busybox" }] },
      status: { phase: "Running" },
    });
    expect(created.spec).toMatchObject({ restartPolicy: "Always", terminationGracePeriodSeconds: 30 });
    expect(created.spec?.containers[0]?.imagePullPolicy).toBe("Always");
    expect(created.status).toEqual({ phase: "Pending", qosClass: "BestEffort" });
  });
});

describe("validation", () => {
  const cases: {
    name: string;
    resource: typeof pods | typeof deployments | typeof replicaSets | typeof leases;
    object: KubeObject;
    causes: string[];
  }[] = [
    {
      name: "a pod without containers",
      resource: pods,
      object: { metadata: { name: "p" }, spec: { containers: [] } } as Pod,
      causes: ["spec.containers"],
    },
    {
      name: "a pod with a container without image",
      resource: pods,
      object: { metadata: { name: "p" }, spec: { containers: [{ name: "c" }] } } as Pod,
      causes: ["spec.containers[0].image"],
    },
    {
      name: "an invalid name",
      resource: pods,
      object: { metadata: { name: "Not_Valid" }, spec: { containers: [{ name: "c", image: "x" }] } } as Pod,
      causes: ["metadata.name"],
    },
    {
      name: "a missing name",
      resource: pods,
      object: { metadata: {}, spec: { containers: [{ name: "c", image: "x" }] } } as Pod,
      causes: ["metadata.name"],
    },
    {
      name: "a deployment whose selector does not match its template",
      resource: deployments,
      object: {
        ...deployment("web"),
        spec: { ...deployment("web").spec!, selector: { matchLabels: { app: "other" } } },
      } as Deployment,
      causes: ["spec.template.metadata.labels"],
    },
    {
      name: "a deployment without selector",
      resource: deployments,
      object: {
        ...deployment("web"),
        spec: { ...deployment("web").spec!, selector: undefined as never },
      } as Deployment,
      causes: ["spec.selector", "spec.selector"],
    },
    {
      name: "negative replicas",
      resource: deployments,
      object: deployment("web", { replicas: -1 }),
      causes: ["spec.replicas"],
    },
    {
      name: "a replica set with a template restartPolicy other than Always",
      resource: replicaSets,
      object: {
        ...replicaSet("rs"),
        spec: {
          ...replicaSet("rs").spec!,
          template: {
            metadata: { labels: { app: "rs" } },
            spec: { restartPolicy: "Never", containers: [{ name: "c", image: "x" }] },
          },
        },
      } as ReplicaSet,
      causes: ["spec.template.spec.restartPolicy"],
    },
    {
      name: "a lease with a zero duration",
      resource: leases,
      object: { metadata: { name: "l" }, spec: { leaseDurationSeconds: 0 } } as KubeObject,
      causes: ["spec.leaseDurationSeconds"],
    },
  ];
  for (const { name, resource, object, causes } of cases) {
    it(`rejects ${name} with 422 Invalid naming the field`, async () => {
      const server = newServer();
      const client = server.client().resource(resource as typeof pods, "default");
      await server.flush();
      const before = await server.storage.currentRevision();
      const error = await rejection(client.create(object as Pod));
      expect(isInvalid(error)).toBe(true);
      expect(error.status.code).toBe(422);
      expect(error.status.details?.causes?.map((c) => c.field)).toEqual(causes);
      expect(await server.storage.currentRevision()).toBe(before);
    });
  }

  it("words the Invalid message as kube-apiserver does", async () => {
    const error = await rejection(
      newServer()
        .client()
        .resource(deployments, "default")
        .create(deployment("web", { replicas: -1 })),
    );
    expect(error.message).toBe(
      'Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0',
    );
  });

  it("refuses to change a deployment's selector", async () => {
    const client = newServer().client().resource(deployments, "default");
    const created = await client.create(deployment("web"));
    const changed = structuredClone(created);
    changed.spec!.selector = { matchLabels: { app: "web", tier: "x" } };
    changed.spec!.template.metadata!.labels = { app: "web", tier: "x" };
    const error = await rejection(client.update(changed));
    expect(error.status.details?.causes?.map((c) => c.field)).toEqual(["spec.selector"]);
  });

  it("lets a pod update change images but not other spec fields", async () => {
    const client = newServer().client().resource(pods, "default");
    const created = await client.create(pod("p"));
    const newImage = structuredClone(created);
    newImage.spec!.containers[0]!.image = "nginx:2";
    const updated = await client.update(newImage);
    expect(updated.spec?.containers[0]?.image).toBe("nginx:2");
    const other = structuredClone(updated);
    other.spec!.restartPolicy = "Never";
    const error = await rejection(client.update(other));
    expect(error.status.details?.causes?.map((c) => c.field)).toEqual(["spec"]);
  });
});

describe("bad input", () => {
  const cases: { name: string; body: unknown; code: number; message: RegExp }[] = [
    { name: "a string body", body: "pod", code: 400, message: /must be a JSON object, got string/ },
    { name: "an array body", body: [], code: 400, message: /must be a JSON object, got an array/ },
    { name: "null", body: null, code: 400, message: /got null/ },
    {
      name: "the wrong kind",
      body: { kind: "Service", metadata: { name: "x" } },
      code: 400,
      message: /kind in the data \(Service\)/,
    },
    {
      name: "the wrong apiVersion",
      body: { apiVersion: "apps/v1", metadata: { name: "x" } },
      code: 400,
      message: /API version in the data \(apps\/v1\)/,
    },
    {
      name: "a number for a name",
      body: { metadata: { name: 7 } },
      code: 400,
      message: /metadata\.name: expected string, got number/,
    },
    {
      name: "a string for terminationGracePeriodSeconds",
      body: { metadata: { name: "p" }, spec: { containers: [], terminationGracePeriodSeconds: "30" } },
      code: 400,
      message: /spec\.terminationGracePeriodSeconds: expected integer, got string/,
    },
    {
      name: "labels that are not strings",
      body: { metadata: { name: "p", labels: { a: 1 } } },
      code: 400,
      message: /metadata\.labels\["a"\]: expected string, got number/,
    },
    {
      name: "an oversized body",
      body: {
        metadata: { name: "p", annotations: { big: "x".repeat(2 * 1024 * 1024) } },
        spec: { containers: [] },
      },
      code: 413,
      message: /Request entity too large/,
    },
    {
      name: "a container port beyond int32",
      body: {
        metadata: { name: "p" },
        spec: { containers: [{ name: "c", image: "i", ports: [{ containerPort: 3_000_000_000 }] }] },
      },
      code: 400,
      message: /spec\.containers\[0\]\.ports\[0\]\.containerPort: expected int32, got number 3000000000/,
    },
    {
      name: "a terminationGracePeriodSeconds beyond int64",
      body: { metadata: { name: "p" }, spec: { containers: [], terminationGracePeriodSeconds: 1e20 } },
      code: 400,
      message: /spec\.terminationGracePeriodSeconds: expected integer, got number 100000000000000000000/,
    },
    {
      name: "a null container",
      body: { metadata: { name: "p" }, spec: { containers: [null] } },
      code: 400,
      message: /spec\.containers\[0\]: expected object, got null/,
    },
    {
      name: "a null owner reference",
      body: { metadata: { name: "p", ownerReferences: [null] }, spec: { containers: [] } },
      code: 400,
      message: /metadata\.ownerReferences\[0\]: expected object, got null/,
    },
    {
      name: "a null finalizer",
      body: { metadata: { name: "p", finalizers: [null] }, spec: { containers: [] } },
      code: 400,
      message: /metadata\.finalizers\[0\]: expected string, got null/,
    },
    {
      name: "a resourceVersion on create",
      body: { metadata: { name: "p", resourceVersion: "5" } },
      code: 400,
      message: /resourceVersion should not be set/,
    },
  ];
  for (const { name, body, code, message } of cases) {
    it(`answers ${code} for ${name} and stores nothing`, async () => {
      const server = newServer();
      await server.flush();
      const before = await server.storage.currentRevision();
      const error = await rejection(
        server
          .client()
          .resource(pods, "default")
          .create(body as Pod),
      );
      expect(error.status.code).toBe(code);
      expect(error.message).toMatch(message);
      expect(await server.storage.currentRevision()).toBe(before);
    });
  }

  it("drops a __proto__ member of a body rather than storing it (a copy would turn it into a prototype)", async () => {
    const client = newServer().client().resource(pods, "default");
    const body = JSON.parse(
      '{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i"}],"__proto__":{"nodeName":"n1"}}}',
    );
    await client.create(body);
    const stored = await client.get("p");
    expect(stored.spec?.nodeName).toBeUndefined();
    expect(Object.getPrototypeOf(stored.spec)).toBe(Object.prototype);
  });

  it("answers 400 for a namespace that disagrees with the client's", async () => {
    const error = await rejection(
      newServer()
        .client()
        .resource(pods, "default")
        .create({ ...pod("p"), metadata: { name: "p", namespace: "kube-system" } }),
    );
    expect(error.status.code).toBe(400);
    expect(error.message).toBe(
      "the namespace of the provided object does not match the namespace sent on the request",
    );
  });

  it("answers 400 for a malformed selector, limit or resourceVersion", async () => {
    const client = newServer().client().resource(pods, "default");
    expect((await rejection(client.list({ labelSelector: "a in (" }))).status.code).toBe(400);
    expect((await rejection(client.list({ fieldSelector: "spec.bogus=x" }))).message).toBe(
      "field label not supported: spec.bogus",
    );
    expect((await rejection(client.list({ limit: -1 }))).status.code).toBe(400);
    expect((await rejection(client.list({ resourceVersion: "abc" }))).status.code).toBe(400);
    expect((await rejection(client.watch({ resourceVersion: "-3" }))).status.code).toBe(400);
    expect((await rejection(client.list({ limit: 1, continue: "!!not-a-token" }))).status.code).toBe(400);
  });

  it("answers 400 for a resourceVersionMatch without a resourceVersion, or with a continue token", async () => {
    const client = newServer().client().resource(pods, "default");
    for (const name of ["a", "b"]) await client.create(pod(name));
    const first = await client.list({ limit: 1 });
    const withContinue = await rejection(
      client.list({ limit: 1, continue: first.metadata.continue, resourceVersionMatch: "NotOlderThan" }),
    );
    expect(withContinue.status.code).toBe(400);
    expect(withContinue.message).toBe("resourceVersionMatch is forbidden when continue is provided");
    const withoutVersion = await rejection(client.list({ resourceVersionMatch: "NotOlderThan" }));
    expect(withoutVersion.status.code).toBe(400);
    expect(withoutVersion.message).toBe(
      "resourceVersionMatch is forbidden unless resourceVersion is provided",
    );
  });
});

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

describe("patch", () => {
  it("applies a merge patch (RFC 7386)", async () => {
    const client = newServer().client().resource(deployments, "default");
    await client.create(deployment("web"));
    const patched = await client.patch(
      "web",
      { spec: { replicas: 4 }, metadata: { labels: { a: "b" } } },
      { type: "merge" },
    );
    expect(patched.spec?.replicas).toBe(4);
    expect(patched.metadata?.labels).toEqual({ a: "b" });
    expect(patched.metadata?.generation).toBe(2);
    const removed = await client.patch("web", { metadata: { labels: null } }, { type: "merge" });
    expect(removed.metadata?.labels).toBeUndefined();
  });

  it("applies a JSON patch (RFC 6902) and answers 422 when a test fails", async () => {
    const client = newServer().client().resource(deployments, "default");
    await client.create(deployment("web"));
    const patched = await client.patch(
      "web",
      [
        { op: "test", path: "/spec/replicas", value: 1 },
        { op: "replace", path: "/spec/replicas", value: 2 },
        { op: "add", path: "/metadata/annotations", value: { "a/b": "c" } },
      ],
      { type: "json" },
    );
    expect(patched.spec?.replicas).toBe(2);
    expect(patched.metadata?.annotations).toEqual({ "a/b": "c" });
    const error = await rejection(
      client.patch("web", [{ op: "test", path: "/spec/replicas", value: 7 }], { type: "json" }),
    );
    expect(error.status.code).toBe(422);
  });

  it("merges containers by name in a strategic merge patch, as kubectl set image does", async () => {
    const client = newServer().client().resource(deployments, "default");
    const base = deployment("web");
    base.spec!.template.spec!.containers.push({ name: "sidecar", image: "envoy:1" });
    await client.create(base);
    const patched = await client.patch(
      "web",
      { spec: { template: { spec: { containers: [{ name: "sidecar", image: "envoy:2" }] } } } },
      { type: "strategic-merge" },
    );
    expect(patched.spec?.template.spec?.containers.map((c) => `${c.name}=${c.image}`)).toEqual([
      "app=nginx:1.27",
      "sidecar=envoy:2",
    ]);
    const deleted = await client.patch(
      "web",
      { spec: { template: { spec: { containers: [{ name: "sidecar", $patch: "delete" }] } } } },
      { type: "strategic-merge" },
    );
    expect(deleted.spec?.template.spec?.containers.map((c) => c.name)).toEqual(["app"]);
  });

  it("patches status through the status subresource only", async () => {
    const client = newServer().client().resource(deployments, "default");
    await client.create(deployment("web"));
    const patched = await client.patch(
      "web",
      { spec: { replicas: 9 }, status: { replicas: 1 } },
      { type: "merge", subresource: "status" },
    );
    expect(patched.spec?.replicas).toBe(1);
    expect(patched.status).toEqual({ replicas: 1 });
  });

  it("server-side apply creates when absent, merges another manager's fields and removes what its manager dropped", async () => {
    const client = newServer().client().resource(deployments, "default");
    const created = await client.patch("web", deployment("web"), { type: "apply", fieldManager: "kubectl" });
    expect(created.metadata?.generation).toBe(1);
    expect(created.metadata?.managedFields?.map((e) => [e.manager, e.operation])).toEqual([
      ["kubectl", "Apply"],
    ]);
    const scaled = await client.patch(
      "web",
      { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web" }, spec: { replicas: 3 } },
      { type: "apply", fieldManager: "scaler" },
    );
    expect(scaled.spec?.replicas).toBe(3);
    expect(scaled.spec?.template.spec?.containers.map((c) => c.name)).toEqual(["app"]);
    // kubectl drops the container's image from its configuration: nobody else owns it, so it goes.
    const dropped = deployment("web");
    delete dropped.spec!.template.spec!.containers[0]!.image;
    await expect(client.patch("web", dropped, { type: "apply", fieldManager: "kubectl" })).rejects.toThrow(
      /spec\.template\.spec\.containers\[0\]\.image: Required value/,
    );
  });

  it("answers 400 for a server-side apply that would create an object under another name than the URL's", async () => {
    const client = newServer().client().resource(deployments, "default");
    const error = await rejection(
      client.patch("web", deployment("api"), { type: "apply", fieldManager: "kubectl" }),
    );
    expect(error.status.code).toBe(400);
    expect(error.message).toBe("the name of the object (api) does not match the name on the URL (web)");
    expect((await client.list()).items).toEqual([]);
  });

  it("answers 400 for a patch that renames the object or moves it to another namespace", async () => {
    const client = newServer().client().resource(pods, "default");
    await client.create(pod("p"));
    const renamed = await rejection(client.patch("p", { metadata: { name: "q" } }, { type: "merge" }));
    expect(renamed.status.code).toBe(400);
    expect(renamed.message).toBe("the name of the object (q) does not match the name on the URL (p)");
    const moved = await rejection(
      client.patch("p", [{ op: "replace", path: "/metadata/namespace", value: "kube-system" }], {
        type: "json",
      }),
    );
    expect(moved.status.code).toBe(400);
    expect(moved.message).toBe(
      "the namespace of the provided object does not match the namespace sent on the request",
    );
  });

  it("answers 404 for a patch of a missing object", async () => {
    const client = newServer().client().resource(deployments, "default");
    expect((await rejection(client.patch("nope", {}, { type: "merge" }))).status.code).toBe(404);
  });
});

describe("scale subresource", () => {
  it("reads and writes replicas through Scale", async () => {
    const client = newServer().client().resource(deployments, "default");
    const created = await client.create(deployment("web", { replicas: 2 }));
    const scale = await client.getScale("web");
    expect(scale).toEqual({
      apiVersion: "autoscaling/v1",
      kind: "Scale",
      metadata: {
        name: "web",
        namespace: "default",
        uid: created.metadata?.uid,
        resourceVersion: created.metadata?.resourceVersion,
        creationTimestamp: created.metadata?.creationTimestamp,
      },
      spec: { replicas: 2 },
      status: { replicas: 0, selector: "app=web" },
    });
    const updated = await client.updateScale("web", { ...scale, spec: { replicas: 5 } });
    expect(updated.spec?.replicas).toBe(5);
    expect((await client.get("web")).spec?.replicas).toBe(5);
    const stale = await rejection(client.updateScale("web", { ...scale, spec: { replicas: 6 } }));
    expect(stale.status.code).toBe(409);
    const negative = await rejection(client.updateScale("web", { spec: { replicas: -1 } }));
    expect(negative.status.code).toBe(422);
  });

  it("answers 405 for a resource without a scale subresource", async () => {
    const client = newServer().client().resource(pods, "default");
    await client.create(pod("p"));
    expect((await rejection(client.getScale("p"))).status.code).toBe(405);
  });
});

describe("deletion", () => {
  it("refuses to delete default, kube-system and kube-public, as kube-apiserver's NamespaceLifecycle does", async () => {
    const client = newServer().client().resource(namespaces);
    for (const name of ["default", "kube-system", "kube-public"]) {
      const error = await rejection(client.delete(name));
      expect(error.status).toMatchObject({
        code: 403,
        reason: "Forbidden",
        message: `namespaces "${name}" is forbidden: this namespace may not be deleted`,
      });
      expect((await client.get(name)).metadata?.deletionTimestamp).toBeUndefined();
    }
    // kube-node-lease may be deleted: it goes Terminating until the namespace controller empties it.
    await client.delete("kube-node-lease");
    expect((await client.get("kube-node-lease")).status?.phase).toBe("Terminating");
  });

  it("removes an unbound pod at once", async () => {
    const client = newServer().client().resource(pods, "default");
    await client.create(pod("p"));
    await client.delete("p");
    expect((await rejection(client.get("p"))).status.code).toBe(404);
  });

  it("marks a bound pod with deletionTimestamp and its grace period until a delete with grace 0", async () => {
    const client = newServer().client().resource(pods, "default");
    await client.create(pod("p", { nodeName: "n1" }));
    const result = await client.delete("p");
    expect(result.kind).toBe("object");
    const marked = await client.get("p");
    expect(marked.metadata?.deletionTimestamp).toBe("2026-01-01T00:00:30Z");
    expect(marked.metadata?.deletionGracePeriodSeconds).toBe(30);
    // Pods carry no generation before 1.33, so the deletion does not count one.
    expect(marked.metadata?.generation).toBeUndefined();
    await client.delete("p", { gracePeriodSeconds: 5 });
    expect((await client.get("p")).metadata?.deletionGracePeriodSeconds).toBe(5);
    await client.delete("p", { gracePeriodSeconds: 0 });
    expect((await rejection(client.get("p"))).status.code).toBe(404);
  });

  it("keeps an object with finalizers until the last one is removed", async () => {
    const client = newServer().client().resource(leases, "default");
    await client.create({ metadata: { name: "l", finalizers: ["example.com/hold"] } });
    await client.delete("l");
    const held = await client.get("l");
    expect(held.metadata?.deletionTimestamp).toBeDefined();
    const added = await rejection(
      client.update({
        ...held,
        metadata: { ...held.metadata, finalizers: ["example.com/hold", "example.com/more"] },
      }),
    );
    expect(added.status.code).toBe(403);
    await client.update({ ...held, metadata: { ...held.metadata, finalizers: [] } });
    expect((await rejection(client.get("l"))).status.code).toBe(404);
  });

  it("refuses new objects in a namespace that is being deleted", async () => {
    const client = newServer().client();
    await client
      .resource(namespaces)
      .create({ metadata: { name: "team", finalizers: ["example.com/hold"] } });
    await client.resource(namespaces).delete("team");
    const error = await rejection(client.resource(pods, "team").create(pod("p")));
    expect(error.status.code).toBe(403);
    expect(error.message).toBe(
      'pods "p" is forbidden: unable to create new content in namespace team because it is being terminated',
    );
  });

  it("validates but stores nothing on dryRun", async () => {
    const server = newServer();
    const client = server.client().resource(pods, "default");
    await server.flush();
    const before = await server.storage.currentRevision();
    const dry = await client.create(pod("p"), { dryRun: "All" });
    expect(dry.metadata?.name).toBe("p");
    expect(
      (
        await rejection(
          client.create({ metadata: { name: "q" }, spec: { containers: [] } }, { dryRun: "All" }),
        )
      ).status.code,
    ).toBe(422);
    expect((await rejection(client.get("p"))).status.code).toBe(404);
    expect(await server.storage.currentRevision()).toBe(before);
  });

  it("checks uid and resourceVersion preconditions", async () => {
    const client = newServer().client().resource(leases, "default");
    const created = await client.create({ metadata: { name: "l" } });
    const wrongUid = await rejection(client.delete("l", { preconditions: { uid: "other" } }));
    expect(wrongUid.status.code).toBe(409);
    expect(wrongUid.message).toBe(
      `Operation cannot be fulfilled on leases.coordination.k8s.io "l": Precondition failed: UID in precondition: other, UID in object meta: ${created.metadata?.uid}`,
    );
    await client.delete("l", {
      preconditions: { uid: created.metadata?.uid, resourceVersion: created.metadata?.resourceVersion },
    });
  });

  it("refuses an update meant for an earlier object of the same name (uid precondition)", async () => {
    const client = newServer().client().resource(leases, "default");
    const first = await client.create({ metadata: { name: "l" } });
    await client.delete("l");
    const second = await client.create({ metadata: { name: "l" } });
    const error = await rejection(
      client.update({ ...first, metadata: { name: "l", uid: first.metadata!.uid!, labels: { a: "b" } } }),
    );
    expect(error.status.code).toBe(409);
    expect(error.message).toContain(
      `UID in precondition: ${first.metadata?.uid}, UID in object meta: ${second.metadata?.uid}`,
    );
  });

  it("deletes a collection by label selector", async () => {
    const client = newServer().client().resource(pods, "default");
    await client.create(pod("a", { labels: { app: "web" } }));
    await client.create(pod("b", { labels: { app: "db" } }));
    const deleted = await client.deleteCollection({ labelSelector: "app=web" });
    expect(deleted.items.map((p) => p.metadata?.name)).toEqual(["a"]);
    expect((await client.list()).items.map((p) => p.metadata?.name)).toEqual(["b"]);
  });
});

describe("garbage collection", () => {
  async function ownerWithDependents(server: ApiServer, options: { bound?: boolean } = {}) {
    const client = server.client();
    const owner = await client.resource(replicaSets, "default").create(replicaSet("rs"));
    const dependents = [];
    for (const name of ["p1", "p2"]) {
      dependents.push(
        await client
          .resource(pods, "default")
          .create(pod(name, { owner, ...(options.bound ? { nodeName: "n1" } : {}) })),
      );
    }
    return { owner, dependents };
  }

  it("Background: removes the owner at once and its dependents after", async () => {
    const server = newServer();
    await ownerWithDependents(server);
    await server.client().resource(replicaSets, "default").delete("rs", { propagationPolicy: "Background" });
    expect((await rejection(server.client().resource(replicaSets, "default").get("rs"))).status.code).toBe(
      404,
    );
    await server.flush();
    expect((await server.client().resource(pods, "default").list()).items).toEqual([]);
  });

  it("keeps a dependent whose owner is of a kind the server does not serve (kube-apiserver's collector cannot resolve it)", async () => {
    const server = newServer();
    const podClient = server.client().resource(pods, "default");
    await podClient.create({
      ...pod("p"),
      metadata: {
        name: "p",
        ownerReferences: [{ apiVersion: "example.com/v1", kind: "Widget", name: "w", uid: "widget-uid" }],
      },
    });
    await server.flush();
    expect((await podClient.list()).items.map((p) => p.metadata?.name)).toEqual(["p"]);
  });

  it("deletes a dependent whose owner reference points into another namespace (the owner counts as absent)", async () => {
    const server = newServer();
    const client = server.client();
    await client.resource(namespaces).create({ metadata: { name: "team" } });
    const owner = await client.resource(replicaSets, "default").create(replicaSet("rs"));
    const teamPods = client.resource(pods, "team");
    await teamPods.create(pod("p", { owner }));
    await server.flush();
    expect((await teamPods.list()).items).toEqual([]);
    expect((await client.resource(replicaSets, "default").get("rs")).metadata?.uid).toBe(owner.metadata?.uid);
  });

  it("Foreground: keeps the owner with the foregroundDeletion finalizer until blocking dependents are gone", async () => {
    const server = newServer();
    await ownerWithDependents(server, { bound: true });
    const rsClient = server.client().resource(replicaSets, "default");
    const podClient = server.client().resource(pods, "default");
    await rsClient.delete("rs", { propagationPolicy: "Foreground" });
    await server.flush();
    const waiting = await rsClient.get("rs");
    expect(waiting.metadata?.finalizers).toEqual(["foregroundDeletion"]);
    expect(waiting.metadata?.deletionTimestamp).toBeDefined();
    // The bound pods are terminating gracefully; the owner waits for them.
    const terminating = await podClient.list();
    expect(terminating.items.map((p) => Boolean(p.metadata?.deletionTimestamp))).toEqual([true, true]);
    for (const name of ["p1", "p2"]) await podClient.delete(name, { gracePeriodSeconds: 0 });
    await server.flush();
    expect((await rejection(rsClient.get("rs"))).status.code).toBe(404);
  });

  it("Orphan: removes the owner's reference from dependents and keeps them", async () => {
    const server = newServer();
    await ownerWithDependents(server);
    await server.client().resource(replicaSets, "default").delete("rs", { propagationPolicy: "Orphan" });
    await server.flush();
    expect((await rejection(server.client().resource(replicaSets, "default").get("rs"))).status.code).toBe(
      404,
    );
    const left = await server.client().resource(pods, "default").list();
    expect(left.items.map((p) => [p.metadata?.name, p.metadata?.ownerReferences])).toEqual([
      ["p1", undefined],
      ["p2", undefined],
    ]);
  });

  it("drops the reference to a deleted owner from a dependent that still has another owner", async () => {
    const server = newServer();
    const client = server.client();
    const first = await client.resource(replicaSets, "default").create(replicaSet("first"));
    const second = await client.resource(replicaSets, "default").create(replicaSet("second"));
    const shared = pod("shared");
    shared.metadata!.ownerReferences = [first, second].map((owner) => ({
      apiVersion: "apps/v1",
      kind: "ReplicaSet",
      name: owner.metadata!.name!,
      uid: owner.metadata!.uid!,
    }));
    await client.resource(pods, "default").create(shared);
    await client.resource(replicaSets, "default").delete("first");
    await server.flush();
    const left = await client.resource(pods, "default").get("shared");
    expect(left.metadata?.ownerReferences?.map((ref) => ref.name)).toEqual(["second"]);
  });

  it("cascades through several levels (Deployment → ReplicaSet → Pods)", async () => {
    const server = newServer();
    const client = server.client();
    const d = await client.resource(deployments, "default").create(deployment("web"));
    const rs = await client.resource(replicaSets, "default").create(replicaSet("rs", d.metadata?.uid));
    await client.resource(pods, "default").create(pod("p", { owner: rs }));
    await client.resource(deployments, "default").delete("web");
    await server.flush();
    expect((await client.resource(replicaSets).list()).items).toEqual([]);
    expect((await client.resource(pods).list()).items).toEqual([]);
  });

  it("judges what the storage already holds only once every owner is known", async () => {
    const storage = new MemoryStorage();
    const owner = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "owner", namespace: "default", uid: "uid-owner" },
    };
    const ref = (uid: string) => [{ apiVersion: "v1", kind: "Pod", name: "owner", uid }];
    // ConfigMaps sort before pods: the collector must not judge them before it has seen their owner.
    await storage.create("/core/configmaps/default/kept", {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "kept", namespace: "default", uid: "uid-kept", ownerReferences: ref("uid-owner") },
    });
    await storage.create("/core/configmaps/default/orphaned", {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: "orphaned",
        namespace: "default",
        uid: "uid-orphaned",
        ownerReferences: ref("uid-gone"),
      },
    });
    await storage.create("/core/pods/default/owner", owner);
    const server = newServer({ storage });
    await server.flush();
    const left = await server.client().resource(configMaps, "default").list();
    expect(left.items.map((cm) => cm.metadata?.name)).toEqual(["kept"]);
  });

  it("deletes what is in a namespace when the namespace is deleted", async () => {
    const server = newServer();
    const client = server.client();
    await client.resource(namespaces).create({ metadata: { name: "team" } });
    await client.resource(pods, "team").create(pod("p"));
    await client
      .resource(events, "team")
      .create({ metadata: { name: "e" }, involvedObject: { namespace: "team" } });
    await client.resource(namespaces).delete("team");
    // The namespace stays Terminating until its kubernetes finalizer is removed.
    const terminating = await client.resource(namespaces).get("team");
    await client.resource(namespaces).finalize!({ ...terminating, spec: { finalizers: [] } });
    await server.flush();
    expect((await client.resource(pods).list()).items).toEqual([]);
    expect((await client.resource(events).list()).items).toEqual([]);
  });
});

describe("resources", () => {
  it("stores nodes cluster-scoped and names namespaces with DNS labels", async () => {
    const client = newServer().client();
    const node = await client.resource(nodes).create({ metadata: { name: "node-1.example" } });
    expect(node.metadata?.namespace).toBeUndefined();
    const error = await rejection(client.resource(namespaces).create({ metadata: { name: "a.b" } }));
    expect(error.status.details?.causes?.map((c) => c.field)).toEqual(["metadata.name"]);
  });

  it("answers 404 for a resource the server does not serve", async () => {
    const client = newServer({ resources: [pods] }).client();
    const error = await rejection(client.resource(deployments, "default").list());
    expect(error.status.code).toBe(404);
  });
});
