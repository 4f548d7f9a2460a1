import { endpointSlices, endpoints } from "@reconcile/api";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "../index.js";

const servers: ApiServer[] = [];
afterEach(async () => {
  while (servers.length > 0) await servers.pop()!.close();
});

function client() {
  const server = new ApiServer({ kubernetesService: false });
  servers.push(server);
  return server.client();
}

describe("the defaults of endpoint ports", () => {
  it("an Endpoints subset's port is TCP unless said (SetDefaults_Endpoints)", async () => {
    const created = await client()
      .resource(endpoints, "default")
      .create({
        metadata: { name: "e" },
        subsets: [{ addresses: [{ ip: "10.0.0.1" }], ports: [{ port: 80 }, { port: 53, protocol: "UDP" }] }],
      });
    expect(created.subsets?.[0]?.ports).toEqual([
      { port: 80, protocol: "TCP" },
      { port: 53, protocol: "UDP" },
    ]);
  });

  it('an EndpointSlice\'s port is named "" and TCP unless said (discovery/v1 SetDefaults_EndpointPort)', async () => {
    const created = await client()
      .resource(endpointSlices, "default")
      .create({
        metadata: { name: "s" },
        addressType: "IPv4",
        endpoints: [{ addresses: ["10.0.0.1"] }],
        ports: [{ port: 80 }, { name: "dns", port: 53, protocol: "UDP" }],
      });
    expect(created.ports).toEqual([
      { name: "", port: 80, protocol: "TCP" },
      { name: "dns", port: 53, protocol: "UDP" },
    ]);
    // EndpointConditions is a struct held by value: written even when empty.
    expect(created.endpoints).toEqual([{ addresses: ["10.0.0.1"], conditions: {} }]);
  });
});
