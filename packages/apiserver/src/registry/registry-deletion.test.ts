import { configMaps, deployments, events, leases, namespaces, pods, replicaSets } from "@reconcile/api";
import { afterEach, describe, expect, it } from "vitest";
import type { ApiServer } from "../api-server.js";
import { MemoryStorage } from "../storage/memory-storage.js";
import { closeServers, deployment, newServer, pod, rejection, replicaSet } from "./registry.test-util.js";

afterEach(closeServers);

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

  it("judges a dependent again when an update adds a reference to an absent owner, though its first owner stood", async () => {
    const server = newServer();
    const client = server.client();
    const owner = await client.resource(replicaSets, "default").create(replicaSet("owner"));
    const created = await client.resource(pods, "default").create(pod("p", { owner }));
    await server.flush();
    expect((await client.resource(pods, "default").get("p")).metadata?.ownerReferences).toHaveLength(1);
    created.metadata!.ownerReferences = [
      ...created.metadata!.ownerReferences!,
      {
        apiVersion: "apps/v1",
        kind: "ReplicaSet",
        name: "absent",
        uid: "00000000-0000-0000-0000-000000000001",
      },
    ];
    await client.resource(pods, "default").update(created);
    await server.flush();
    const left = await client.resource(pods, "default").get("p");
    expect(left.metadata?.ownerReferences?.map((ref) => ref.name)).toEqual(["owner"]);
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

  it("leaves Events out of the graph, as upstream's ignored resources: an owner's delete does not take them", async () => {
    const server = newServer();
    const client = server.client();
    const owner = await client.resource(configMaps, "default").create({ metadata: { name: "owner" } });
    const ownerReferences = [
      { apiVersion: "v1", kind: "ConfigMap", name: "owner", uid: owner.metadata!.uid! },
    ];
    await client
      .resource(events, "default")
      .create({ metadata: { name: "e", ownerReferences }, involvedObject: { namespace: "default" } });
    await client.resource(configMaps, "default").create({ metadata: { name: "dependent", ownerReferences } });
    await client.resource(configMaps, "default").delete("owner");
    await server.flush();
    expect((await client.resource(configMaps, "default").list()).items.map((o) => o.metadata?.name)).toEqual(
      [],
    );
    expect((await client.resource(events, "default").list()).items.map((o) => o.metadata?.name)).toEqual([
      "e",
    ]);
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
