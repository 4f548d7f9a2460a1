import { type Node, nodes, type Pod, pods } from "@reconcile/api";
import type { Taint } from "kubernetes-types/core/v1.js";
import { afterEach, describe, expect, it } from "vitest";
import { TaintEvictionController } from "./taint-eviction-controller.js";
import {
  createNode,
  createPod,
  type Harness,
  harness,
  namespace,
  newPod,
  noExecuteTaint,
  toleration,
} from "./test-harness.test-util.js";

let h: Harness;
let controller: TaintEvictionController;
let running: Promise<void>;
let deletionLatencies: number[] = [];
afterEach(async () => {
  await h.stop();
  await running;
});

async function setup(options: { nodes?: { name: string; taints?: Taint[] }[]; pods?: Pod[] } = {}) {
  h = harness();
  for (const node of options.nodes ?? []) {
    await createNode(h.client, node.name, node.taints ? { taints: node.taints } : {});
  }
  for (const pod of options.pods ?? []) await createPod(h.client, pod);
  deletionLatencies = [];
  controller = TaintEvictionController.fromInformerFactory(h.factory, {
    client: h.client,
    clock: h.clock,
    eventRecorder: h.recorder,
    metrics: { podDeleted: (seconds) => deletionLatencies.push(seconds) },
  });
  await h.start();
  running = controller.run({ signal: h.signal });
  await h.settle();
}

async function getPod(name: string): Promise<Pod | undefined> {
  const list = await h.client.resource(pods, namespace).list();
  return list.items.find((p) => p.metadata?.name === name);
}

/** Whether the pod got the DisruptionTarget condition (upstream's "patch") and was deleted. */
async function outcome(name: string): Promise<{ patched: boolean; deleted: boolean }> {
  await h.settle();
  const pod = await getPod(name);
  return {
    patched: pod?.status?.conditions?.some((c) => c.type === "DisruptionTarget") ?? false,
    deleted: pod === undefined || pod.metadata?.deletionTimestamp !== undefined,
  };
}

const evicted = { patched: true, deleted: true };
const kept = { patched: false, deleted: false };

async function updatePod(name: string, change: (pod: Pod) => Pod): Promise<void> {
  const pod = (await getPod(name)) as Pod;
  await h.client.resource(pods, namespace).update(change(pod));
}

async function setNodeTaints(name: string, taints: Taint[]): Promise<void> {
  const node = await h.client.resource(nodes).get(name);
  const spec: Node["spec"] = { ...node.spec };
  if (taints.length > 0) spec.taints = taints;
  else delete spec.taints;
  await h.client.resource(nodes).update({ ...node, spec });
}

describe("TaintEvictionController: a pod appears (upstream TestCreatePod)", () => {
  const cases = [
    { name: "not scheduled - ignore", pod: newPod("pod1", ""), taints: [noExecuteTaint(1)], want: kept },
    { name: "scheduled on untainted Node", pod: newPod("pod1", "node1"), taints: [], want: kept },
    {
      name: "schedule on tainted Node",
      pod: newPod("pod1", "node1"),
      taints: [noExecuteTaint(1)],
      want: evicted,
    },
    {
      name: "schedule on tainted Node with finite toleration",
      pod: newPod("pod1", "node1", [toleration(1, 100)]),
      taints: [noExecuteTaint(1)],
      want: kept,
    },
    {
      name: "schedule on tainted Node with infinite toleration",
      pod: newPod("pod1", "node1", [toleration(1, -1)]),
      taints: [noExecuteTaint(1)],
      want: kept,
    },
    {
      name: "schedule on tainted Node with infinite invalid toleration",
      pod: newPod("pod1", "node1", [toleration(2, -1)]),
      taints: [noExecuteTaint(1)],
      want: evicted,
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      await setup({ nodes: [{ name: "node1", taints: c.taints }] });
      await createPod(h.client, c.pod);
      expect(await outcome("pod1")).toEqual(c.want);
    });
  }

  it("a finite toleration runs out after exactly tolerationSeconds", async () => {
    await setup({ nodes: [{ name: "node1", taints: [noExecuteTaint(1)] }] });
    await createPod(h.client, newPod("pod1", "node1", [toleration(1, 100)]));
    await h.settle();
    expect(controller.scheduledEvictions()).toEqual(["default/pod1"]);
    await h.clock.advance(99_999);
    expect(await outcome("pod1")).toEqual(kept);
    await h.clock.advance(1);
    expect(await outcome("pod1")).toEqual(evicted);
  });
});

describe("TaintEvictionController: a pod changes (upstream TestUpdatePod)", () => {
  it("scheduling onto tainted Node", async () => {
    await setup({ nodes: [{ name: "node1", taints: [noExecuteTaint(1)] }], pods: [newPod("pod1", "")] });
    await updatePod("pod1", (p) => ({ ...p, spec: { ...p.spec!, nodeName: "node1" } }));
    expect(await outcome("pod1")).toEqual(evicted);
  });

  it("scheduling onto tainted Node with toleration", async () => {
    await setup({
      nodes: [{ name: "node1", taints: [noExecuteTaint(1)] }],
      pods: [newPod("pod1", "", [toleration(1, -1)])],
    });
    await updatePod("pod1", (p) => ({ ...p, spec: { ...p.spec!, nodeName: "node1" } }));
    expect(await outcome("pod1")).toEqual(kept);
  });

  it("removing toleration", async () => {
    await setup({
      nodes: [{ name: "node1", taints: [noExecuteTaint(1)] }],
      pods: [newPod("pod1", "node1", [toleration(1, 100)])],
    });
    expect(controller.scheduledEvictions()).toEqual(["default/pod1"]);
    await updatePod("pod1", (p) => ({ ...p, spec: { ...p.spec!, tolerations: [] } }));
    expect(await outcome("pod1")).toEqual(evicted);
  });

  it("lengthening toleration shouldn't work", async () => {
    await setup({
      nodes: [{ name: "node1", taints: [noExecuteTaint(1)] }],
      pods: [newPod("pod1", "node1", [toleration(1, 1)])],
    });
    expect(controller.scheduledEvictions()).toEqual(["default/pod1"]);
    await updatePod("pod1", (p) => ({ ...p, spec: { ...p.spec!, tolerations: [toleration(1, 100)] } }));
    await h.settle();
    await h.clock.advance(1_000);
    expect(await outcome("pod1")).toEqual(evicted);
  });

  it("a deleted pod's scheduled eviction is cancelled with an event (upstream TestDeletePod)", async () => {
    await setup({
      nodes: [{ name: "node1", taints: [noExecuteTaint(1)] }],
      pods: [newPod("pod1", "node1", [toleration(1, 100)])],
    });
    await h.client.resource(pods, namespace).delete("pod1", { gracePeriodSeconds: 0 });
    await h.until(() => controller.scheduledEvictions().length === 0, "cancelled");
    expect(h.events).toContainEqual({
      kind: "Pod",
      namespace,
      name: "pod1",
      type: "Normal",
      reason: "TaintManagerEviction",
      message: "Cancelling deletion of Pod default/pod1",
    });
  });
});

describe("TaintEvictionController: a node appears (upstream TestCreateNode)", () => {
  const cases = [
    {
      name: "Creating Node matching already assigned Pod",
      pod: newPod("pod1", "node1"),
      taints: [],
      want: kept,
    },
    {
      name: "Creating tainted Node matching already assigned Pod",
      pod: newPod("pod1", "node1"),
      taints: [noExecuteTaint(1)],
      want: evicted,
    },
    {
      name: "Creating tainted Node matching already assigned tolerating Pod",
      pod: newPod("pod1", "node1", [toleration(1, -1)]),
      taints: [noExecuteTaint(1)],
      want: kept,
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      await setup({ pods: [c.pod] });
      await createNode(h.client, "node1", { taints: c.taints });
      expect(await outcome("pod1")).toEqual(c.want);
    });
  }
});

describe("TaintEvictionController: a node changes (upstream TestUpdateNode)", () => {
  it("Added taint, expect node patched and deleted", async () => {
    await setup({ nodes: [{ name: "node1" }], pods: [newPod("pod1", "node1")] });
    await setNodeTaints("node1", [noExecuteTaint(1)]);
    expect(await outcome("pod1")).toEqual(evicted);
    const pod = await getPod("pod1");
    expect(pod?.status?.conditions?.find((c) => c.type === "DisruptionTarget")).toEqual({
      type: "DisruptionTarget",
      status: "True",
      reason: "DeletionByTaintManager",
      message: "Taint manager: deleting due to NoExecute taint",
      lastProbeTime: null,
      lastTransitionTime: "2026-01-01T00:00:00Z",
    });
    expect(h.events).toEqual([
      {
        kind: "Pod",
        namespace,
        name: "pod1",
        type: "Normal",
        reason: "TaintManagerEviction",
        message: "Marking for deletion Pod default/pod1",
      },
    ]);
    expect(controller.podDeletions).toBe(1);
    expect(deletionLatencies).toEqual([0]);
  });

  it("Added tolerated taint", async () => {
    await setup({ nodes: [{ name: "node1" }], pods: [newPod("pod1", "node1", [toleration(1, 100)])] });
    await setNodeTaints("node1", [noExecuteTaint(1)]);
    expect(await outcome("pod1")).toEqual(kept);
  });

  it("Only one added taint tolerated", async () => {
    await setup({ nodes: [{ name: "node1" }], pods: [newPod("pod1", "node1", [toleration(1, 100)])] });
    await setNodeTaints("node1", [noExecuteTaint(1), noExecuteTaint(2)]);
    expect(await outcome("pod1")).toEqual(evicted);
  });

  it("Taint removed", async () => {
    await setup({
      nodes: [{ name: "node1", taints: [noExecuteTaint(1)] }],
      pods: [newPod("pod1", "node1", [toleration(1, 1)])],
    });
    expect(controller.scheduledEvictions()).toEqual(["default/pod1"]);
    await setNodeTaints("node1", []);
    await h.until(() => controller.scheduledEvictions().length === 0, "cancelled");
    await h.clock.advance(1_500);
    expect(await outcome("pod1")).toEqual(kept);
    expect(h.events.map((e) => e.message)).toEqual(["Cancelling deletion of Pod default/pod1"]);
  });

  it("Pod with multiple tolerations are evicted when first one runs out", async () => {
    const pod = newPod("pod1", "node1", [toleration(1, 1), { ...toleration(2, 100) }]);
    await setup({ nodes: [{ name: "node1" }], pods: [pod] });
    await setNodeTaints("node1", [noExecuteTaint(1), noExecuteTaint(2)]);
    await h.settle();
    expect(await outcome("pod1")).toEqual(kept);
    await h.clock.advance(1_000);
    expect(await outcome("pod1")).toEqual(evicted);
  });

  it("follows a pod through changing taints (upstream TestUpdateNodeWithMultipleTaints)", async () => {
    const t1 = noExecuteTaint(1);
    const t2 = noExecuteTaint(2);
    const pod = newPod("pod1", "node1", [
      { key: t1.key, operator: "Exists", effect: "NoExecute" },
      { key: t2.key, operator: "Exists", effect: "NoExecute", tolerationSeconds: 60 },
    ]);
    await setup({ nodes: [{ name: "node1" }], pods: [pod] });
    expect(controller.scheduledEvictions()).toEqual([]);
    await setNodeTaints("node1", [t1]);
    await h.settle();
    expect(controller.scheduledEvictions()).toEqual([]);
    await setNodeTaints("node1", [t1, t2]);
    await h.until(() => controller.scheduledEvictions().length === 1, "scheduled");
    await setNodeTaints("node1", [t1]);
    await h.until(() => controller.scheduledEvictions().length === 0, "cancelled");
    await h.clock.advance(60_000);
    expect(await outcome("pod1")).toEqual(kept);
  });
});

describe("TaintEvictionController: several pods (upstream TestUpdateNodeWithMultiplePods)", () => {
  const threePods = () => [
    newPod("pod1", "node1"),
    newPod("pod2", "node1", [toleration(1, 1)]),
    newPod("pod3", "node1", [toleration(1, -1)]),
  ];
  async function deletedPods(): Promise<string[]> {
    await h.settle();
    const list = await h.client.resource(pods, namespace).list();
    return list.items
      .filter((p) => p.metadata?.deletionTimestamp !== undefined)
      .map((p) => p.metadata?.name ?? "")
      .sort();
  }

  it("Pods with different toleration times are evicted appropriately", async () => {
    await setup({ nodes: [{ name: "node1" }], pods: threePods() });
    await setNodeTaints("node1", [noExecuteTaint(1)]);
    expect(await deletedPods()).toEqual(["pod1"]);
    await h.clock.advance(999);
    expect(await deletedPods()).toEqual(["pod1"]);
    await h.clock.advance(1);
    expect(await deletedPods()).toEqual(["pod1", "pod2"]);
    await h.clock.advance(3_600_000);
    expect(await deletedPods()).toEqual(["pod1", "pod2"]);
  });

  it("Evict all pods not matching all taints instantly", async () => {
    await setup({ nodes: [{ name: "node1" }], pods: threePods() });
    await setNodeTaints("node1", [noExecuteTaint(1), noExecuteTaint(2)]);
    expect(await deletedPods()).toEqual(["pod1", "pod2", "pod3"]);
  });
});

describe("TaintEvictionController: late pods (upstream TestEventualConsistency)", () => {
  const cases = [
    { name: "existing pod2 scheduled onto tainted Node", prev: newPod("pod2", ""), tolerations: undefined },
    {
      name: "existing pod2 with taint toleration scheduled onto tainted Node",
      prev: newPod("pod2", "", [toleration(1, 100)]),
      tolerations: [toleration(1, 100)],
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      await setup({ nodes: [{ name: "node1" }], pods: [newPod("pod1", "node1"), c.prev] });
      await setNodeTaints("node1", [noExecuteTaint(1)]);
      expect(await outcome("pod1")).toEqual(evicted);
      await updatePod("pod2", (p) => ({ ...p, spec: { ...p.spec!, nodeName: "node1" } }));
      await h.settle();
      if (c.tolerations !== undefined) await h.clock.advance(100_000);
      expect(await outcome("pod2")).toEqual(evicted);
    });
  }

  it("new pod2 created on tainted Node", async () => {
    await setup({ nodes: [{ name: "node1" }], pods: [newPod("pod1", "node1")] });
    await setNodeTaints("node1", [noExecuteTaint(1)]);
    expect(await outcome("pod1")).toEqual(evicted);
    await createPod(h.client, newPod("pod2", "node1"));
    expect(await outcome("pod2")).toEqual(evicted);
  });
});

describe("TaintEvictionController lifecycle", () => {
  it("run settles after a stop and leaves no timer behind", async () => {
    await setup({
      nodes: [{ name: "node1", taints: [noExecuteTaint(1)] }],
      pods: [newPod("pod1", "node1", [toleration(1, 100)])],
    });
    expect(controller.scheduledEvictions()).toEqual(["default/pod1"]);
    await h.stop();
    await running;
    expect(h.clock.pendingTimers()).toEqual([]);
    // afterEach stops again; make that harmless.
    h.stop = async () => {};
  });
});
