// Default constraints scoring, after upstream's scoring_test.go cases for system defaults.
import type { Node, Pod } from "@reconcile/api";
import type { TopologySpreadConstraint } from "kubernetes-types/core/v1.js";
import { describe, expect, it } from "vitest";
import { type CycleState, cloneCycleState, type Status } from "../framework.js";
import { podInfo } from "../node-info.js";
import {
  errReasonConstraintsNotMatch,
  errReasonNodeLabelNotMatch,
  podTopologySpread,
} from "./pod-topology-spread.js";
import { nodeInfoOf, nodeInfosWith, runScore } from "./testing.js";

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

// The pod's own constraints, after upstream's filtering_test.go (TestSingleConstraint,
// TestMultipleConstraints) and scoring_test.go (TestPodTopologySpreadScore).

const zone = "zone";
const host = "node";

function spreadNode(name: string, labels: Record<string, string>, spec: Node["spec"] = {}): Node {
  return { metadata: { name, labels }, spec, status: { allocatable: { pods: "110" } } };
}

/** node-a, node-b in zone1; node-x, node-y in zone2. */
const fourNodes = [
  spreadNode("node-a", { zone: "zone1", node: "node-a" }),
  spreadNode("node-b", { zone: "zone1", node: "node-b" }),
  spreadNode("node-x", { zone: "zone2", node: "node-x" }),
  spreadNode("node-y", { zone: "zone2", node: "node-y" }),
];

function constraint(
  topologyKey: string,
  maxSkew: number,
  extra: Partial<TopologySpreadConstraint> = {},
  whenUnsatisfiable: "DoNotSchedule" | "ScheduleAnyway" = "DoNotSchedule",
): TopologySpreadConstraint {
  return {
    topologyKey,
    maxSkew,
    whenUnsatisfiable,
    labelSelector: { matchExpressions: [{ key: "foo", operator: "Exists" }] },
    ...extra,
  };
}

function spreadPod(
  name: string,
  options: {
    nodeName?: string;
    labels?: Record<string, string>;
    namespace?: string;
    constraints?: TopologySpreadConstraint[];
    nodeSelector?: Record<string, string>;
    terminating?: boolean;
  } = {},
): Pod {
  return {
    metadata: {
      name,
      uid: `uid-${name}`,
      namespace: options.namespace ?? "default",
      labels: options.labels ?? { foo: "" },
      ...(options.terminating ? { deletionTimestamp: "2026-01-01T00:00:00Z" } : {}),
    },
    spec: {
      containers: [],
      ...(options.nodeName ? { nodeName: options.nodeName } : {}),
      ...(options.constraints ? { topologySpreadConstraints: options.constraints } : {}),
      ...(options.nodeSelector ? { nodeSelector: options.nodeSelector } : {}),
    },
  };
}

/** `counts` pods labelled foo on each node, by node name. */
function existingPods(counts: Record<string, number>, labels: Record<string, string> = { foo: "" }): Pod[] {
  return Object.entries(counts).flatMap(([nodeName, n]) =>
    Array.from({ length: n }, (_, i) => spreadPod(`${nodeName}-${i}`, { nodeName, labels })),
  );
}

const briefStatus = (status: Status) =>
  status.code === "Success" ? "ok" : `${status.code}: ${status.reasons.join(", ")}`;
const skewFails = `Unschedulable: ${errReasonConstraintsNotMatch}`;
const labelMissing = `UnschedulableAndUnresolvable: ${errReasonNodeLabelNotMatch}`;

function spreadFilter(incoming: Pod, nodes: Node[], existing: Pod[]): Record<string, string> {
  const infos = nodeInfosWith(nodes, existing);
  const state: CycleState = new Map();
  const pre = podTopologySpread.preFilter!(state, incoming, infos);
  if (pre.code === "Skip") return Object.fromEntries(infos.map((i) => [i.name, "skip"]));
  return Object.fromEntries(
    infos.map((i) => [i.name, briefStatus(podTopologySpread.filter!(state, incoming, i))]),
  );
}

describe("PodTopologySpread Filter (upstream TestSingleConstraint)", () => {
  it.each([
    {
      name: "no existing pods: every node fits",
      constraints: [constraint(zone, 1)],
      existing: {},
      want: { "node-a": "ok", "node-b": "ok", "node-x": "ok", "node-y": "ok" },
    },
    {
      name: "no existing pods, the incoming pod does not match itself",
      constraints: [constraint(zone, 1)],
      labels: { bar: "" },
      existing: {},
      want: { "node-a": "ok", "node-b": "ok", "node-x": "ok", "node-y": "ok" },
    },
    {
      name: "existing pods in another namespace do not count",
      constraints: [constraint(zone, 1)],
      existing: {},
      others: { "node-a": 1, "node-b": 1 },
      want: { "node-a": "ok", "node-b": "ok", "node-x": "ok", "node-y": "ok" },
    },
    {
      name: "pods spread 3/3 across zones: every node fits",
      constraints: [constraint(zone, 1)],
      existing: { "node-a": 1, "node-b": 2, "node-x": 2, "node-y": 1 },
      want: { "node-a": "ok", "node-b": "ok", "node-x": "ok", "node-y": "ok" },
    },
    {
      name: "pods spread 1/2 across zones: only zone1 fits",
      constraints: [constraint(zone, 1)],
      existing: { "node-a": 1, "node-x": 1, "node-y": 1 },
      want: { "node-a": "ok", "node-b": "ok", "node-x": skewFails, "node-y": skewFails },
    },
    {
      name: "by node, maxSkew 1: only the emptiest nodes fit",
      constraints: [constraint(host, 1)],
      existing: { "node-a": 1, "node-b": 1, "node-x": 0, "node-y": 2 },
      want: { "node-a": skewFails, "node-b": skewFails, "node-x": "ok", "node-y": skewFails },
    },
    {
      name: "by node, maxSkew 2",
      constraints: [constraint(host, 2)],
      existing: { "node-a": 1, "node-b": 1, "node-x": 0, "node-y": 2 },
      want: { "node-a": "ok", "node-b": "ok", "node-x": "ok", "node-y": skewFails },
    },
    {
      name: "terminating pods do not count",
      constraints: [constraint(host, 1)],
      existing: { "node-a": 0, "node-b": 1, "node-x": 1, "node-y": 1 },
      terminating: ["node-a"],
      want: { "node-a": "ok", "node-b": skewFails, "node-x": skewFails, "node-y": skewFails },
    },
    {
      name: "minDomains 3 with two zones: the global minimum is 0",
      constraints: [constraint(zone, 1, { minDomains: 3 })],
      existing: { "node-a": 1, "node-x": 1 },
      want: { "node-a": skewFails, "node-b": skewFails, "node-x": skewFails, "node-y": skewFails },
    },
    {
      name: "minDomains 2 with two zones: the real minimum",
      constraints: [constraint(zone, 1, { minDomains: 2 })],
      existing: { "node-a": 1, "node-x": 1 },
      want: { "node-a": "ok", "node-b": "ok", "node-x": "ok", "node-y": "ok" },
    },
    {
      name: "matchLabelKeys narrow the selector to pods with the incoming pod's value",
      constraints: [constraint(zone, 1, { matchLabelKeys: ["rev"] })],
      labels: { foo: "", rev: "2" },
      existing: { "node-a": 2 },
      revisioned: { "node-x": 1 },
      // Only pods with rev=2 count: zone1 0, zone2 1 (without the narrowing, zone1 would have 2 and fail).
      want: { "node-a": "ok", "node-b": "ok", "node-x": skewFails, "node-y": skewFails },
    },
  ])("$name", ({ constraints, labels, existing, others, terminating, revisioned, want }) => {
    const pods = [
      ...existingPods(existing),
      ...existingPods(others ?? {}).map((p) => ({ ...p, metadata: { ...p.metadata, namespace: "ns2" } })),
      ...existingPods(revisioned ?? {}, { foo: "", rev: "2" }).map((p) => ({
        ...p,
        metadata: { ...p.metadata, name: `rev-${p.metadata?.name}`, uid: `rev-${p.metadata?.uid}` },
      })),
      ...(terminating ?? []).map((nodeName) =>
        spreadPod(`gone-${nodeName}`, { nodeName, terminating: true }),
      ),
    ];
    expect(
      spreadFilter(spreadPod("incoming", { constraints, labels: labels ?? { foo: "" } }), fourNodes, pods),
    ).toEqual(want);
  });

  it("a node without the topology label cannot take the pod", () => {
    const nodes = [...fourNodes, spreadNode("node-z", { node: "node-z" })];
    const incoming = spreadPod("incoming", { constraints: [constraint(zone, 1)] });
    expect(spreadFilter(incoming, nodes, [])["node-z"]).toBe(labelMissing);
  });

  it("nodeAffinityPolicy Honor (default) counts only nodes the pod's node selector allows; Ignore counts all", () => {
    const nodes = [
      spreadNode("node-a", { zone: "zone1", node: "node-a", pool: "x" }),
      spreadNode("node-x", { zone: "zone2", node: "node-x", pool: "x" }),
      spreadNode("node-y", { zone: "zone3", node: "node-y" }),
    ];
    const existing = existingPods({ "node-a": 1, "node-x": 1 });
    const honor = spreadPod("incoming", { constraints: [constraint(zone, 1)], nodeSelector: { pool: "x" } });
    // zone3 is not counted: the minimum is 1, so zone1 and zone2 both fit.
    expect(spreadFilter(honor, nodes, existing)).toMatchObject({ "node-a": "ok", "node-x": "ok" });
    const ignore = spreadPod("incoming", {
      constraints: [constraint(zone, 1, { nodeAffinityPolicy: "Ignore" })],
      nodeSelector: { pool: "x" },
    });
    // zone3 counts with 0 pods: zone1 and zone2 would reach a skew of 2.
    expect(spreadFilter(ignore, nodes, existing)).toMatchObject({ "node-a": skewFails, "node-x": skewFails });
  });

  it("nodeTaintsPolicy Honor leaves out nodes whose taints the pod does not tolerate", () => {
    const taint = { taints: [{ key: "k", value: "v", effect: "NoSchedule" as const }] };
    const nodes = [
      spreadNode("node-a", { zone: "zone1", node: "node-a" }),
      spreadNode("node-x", { zone: "zone2", node: "node-x" }, taint),
    ];
    const existing = existingPods({ "node-a": 1 });
    const honor = spreadPod("incoming", {
      constraints: [constraint(zone, 1, { nodeTaintsPolicy: "Honor" })],
    });
    expect(spreadFilter(honor, nodes, existing)["node-a"]).toBe("ok");
    const ignore = spreadPod("incoming", { constraints: [constraint(zone, 1)] });
    expect(spreadFilter(ignore, nodes, existing)["node-a"]).toBe(skewFails);
  });

  it("several constraints must all hold (upstream TestMultipleConstraints)", () => {
    const incoming = spreadPod("incoming", { constraints: [constraint(zone, 1), constraint(host, 1)] });
    // zone1: 2 pods, zone2: 2 pods; node-a 0, node-b 2, node-x 1, node-y 1.
    expect(
      spreadFilter(incoming, fourNodes, existingPods({ "node-b": 2, "node-x": 1, "node-y": 1 })),
    ).toEqual({
      "node-a": "ok",
      "node-b": skewFails,
      "node-x": skewFails,
      "node-y": skewFails,
    });
  });

  it("ScheduleAnyway constraints are not filtered on", () => {
    const incoming = spreadPod("incoming", { constraints: [constraint(zone, 1, {}, "ScheduleAnyway")] });
    expect(spreadFilter(incoming, fourNodes, existingPods({ "node-a": 5 }))["node-a"]).toBe("skip");
  });

  it("RemovePod on a copy of the state: taking a pod off relieves the skew there, the original is untouched", () => {
    const existing = existingPods({ "node-a": 2, "node-x": 1 });
    const infos = nodeInfosWith(fourNodes, existing);
    const incoming = spreadPod("incoming", { constraints: [constraint(zone, 1)] });
    const state: CycleState = new Map();
    podTopologySpread.preFilter!(state, incoming, infos);
    const nodeA = infos[0]!;
    expect(briefStatus(podTopologySpread.filter!(state, incoming, nodeA))).toBe(skewFails);
    const what = cloneCycleState(state);
    podTopologySpread.removePod!(what, incoming, podInfo(existing[0]!), nodeA);
    expect(briefStatus(podTopologySpread.filter!(what, incoming, nodeA))).toBe("ok");
    expect(briefStatus(podTopologySpread.filter!(state, incoming, nodeA))).toBe(skewFails);
  });
});

describe("PodTopologySpread Score with the pod's own constraints (upstream TestPodTopologySpreadScore)", () => {
  const infosWith = nodeInfosWith;

  it("by node: fewer matching pods score higher", () => {
    const incoming = spreadPod("incoming", { constraints: [constraint(host, 1, {}, "ScheduleAnyway")] });
    // weight ln(4 + 2) = 1.792; raw a = round(2·1.792) = 4, b = 2, x = 0, y = round(3·1.792) = 5
    // normalized 100·(5 + 0 − raw) / 5: a 20, b 60, x 100, y 0
    const pods = existingPods({ "node-a": 2, "node-b": 1, "node-y": 3 });
    expect(runScore(podTopologySpread, incoming, infosWith(fourNodes, pods))).toEqual({
      "node-a": 20,
      "node-b": 60,
      "node-x": 100,
      "node-y": 0,
    });
  });

  it("by zone: nodes share their zone's count", () => {
    const incoming = spreadPod("incoming", { constraints: [constraint(zone, 1, {}, "ScheduleAnyway")] });
    // weight ln(2 + 2) = 1.386; zone1 3 pods → round(4.159) = 4, zone2 1 pod → 1; 100·(4 + 1 − raw) / 4
    const pods = existingPods({ "node-a": 2, "node-b": 1, "node-y": 1 });
    expect(runScore(podTopologySpread, incoming, infosWith(fourNodes, pods))).toEqual({
      "node-a": 25,
      "node-b": 25,
      "node-x": 100,
      "node-y": 100,
    });
  });

  it("a node missing a topology key of the pod's own constraints scores 0", () => {
    const nodes = [...fourNodes.slice(0, 2), spreadNode("node-z", { node: "node-z" })];
    const incoming = spreadPod("incoming", {
      constraints: [constraint(zone, 1, {}, "ScheduleAnyway"), constraint(host, 1, {}, "ScheduleAnyway")],
    });
    expect(runScore(podTopologySpread, incoming, infosWith(nodes, existingPods({ "node-a": 1 })))).toEqual({
      "node-a": 50,
      "node-b": 100,
      "node-z": 0,
    });
  });

  it("DoNotSchedule constraints only: the system defaults are not used, so scoring is skipped", () => {
    const incoming = spreadPod("incoming", { constraints: [constraint(zone, 1)] });
    expect(runScore(podTopologySpread, incoming, infosWith(fourNodes, []))).toBe("skip");
  });
});

describe("PodTopologySpread counts kept on a node", () => {
  it("are recounted once the node's pods change", () => {
    const infos = fourNodes.map((n) => nodeInfoOf(n));
    const incoming = spreadPod("incoming", { constraints: [constraint(host, 1)] });
    const verdicts = () => {
      const state: CycleState = new Map();
      podTopologySpread.preFilter!(state, incoming, infos);
      return infos.map((info) => briefStatus(podTopologySpread.filter!(state, incoming, info)));
    };
    expect(verdicts()).toEqual(["ok", "ok", "ok", "ok"]);
    infos[0]!.addPod(spreadPod("a", { nodeName: "node-a" }), "uid-a");
    expect(verdicts()).toEqual([skewFails, "ok", "ok", "ok"]);
    infos[0]!.removePod("uid-a");
    expect(verdicts()).toEqual(["ok", "ok", "ok", "ok"]);
  });
});
