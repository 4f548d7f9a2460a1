import { endpointSlices, endpoints, services } from "@reconcile/api";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "./api-server.js";

const servers: ApiServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

describe("default/kubernetes", () => {
  it("names the first listener's address and port in its Endpoints, EndpointSlice and target port, not a later one's", async () => {
    const api = new ApiServer();
    servers.push(api);
    const first = await api.listen();
    await api.listen();
    const client = api.client();
    const stored = await client.resource(endpoints, "default").get("kubernetes");
    expect({ labels: stored.metadata?.labels, subsets: stored.subsets }).toEqual({
      labels: { "endpointslice.kubernetes.io/skip-mirror": "true" },
      subsets: [
        { addresses: [{ ip: "127.0.0.1" }], ports: [{ name: "https", port: first.port, protocol: "TCP" }] },
      ],
    });
    const slice = await client.resource(endpointSlices, "default").get("kubernetes");
    expect({
      labels: slice.metadata?.labels,
      addressType: slice.addressType,
      endpoints: slice.endpoints,
      ports: slice.ports,
    }).toEqual({
      labels: { "kubernetes.io/service-name": "kubernetes" },
      addressType: "IPv4",
      endpoints: [{ addresses: ["127.0.0.1"], conditions: { ready: true } }],
      ports: [{ name: "https", port: first.port, protocol: "TCP" }],
    });
    const service = await client.resource(services, "default").get("kubernetes");
    expect(service.spec?.ports).toEqual([
      { name: "https", port: 443, protocol: "TCP", targetPort: first.port },
    ]);
  });

  it("is left alone without the kubernetes Service", async () => {
    const api = new ApiServer({ kubernetesService: false });
    servers.push(api);
    await api.listen();
    const listed = await api.client().resource(endpoints, "default").list();
    expect(listed.items).toEqual([]);
    expect((await api.client().resource(endpointSlices, "default").list()).items).toEqual([]);
  });
});
