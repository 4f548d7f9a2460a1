import { type Node, nodes, type Pod, pods, rfc3339 } from "@reconcile/api";
import type { NodeCondition, Taint } from "kubernetes-types/core/v1.js";
import { afterEach, describe, expect, it } from "vitest";
import {
  computeZoneState,
  NodeLifecycleController,
  type NodeLifecycleControllerOptions,
} from "./node-lifecycle-controller.js";
import {
  createNode,
  createPod,
  type Harness,
  harness,
  healthyConditions,
  heartbeat,
  namespace,
  newPod,
  renewLease,
  setReady,
  start,
} from "./test-harness.test-util.js";

let h: Harness;
let controller: NodeLifecycleController;
afterEach(() => h.stop());

const t = (ms: number) => rfc3339(start + ms);

async function setup(options: Partial<NodeLifecycleControllerOptions> = {}) {
  h = harness();
  controller = NodeLifecycleController.fromInformerFactory(h.factory, {
    client: h.client,
    clock: h.clock,
    eventRecorder: h.recorder,
    ...options,
  });
  await h.start();
}

/** Lets the caches catch up, then runs one health pass as the monitor loop would. */
async function pass(): Promise<void> {
  await h.settle();
  await controller.monitorNodeHealth();
  await h.settle();
}

/** Lets the caches catch up, then runs the zones' tainting queues once. */
async function taintPass(): Promise<void> {
  await h.settle();
  await controller.doNoExecuteTaintingPass();
  await h.settle();
}

async function getNode(name: string): Promise<Node> {
  return h.client.resource(nodes).get(name);
}

function condition(node: Node, type: string): NodeCondition | undefined {
  return node.status?.conditions?.find((c) => c.type === type);
}

function taintsOf(node: Node): Taint[] {
  return (node.spec?.taints ?? []).map(({ key, effect }) => ({ key, effect }) as Taint);
}

async function advance(ms: number): Promise<void> {
  await h.clock.advance(ms);
}

describe("NodeLifecycleController.monitorNodeHealth: node status (upstream TestMonitorNodeHealthUpdateStatus)", () => {
  it("a node that never posted status is Unknown after the startup grace period (NodeStatusNeverUpdated)", async () => {
    await setup();
    await createNode(h.client, "node0");
    await pass();
    expect((await getNode("node0")).status?.conditions).toBeUndefined();
    await advance(60_000);
    await pass();
    expect((await getNode("node0")).status?.conditions).toBeUndefined();
    await advance(1);
    await pass();
    const never = (type: string) => ({
      type,
      status: "Unknown",
      reason: "NodeStatusNeverUpdated",
      message: "Kubelet never posted node status.",
      lastHeartbeatTime: t(0),
      lastTransitionTime: t(60_001),
    });
    expect((await getNode("node0")).status?.conditions).toEqual([
      never("Ready"),
      never("MemoryPressure"),
      never("DiskPressure"),
      never("PIDPressure"),
    ]);
  });

  it("a node that keeps posting stays as it posted", async () => {
    await setup();
    await createNode(h.client, "node0", { conditions: healthyConditions(start) });
    await pass();
    for (let s = 10; s <= 120; s += 10) {
      await advance(10_000);
      await heartbeat(h.client, "node0", start + s * 1000);
      await pass();
    }
    const ready = condition(await getNode("node0"), "Ready");
    expect(ready).toMatchObject({ status: "True", reason: "KubeletReady", lastHeartbeatTime: t(120_000) });
  });

  it("a node silent for longer than the grace period becomes Unknown (NodeStatusUnknown)", async () => {
    await setup();
    await createNode(h.client, "node0", { conditions: healthyConditions(start) });
    await pass();
    await advance(50_000);
    await pass();
    expect(condition(await getNode("node0"), "Ready")?.status).toBe("True");
    await advance(1);
    await pass();
    const node = await getNode("node0");
    const unknown = (type: string) => ({
      type,
      status: "Unknown",
      reason: "NodeStatusUnknown",
      message: "Kubelet stopped posting node status.",
      lastHeartbeatTime: t(0),
      lastTransitionTime: t(50_001),
    });
    expect(node.status?.conditions).toEqual([
      unknown("MemoryPressure"),
      unknown("DiskPressure"),
      unknown("PIDPressure"),
      unknown("Ready"),
    ]);
    expect(h.events).toEqual([
      {
        kind: "Node",
        namespace: undefined,
        name: "node0",
        type: "Normal",
        reason: "RegisteredNode",
        message: "Node node0 event: Registered Node node0 in Controller",
      },
      {
        kind: "Node",
        namespace: undefined,
        name: "node0",
        type: "Normal",
        reason: "NodeNotReady",
        message: "Node node0 status is now: NodeNotReady",
      },
    ]);
  });

  it("NetworkUnavailable is the network's: left alone", async () => {
    await setup();
    const conditions = [
      ...healthyConditions(start),
      {
        type: "NetworkUnavailable",
        status: "False",
        reason: "RouteCreated",
        message: "routes",
        lastHeartbeatTime: t(0),
        lastTransitionTime: t(0),
      },
    ];
    await createNode(h.client, "node0", { conditions });
    await pass();
    await advance(50_001);
    await pass();
    expect(condition(await getNode("node0"), "NetworkUnavailable")).toEqual(conditions[4]);
  });

  it("a renewed Lease counts as a heartbeat (upstream TestMonitorNodeHealthUpdateNodeAndPodStatusWithLease)", async () => {
    await setup();
    await createNode(h.client, "node0", { conditions: healthyConditions(start) });
    await renewLease(h.client, "node0", start);
    await pass();
    await advance(40_000);
    await renewLease(h.client, "node0", start + 40_000);
    await pass();
    await advance(40_000);
    await pass();
    // 80 s since the last status, 40 s since the last renewal: healthy.
    expect(condition(await getNode("node0"), "Ready")?.status).toBe("True");
    await advance(10_001);
    await pass();
    expect(condition(await getNode("node0"), "Ready")).toMatchObject({
      status: "Unknown",
      reason: "NodeStatusUnknown",
      lastTransitionTime: t(90_001),
    });
  });

  it("a deleted node is forgotten with a RemovingNode event", async () => {
    await setup();
    await createNode(h.client, "node0", { conditions: healthyConditions(start) });
    await pass();
    await h.client.resource(nodes).delete("node0");
    await pass();
    expect(h.events.map((e) => `${e.reason}: ${e.message}`)).toEqual([
      "RegisteredNode: Node node0 event: Registered Node node0 in Controller",
      "RemovingNode: Node node0 event: Removing Node node0 from Controller",
    ]);
  });
});

describe("NodeLifecycleController: pods on a node that stops being Ready (upstream TestMonitorNodeHealthMarkPodsNotReady)", () => {
  it("marks every pod on the node Ready=False with a NodeNotReady warning, and leaves other nodes' pods alone", async () => {
    await setup();
    await createNode(h.client, "node0", { conditions: healthyConditions(start) });
    await createNode(h.client, "node1", { conditions: healthyConditions(start) });
    await createPod(h.client, newPod("pod0", "node0"));
    await createPod(h.client, newPod("pod1", "node1"));
    await pass();
    await advance(50_001);
    await heartbeat(h.client, "node1", start + 50_001);
    await pass();
    const list = await h.client.resource(pods, namespace).list();
    const readyOf = (name: string) =>
      list.items.find((p) => p.metadata?.name === name)?.status?.conditions?.find((c) => c.type === "Ready");
    // The zero lastProbeTime is written as null, as kube-apiserver writes it.
    expect(readyOf("pod0")).toEqual({
      type: "Ready",
      status: "False",
      lastProbeTime: null,
      lastTransitionTime: t(50_001),
    });
    expect(readyOf("pod1")).toEqual({
      type: "Ready",
      status: "True",
      lastProbeTime: null,
      lastTransitionTime: null,
    });
    expect(h.events.filter((e) => e.kind === "Pod")).toEqual([
      {
        kind: "Pod",
        namespace,
        name: "pod0",
        type: "Warning",
        reason: "NodeNotReady",
        message: "Node is not ready",
      },
    ]);
  });

  it("a pod bound later to a not-Ready node is marked not ready too (processPod)", async () => {
    await setup();
    await createNode(h.client, "node0", { conditions: healthyConditions(start) });
    await pass();
    await advance(50_001);
    await pass();
    await createPod(h.client, newPod("late", "node0"));
    await h.settle();
    await controller.processPod(`${namespace}/late`);
    const pod = (await h.client.resource(pods, namespace).get("late")) as Pod;
    expect(pod.status?.conditions).toEqual([
      { type: "Ready", status: "False", lastProbeTime: null, lastTransitionTime: t(50_001) },
    ]);
  });
});

describe("NodeLifecycleController: NoExecute taints (upstream TestApplyNoExecuteTaints, TestSwapUnreachableNotReadyTaints)", () => {
  it("taints an unreachable node on the pass after it went Unknown, and untaints it when it is Ready again", async () => {
    await setup();
    await createNode(h.client, "node0", { conditions: healthyConditions(start) });
    await createNode(h.client, "node1", { conditions: healthyConditions(start) });
    await pass();
    await advance(50_001);
    await heartbeat(h.client, "node1", start + 50_001);
    await pass();
    await taintPass();
    // The pass that marked it Unknown saw it Ready: nothing is queued yet.
    expect(taintsOf(await getNode("node0"))).toEqual([]);
    await advance(5_000);
    await heartbeat(h.client, "node1", start + 55_001);
    await pass();
    await taintPass();
    const tainted = await getNode("node0");
    expect(tainted.spec?.taints).toEqual([
      { key: "node.kubernetes.io/unreachable", effect: "NoExecute", timeAdded: t(55_001) },
    ]);
    expect(controller.evictionsByZone()).toEqual(new Map([["", 1]]));

    await advance(5_000);
    await setReady(h.client, "node0", "True", start + 60_001);
    await heartbeat(h.client, "node1", start + 60_001);
    await pass();
    expect(taintsOf(await getNode("node0"))).toEqual([]);
  });

  it("an unreachable taint is swapped for not-ready at once when the node says NotReady", async () => {
    await setup();
    const notReady = healthyConditions(start).map((c) =>
      c.type === "Ready" ? { ...c, status: "False" } : c,
    );
    await createNode(h.client, "node0", {
      conditions: notReady,
      taints: [{ key: "node.kubernetes.io/unreachable", effect: "NoExecute" }],
    });
    await createNode(h.client, "node1", { conditions: healthyConditions(start) });
    await pass();
    // Swapped by the health pass itself, without waiting for the zone queue.
    expect((await getNode("node0")).spec?.taints).toEqual([
      { key: "node.kubernetes.io/not-ready", effect: "NoExecute", timeAdded: t(0) },
    ]);
  });

  it("taints a not-ready node through the zone queue", async () => {
    await setup();
    await createNode(h.client, "node0", { conditions: healthyConditions(start) });
    await createNode(h.client, "node1", { conditions: healthyConditions(start) });
    await pass();
    await setReady(h.client, "node0", "False", start);
    await pass();
    await taintPass();
    expect(taintsOf(await getNode("node0"))).toEqual([
      { key: "node.kubernetes.io/not-ready", effect: "NoExecute" },
    ]);
  });

  it("taints one node per 10 s in a zone (--node-eviction-rate 0.1)", async () => {
    await setup();
    const zone = { "topology.kubernetes.io/region": "r", "topology.kubernetes.io/zone": "a" };
    for (const name of ["n1", "n2", "n3", "n4", "n5", "n6", "n7"]) {
      await createNode(h.client, name, { conditions: healthyConditions(start), labels: zone });
    }
    await pass();
    for (const name of ["n1", "n2"]) await setReady(h.client, name, "False", start);
    await pass();
    await taintPass();
    const tainted = async () => {
      const list = await h.client.resource(nodes).list();
      return list.items.filter((n) => (n.spec?.taints ?? []).some((x) => x.effect === "NoExecute")).length;
    };
    expect(await tainted()).toBe(1);
    await advance(9_999);
    await taintPass();
    expect(await tainted()).toBe(1);
    await advance(1);
    await taintPass();
    expect(await tainted()).toBe(2);
    expect(controller.zoneStates()).toEqual(new Map([["r:\u0000:a", "Normal"]]));
  });
});

describe("NodeLifecycleController metrics (node_collector_*)", () => {
  it("reports zone sizes and health after each pass, evictions, and pass durations", async () => {
    const calls: string[] = [];
    const durations: number[] = [];
    await setup({
      metrics: {
        zoneHealth: (zone, size, unhealthy) =>
          calls.push(`zone ${JSON.stringify(zone)} size=${size} unhealthy=${unhealthy}`),
        eviction: (zone, count) => calls.push(`eviction ${JSON.stringify(zone)} +${count}`),
        updateNodeHealthDuration: (seconds) => durations.push(seconds),
        updateAllNodesHealthDuration: (seconds) => durations.push(seconds),
      },
    });
    await createNode(h.client, "node0", { conditions: healthyConditions(start) });
    await createNode(h.client, "node1", { conditions: healthyConditions(start) });
    await pass();
    await setReady(h.client, "node0", "False", start);
    await pass();
    await taintPass();
    expect(calls).toEqual([
      'eviction "" +0',
      'zone "" size=2 unhealthy=0',
      'zone "" size=2 unhealthy=1',
      'eviction "" +1',
    ]);
    // Two nodes and one whole pass, twice; FakeClock does not move while a pass runs.
    expect(durations).toEqual([0, 0, 0, 0, 0, 0]);
  });
});

describe("NodeLifecycleController: zone disruption (upstream TestMonitorNodeHealthEvictPodsWithDisruption)", () => {
  it("computeZoneState: full, partial and normal", () => {
    const ready = { type: "Ready", status: "True" };
    const down = { type: "Ready", status: "Unknown" };
    expect(computeZoneState([down], 0.55)).toEqual({ notReady: 1, state: "FullDisruption" });
    expect(computeZoneState([undefined, down], 0.55)).toEqual({ notReady: 2, state: "FullDisruption" });
    expect(computeZoneState([ready, down, down], 0.55)).toEqual({ notReady: 2, state: "Normal" });
    expect(computeZoneState([ready, down, down, down], 0.55)).toEqual({
      notReady: 3,
      state: "PartialDisruption",
    });
    expect(computeZoneState([ready, ready, down, down, down], 0.55)).toEqual({
      notReady: 3,
      state: "PartialDisruption",
    });
    expect(computeZoneState([ready, ready, ready, down, down, down], 0.55)).toEqual({
      notReady: 3,
      state: "Normal",
    });
    expect(computeZoneState([], 0.55)).toEqual({ notReady: 0, state: "Normal" });
  });

  it("a one-node cluster never taints its node: every zone down is master disruption mode", async () => {
    await setup();
    await createNode(h.client, "node0", { conditions: healthyConditions(start) });
    await pass();
    await advance(50_001);
    await pass();
    await advance(5_000);
    await pass();
    await taintPass();
    expect(taintsOf(await getNode("node0"))).toEqual([]);
    expect(controller.zoneStates()).toEqual(new Map([["", "FullDisruption"]]));
    // Back: out of disruption mode, Normal again.
    await setReady(h.client, "node0", "True", start + 55_001);
    await pass();
    expect(controller.zoneStates()).toEqual(new Map([["", "Normal"]]));
  });

  it("a partially disrupted small zone stops tainting; other zones go on", async () => {
    await setup();
    const zoneA = { "topology.kubernetes.io/zone": "a" };
    const zoneB = { "topology.kubernetes.io/zone": "b" };
    for (const name of ["a1", "a2", "a3", "a4"]) {
      await createNode(h.client, name, { conditions: healthyConditions(start), labels: zoneA });
    }
    for (const name of ["b1", "b2"]) {
      await createNode(h.client, name, { conditions: healthyConditions(start), labels: zoneB });
    }
    await pass();
    for (const name of ["a1", "a2", "a3", "b1"]) await setReady(h.client, name, "False", start);
    await pass();
    expect(controller.zoneStates()).toEqual(
      new Map([
        [":\u0000:a", "PartialDisruption"],
        [":\u0000:b", "Normal"],
      ]),
    );
    await taintPass();
    await advance(60_000);
    await taintPass();
    const list = await h.client.resource(nodes).list();
    const tainted = list.items
      .filter((n) => (n.spec?.taints ?? []).some((x) => x.effect === "NoExecute"))
      .map((n) => n.metadata?.name);
    expect(tainted).toEqual(["b1"]);
  });

  it("nodes labelled node.kubernetes.io/exclude-disruption are left out of the zone maths", async () => {
    await setup();
    await createNode(h.client, "node0", { conditions: healthyConditions(start) });
    await createNode(h.client, "excluded", {
      conditions: healthyConditions(start),
      labels: { "node.kubernetes.io/exclude-disruption": "" },
    });
    await pass();
    await setReady(h.client, "node0", "False", start);
    await pass();
    expect(controller.zoneStates()).toEqual(new Map([["", "FullDisruption"]]));
  });
});

describe("NodeLifecycleController.syncNode: NoSchedule taints (upstream TestTaintsNodeByCondition)", () => {
  const cases: { name: string; conditions: [string, string][]; unschedulable?: boolean; want: string[] }[] = [
    { name: "a healthy node has none", conditions: [["Ready", "True"]], want: [] },
    { name: "NotReady", conditions: [["Ready", "False"]], want: ["node.kubernetes.io/not-ready"] },
    { name: "Unknown", conditions: [["Ready", "Unknown"]], want: ["node.kubernetes.io/unreachable"] },
    {
      name: "memory and disk pressure",
      conditions: [
        ["Ready", "True"],
        ["MemoryPressure", "True"],
        ["DiskPressure", "True"],
      ],
      want: ["node.kubernetes.io/memory-pressure", "node.kubernetes.io/disk-pressure"],
    },
    {
      name: "PID pressure, network unavailable",
      conditions: [
        ["Ready", "True"],
        ["PIDPressure", "True"],
        ["NetworkUnavailable", "True"],
      ],
      want: ["node.kubernetes.io/pid-pressure", "node.kubernetes.io/network-unavailable"],
    },
    {
      name: "cordoned",
      conditions: [["Ready", "True"]],
      unschedulable: true,
      want: ["node.kubernetes.io/unschedulable"],
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      await setup();
      const conditions = c.conditions.map(([type, status]) => ({ type, status }));
      const created = await createNode(h.client, "node0", {
        conditions,
        taints: [{ key: "user", value: "x", effect: "NoSchedule" }],
      });
      if (c.unschedulable) {
        await h.client.resource(nodes).update({ ...created, spec: { ...created.spec, unschedulable: true } });
      }
      await h.settle();
      await controller.syncNode("node0");
      const taints = (await getNode("node0")).spec?.taints ?? [];
      expect(taints.map((x) => x.key)).toEqual(["user", ...c.want]);
      expect(taints.every((x) => x.effect === "NoSchedule")).toBe(true);
    });
  }

  it("removes the taint when the condition clears, keeping others' taints", async () => {
    await setup();
    await createNode(h.client, "node0", {
      conditions: [{ type: "Ready", status: "True" }],
      taints: [
        { key: "node.kubernetes.io/memory-pressure", effect: "NoSchedule" },
        { key: "user", effect: "NoExecute" },
      ],
    });
    await h.settle();
    await controller.syncNode("node0");
    expect((await getNode("node0")).spec?.taints).toEqual([{ key: "user", effect: "NoExecute" }]);
  });

  it("keeps the beta os/arch labels equal to the GA ones (upstream TestReconcileNodeLabels)", async () => {
    await setup();
    await createNode(h.client, "node0", {
      labels: {
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/arch": "arm64",
      },
    });
    await h.settle();
    await controller.syncNode("node0");
    expect((await getNode("node0")).metadata?.labels).toEqual({
      "kubernetes.io/os": "linux",
      "kubernetes.io/arch": "amd64",
      "beta.kubernetes.io/os": "linux",
      "beta.kubernetes.io/arch": "amd64",
    });
  });
});

describe("NodeLifecycleController.run", () => {
  it("checks nodes every monitor period on its clock, taints through the queue, and stops cleanly", async () => {
    await setup();
    await createNode(h.client, "node0", { conditions: healthyConditions(start) });
    await createNode(h.client, "node1", { conditions: healthyConditions(start) });
    const abort = new AbortController();
    const running = controller.run({ signal: abort.signal });
    await h.settle();
    // node1 keeps posting every 10 s; node0 is silent from the start.
    for (let s = 10; s <= 70; s += 10) {
      await advance(10_000);
      await heartbeat(h.client, "node1", start + s * 1000);
    }
    await h.settle();
    const node0 = await getNode("node0");
    expect(condition(node0, "Ready")?.status).toBe("Unknown");
    expect(node0.spec?.taints?.map((x) => `${x.key}:${x.effect}`).sort()).toEqual([
      "node.kubernetes.io/unreachable:NoExecute",
      "node.kubernetes.io/unreachable:NoSchedule",
    ]);
    expect(condition(await getNode("node1"), "Ready")?.status).toBe("True");
    abort.abort();
    await running;
    // With the informers and the API server gone too, no timer of the controller is left.
    await h.stop();
    expect(h.clock.pendingTimers()).toEqual([]);
    h.stop = async () => {};
  });

  it("rejects a grace period shorter than the monitor period", async () => {
    await setup();
    expect(() =>
      NodeLifecycleController.fromInformerFactory(h.factory, {
        client: h.client,
        nodeMonitorPeriodMs: 5_000,
        nodeMonitorGracePeriodMs: 4_000,
      }),
    ).toThrow("nodeMonitorGracePeriodMs (4000) must not be shorter than nodeMonitorPeriodMs (5000)");
  });
});
