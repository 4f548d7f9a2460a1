import { services } from "@reconcile/api";
import { describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";
import { MemoryStorage } from "../storage/memory-storage.js";
import { ClusterIPAllocator } from "./service-ips.js";

describe("Service defaults (upstream SetDefaults_Service)", () => {
  it("fills type, session affinity, traffic policy, IP families, port protocol and targetPort", async () => {
    const server = new ApiServer({ serviceClusterIPRange: "10.0.0.0/24", kubernetesService: false });
    server.serviceIPs.allocate("web", "10.0.0.1");
    try {
      const created = await server
        .client()
        .resource(services, "default")
        .create({
          metadata: { name: "web", namespace: "default" },
          spec: {
            selector: { app: "web" },
            ports: [
              { name: "http", port: 80 },
              { name: "dns", port: 53, protocol: "UDP", targetPort: "dns" },
            ],
          },
        });
      expect(created.spec).toEqual({
        selector: { app: "web" },
        ports: [
          { name: "http", port: 80, protocol: "TCP", targetPort: 80 },
          { name: "dns", port: 53, protocol: "UDP", targetPort: "dns" },
        ],
        type: "ClusterIP",
        sessionAffinity: "None",
        internalTrafficPolicy: "Cluster",
        ipFamilyPolicy: "SingleStack",
        ipFamilies: ["IPv4"],
        clusterIP: created.spec?.clusterIP,
        clusterIPs: [created.spec?.clusterIP],
      });
      // Automatic picks come from above the /24's static band (10.0.0.1–10.0.0.16).
      const last = Number(created.spec?.clusterIP?.split(".")[3]);
      expect(created.spec?.clusterIP).toMatch(/^10\.0\.0\.\d+$/);
      expect(last).toBeGreaterThan(16);
      expect(last).toBeLessThan(255);
    } finally {
      await server.close();
    }
  });

  it("LoadBalancer, ClientIP affinity, headless without selector, ExternalName", async () => {
    const server = new ApiServer();
    const client = server.client().resource(services, "default");
    try {
      const lb = await client.create({
        metadata: { name: "lb" },
        spec: { type: "LoadBalancer", sessionAffinity: "ClientIP", ports: [{ port: 443, targetPort: 0 }] },
      });
      expect(lb.spec).toMatchObject({
        externalTrafficPolicy: "Cluster",
        internalTrafficPolicy: "Cluster",
        allocateLoadBalancerNodePorts: true,
        sessionAffinityConfig: { clientIP: { timeoutSeconds: 10800 } },
        ports: [{ port: 443, targetPort: 443, protocol: "TCP" }],
      });
      const headless = await client.create({ metadata: { name: "db" }, spec: { clusterIP: "None" } });
      // Upstream's exception: headless without a selector names both families, even on a single-stack cluster.
      expect(headless.spec).toMatchObject({
        ipFamilyPolicy: "RequireDualStack",
        ipFamilies: ["IPv4", "IPv6"],
      });
      const external = await client.create({
        metadata: { name: "ext" },
        spec: { type: "ExternalName", externalName: "example.com" },
      });
      expect(external.spec?.ipFamilies).toBeUndefined();
      expect(external.spec?.internalTrafficPolicy).toBeUndefined();
    } finally {
      await server.close();
    }
  });
});

describe("cluster IPs (upstream's bitmap allocator and RESTAllocStuff)", () => {
  it("default/kubernetes holds the range's first IP; a new Service gets a free one, released on delete", async () => {
    const server = new ApiServer();
    const client = server.client().resource(services, "default");
    try {
      const kubernetes = await client.get("kubernetes");
      expect(kubernetes.metadata?.labels).toEqual({ component: "apiserver", provider: "kubernetes" });
      expect(kubernetes.spec).toMatchObject({
        type: "ClusterIP",
        clusterIP: "10.96.0.1",
        clusterIPs: ["10.96.0.1"],
        ports: [{ name: "https", port: 443, protocol: "TCP", targetPort: 6443 }],
      });
      const web = await client.create({ metadata: { name: "web" }, spec: { ports: [{ port: 80 }] } });
      const ip = web.spec?.clusterIP ?? "";
      expect(web.spec?.clusterIPs).toEqual([ip]);
      expect(server.serviceIPs.used).toBe(2);
      await expect(
        client.create({ metadata: { name: "copy" }, spec: { clusterIP: ip, ports: [{ port: 80 }] } }),
      ).rejects.toMatchObject({
        code: 422,
        message: `Service "copy" is invalid: spec.clusterIPs: Invalid value: []string{"${ip}"}: failed to allocate IP ${ip}: provided IP is already allocated`,
      });
      await client.delete("web");
      expect(server.serviceIPs.used).toBe(1);
      const copy = await client.create({
        metadata: { name: "copy" },
        spec: { clusterIP: ip, ports: [{ port: 80 }] },
      });
      expect(copy.spec?.clusterIP).toBe(ip);
    } finally {
      await server.close();
    }
  });

  it("headless and ExternalName take none; an IP outside the range is a 422; a dry run or failed create keeps nothing", async () => {
    const server = new ApiServer({ kubernetesService: false });
    const client = server.client().resource(services, "default");
    try {
      const headless = await client.create({ metadata: { name: "db" }, spec: { clusterIP: "None" } });
      expect(headless.spec).toMatchObject({ clusterIP: "None", clusterIPs: ["None"] });
      const external = await client.create({
        metadata: { name: "ext" },
        spec: { type: "ExternalName", externalName: "example.com" },
      });
      expect(external.spec?.clusterIP).toBeUndefined();
      await expect(
        client.create({ metadata: { name: "out" }, spec: { clusterIP: "10.0.0.5", ports: [{ port: 80 }] } }),
      ).rejects.toMatchObject({
        code: 422,
        message:
          'Service "out" is invalid: spec.clusterIPs: Invalid value: []string{"10.0.0.5"}: failed to allocate IP 10.0.0.5: the provided IP (10.0.0.5) is not in the valid range. The range of valid IPs is 10.96.0.0/12',
      });
      await client.create(
        { metadata: { name: "dry" }, spec: { clusterIP: "10.96.0.50", ports: [{ port: 80 }] } },
        { dryRun: "All" },
      );
      await expect(
        client.create({ metadata: { name: "db" }, spec: { clusterIP: "10.96.0.51", ports: [{ port: 80 }] } }),
      ).rejects.toMatchObject({ code: 409 });
      expect(server.serviceIPs.used).toBe(0);
    } finally {
      await server.close();
    }
  });

  it("recovers the taken IPs from storage at start", async () => {
    const storage = new MemoryStorage();
    const first = new ApiServer({ storage });
    const web = await first
      .client()
      .resource(services, "default")
      .create({ metadata: { name: "web" }, spec: { clusterIP: "10.96.0.10", ports: [{ port: 80 }] } });
    expect(web.spec?.clusterIP).toBe("10.96.0.10");
    const second = new ApiServer({ storage });
    try {
      await expect(
        second
          .client()
          .resource(services, "default")
          .create({ metadata: { name: "again" }, spec: { clusterIP: "10.96.0.10", ports: [{ port: 80 }] } }),
      ).rejects.toMatchObject({ code: 422 });
      expect(second.serviceIPs.used).toBe(2);
    } finally {
      await second.close();
    }
  });

  it("a /30 has two addresses; a full range is a 500 naming it", () => {
    const allocator = new ClusterIPAllocator("192.168.1.0/30", () => 0);
    expect([allocator.allocate("a"), allocator.allocate("b")].sort()).toEqual(["192.168.1.1", "192.168.1.2"]);
    expect(() => allocator.allocate("c")).toThrow(
      "Internal error occurred: failed to allocate a serviceIP: range is full",
    );
    expect(() => allocator.allocate("d", "192.168.1.3")).toThrow("is not in the valid range");
    allocator.release("192.168.1.1");
    expect(allocator.allocate("e")).toBe("192.168.1.1");
  });
});
