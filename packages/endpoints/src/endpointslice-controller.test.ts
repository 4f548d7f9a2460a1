import { nodes, pods, services } from "@reconcile/api";
import type { Service } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import { afterEach, describe, expect, it } from "vitest";
import { EndpointSliceController, planSlices, StaleEndpointSlicesError } from "./endpointslice-controller.js";
import { endpointSlices } from "./resources.js";
import {
  createNode,
  createPod,
  createService,
  type Harness,
  harness,
  namespace,
  pod,
  service,
} from "./test-harness.test-util.js";

let h: Harness;
let controller: EndpointSliceController;
afterEach(() => h.stop());

async function setup(maxEndpointsPerSlice?: number, serviceClusterIPRange?: string) {
  h = harness(serviceClusterIPRange);
  controller = EndpointSliceController.fromInformerFactory(h.factory, {
    client: h.client,
    maxEndpointsPerSlice,
  });
  await h.start();
  await createNode(h.client, "node-1", "zone-a");
}

const sliceIndexer = () => h.factory.forResource(endpointSlices).getIndexer();
const cachedSlices = () => sliceIndexer().byIndex("namespace", namespace);

/** Syncs once the caches hold `podCount` pods and every slice the controller wrote. */
async function sync(name: string, podCount: number): Promise<EndpointSlice[]> {
  const podIndexer = h.factory.forResource(pods).getIndexer();
  await h.until(() => podIndexer.byIndex("namespace", namespace).length === podCount, "pod cache");
  for (let attempt = 0; ; attempt++) {
    try {
      await controller.syncService(`${namespace}/${name}`);
      break;
    } catch (error) {
      if (attempt > 1000) throw error;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  const items = (await h.client.resource(endpointSlices, namespace).list()).items;
  await h.until(() => cachedSlices().length === items.length, "slice cache");
  return items.sort((a, b) => (b.endpoints?.length ?? 0) - (a.endpoints?.length ?? 0));
}

describe("EndpointSliceController.syncService", () => {
  it("writes one slice per address type with upstream's labels, owner, ports and endpoint conditions", async () => {
    await setup();
    const svc = await createService(
      h.client,
      service(
        "web",
        { selector: { app: "web" }, ports: [{ name: "http", port: 80, targetPort: 8080 }] },
        { team: "a" },
      ),
    );
    await createPod(h.client, pod("p0", { ip: "10.244.0.1" }));
    await createPod(h.client, pod("p1", { ip: "10.244.0.2", ready: false }));
    const [slice, ...rest] = await sync("web", 2);
    expect(rest).toEqual([]);
    expect(slice?.metadata?.generateName).toBe("web-");
    expect(slice?.metadata?.name).toMatch(/^web-.+/);
    expect(slice?.metadata?.labels).toEqual({
      team: "a",
      "kubernetes.io/service-name": "web",
      "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
    });
    expect(slice?.metadata?.ownerReferences).toEqual([
      {
        apiVersion: "v1",
        kind: "Service",
        name: "web",
        uid: svc.metadata?.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    expect(slice?.addressType).toBe("IPv4");
    expect(slice?.ports).toEqual([{ name: "http", port: 8080, protocol: "TCP" }]);
    expect(
      slice?.endpoints?.map((e) => [e.addresses[0], e.conditions, e.nodeName, e.zone, e.targetRef?.name]),
    ).toEqual([
      ["10.244.0.1", { ready: true, serving: true, terminating: false }, "node-1", "zone-a", "p0"],
      ["10.244.0.2", { ready: false, serving: false, terminating: false }, "node-1", "zone-a", "p1"],
    ]);
  });

  it("a dual-stack Service has slices of each family; a family the pods lack gets a placeholder", async () => {
    await setup(undefined, "10.96.0.0/16,fd00:10:96::/112");
    await createService(
      h.client,
      service("web", { selector: { app: "web" }, ports: [{ port: 80 }], ipFamilyPolicy: "PreferDualStack" }),
    );
    await createPod(h.client, pod("p0", { ip: "10.244.0.1" }));
    const placeholder = await sync("web", 1);
    expect(placeholder.map((s) => [s.addressType, s.endpoints?.length ?? 0, s.ports?.length ?? 0])).toEqual([
      ["IPv4", 1, 1],
      ["IPv6", 0, 0],
    ]);
    await createPod(h.client, pod("p1", { ip: "10.244.0.2", ips: ["10.244.0.2", "fd00:10:244::2"] }));
    const slices = await sync("web", 2);
    const byType = (type: string) => slices.filter((s) => s.addressType === type);
    expect(byType("IPv4").map((s) => s.endpoints?.map((e) => e.addresses[0]))).toEqual([
      ["10.244.0.1", "10.244.0.2"],
    ]);
    expect(byType("IPv6").map((s) => s.endpoints?.map((e) => e.addresses[0]))).toEqual([["fd00:10:244::2"]]);
    expect(slices).toHaveLength(2);
    // Single-stack again: the IPv6 slice goes.
    await h.client
      .resource(services, namespace)
      .patch("web", { spec: { ipFamilyPolicy: "SingleStack" } }, { type: "merge" });
    await h.until(
      () =>
        h.factory.forResource(services).getIndexer().getByKey(`${namespace}/web`)?.spec?.ipFamilies
          ?.length === 1,
      "service cache",
    );
    const after = await sync("web", 2);
    expect(after.map((s) => s.addressType)).toEqual(["IPv4"]);
    await createPod(h.client, pod("p2", { ip: "fd00:10:244::3", ips: ["fd00:10:244::3"] }));
    await h.client
      .resource(services, namespace)
      .patch("web", { spec: { ipFamilyPolicy: "PreferDualStack" } }, { type: "merge" });
    await h.until(
      () =>
        h.factory.forResource(services).getIndexer().getByKey(`${namespace}/web`)?.spec?.ipFamilies
          ?.length === 2,
      "service cache",
    );
    const again = await sync("web", 3);
    expect(again.filter((s) => s.addressType === "IPv6").map((s) => s.endpoints?.length)).toEqual([2]);
  });

  it("keeps terminating pods with terminating=true and ready=false (serving as their readiness)", async () => {
    await setup();
    await createService(h.client, service("web", { selector: { app: "web" }, ports: [{ port: 80 }] }));
    const p = await createPod(h.client, pod("p0", { ip: "10.244.0.1" }));
    await h.client
      .resource(pods, namespace)
      .update({ ...p, metadata: { ...p.metadata, finalizers: ["example.com/hold"] } });
    await h.client.resource(pods, namespace).delete("p0", { gracePeriodSeconds: 30 });
    await h.until(() =>
      Boolean(
        h.factory.forResource(pods).getIndexer().getByKey(`${namespace}/p0`)?.metadata?.deletionTimestamp,
      ),
    );
    const [slice] = await sync("web", 1);
    expect(slice?.endpoints?.[0]?.conditions).toEqual({ ready: false, serving: true, terminating: true });
  });

  it("splits 250 endpoints into slices of at most 100, and a pod change updates its slice in place", async () => {
    await setup();
    await createService(h.client, service("web", { selector: { app: "web" }, ports: [{ port: 80 }] }));
    for (let i = 0; i < 250; i++)
      await createPod(h.client, pod(`p${i}`, { ip: `10.244.${Math.floor(i / 200)}.${i % 200}` }));
    const slices = await sync("web", 250);
    expect(slices.map((s) => s.endpoints?.length)).toEqual([100, 100, 50]);
    const names = slices.map((s) => s.metadata?.name).sort();

    await h.client.resource(pods, namespace).delete("p7", { gracePeriodSeconds: 0 });
    const after = await sync("web", 249);
    expect(after.map((s) => s.metadata?.name).sort()).toEqual(names);
    expect(after.reduce((n, s) => n + (s.endpoints?.length ?? 0), 0)).toBe(249);
    expect(after.flatMap((s) => s.endpoints ?? []).some((e) => e.targetRef?.name === "p7")).toBe(false);
  });

  it("keeps exactly one placeholder slice for a Service without endpoints, and does not rewrite it", async () => {
    await setup();
    await createService(h.client, service("empty", { selector: { app: "none" }, ports: [{ port: 80 }] }));
    const [placeholder, ...rest] = await sync("empty", 0);
    expect(rest).toEqual([]);
    expect(placeholder?.endpoints).toEqual([]);
    // Upstream's placeholder has nil ports, which kube-apiserver writes as null.
    expect(placeholder?.ports).toBeNull();
    const again = await sync("empty", 0);
    expect(again.map((s) => s.metadata?.resourceVersion)).toEqual([placeholder?.metadata?.resourceVersion]);
  });

  it("retries while the slice cache lags its own writes, instead of creating duplicates", async () => {
    h = harness();
    // A slice cache that shows only what the test puts in it: it lags until told.
    const cache = new Map<string, EndpointSlice>();
    let indexers: Record<string, (slice: EndpointSlice) => readonly string[]> = {};
    const laggingSlices = {
      addEventHandler: () => undefined,
      hasSynced: () => true,
      getIndexer: () => ({
        getByKey: (key: string) => cache.get(key),
        byIndex: (index: string, value: string) =>
          [...cache.values()].filter((slice) => indexers[index]?.(slice).includes(value)),
        getIndexers: () => indexers,
        addIndexers: (more: typeof indexers) => {
          indexers = { ...indexers, ...more };
        },
      }),
    };
    controller = new EndpointSliceController({
      client: h.client,
      serviceInformer: h.factory.forResource(services),
      podInformer: h.factory.forResource(pods),
      nodeInformer: h.factory.forResource(nodes),
      endpointSliceInformer: laggingSlices as never,
    });
    await h.start();
    await createNode(h.client, "node-1", "zone-a");
    await createService(h.client, service("web", { selector: { app: "web" }, ports: [{ port: 80 }] }));
    await createPod(h.client, pod("p0", { ip: "10.244.0.1" }));
    await h.until(
      () => h.factory.forResource(pods).getIndexer().byIndex("namespace", namespace).length === 1,
    );
    await h.until(() => h.factory.forResource(nodes).getIndexer().getByKey("node-1") !== undefined);
    await controller.syncService(`${namespace}/web`);
    const [created] = (await h.client.resource(endpointSlices, namespace).list()).items;

    await expect(controller.syncService(`${namespace}/web`)).rejects.toThrow(
      new StaleEndpointSlicesError("default/web"),
    );
    expect((await h.client.resource(endpointSlices, namespace).list()).items).toHaveLength(1);

    cache.set(`${namespace}/${created?.metadata?.name}`, created!);
    await controller.syncService(`${namespace}/web`);
    const after = (await h.client.resource(endpointSlices, namespace).list()).items;
    expect(after.map((slice) => slice.metadata?.resourceVersion)).toEqual([
      created?.metadata?.resourceVersion,
    ]);
  });

  it("returns an error (and retries) for pods on a node the cache does not know", async () => {
    await setup();
    await createService(h.client, service("web", { selector: { app: "web" }, ports: [{ port: 80 }] }));
    await createPod(h.client, pod("p0", { ip: "10.244.0.1", node: "node-9" }));
    await h.until(
      () => h.factory.forResource(pods).getIndexer().byIndex("namespace", namespace).length === 1,
    );
    await expect(controller.syncService(`${namespace}/web`)).rejects.toThrow(
      "node node-9 is not in the node cache",
    );
  });
});

describe("planSlices", () => {
  const svc: Service = {
    metadata: { name: "web", namespace, uid: "u1" },
    spec: { clusterIP: "10.0.0.1", selector: {} },
  };
  const endpoint = (i: number) => ({
    addresses: [`10.0.0.${i}`],
    conditions: { ready: true, serving: true, terminating: false },
    targetRef: { kind: "Pod", namespace, name: `p${i}`, uid: `uid-${i}` },
  });
  const labels = {
    "kubernetes.io/service-name": "web",
    "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
  };

  it("reuses a slice that would be deleted instead of creating one when the port list changes", () => {
    const existing: EndpointSlice[] = [
      {
        metadata: { name: "web-abc", namespace, labels },
        addressType: "IPv4",
        ports: [{ name: "", port: 80, protocol: "TCP" }],
        endpoints: [endpoint(1)],
      },
    ];
    const ports = [{ name: "", port: 8080, protocol: "TCP" }];
    const plan = planSlices({
      service: svc,
      addressType: "IPv4",
      existing,
      groups: new Map([
        [
          JSON.stringify([["", 8080, "TCP", ""]]),
          { ports, endpoints: new Map([["uid-1/10.0.0.1", endpoint(1)]]) },
        ],
      ]),
      maxPerSlice: 100,
    });
    expect(plan.creates).toEqual([]);
    expect(plan.deletes).toEqual([]);
    expect(plan.updates.map((s) => [s.metadata?.name, s.ports, s.endpoints?.length])).toEqual([
      ["web-abc", ports, 1],
    ]);
  });

  it("fills a slice with room before creating a new one", () => {
    const ports = [{ name: "", port: 80, protocol: "TCP" }];
    const key = JSON.stringify([["", 80, "TCP", ""]]);
    const plan = planSlices({
      service: svc,
      addressType: "IPv4",
      existing: [
        {
          metadata: { name: "web-a", namespace, labels },
          addressType: "IPv4",
          ports,
          endpoints: [endpoint(1), endpoint(2)],
        },
      ],
      groups: new Map([
        [key, { ports, endpoints: new Map([1, 2, 3, 4].map((i) => [`uid-${i}/10.0.0.${i}`, endpoint(i)])) }],
      ]),
      maxPerSlice: 3,
    });
    expect(plan.updates.map((s) => s.endpoints?.map((e) => e.targetRef?.name))).toEqual([["p1", "p2", "p3"]]);
    expect(plan.creates.map((s) => s.endpoints?.map((e) => e.targetRef?.name))).toEqual([["p4"]]);
    expect(plan.deletes).toEqual([]);
  });
});
