import { pods, services } from "@reconcile/api";
import type { Endpoints } from "kubernetes-types/core/v1.js";
import { afterEach, describe, expect, it } from "vitest";
import { EndpointsController, truncateToCapacity } from "./endpoints-controller.js";
import { endpointsResource } from "./resources.js";
import {
  createPod,
  createService,
  type Harness,
  harness,
  namespace,
  pod,
  service,
} from "./test-harness.test-util.js";

let h: Harness;
let controller: EndpointsController;
afterEach(() => h.stop());

async function setup() {
  h = harness();
  controller = EndpointsController.fromInformerFactory(h.factory, { client: h.client });
  await h.start();
}

/** Waits until the caches hold `n` pods and the Service, then syncs it and returns its Endpoints (undefined if none). */
async function sync(name: string, podCount: number): Promise<Endpoints | undefined> {
  const podIndexer = h.factory.forResource(pods).getIndexer();
  await h.until(() => podIndexer.byIndex("namespace", namespace).length === podCount, "pod cache");
  await h.until(
    () => h.factory.forResource(services).getIndexer().getByKey(`${namespace}/${name}`) !== undefined,
  );
  await controller.syncService(`${namespace}/${name}`);
  const list = await h.client.resource(endpointsResource, namespace).list();
  return list.items.find((e) => e.metadata?.name === name);
}

const targetRef = (name: string) => ({ kind: "Pod", namespace, name, uid: expect.any(String) });

describe("EndpointsController.syncService (upstream endpoints_controller_test cases)", () => {
  it("leaves a Service without a selector alone (PreserveNoSelector)", async () => {
    await setup();
    await createService(h.client, service("foo", { ports: [{ port: 80 }] }));
    await createPod(h.client, pod("p0", { ip: "10.244.0.1" }));
    expect(await sync("foo", 1)).toBeUndefined();
  });

  it("an empty selector selects every pod of the namespace (EmptySelectorSelectsAll)", async () => {
    await setup();
    await createService(
      h.client,
      service("foo", { selector: {}, ports: [{ port: 80, protocol: "TCP", targetPort: 8080 }] }),
    );
    await createPod(h.client, pod("p0", { ip: "10.244.0.1", labels: { any: "thing" } }));
    const endpoints = await sync("foo", 1);
    expect(endpoints?.subsets).toEqual([
      {
        addresses: [{ ip: "10.244.0.1", nodeName: "node-1", targetRef: targetRef("p0") }],
        ports: [{ port: 8080, protocol: "TCP" }],
      },
    ]);
  });

  it("lists ready pods under addresses and unready ones under notReadyAddresses, sorted by IP", async () => {
    await setup();
    await createService(
      h.client,
      service("foo", { selector: { app: "web" }, ports: [{ name: "http", port: 80, targetPort: 8080 }] }),
    );
    await createPod(h.client, pod("p1", { ip: "10.244.0.2" }));
    await createPod(h.client, pod("p0", { ip: "10.244.0.1" }));
    await createPod(h.client, pod("p2", { ip: "10.244.0.3", ready: false }));
    await createPod(h.client, pod("other", { ip: "10.244.0.9", labels: { app: "db" } }));
    const endpoints = await sync("foo", 4);
    expect(endpoints?.subsets).toEqual([
      {
        addresses: [
          { ip: "10.244.0.1", nodeName: "node-1", targetRef: targetRef("p0") },
          { ip: "10.244.0.2", nodeName: "node-1", targetRef: targetRef("p1") },
        ],
        notReadyAddresses: [{ ip: "10.244.0.3", nodeName: "node-1", targetRef: targetRef("p2") }],
        ports: [{ name: "http", port: 8080, protocol: "TCP" }],
      },
    ]);
  });

  it("publishNotReadyAddresses lists every pod as ready", async () => {
    await setup();
    await createService(
      h.client,
      service("foo", { selector: { app: "web" }, publishNotReadyAddresses: true, ports: [{ port: 80 }] }),
    );
    await createPod(h.client, pod("p0", { ip: "10.244.0.1", ready: false }));
    const endpoints = await sync("foo", 1);
    expect(endpoints?.subsets?.[0]?.addresses?.map((a) => a.ip)).toEqual(["10.244.0.1"]);
    expect(endpoints?.subsets?.[0]?.notReadyAddresses).toBeUndefined();
  });

  it("leaves out pods that failed or succeeded, have no IP, or are terminating", async () => {
    await setup();
    await createService(h.client, service("foo", { selector: { app: "web" }, ports: [{ port: 80 }] }));
    await createPod(h.client, pod("failed", { ip: "10.244.0.1", phase: "Failed" }));
    await createPod(h.client, pod("succeeded", { ip: "10.244.0.2", phase: "Succeeded" }));
    await createPod(h.client, pod("no-ip"));
    const terminating = await createPod(h.client, pod("terminating", { ip: "10.244.0.3" }));
    await h.client.resource(pods, namespace).update({
      ...terminating,
      metadata: { ...terminating.metadata, finalizers: ["example.com/hold"] },
    });
    await h.client.resource(pods, namespace).delete("terminating", { gracePeriodSeconds: 30 });
    await createPod(h.client, pod("running", { ip: "10.244.0.4" }));
    const podIndexer = h.factory.forResource(pods).getIndexer();
    await h.until(() =>
      Boolean(podIndexer.getByKey(`${namespace}/terminating`)?.metadata?.deletionTimestamp),
    );
    const endpoints = await sync("foo", 5);
    expect(endpoints?.subsets).toEqual([
      {
        addresses: [{ ip: "10.244.0.4", nodeName: "node-1", targetRef: targetRef("running") }],
        ports: [{ port: 80, protocol: "TCP" }],
      },
    ]);
  });

  it("resolves a named targetPort per pod by name and protocol, leaving out pods without it", async () => {
    await setup();
    await createService(
      h.client,
      service("foo", {
        selector: { app: "web" },
        ports: [{ name: "web", port: 80, protocol: "TCP", targetPort: "http" }],
      }),
    );
    await createPod(
      h.client,
      pod("p0", { ip: "10.244.0.1", ports: [{ name: "http", containerPort: 8080 }] }),
    );
    await createPod(
      h.client,
      pod("p1", { ip: "10.244.0.2", ports: [{ name: "http", containerPort: 9090 }] }),
    );
    await createPod(
      h.client,
      pod("udp", { ip: "10.244.0.3", ports: [{ name: "http", containerPort: 8080, protocol: "UDP" }] }),
    );
    await createPod(h.client, pod("none", { ip: "10.244.0.4" }));
    const endpoints = await sync("foo", 4);
    expect(endpoints?.subsets).toEqual([
      {
        addresses: [{ ip: "10.244.0.1", nodeName: "node-1", targetRef: targetRef("p0") }],
        ports: [{ name: "web", port: 8080, protocol: "TCP" }],
      },
      {
        addresses: [{ ip: "10.244.0.2", nodeName: "node-1", targetRef: targetRef("p1") }],
        ports: [{ name: "web", port: 9090, protocol: "TCP" }],
      },
    ]);
  });

  it("labels a headless Service's Endpoints and keeps its pods in a subset without ports; hostname when the subdomain names the Service", async () => {
    await setup();
    await createService(
      h.client,
      service("db", { clusterIP: "None", selector: { app: "db" } }, { tier: "data" }),
    );
    await createPod(
      h.client,
      pod("db-0", { ip: "10.244.0.5", labels: { app: "db" }, hostname: "db-0", subdomain: "db" }),
    );
    const endpoints = await sync("db", 1);
    expect(endpoints?.metadata?.labels).toEqual({ tier: "data", "service.kubernetes.io/headless": "" });
    expect(endpoints?.subsets).toEqual([
      {
        addresses: [{ ip: "10.244.0.5", nodeName: "node-1", hostname: "db-0", targetRef: targetRef("db-0") }],
      },
    ]);
  });

  it("writes nothing when the Endpoints already say it, and deletes them with the Service", async () => {
    await setup();
    await createService(h.client, service("foo", { selector: { app: "web" }, ports: [{ port: 80 }] }));
    await createPod(h.client, pod("p0", { ip: "10.244.0.1" }));
    const first = await sync("foo", 1);
    const endpointsIndexer = h.factory.forResource(endpointsResource).getIndexer();
    await h.until(() => endpointsIndexer.getByKey(`${namespace}/foo`) !== undefined);
    const second = await sync("foo", 1);
    expect(second?.metadata?.resourceVersion).toBe(first?.metadata?.resourceVersion);

    await h.client.resource(services, namespace).delete("foo");
    await h.until(
      () => h.factory.forResource(services).getIndexer().getByKey(`${namespace}/foo`) === undefined,
    );
    await controller.syncService(`${namespace}/foo`);
    expect((await h.client.resource(endpointsResource, namespace).list()).items).toEqual([]);
    // Deleting what is already gone is fine.
    await controller.syncService(`${namespace}/foo`);
  });

  it("follows readiness while running: a pod turning unready moves to notReadyAddresses", async () => {
    await setup();
    await createService(h.client, service("foo", { selector: { app: "web" }, ports: [{ port: 80 }] }));
    const p0 = await createPod(h.client, pod("p0", { ip: "10.244.0.1" }));
    const abort = new AbortController();
    const running = controller.run({ signal: abort.signal, workers: 1 });
    const endpointsIndexer = h.factory.forResource(endpointsResource).getIndexer();
    await h.until(() => endpointsIndexer.getByKey(`${namespace}/foo`)?.subsets?.[0]?.addresses?.length === 1);
    await h.client.resource(pods, namespace).updateStatus({
      ...p0,
      status: { ...p0.status, conditions: [{ type: "Ready", status: "False" }] },
    });
    await h.until(
      () => endpointsIndexer.getByKey(`${namespace}/foo`)?.subsets?.[0]?.notReadyAddresses?.length === 1,
    );
    expect(endpointsIndexer.getByKey(`${namespace}/foo`)?.subsets?.[0]?.addresses).toBeUndefined();
    abort.abort();
    await running;
  });
});

describe("truncateToCapacity", () => {
  const addresses = (n: number, base: number) =>
    Array.from({ length: n }, (_, i) => ({ ip: `10.${base}.${Math.floor(i / 250)}.${i % 250}` }));

  it("keeps ready addresses first and marks the object truncated", () => {
    const { subsets, truncated } = truncateToCapacity(
      [
        { addresses: addresses(800, 1), notReadyAddresses: addresses(300, 2), ports: [{ port: 80 }] },
        { addresses: addresses(100, 3), ports: [{ port: 81 }] },
      ],
      1000,
    );
    expect(truncated).toBe(true);
    expect(subsets.map((s) => [s.addresses?.length, s.notReadyAddresses?.length ?? 0])).toEqual([
      [800, 100],
      [100, 0],
    ]);
  });

  it("is a no-op at or under capacity", () => {
    const subsets = [{ addresses: addresses(1000, 1) }];
    expect(truncateToCapacity(subsets, 1000)).toEqual({ subsets, truncated: false });
  });
});
