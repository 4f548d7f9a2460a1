import { services } from "@reconcile/api";
import type { Service } from "kubernetes-types/core/v1.js";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";
import { MemoryStorage } from "../storage/memory-storage.js";
import { closeKubectlClusters, kubectlCluster } from "../testing/index.js";
import { NodePortAllocator } from "./service-ips.js";

// Node ports as kube-apiserver's Service REST storage hands them out
// (pkg/registry/core/service/storage/alloc.go, portallocator), after the
// cases of upstream's storage_test.go (TestCreateInitNodePorts,
// TestUpdateNodePorts, TestCreateInitHealthCheckNodePort, …).

function newServer(options: ConstructorParameters<typeof ApiServer>[0] = {}) {
  const server = new ApiServer({ kubernetesService: false, ...options });
  return { server, client: server.client().resource(services, "default") };
}

const nodePortsOf = (service: Service) => service.spec?.ports?.map((p) => p.nodePort);

describe("NodePortAllocator (upstream's port allocator with the static subrange)", () => {
  it("reads base-last and base+size; rejects what is not a port range", () => {
    expect(new NodePortAllocator().range).toBe("30000-32767");
    expect(new NodePortAllocator("20000+99").range).toBe("20000-20099");
    expect(new NodePortAllocator("8080").range).toBe("8080-8080");
    for (const bad of ["", "30000-", "32767-30000", "1-70000", "a-b"])
      expect(() => new NodePortAllocator(bad)).toThrow(`service node port range ${JSON.stringify(bad)}`);
  });

  it("picks from above the bottom band of min(max(16, size/32), 128) ports, then from the band", () => {
    // 30000-32767 has 2,768 ports: the band is 2768/32 = 86 ports, 30000-30085.
    const low = new NodePortAllocator("30000-32767", () => 0);
    expect(low.allocateNext()).toBe(30086);
    const high = new NodePortAllocator("30000-32767", () => 0.999_999);
    expect(high.allocateNext()).toBe(32767);
    // 100 ports: the band is 16 ports (100/32 < 16).
    const small = new NodePortAllocator("40000-40099", () => 0);
    for (let i = 0; i < 84; i++) expect(small.allocateNext()).toBe(40016 + i);
    expect(small.allocateNext()).toBe(40000);
    // 16 ports or fewer: no band.
    expect(new NodePortAllocator("50000-50015", () => 0).allocateNext()).toBe(50000);
  });

  it("says why a requested port cannot be had; a full range gives none", () => {
    const allocator = new NodePortAllocator("30000-30001", () => 0);
    allocator.allocate(30001);
    expect(() => allocator.allocate(30001)).toThrow("provided port is already allocated");
    expect(() => allocator.allocate(29999)).toThrow(
      "provided port is not in the valid range. The range of valid ports is 30000-30001",
    );
    expect(allocator.allocateNext()).toBe(30000);
    expect(allocator.allocateNext()).toBeUndefined();
    allocator.release(30001);
    expect(allocator.has(30001)).toBe(false);
    expect(allocator.used).toBe(1);
  });
});

describe("Service node ports on create", () => {
  it("a NodePort Service gets a port from the range per port; ports sharing a number share one", async () => {
    const { server, client } = newServer();
    try {
      const created = await client.create({
        metadata: { name: "web" },
        spec: {
          type: "NodePort",
          ports: [
            { name: "dns", port: 53, protocol: "TCP" },
            { name: "dns-udp", port: 53, protocol: "UDP" },
            { name: "http", port: 80 },
          ],
        },
      });
      const [tcp, udp, http] = nodePortsOf(created) as number[];
      expect(tcp).toBe(udp);
      expect(http).not.toBe(tcp);
      for (const port of [tcp, http]) {
        expect(port).toBeGreaterThanOrEqual(30086);
        expect(port).toBeLessThanOrEqual(32767);
        expect(server.serviceNodePorts.has(port!)).toBe(true);
      }
      expect(server.serviceNodePorts.used).toBe(2);
      expect(created.spec).toMatchObject({
        externalTrafficPolicy: "Cluster",
        internalTrafficPolicy: "Cluster",
      });
    } finally {
      await server.close();
    }
  });

  it("a requested port is honoured, or the create is a 422 naming the port and why", async () => {
    const { server, client } = newServer();
    try {
      const first = await client.create({
        metadata: { name: "a" },
        spec: { type: "NodePort", ports: [{ port: 80, nodePort: 30080 }] },
      });
      expect(nodePortsOf(first)).toEqual([30080]);
      await expect(
        client.create({
          metadata: { name: "b" },
          spec: { type: "NodePort", ports: [{ port: 80, nodePort: 30080 }] },
        }),
      ).rejects.toMatchObject({
        code: 422,
        reason: "Invalid",
        message:
          'Service "b" is invalid: spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated',
      });
      await expect(
        client.create({
          metadata: { name: "c" },
          spec: {
            type: "NodePort",
            ports: [
              { name: "a", port: 80 },
              { name: "b", port: 81, nodePort: 8080 },
            ],
          },
        }),
      ).rejects.toMatchObject({
        code: 422,
        message:
          'Service "c" is invalid: spec.ports[1].nodePort: Invalid value: 8080: provided port is not in the valid range. The range of valid ports is 30000-32767',
      });
      // The failed creates gave back what they took: only a's port and IP are held.
      expect(server.serviceNodePorts.used).toBe(1);
      expect(server.serviceIPs.used).toBe(1);
    } finally {
      await server.close();
    }
  });

  it("a ClusterIP Service may not name node ports; one node port twice for a protocol is a duplicate", async () => {
    const { server, client } = newServer();
    try {
      await expect(
        client.create({ metadata: { name: "a" }, spec: { ports: [{ port: 80, nodePort: 30080 }] } }),
      ).rejects.toMatchObject({
        code: 422,
        message:
          "Service \"a\" is invalid: spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'",
      });
      await expect(
        client.create({
          metadata: { name: "b" },
          spec: {
            type: "NodePort",
            ports: [
              { name: "x", port: 80, nodePort: 30080 },
              { name: "y", port: 81, nodePort: 30080 },
            ],
          },
        }),
      ).rejects.toMatchObject({
        code: 422,
        message: 'Service "b" is invalid: spec.ports[1].nodePort: Duplicate value: 30080',
      });
      expect(server.serviceNodePorts.used).toBe(0);
    } finally {
      await server.close();
    }
  });

  it("LoadBalancer: node ports unless allocateLoadBalancerNodePorts is false; Local traffic gets a health check port", async () => {
    const { server, client } = newServer();
    try {
      const local = await client.create({
        metadata: { name: "local" },
        spec: { type: "LoadBalancer", externalTrafficPolicy: "Local", ports: [{ port: 443 }] },
      });
      expect(nodePortsOf(local)?.[0]).toBeGreaterThanOrEqual(30000);
      const check = local.spec?.healthCheckNodePort ?? 0;
      expect(check).toBeGreaterThanOrEqual(30000);
      expect(check).not.toBe(nodePortsOf(local)?.[0]);
      const bare = await client.create({
        metadata: { name: "bare" },
        spec: {
          type: "LoadBalancer",
          allocateLoadBalancerNodePorts: false,
          ports: [
            { name: "a", port: 80 },
            { name: "b", port: 81, nodePort: 31000 },
          ],
        },
      });
      expect(nodePortsOf(bare)).toEqual([undefined, 31000]);
      expect(server.serviceNodePorts.used).toBe(3);
      await expect(
        client.create({
          metadata: { name: "odd" },
          spec: { type: "NodePort", healthCheckNodePort: 31001, ports: [{ port: 80 }] },
        }),
      ).rejects.toMatchObject({
        code: 422,
        message:
          "Service \"odd\" is invalid: spec.healthCheckNodePort: Invalid value: 31001: may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'",
      });
      await client.delete("local");
      await client.delete("bare");
      expect(server.serviceNodePorts.used).toBe(0);
    } finally {
      await server.close();
    }
  });

  it("a dry run takes nothing; a delete frees the ports for the next Service", async () => {
    const { server, client } = newServer();
    try {
      const body = {
        metadata: { name: "a" },
        spec: { type: "NodePort", ports: [{ port: 80, nodePort: 30080 }] },
      };
      const dry = await client.create(body, { dryRun: "All" });
      expect(nodePortsOf(dry)).toEqual([30080]);
      expect(server.serviceNodePorts.used).toBe(0);
      await client.create(body);
      await client.delete("a");
      const again = await client.create({ ...body, metadata: { name: "b" } });
      expect(nodePortsOf(again)).toEqual([30080]);
    } finally {
      await server.close();
    }
  });

  it("recovers the taken ports from storage at start", async () => {
    const storage = new MemoryStorage();
    const first = new ApiServer({ storage });
    await first
      .client()
      .resource(services, "default")
      .create({
        metadata: { name: "lb" },
        spec: {
          type: "LoadBalancer",
          externalTrafficPolicy: "Local",
          healthCheckNodePort: 30100,
          ports: [{ port: 80, nodePort: 30080 }],
        },
      });
    await first.close();
    const second = new ApiServer({ storage });
    try {
      const client = second.client().resource(services, "default");
      await expect(
        client.create({
          metadata: { name: "b" },
          spec: { type: "NodePort", ports: [{ port: 80, nodePort: 30100 }] },
        }),
      ).rejects.toMatchObject({
        code: 422,
        message: expect.stringContaining("provided port is already allocated"),
      });
      expect(second.serviceNodePorts.used).toBe(2);
      expect(second.serviceNodePorts.has(30080)).toBe(true);
    } finally {
      await second.close();
    }
  });
});

describe("Service node ports and cluster IPs on update", () => {
  it("a replace that leaves out the IP and node ports keeps them (patchAllocatedValues)", async () => {
    const { server, client } = newServer();
    try {
      const created = await client.create({
        metadata: { name: "web" },
        spec: { type: "NodePort", ports: [{ name: "http", port: 80 }] },
      });
      const replaced = await client.update({
        metadata: { name: "web", resourceVersion: created.metadata?.resourceVersion },
        spec: { type: "NodePort", ports: [{ name: "http", port: 80, targetPort: 8080 }] },
      } as Service);
      expect(replaced.spec?.clusterIP).toBe(created.spec?.clusterIP);
      expect(replaced.spec?.clusterIPs).toEqual(created.spec?.clusterIPs);
      expect(nodePortsOf(replaced)).toEqual(nodePortsOf(created));
      expect(server.serviceNodePorts.used).toBe(1);
    } finally {
      await server.close();
    }
  });

  it("NodePort to ClusterIP wipes and frees the node ports; back to NodePort takes new ones", async () => {
    const { server, client } = newServer();
    try {
      await client.create({
        metadata: { name: "web" },
        spec: { type: "NodePort", ports: [{ port: 80, nodePort: 30080 }] },
      });
      const cluster = await client.patch("web", { spec: { type: "ClusterIP" } }, { type: "merge" });
      expect(nodePortsOf(cluster)).toEqual([undefined]);
      expect(cluster.spec?.externalTrafficPolicy).toBeUndefined();
      expect(server.serviceNodePorts.used).toBe(0);
      const back = await client.patch("web", { spec: { type: "NodePort" } }, { type: "merge" });
      expect(nodePortsOf(back)?.[0]).toBeGreaterThanOrEqual(30000);
      expect(back.spec?.externalTrafficPolicy).toBe("Cluster");
      expect(server.serviceNodePorts.used).toBe(1);
    } finally {
      await server.close();
    }
  });

  it("a changed node port is taken and the old one freed once stored; a taken one leaves the Service as it was", async () => {
    const { server, client } = newServer();
    try {
      await client.create({
        metadata: { name: "a" },
        spec: { type: "NodePort", ports: [{ port: 80, nodePort: 30080 }] },
      });
      await client.create({
        metadata: { name: "b" },
        spec: { type: "NodePort", ports: [{ port: 80, nodePort: 30090 }] },
      });
      const moved = await client.patch(
        "a",
        { spec: { ports: [{ port: 80, nodePort: 30081 }] } },
        { type: "strategic-merge" },
      );
      expect(nodePortsOf(moved)).toEqual([30081]);
      expect(server.serviceNodePorts.has(30080)).toBe(false);
      expect(server.serviceNodePorts.has(30081)).toBe(true);
      await expect(
        client.patch("a", { spec: { ports: [{ port: 80, nodePort: 30090 }] } }, { type: "strategic-merge" }),
      ).rejects.toMatchObject({
        code: 422,
        message:
          'Service "a" is invalid: spec.ports[0].nodePort: Invalid value: 30090: provided port is already allocated',
      });
      // A dry-run move keeps both the old port held and the new one free.
      await client.patch(
        "a",
        { spec: { ports: [{ port: 80, nodePort: 30082 }] } },
        { type: "strategic-merge", dryRun: "All" },
      );
      expect(server.serviceNodePorts.has(30081)).toBe(true);
      expect(server.serviceNodePorts.has(30082)).toBe(false);
      // A write that fails after the hook (a stale resourceVersion) gives back what it took.
      const stale = await client.get("a");
      await client.patch("a", { metadata: { labels: { x: "y" } } }, { type: "merge" });
      await expect(
        client.update({
          ...stale,
          spec: { ...stale.spec, ports: [{ port: 80, nodePort: 30083, protocol: "TCP", targetPort: 80 }] },
        }),
      ).rejects.toMatchObject({ code: 409 });
      expect(server.serviceNodePorts.has(30083)).toBe(false);
      expect(server.serviceNodePorts.has(30081)).toBe(true);
      expect(server.serviceNodePorts.used).toBe(2);
    } finally {
      await server.close();
    }
  });

  it("a health check port follows externalTrafficPolicy", async () => {
    const { server, client } = newServer();
    try {
      await client.create({
        metadata: { name: "lb" },
        spec: { type: "LoadBalancer", ports: [{ port: 80 }] },
      });
      expect(server.serviceNodePorts.used).toBe(1);
      const local = await client.patch("lb", { spec: { externalTrafficPolicy: "Local" } }, { type: "merge" });
      expect(local.spec?.healthCheckNodePort).toBeGreaterThanOrEqual(30000);
      expect(server.serviceNodePorts.used).toBe(2);
      const cluster = await client.patch(
        "lb",
        { spec: { externalTrafficPolicy: "Cluster" } },
        { type: "merge" },
      );
      expect(cluster.spec?.healthCheckNodePort).toBeUndefined();
      expect(server.serviceNodePorts.used).toBe(1);
    } finally {
      await server.close();
    }
  });

  it("ExternalName gives its cluster IP back; leaving it takes a new one; the primary IP never changes", async () => {
    const { server, client } = newServer();
    try {
      const created = await client.create({ metadata: { name: "web" }, spec: { ports: [{ port: 80 }] } });
      await expect(
        client.patch(
          "web",
          { spec: { clusterIP: "10.96.0.77", clusterIPs: ["10.96.0.77"] } },
          { type: "merge" },
        ),
      ).rejects.toMatchObject({
        code: 422,
        message:
          'Service "web" is invalid: spec.clusterIPs[0]: Invalid value: []string{"10.96.0.77"}: may not change once set',
      });
      await expect(
        client.patch("web", { spec: { clusterIP: "10.96.0.77" } }, { type: "merge" }),
      ).rejects.toMatchObject({
        code: 422,
        message:
          'Service "web" is invalid: spec.clusterIPs[0]: Invalid value: []string{"10.96.0.77"}: may not change once set',
      });
      const external = await client.patch(
        "web",
        { spec: { type: "ExternalName", externalName: "example.com" } },
        { type: "merge" },
      );
      expect(external.spec?.clusterIP).toBeUndefined();
      expect(external.spec?.clusterIPs).toBeUndefined();
      expect(external.spec?.ipFamilies).toBeUndefined();
      expect(server.serviceIPs.used).toBe(0);
      const back = await client.patch(
        "web",
        { spec: { type: "ClusterIP", externalName: null } },
        { type: "merge" },
      );
      expect(back.spec?.clusterIP).toMatch(/^10\.(9[6-9]|10[0-9]|11[01])\./);
      expect(back.spec?.clusterIPs).toEqual([back.spec?.clusterIP]);
      expect(back.spec).toMatchObject({ ipFamilies: ["IPv4"], ipFamilyPolicy: "SingleStack" });
      expect(server.serviceIPs.used).toBe(1);
      expect(created.spec?.clusterIP).not.toBe(undefined);
    } finally {
      await server.close();
    }
  });
});

describe("node ports through kubectl", () => {
  afterEach(closeKubectlClusters);

  it("create service nodeport takes the port asked for, refuses it twice, and get svc prints it", async () => {
    const { kubectl } = await kubectlCluster();
    expect(
      await kubectl(["create", "service", "nodeport", "web", "--tcp=80:8080", "--node-port=30080"]),
    ).toEqual({
      code: 0,
      stdout: "service/web created\n",
      stderr: "",
    });
    expect(
      await kubectl(["create", "service", "nodeport", "copy", "--tcp=80:8080", "--node-port=30080"]),
    ).toEqual({
      code: 1,
      stdout: "",
      stderr:
        'error: failed to create NodePort service: Service "copy" is invalid: spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated\n',
    });
    await kubectl(["create", "service", "nodeport", "any", "--tcp=443:8443"]);
    const table = (await kubectl(["get", "svc", "web", "any", "--no-headers"])).stdout;
    expect(table).toMatch(/^web +NodePort +10\.\d+\.\d+\.\d+ +<none> +80:30080\/TCP +\d+s\n/);
    expect(table).toMatch(
      /\nany +NodePort +10\.\d+\.\d+\.\d+ +<none> +443:(30(08[6-9]|09\d|[1-9]\d\d)|3[12]\d{3})\/TCP +\d+s\n$/,
    );
    await kubectl(["patch", "svc", "web", "-p", '{"spec":{"type":"ClusterIP"}}']);
    expect((await kubectl(["get", "svc", "web", "-o", "jsonpath={.spec.ports[0]}"])).stdout).toBe(
      '{"name":"80-8080","port":80,"protocol":"TCP","targetPort":8080}',
    );
    expect(
      await kubectl(["create", "service", "nodeport", "copy", "--tcp=80:8080", "--node-port=30080"]),
    ).toMatchObject({
      code: 0,
    });
  });
});
