import { type Namespace, namespaces, serviceAccounts } from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import { FakeClock } from "@reconcile/clock";
import { FakeInformer } from "@reconcile/informer/testing";
import type { ServiceAccount } from "kubernetes-types/core/v1.js";
import { describe, expect, it } from "vitest";
import { ServiceAccountsController } from "./serviceaccounts-controller.js";

async function setup() {
  const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
  const server = new ApiServer({ clock, kubernetesService: false });
  const client = server.client();
  const namespaceInformer = new FakeInformer<Namespace>();
  const serviceAccountInformer = new FakeInformer<ServiceAccount>();
  const controller = new ServiceAccountsController({
    client,
    namespaceInformer,
    serviceAccountInformer,
    clock,
  });
  return { client, namespaceInformer, serviceAccountInformer, controller };
}

const names = (list: { items: readonly ServiceAccount[] }) => list.items.map((sa) => sa.metadata?.name);

describe("ServiceAccountsController", () => {
  it("creates the default ServiceAccount in an Active namespace, once", async () => {
    const { client, namespaceInformer, serviceAccountInformer, controller } = await setup();
    await client.resource(namespaces).create({ metadata: { name: "team" } });
    namespaceInformer.add(await client.resource(namespaces).get("team"));
    expect(controller.queue.len()).toBe(1);
    await controller.syncNamespace("team");
    const list = await client.resource(serviceAccounts, "team").list();
    expect(names(list)).toEqual(["default"]);
    expect(list.items[0]?.metadata?.generation).toBeUndefined();
    // Seen in the cache: no second create.
    serviceAccountInformer.add(list.items[0]!);
    await controller.syncNamespace("team");
    expect(names(await client.resource(serviceAccounts, "team").list())).toEqual(["default"]);
  });

  it("creates it again when it is deleted", async () => {
    const { client, namespaceInformer, serviceAccountInformer, controller } = await setup();
    namespaceInformer.add(await client.resource(namespaces).get("default"));
    await controller.syncNamespace("default");
    const created = await client.resource(serviceAccounts, "default").get("default");
    serviceAccountInformer.add(created);
    await client.resource(serviceAccounts, "default").delete("default");
    while (controller.queue.len() > 0) {
      const { item, shutdown } = await controller.queue.get();
      if (shutdown) break;
      controller.queue.done(item);
    }
    serviceAccountInformer.delete(created);
    expect(controller.queue.len()).toBe(1);
    await controller.syncNamespace("default");
    const again = await client.resource(serviceAccounts, "default").get("default");
    expect(again.metadata?.uid).not.toBe(created.metadata?.uid);
  });

  it("leaves Terminating and unknown namespaces alone and ignores the NamespaceTerminating refusal", async () => {
    const { client, namespaceInformer, controller } = await setup();
    await client.resource(namespaces).create({ metadata: { name: "team" } });
    const active = await client.resource(namespaces).get("team");
    await client.resource(namespaces).delete("team");
    const terminating = await client.resource(namespaces).get("team");
    namespaceInformer.add(terminating);
    await controller.syncNamespace("team");
    await controller.syncNamespace("missing");
    // A stale cache still says Active: the create is refused with the NamespaceTerminating cause, silently.
    namespaceInformer.update(active);
    await expect(controller.syncNamespace("team")).resolves.toBeUndefined();
    expect((await client.resource(serviceAccounts, "team").list()).items).toEqual([]);
  });

  it("reports other create failures so the namespace is retried", async () => {
    const { client, namespaceInformer, controller } = await setup();
    namespaceInformer.add({ metadata: { name: "gone" }, status: { phase: "Active" } });
    await expect(controller.syncNamespace("gone")).rejects.toThrow('namespaces "gone" not found');
    expect((await client.resource(serviceAccounts).list()).items).toEqual([]);
  });
});
