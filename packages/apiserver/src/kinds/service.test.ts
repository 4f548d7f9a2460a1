import { services } from "@reconcile/api";
import { describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";

describe("Service defaults (upstream SetDefaults_Service)", () => {
  it("fills type, session affinity, traffic policy, IP families, port protocol and targetPort", async () => {
    const server = new ApiServer();
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
      });
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
      expect(headless.spec).toMatchObject({ ipFamilyPolicy: "RequireDualStack", ipFamilies: ["IPv4"] });
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
