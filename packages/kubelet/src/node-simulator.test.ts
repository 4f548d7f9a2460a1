import { describe, expect, it } from "vitest";
import { maxSimulatedNodes, nodeNamesOf, podCIDROf } from "./node-simulator.js";

describe("podCIDROf", () => {
  it("numbers /24s from 10.244.0.0, then from 10.112.0.0 past 3,072 nodes, each node its own", () => {
    expect(
      [0, 1, 255, 256, 3_071, 3_072, 3_073, 4_999, maxSimulatedNodes - 1].map((i) => podCIDROf(i, false)),
    ).toEqual([
      "10.244.0.0/24",
      "10.244.1.0/24",
      "10.244.255.0/24",
      "10.245.0.0/24",
      "10.255.255.0/24",
      "10.112.0.0/24",
      "10.112.1.0/24",
      "10.119.135.0/24",
      "10.243.255.0/24",
    ]);
    expect(maxSimulatedNodes).toBe(36_864);
    const all = new Set<string>();
    for (let i = 0; i < maxSimulatedNodes; i++) {
      const cidr = podCIDROf(i, false);
      const [a, b, c, d] = cidr.slice(0, -3).split(".").map(Number);
      expect([a, c, d]).toEqual([10, i % 256, 0]);
      // Clear of the nodes' 10.0.0.0/16 and the Services' 10.96.0.0/12.
      expect((b! >= 112 && b! <= 243) || (b! >= 244 && b! <= 255)).toBe(true);
      all.add(cidr);
    }
    expect(all.size).toBe(maxSimulatedNodes);
  });

  it("adds the node's IPv6 /64 on a dual-stack cluster", () => {
    expect(podCIDROf(0, true)).toBe("10.244.0.0/24,fd00:10:244::/64");
    expect(podCIDROf(3_072, true)).toBe("10.112.0.0/24,fd00:10:244:c00::/64");
  });

  it("refuses an index without a CIDR, and more nodes than there are CIDRs", () => {
    expect(() => podCIDROf(maxSimulatedNodes, false)).toThrow(
      "podCIDROf: node index 36864 is outside 0 to 36863",
    );
    expect(() => podCIDROf(-1, false)).toThrow(RangeError);
    expect(nodeNamesOf(3, "node-", "NodeSimulator")).toEqual(["node-1", "node-2", "node-3"]);
    expect(() => nodeNamesOf(maxSimulatedNodes + 1, "node-", "NodeSimulator")).toThrow(
      "NodeSimulator: at most 36,864 nodes (one /24 pod CIDR each)",
    );
  });
});
