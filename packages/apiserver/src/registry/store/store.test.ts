import {
  configMaps,
  defineResource,
  type KubeObject,
  namespaces,
  type StatusError,
  services,
} from "@reconcile/api";
import { FakeClock } from "@reconcile/clock";
import { describe, expect, it } from "vitest";
import { definitionFor } from "../../kinds/builtin.js";
import { defineKind } from "../../kinds/definition.js";
import { ClusterIPAllocator } from "../../kinds/service-ips.js";
import { MemoryStorage } from "../../storage/memory-storage.js";
import { ResourceDefinitions } from "../definitions.js";
import { Registry } from "../registry.js";

function newRegistry() {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const storage = new MemoryStorage({ clock });
  const serviceIPs = new ClusterIPAllocator("10.96.0.0/28", () => 0);
  const registry = new Registry({
    storage,
    clock,
    definitions: new ResourceDefinitions([namespaces, configMaps, services].map(definitionFor)),
    maxObjectBytes: 1 << 20,
    bookmarkIntervalMs: 60_000,
    serviceIPs,
  });
  return { registry, storage, serviceIPs };
}

async function rejection(promise: Promise<unknown>): Promise<StatusError> {
  try {
    await promise;
  } catch (error) {
    return error as StatusError;
  }
  throw new Error("expected a rejection");
}

const service = (name: string, clusterIP?: string): KubeObject =>
  ({
    metadata: { name },
    spec: { ports: [{ port: 80 }], ...(clusterIP === undefined ? {} : { clusterIP }) },
  }) as KubeObject;

describe("dry run (the store's writer decorator)", () => {
  it("creates nothing and gives a Service's cluster IP back", async () => {
    const { registry, storage, serviceIPs } = newRegistry();
    await registry.create(namespaces, undefined, { metadata: { name: "default" } });
    const revision = await storage.currentRevision();
    const answer = await registry.create(services, "default", service("web", "10.96.0.5"), { dryRun: "All" });
    expect(answer.metadata).toMatchObject({ name: "web", namespace: "default" });
    expect(answer.metadata?.resourceVersion).toBeUndefined();
    expect((answer as { spec?: { clusterIP?: string } }).spec?.clusterIP).toBe("10.96.0.5");
    expect(serviceIPs.used).toBe(0);
    expect(await storage.currentRevision()).toBe(revision);
    // The address is free: a real create may take it.
    const created = await registry.create(services, "default", service("web", "10.96.0.5"));
    expect((created as { spec?: { clusterIP?: string } }).spec?.clusterIP).toBe("10.96.0.5");
    expect(serviceIPs.used).toBe(1);
  });

  it("answers a delete with the object as it was, not deleted, and keeps it and its cluster IP", async () => {
    const { registry, storage, serviceIPs } = newRegistry();
    await registry.create(namespaces, undefined, { metadata: { name: "default" } });
    const created = await registry.create(services, "default", service("web"));
    const outcome = await registry.deleteWithOutcome(services, "default", "web", { dryRun: "All" });
    expect(outcome).toEqual({ object: created, deleted: false });
    expect(await registry.get(services, "default", "web")).toEqual(created);
    expect(serviceIPs.used).toBe(1);
    expect(await storage.currentRevision()).toBe(Number(created.metadata?.resourceVersion));
  });

  it("answers a graceful delete with the stored object, unmarked", async () => {
    const { registry } = newRegistry();
    await registry.create(namespaces, undefined, { metadata: { name: "default" } });
    await registry.create(configMaps, "default", {
      metadata: { name: "held", finalizers: ["example.com/hold"] },
    });
    const stored = await registry.get(configMaps, "default", "held");
    const outcome = await registry.deleteWithOutcome(configMaps, "default", "held", { dryRun: "All" });
    expect(outcome).toEqual({ object: stored, deleted: false });
    expect((await registry.get(configMaps, "default", "held")).metadata?.deletionTimestamp).toBeUndefined();
  });

  it("answers an update that would complete a deletion with the object, and keeps it", async () => {
    const { registry } = newRegistry();
    await registry.create(namespaces, undefined, { metadata: { name: "default" } });
    await registry.create(configMaps, "default", {
      metadata: { name: "held", finalizers: ["example.com/hold"] },
    });
    const marked = (await registry.deleteWithOutcome(configMaps, "default", "held")).object;
    expect(marked.metadata?.deletionTimestamp).toBe("2026-01-01T00:00:00Z");
    const answer = await registry.patch(
      configMaps,
      "default",
      "held",
      "merge",
      { metadata: { finalizers: null } },
      { dryRun: "All" },
    );
    expect(answer.metadata?.finalizers).toBeUndefined();
    expect(await registry.get(configMaps, "default", "held")).toEqual(marked);
  });
});

describe("one store per definition", () => {
  const widgets = defineResource({
    group: "example.com",
    version: "v1",
    kind: "Widget",
    plural: "widgets",
    namespaced: false,
  });

  it("serves a kind added at run time, answers 404 once it is removed, and serves it again when added back", async () => {
    const { registry } = newRegistry();
    expect((await rejection(registry.list(widgets, undefined))).status.code).toBe(404);
    registry.definitions.add(defineKind({ descriptor: widgets }));
    await registry.create(widgets, undefined, { metadata: { name: "a" } });
    expect((await registry.list(widgets, undefined)).items.map((w) => w.metadata?.name)).toEqual(["a"]);
    registry.definitions.remove(widgets);
    const gone = await rejection(registry.get(widgets, undefined, "a"));
    expect(gone.status).toMatchObject({
      code: 404,
      message: "the server could not find the requested resource (widgets.example.com)",
    });
    registry.definitions.add(defineKind({ descriptor: widgets }));
    expect((await registry.get(widgets, undefined, "a")).metadata?.name).toBe("a");
  });

  it("uses the definition served now: a replaced definition's strategy applies from the next request", async () => {
    const { registry } = newRegistry();
    registry.definitions.add(defineKind({ descriptor: widgets }));
    await registry.create(widgets, undefined, { metadata: { name: "a" } });
    registry.definitions.remove(widgets);
    registry.definitions.add(
      defineKind({
        descriptor: widgets,
        strategy: {
          validate: (_object, errors) => errors.forbidden("spec", "widgets are closed"),
        },
      }),
    );
    const refused = await rejection(registry.create(widgets, undefined, { metadata: { name: "b" } }));
    expect(refused.status).toMatchObject({ code: 422, reason: "Invalid" });
    expect(refused.status.message).toContain("spec: Forbidden: widgets are closed");
  });
});
