import { type Node, noopLogger } from "@reconcile/api";
import type { Client } from "@reconcile/client";
import { FakeClock } from "@reconcile/clock";
import { createIndexer } from "@reconcile/informer";
import type { NodeCondition } from "kubernetes-types/core/v1.js";
import { describe, expect, it } from "vitest";
import { noopNodeLifecycleMetrics } from "./metrics.js";
import { ZoneTainters } from "./zone-tainting.js";
import { labelTopologyZone, zoneKeyOf } from "./zones.js";

const inZone = (name: string, zone: string): Node => ({
  metadata: { name, labels: { [labelTopologyZone]: zone } },
});
const ready = (status: string): NodeCondition => ({ type: "Ready", status });

function tainters() {
  return new ZoneTainters({
    client: {} as Client,
    nodes: createIndexer<Node>(),
    clock: new FakeClock(),
    logger: noopLogger,
    metrics: noopNodeLifecycleMetrics,
    evictionQps: 0.1,
    secondaryEvictionQps: 0.01,
    largeClusterThreshold: 2,
    unhealthyZoneThreshold: 0.55,
  });
}

describe("ZoneTainters.handleDisruption", () => {
  it("every zone dark stops all tainting once; a Ready node back restores each zone's rate (upstream handleDisruption)", async () => {
    const zones = tainters();
    const [a, b] = [inZone("a1", "a"), inZone("b1", "b")];
    zones.addZoneOf(a);
    zones.addZoneOf(b);
    const calls: string[] = [];
    const hooks = {
      enterMasterDisruption: async () => void calls.push("enter"),
      exitMasterDisruption: () => void calls.push("exit"),
    };
    const [ka, kb] = [zoneKeyOf(a), zoneKeyOf(b)];
    const dark = new Map([
      [ka, [ready("Unknown")]],
      [kb, [ready("False")]],
    ]);

    await zones.handleDisruption(dark, hooks);
    expect(calls).toEqual(["enter"]);
    expect([zones.tainterOf(a).qps, zones.tainterOf(b).qps]).toEqual([0, 0]);
    expect([...zones.states.values()]).toEqual(["FullDisruption", "FullDisruption"]);

    // Still dark: nothing more to do.
    await zones.handleDisruption(dark, hooks);
    expect(calls).toEqual(["enter"]);

    await zones.handleDisruption(
      new Map([
        [ka, [ready("True")]],
        [kb, [ready("False")]],
      ]),
      hooks,
    );
    expect(calls).toEqual(["enter", "exit"]);
    expect(zones.states.get(ka)).toBe("Normal");
    expect(zones.states.get(kb)).toBe("FullDisruption");
    expect([zones.tainterOf(a).qps, zones.tainterOf(b).qps]).toEqual([0.1, 0.1]);
  });

  it("a partially disrupted zone taints at the secondary rate when large, not at all when small", async () => {
    const zones = tainters();
    const nodes = ["x1", "x2", "x3", "x4"].map((name) => inZone(name, "x"));
    for (const node of nodes) zones.addZoneOf(node);
    const healthy = inZone("y1", "y");
    zones.addZoneOf(healthy);
    const [kx, ky] = [zoneKeyOf(nodes[0]!), zoneKeyOf(healthy)];
    const hooks = { enterMasterDisruption: async () => {}, exitMasterDisruption: () => {} };
    const partial = [ready("False"), ready("False"), ready("Unknown"), ready("True")];
    await zones.handleDisruption(
      new Map([
        [kx, partial],
        [ky, [ready("True")]],
      ]),
      hooks,
    );
    expect(zones.states.get(kx)).toBe("PartialDisruption");
    // 4 nodes > largeClusterThreshold 2: the secondary rate.
    expect(zones.tainterOf(nodes[0]!).qps).toBe(0.01);
    expect(zones.tainterOf(healthy).qps).toBe(0.1);
  });
});
