// Default constraints scoring, after upstream's scoring_test.go cases for system defaults.
import type { Node, Pod } from "@reconcile/api";
import { describe, expect, it } from "vitest";
import { podTopologySpread } from "./pod-topology-spread.js";
import { nodeInfoOf, runScore } from "./testing.js";

const rsRef = { apiVersion: "apps/v1", kind: "ReplicaSet", name: "web", uid: "rs-1", controller: true };

function pod(name: string, owner = rsRef): Pod {
  return {
    metadata: { name, namespace: "ns", uid: `uid-${name}`, ownerReferences: [owner] },
    spec: { containers: [] },
  };
}

function zonedNode(name: string, zone?: string): Node {
  return {
    metadata: {
      name,
      labels: { "kubernetes.io/hostname": name, ...(zone ? { "topology.kubernetes.io/zone": zone } : {}) },
    },
    status: { allocatable: { pods: "110" } },
  };
}

describe("PodTopologySpread (system defaults) Score", () => {
  it("prefers nodes with fewer pods of the same controller", () => {
    const infos = [
      nodeInfoOf(zonedNode("a"), [pod("p1"), pod("p2")]),
      nodeInfoOf(zonedNode("b"), [pod("p3")]),
      nodeInfoOf(zonedNode("c")),
    ];
    // weight ln(3 + 2); raw a = round(2·1.609 + 2) = 5, b = round(1.609 + 2) = 4, c = 2
    // normalized 100·(5 + 2 − raw) / 5: a 40, b 60, c 100
    expect(runScore(podTopologySpread, pod("new"), infos)).toEqual({ a: 40, b: 60, c: 100 });
  });

  it("counts zones too: a node in a crowded zone scores lower", () => {
    const infos = [
      nodeInfoOf(zonedNode("a1", "z1"), [pod("p1")]),
      nodeInfoOf(zonedNode("a2", "z1"), [pod("p2")]),
      nodeInfoOf(zonedNode("b1", "z2")),
      nodeInfoOf(zonedNode("b2", "z2")),
    ];
    // hostname weight ln(4 + 2) = 1.792, zone weight ln(2 + 2) = 1.386
    // a1: 1·1.792 + 2 + 2·1.386 + 4 = 10.56 → 11; b1: 0 + 2 + 0 + 4 = 6
    // normalized 100·(11 + 6 − raw) / 11: a 54, b 100
    expect(runScore(podTopologySpread, pod("new"), infos)).toEqual({ a1: 54, a2: 54, b1: 100, b2: 100 });
  });

  it("ignores pods of other controllers and terminating pods", () => {
    const other = { ...rsRef, uid: "rs-2" };
    const gone = pod("gone");
    const terminating: Pod = {
      ...gone,
      metadata: { ...gone.metadata, deletionTimestamp: "2026-01-01T00:00:00Z" },
    };
    const infos = [nodeInfoOf(zonedNode("a"), [pod("x", other), terminating]), nodeInfoOf(zonedNode("b"))];
    expect(runScore(podTopologySpread, pod("new"), infos)).toEqual({ a: 100, b: 100 });
  });

  it("is skipped for a pod without a ReplicaSet, ReplicationController or StatefulSet owner", () => {
    const bare: Pod = { metadata: { name: "bare", namespace: "ns" }, spec: { containers: [] } };
    const job = pod("job", { ...rsRef, kind: "Job" });
    expect(runScore(podTopologySpread, bare, [nodeInfoOf(zonedNode("a"))])).toBe("skip");
    expect(runScore(podTopologySpread, job, [nodeInfoOf(zonedNode("a"))])).toBe("skip");
  });
});
