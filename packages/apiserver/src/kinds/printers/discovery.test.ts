import { endpointSlices, endpoints } from "@reconcile/api";
import { afterEach, describe, expect, it } from "vitest";
import { closeKubectlClusters, kubectlCluster } from "../../testing/index.js";

// `kubectl get endpoints,endpointslices`, which the demo's banner suggests, prints upstream's columns.

afterEach(closeKubectlClusters);

const rows = (text: string) =>
  text
    .trim()
    .split("\n")
    .map((line) => line.split(/\s{2,}/).slice(0, -1));

describe("Endpoints and EndpointSlice columns", () => {
  it("lists addresses with ports, three at most, then how many more", async () => {
    const { client, kubectl } = await kubectlCluster({ kubernetesService: false });
    const ips = ["10.244.0.2", "10.244.0.3", "10.244.1.2", "10.244.1.3"];
    await client.resource(endpoints, "default").create({
      metadata: { name: "web" },
      subsets: [
        { addresses: ips.map((ip) => ({ ip })), ports: [{ name: "http", port: 80, protocol: "TCP" }] },
      ],
    });
    await client.resource(endpoints, "default").create({ metadata: { name: "empty" } });
    await client.resource(endpoints, "default").create({
      metadata: { name: "headless" },
      subsets: [{ addresses: [{ ip: "fd00::1" }] }],
    });
    await client.resource(endpointSlices, "default").create({
      metadata: { name: "web-abcde" },
      addressType: "IPv4",
      ports: [{ name: "http", port: 80, protocol: "TCP" }, { name: "all" }],
      endpoints: ips.map((ip) => ({ addresses: [ip] })),
    });
    await client.resource(endpointSlices, "default").create({
      metadata: { name: "none-fghij" },
      addressType: "IPv6",
      endpoints: [],
    });
    const listed = await kubectl(["get", "endpoints,endpointslices", "-n", "default"]);
    expect(listed.stderr).toBe("");
    const [eps, slices] = listed.stdout.split("\n\n");
    expect(rows(eps!)).toEqual([
      ["NAME", "ENDPOINTS"],
      ["endpoints/empty", "<none>"],
      ["endpoints/headless", "fd00::1"],
      ["endpoints/web", "10.244.0.2:80,10.244.0.3:80,10.244.1.2:80 + 1 more..."],
    ]);
    expect(rows(slices!)).toEqual([
      ["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS"],
      ["endpointslice.discovery.k8s.io/none-fghij", "IPv6", "<unset>", "<unset>"],
      [
        "endpointslice.discovery.k8s.io/web-abcde",
        "IPv4",
        "80,all",
        "10.244.0.2,10.244.0.3,10.244.1.2 + 1 more...",
      ],
    ]);
  });
});
