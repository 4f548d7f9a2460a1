import {
  configMaps,
  deployments,
  type Namespace,
  namespaces,
  pods,
  StatusError,
  secrets,
  services,
} from "@reconcile/api";
import { describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";

function newServer(): ApiServer {
  return new ApiServer({ kubernetesService: false });
}

async function rejection(promise: Promise<unknown>): Promise<StatusError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!StatusError.isInstance(error)) throw new Error(`expected a StatusError, got ${String(error)}`);
  return error;
}

describe("namespace lifecycle (upstream NamespaceREST and NamespaceLifecycle admission)", () => {
  it("defaults spec.finalizers to [kubernetes] on create, appending it to finalizers given", async () => {
    const client = newServer().client().resource(namespaces);
    const plain = await client.create({ metadata: { name: "plain" } });
    expect(plain.spec).toEqual({ finalizers: ["kubernetes"] });
    expect(plain.status).toEqual({ phase: "Active" });
    const extra = await client.create({
      metadata: { name: "extra" },
      spec: { finalizers: ["example.com/x"] },
    });
    expect(extra.spec).toEqual({ finalizers: ["example.com/x", "kubernetes"] });
  });

  it("refuses spec.finalizers that are neither standard nor qualified", async () => {
    const client = newServer().client().resource(namespaces);
    const error = await rejection(
      client.create({ metadata: { name: "bad" }, spec: { finalizers: ["nope"] } }),
    );
    expect(error.status.code).toBe(422);
    expect(error.message).toContain(
      'spec.finalizers[0]: Invalid value: "nope": name is neither a standard finalizer name nor is it fully qualified',
    );
  });

  it("a DELETE marks the namespace Terminating and keeps it while spec.finalizers remain", async () => {
    const server = newServer();
    const client = server.client().resource(namespaces);
    await client.create({ metadata: { name: "team" } });
    const result = await client.delete("team");
    expect(result.kind).toBe("object");
    const marked = (result as { object: Namespace }).object;
    expect(marked.metadata?.deletionTimestamp).toBeDefined();
    expect(marked.status?.phase).toBe("Terminating");
    expect(marked.spec?.finalizers).toEqual(["kubernetes"]);
    const stored = await client.get("team");
    expect(stored.status?.phase).toBe("Terminating");
    // A second delete changes nothing while the kubernetes finalizer is there.
    await client.delete("team");
    expect((await client.get("team")).metadata?.resourceVersion).toBe(stored.metadata?.resourceVersion);
  });

  it("a plain update cannot change spec.finalizers; the finalize subresource can, and only that", async () => {
    const server = newServer();
    const client = server.client().resource(namespaces);
    const created = await client.create({ metadata: { name: "team" } });
    const updated = await client.update({ ...created, spec: { finalizers: [] } });
    expect(updated.spec).toEqual({ finalizers: ["kubernetes"] });
    const finalized = await client.finalize!({
      ...updated,
      metadata: { ...updated.metadata, labels: { ignored: "yes" } },
      spec: { finalizers: ["example.com/keep"] },
      status: { phase: "Terminating" },
    });
    expect(finalized.spec).toEqual({ finalizers: ["example.com/keep"] });
    expect(finalized.metadata?.labels).toEqual({ "kubernetes.io/metadata.name": "team" });
    expect(finalized.status).toEqual({ phase: "Active" });
  });

  it("finalizing a Terminating namespace with nothing left removes it", async () => {
    const server = newServer();
    const client = server.client().resource(namespaces);
    await client.create({ metadata: { name: "team" } });
    await client.delete("team");
    const marked = await client.get("team");
    await client.finalize!({ ...marked, spec: { finalizers: [] } });
    const error = await rejection(client.get("team"));
    expect(error.status.code).toBe(404);
  });

  it("metadata.finalizers hold the namespace after spec.finalizers are gone", async () => {
    const server = newServer();
    const client = server.client().resource(namespaces);
    await client.create({ metadata: { name: "team", finalizers: ["example.com/hold"] } });
    await client.delete("team");
    const marked = await client.get("team");
    const finalized = await client.finalize!({ ...marked, spec: { finalizers: [] } });
    expect(finalized.spec).toEqual({});
    expect(finalized.metadata?.finalizers).toEqual(["example.com/hold"]);
    await client.update({ ...finalized, metadata: { ...finalized.metadata, finalizers: [] } });
    expect((await rejection(client.get("team"))).status.code).toBe(404);
  });

  it("refuses new content in a Terminating namespace with upstream's 403 and cause; updates still pass", async () => {
    const server = newServer();
    const client = server.client();
    await client.resource(namespaces).create({ metadata: { name: "team" } });
    const existing = await client
      .resource(configMaps, "team")
      .create({ metadata: { name: "settings" }, data: { a: "1" } });
    await client.resource(namespaces).delete("team");
    const error = await rejection(client.resource(pods, "team").create({ metadata: { name: "web" } }));
    expect(error.status).toMatchObject({
      code: 403,
      reason: "Forbidden",
      message:
        'pods "web" is forbidden: unable to create new content in namespace team because it is being terminated',
      details: {
        name: "web",
        kind: "pods",
        causes: [
          {
            reason: "NamespaceTerminating",
            field: "metadata.namespace",
            message: "namespace team is being terminated",
          },
        ],
      },
    });
    const changed = await client.resource(configMaps, "team").update({ ...existing, data: { a: "2" } });
    expect(changed.data).toEqual({ a: "2" });
  });

  it("the system namespaces exist at start; default, kube-system and kube-public may not be deleted", async () => {
    const server = newServer();
    const client = server.client().resource(namespaces);
    const names = (await client.list()).items.map((ns) => ns.metadata?.name).sort();
    expect(names).toEqual(["default", "kube-node-lease", "kube-public", "kube-system"]);
    for (const name of ["default", "kube-system", "kube-public"]) {
      const error = await rejection(client.delete(name));
      expect(error.status.code).toBe(403);
      expect(error.message).toBe(`namespaces "${name}" is forbidden: this namespace may not be deleted`);
    }
    await client.delete("kube-node-lease");
    expect((await client.get("kube-node-lease")).status?.phase).toBe("Terminating");
  });
});

describe("metadata.generation (set only where upstream's strategy tracks the spec)", () => {
  it("is absent on ConfigMaps, Secrets, Services, Namespaces and Pods, and stays absent on update and delete", async () => {
    const client = newServer().client();
    const cm = await client
      .resource(configMaps, "default")
      .create({ metadata: { name: "c" }, data: { a: "1" } });
    expect(cm.metadata?.generation).toBeUndefined();
    const cm2 = await client.resource(configMaps, "default").update({ ...cm, data: { a: "2" } });
    expect(cm2.metadata?.generation).toBeUndefined();
    const secret = await client.resource(secrets, "default").create({ metadata: { name: "s" } });
    expect(secret.metadata?.generation).toBeUndefined();
    const service = await client
      .resource(services, "default")
      .create({ metadata: { name: "svc" }, spec: { ports: [{ port: 80 }] } });
    expect(service.metadata?.generation).toBeUndefined();
    const ns = await client
      .resource(namespaces)
      .create({ metadata: { name: "n", finalizers: ["example.com/x"] } });
    expect(ns.metadata?.generation).toBeUndefined();
    await client.resource(namespaces).delete("n");
    expect((await client.resource(namespaces).get("n")).metadata?.generation).toBeUndefined();
    const pod = await client
      .resource(pods, "default")
      .create({ metadata: { name: "p" }, spec: { containers: [{ name: "c", image: "nginx" }] } });
    expect(pod.metadata?.generation).toBeUndefined();
  });

  it("counts spec changes on Deployments", async () => {
    const client = newServer().client().resource(deployments, "default");
    const template = {
      metadata: { labels: { app: "web" } },
      spec: { containers: [{ name: "c", image: "nginx" }] },
    };
    const created = await client.create({
      metadata: { name: "web" },
      spec: { replicas: 1, selector: { matchLabels: { app: "web" } }, template },
    });
    expect(created.metadata?.generation).toBe(1);
    const scaled = await client.update({ ...created, spec: { ...created.spec!, replicas: 2 } });
    expect(scaled.metadata?.generation).toBe(2);
  });
});
