import { configMaps, defineResource, type Namespace, namespaces, pods, secrets } from "@reconcile/api";
import { ApiServer, customResourceDefinitions } from "@reconcile/apiserver";
import { discoveryFromClient, type ResourceDiscovery } from "@reconcile/client";
import { FakeClock } from "@reconcile/clock";
import { FakeInformer } from "@reconcile/informer/testing";
import { describe, expect, it } from "vitest";
import { NamespaceController } from "./namespace-controller.js";

const start = Date.parse("2026-01-01T00:00:00Z");

async function setup(options: { discoverResources?: ResourceDiscovery } = {}) {
  const clock = new FakeClock(start);
  const server = new ApiServer({ clock, kubernetesService: false });
  const client = server.client();
  await client.resource(namespaces).create({ metadata: { name: "team" } });
  const informer = new FakeInformer<Namespace>();
  const controller = new NamespaceController({
    client,
    namespaceInformer: informer,
    clock,
    ...(options.discoverResources ? { discoverResources: options.discoverResources } : {}),
  });
  const markDeleted = async () => {
    await client.resource(namespaces).delete("team");
    informer.add(await client.resource(namespaces).get("team"));
  };
  return { clock, server, client, informer, controller, markDeleted };
}

function conditionsOf(namespace: Namespace) {
  return Object.fromEntries(
    (namespace.status?.conditions ?? []).map((c) => [
      c.type,
      { status: c.status, reason: c.reason, message: c.message },
    ]),
  );
}

describe("NamespaceController", () => {
  it("deletes every namespaced object of a Terminating namespace, then finalizes it away", async () => {
    const { client, controller, markDeleted } = await setup();
    await client.resource(configMaps, "team").create({ metadata: { name: "a" } });
    await client.resource(secrets, "team").create({ metadata: { name: "b" } });
    await client.resource(configMaps, "default").create({ metadata: { name: "kept" } });
    await markDeleted();
    expect(await controller.syncNamespace("team")).toBeUndefined();
    expect((await client.resource(configMaps, "team").list()).items).toEqual([]);
    expect((await client.resource(secrets, "team").list()).items).toEqual([]);
    expect((await client.resource(configMaps, "default").list()).items.map((c) => c.metadata?.name)).toEqual([
      "kept",
    ]);
    await expect(client.resource(namespaces).get("team")).rejects.toMatchObject({ status: { code: 404 } });
  });

  it("deletes the objects of custom kinds too, found through discovery", async () => {
    const { client, controller, markDeleted } = await setup();
    await client.resource(customResourceDefinitions).create({
      metadata: { name: "crontabs.stable.example.com" },
      spec: {
        group: "stable.example.com",
        scope: "Namespaced",
        names: { plural: "crontabs", kind: "CronTab" },
        versions: [
          {
            name: "v1",
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
          },
        ],
      },
    } as never);
    const crontabs = defineResource({
      group: "stable.example.com",
      version: "v1",
      kind: "CronTab",
      plural: "crontabs",
      namespaced: true,
    });
    // Served once the CRD is established, which the server's CRD controller does on its own.
    for (let i = 0; ; i++) {
      try {
        await client.resource(crontabs, "team").create({ metadata: { name: "nightly" } });
        break;
      } catch (error) {
        if (i > 200) throw error;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    }
    await markDeleted();
    expect(await controller.syncNamespace("team")).toBeUndefined();
    expect((await client.resource(crontabs).list()).items).toEqual([]);
    await expect(client.resource(namespaces).get("team")).rejects.toMatchObject({ status: { code: 404 } });
  });

  it("leaves a namespace alone that is not being deleted", async () => {
    const { client, controller, informer } = await setup();
    await client.resource(configMaps, "team").create({ metadata: { name: "a" } });
    informer.add(await client.resource(namespaces).get("team"));
    expect(await controller.syncNamespace("team")).toBeUndefined();
    expect((await client.resource(configMaps, "team").list()).items).toHaveLength(1);
    expect((await client.resource(namespaces).get("team")).spec?.finalizers).toEqual(["kubernetes"]);
  });

  it("waits estimate/2+1 s for terminating pods and records what remains", async () => {
    const { clock, client, controller, markDeleted } = await setup();
    await client.resource(pods, "team").create({
      metadata: { name: "web" },
      spec: {
        nodeName: "n1",
        terminationGracePeriodSeconds: 30,
        containers: [{ name: "c", image: "nginx" }],
      },
    });
    await markDeleted();
    expect(await controller.syncNamespace("team")).toEqual({ requeueAfterMs: 16_000 });
    const namespace = await client.resource(namespaces).get("team");
    expect(namespace.status?.phase).toBe("Terminating");
    expect(namespace.spec?.finalizers).toEqual(["kubernetes"]);
    expect(conditionsOf(namespace)).toEqual({
      NamespaceDeletionDiscoveryFailure: {
        status: "False",
        reason: "ResourcesDiscovered",
        message: "All resources successfully discovered",
      },
      NamespaceDeletionGroupVersionParsingFailure: {
        status: "False",
        reason: "ParsedGroupVersions",
        message: "All legacy kube types successfully parsed",
      },
      NamespaceDeletionContentFailure: {
        status: "False",
        reason: "ContentDeleted",
        message: "All content successfully deleted, may be waiting on finalization",
      },
      NamespaceContentRemaining: {
        status: "True",
        reason: "SomeResourcesRemain",
        message: "Some resources are remaining: pods. has 1 resource instances",
      },
      NamespaceFinalizersRemaining: {
        status: "False",
        reason: "ContentHasNoFinalizers",
        message: "All content-preserving finalizers finished",
      },
    });
    const firstTransition = namespace.status?.conditions?.[0]?.lastTransitionTime;
    expect(firstTransition).toBe("2026-01-01T00:00:00Z");
    // The pod's kubelet is gone; once the grace period has passed since the namespace's deletion the
    // estimate is zero and an undeletable item is an error.
    clock.setTime(start + 31_000);
    await expect(controller.syncNamespace("team")).rejects.toThrow(
      "unexpected items still remain in namespace: team for gvr: /v1, Resource=pods",
    );
    const failed = await client.resource(namespaces).get("team");
    expect(conditionsOf(failed).NamespaceDeletionContentFailure).toEqual({
      status: "True",
      reason: "ContentDeletionFailed",
      message:
        "Failed to delete all resource types, 1 remaining: unexpected items still remain in namespace: team for gvr: /v1, Resource=pods",
    });
    // A condition whose status did not flip keeps its transition time.
    expect(
      failed.status?.conditions?.find((c) => c.type === "NamespaceContentRemaining")?.lastTransitionTime,
    ).toBe("2026-01-01T00:00:00Z");
    await client.resource(pods, "team").delete("web", { gracePeriodSeconds: 0 });
    expect(await controller.syncNamespace("team")).toBeUndefined();
    await expect(client.resource(namespaces).get("team")).rejects.toMatchObject({ status: { code: 404 } });
  });

  it("finalizes in the same pass when pods were deleted at once, whatever their grace period", async () => {
    const { client, controller, markDeleted } = await setup();
    // Unbound: the API server removes it at once, so nothing is left to wait for.
    await client.resource(pods, "team").create({
      metadata: { name: "pending" },
      spec: { terminationGracePeriodSeconds: 30, containers: [{ name: "c", image: "nginx" }] },
    });
    await markDeleted();
    expect(await controller.syncNamespace("team")).toBeUndefined();
    await expect(client.resource(namespaces).get("team")).rejects.toMatchObject({ status: { code: 404 } });
  });

  it("gives objects held by finalizers 15 s and names the finalizers", async () => {
    const { client, controller, markDeleted } = await setup();
    await client
      .resource(configMaps, "team")
      .create({ metadata: { name: "held", finalizers: ["example.com/hold"] } });
    await markDeleted();
    expect(await controller.syncNamespace("team")).toEqual({ requeueAfterMs: 8_000 });
    const namespace = await client.resource(namespaces).get("team");
    expect(conditionsOf(namespace).NamespaceFinalizersRemaining).toEqual({
      status: "True",
      reason: "SomeFinalizersRemain",
      message:
        "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances",
    });
    expect(conditionsOf(namespace).NamespaceContentRemaining?.message).toBe(
      "Some resources are remaining: configmaps. has 1 resource instances",
    );
    const held = await client.resource(configMaps, "team").get("held");
    await client
      .resource(configMaps, "team")
      .update({ ...held, metadata: { ...held.metadata, finalizers: [] } });
    expect(await controller.syncNamespace("team")).toBeUndefined();
    await expect(client.resource(namespaces).get("team")).rejects.toMatchObject({ status: { code: 404 } });
  });

  it("keeps other spec finalizers, sorted, when it removes its own", async () => {
    const { client, controller, informer } = await setup();
    await client.resource(namespaces).create({
      metadata: { name: "shared" },
      spec: { finalizers: ["z.example.com/b", "a.example.com/a"] },
    });
    await client.resource(namespaces).delete("shared");
    informer.add(await client.resource(namespaces).get("shared"));
    expect(await controller.syncNamespace("shared")).toBeUndefined();
    const namespace = await client.resource(namespaces).get("shared");
    expect(namespace.spec?.finalizers).toEqual(["a.example.com/a", "z.example.com/b"]);
    expect(namespace.status?.phase).toBe("Terminating");
  });

  it("deletes what discovery found when some groups fail, records the failure and retries", async () => {
    const base = { current: undefined as ResourceDiscovery | undefined };
    const { client, controller, markDeleted } = await setup({
      discoverResources: async () => ({
        resources: (await base.current!()).resources,
        failedGroups: new Map([
          ["metrics.k8s.io/v1beta1", "the server is currently unable to handle the request"],
        ]),
      }),
    });
    base.current = discoveryFromClient(client);
    await client.resource(configMaps, "team").create({ metadata: { name: "a" } });
    await markDeleted();
    await expect(controller.syncNamespace("team")).rejects.toThrow(
      "unable to retrieve the complete list of server APIs: metrics.k8s.io/v1beta1: the server is currently unable to handle the request",
    );
    expect((await client.resource(configMaps, "team").list()).items).toEqual([]);
    const namespace = await client.resource(namespaces).get("team");
    expect(conditionsOf(namespace).NamespaceDeletionDiscoveryFailure).toEqual({
      status: "True",
      reason: "DiscoveryFailed",
      message:
        "Discovery failed for some groups, 1 failing: unable to retrieve the complete list of server APIs: metrics.k8s.io/v1beta1: the server is currently unable to handle the request",
    });
    expect(namespace.spec?.finalizers).toEqual(["kubernetes"]);
  });

  it("enqueues only namespaces being deleted, 5 s after it sees them", async () => {
    const { clock, client, controller, informer, markDeleted } = await setup();
    informer.add(await client.resource(namespaces).get("default"));
    await markDeleted();
    expect(controller.queue.len()).toBe(0);
    await clock.advance(5_000);
    expect(controller.queue.len()).toBe(1);
    controller.queue.shutDown();
  });
});
