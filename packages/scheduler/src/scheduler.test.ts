import { type Node, type Pod, pods } from "@reconcile/api";
import { node as buildNode, pod as buildPod } from "@reconcile/api/testing";
import { FakeClock } from "@reconcile/clock";
import { FakeEventRecorder, RecordingClient } from "@reconcile/controller/testing";
import { FakeInformer } from "@reconcile/informer/testing";
import { describe, expect, it } from "vitest";
import { NoNodesAvailableError } from "./fit-error.js";
import { Scheduler } from "./scheduler.js";
import { RecordingBinder, setup } from "./scheduler-testing.js";

const node = (name: string, cpu = "4", extra: Partial<Node> = {}): Node => ({
  ...buildNode(name, { cpu }),
  ...extra,
});

const pod = (name: string, cpu = "100m", spec: Partial<Pod["spec"]> = {}): Pod =>
  buildPod(name, { namespace: "ns", labels: {}, resourceVersion: "1", requests: { cpu }, spec });

describe("Scheduler.numFeasibleNodesToFind (upstream TestNumFeasibleNodesToFind)", () => {
  it.each([
    { name: "nodes < 100", nodes: 10, percentage: 0, want: 10 },
    { name: "nodes = 100", nodes: 100, percentage: 0, want: 100 },
    { name: "adaptive at 1000 nodes: 42 %", nodes: 1000, percentage: 0, want: 420 },
    { name: "set percentage 40 at 1000 nodes", nodes: 1000, percentage: 40, want: 400 },
    {
      name: "adaptive at 6000 nodes: 50 − 48 = 2 % is raised to the 5 % floor",
      nodes: 6000,
      percentage: 0,
      want: 300,
    },
    { name: "adaptive at 5000 nodes: 10 %", nodes: 5000, percentage: 0, want: 500 },
    { name: "at least 100 nodes", nodes: 150, percentage: 10, want: 100 },
    { name: "set percentage 100", nodes: 1000, percentage: 100, want: 1000 },
  ])("$name", ({ nodes, percentage, want }) => {
    const { scheduler } = setup({ percentageOfNodesToScore: percentage });
    expect(scheduler.numFeasibleNodesToFind(nodes)).toBe(want);
  });
});

describe("Scheduler cycle", () => {
  it("binds to the best node, records Scheduled, and counts the assumed pod at once", async () => {
    const { nodeInformer, podInformer, binder, recorder, scheduler, scheduleAll } = setup();
    nodeInformer.add(node("small", "1"));
    nodeInformer.add(node("big", "8"));
    podInformer.add(pod("a", "500m"));
    await scheduleAll();
    expect(binder.bound).toEqual(["a→big"]);
    expect(recorder.events).toEqual(["Normal Scheduled Successfully assigned ns/a to big"]);
    expect(scheduler.cache.counts()).toEqual({ nodes: 2, pods: 1, assumedPods: 1 });
    expect(scheduler.cache.nodeInfo("big")?.requested.milliCPU).toBe(500);
    // The informer then sees the bound pod: it replaces the assumed copy.
    podInformer.update({ ...pod("a", "500m"), spec: { ...pod("a", "500m").spec!, nodeName: "big" } });
    expect(scheduler.cache.counts()).toEqual({ nodes: 2, pods: 1, assumedPods: 0 });
    expect(scheduler.cache.nodeInfo("big")?.requested.milliCPU).toBe(500);
  });

  it("explains a pod that fits nowhere with one reason per node, parks it, and sets PodScheduled=False", async () => {
    const { nodeInformer, podInformer, recorder, client, scheduler, scheduleAll, clock } = setup();
    nodeInformer.add(node("n1", "1"));
    nodeInformer.add(
      node("n2", "1", { spec: { taints: [{ key: "dedicated", value: "gpu", effect: "NoSchedule" }] } }),
    );
    nodeInformer.add(node("n3", "1", { spec: { unschedulable: true } }));
    client.seed(pods, pod("big", "2"));
    podInformer.add(pod("big", "2"));
    await scheduleAll();
    const message =
      "0/3 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint {dedicated: gpu}, 1 node(s) were unschedulable. preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling.";
    expect(recorder.events).toEqual([`Warning FailedScheduling ${message}`]);
    expect(scheduler.queue.whereIs("uid-big")).toBe("unschedulable");
    await clock.flush();
    const patches = client.actionsOf("patch", "pods");
    expect(patches).toHaveLength(1);
    expect(patches[0]?.body).toEqual({
      status: {
        conditions: [
          {
            type: "PodScheduled",
            status: "False",
            reason: "Unschedulable",
            message,
            lastTransitionTime: "2026-01-01T00:00:00Z",
          },
        ],
      },
    });
  });

  it("retries a parked pod when a node that fits is added, and not for a node that does not", async () => {
    const { nodeInformer, podInformer, binder, scheduler, scheduleAll } = setup();
    nodeInformer.add(node("n1", "1"));
    podInformer.add(pod("big", "2"));
    await scheduleAll();
    nodeInformer.add(node("n2", "1"));
    expect(scheduler.queue.whereIs("uid-big")).toBe("unschedulable");
    nodeInformer.add(node("n3", "4"));
    expect(scheduler.queue.whereIs("uid-big")).toBe("backoff");
    scheduler.queue.moveAllToActiveOrBackoffQueue("ForceActivate");
    expect(binder.bound).toEqual([]);
  });

  it("retries a pod that did not fit for lack of cpu when an assigned pod is deleted", async () => {
    const { nodeInformer, podInformer, scheduler, scheduleAll } = setup();
    nodeInformer.add(node("n1", "1"));
    const hog = pod("hog", "1");
    hog.spec!.nodeName = "n1";
    podInformer.add(hog);
    podInformer.add(pod("waiting", "500m"));
    await scheduleAll();
    expect(scheduler.queue.whereIs("uid-waiting")).toBe("unschedulable");
    podInformer.delete(hog);
    expect(scheduler.queue.whereIs("uid-waiting")).toBe("backoff");
  });

  it("reports a PreFilter rejection without a histogram, and no nodes at all", () => {
    const { scheduler, nodeInformer } = setup();
    expect(() => scheduler.schedulePod(pod("a"))).toThrow(NoNodesAvailableError);
    let none: unknown;
    try {
      scheduler.schedulePod(pod("a"));
    } catch (error) {
      none = error;
    }
    expect(NoNodesAvailableError.isInstance(none)).toBe(true);
    expect((none as NoNodesAvailableError).code).toBe("scheduler.no-nodes-available");
    nodeInformer.add(node("n1"));
    const broken = {
      name: "Broken",
      preFilter: () => ({
        code: "UnschedulableAndUnresolvable" as const,
        reasons: ["pod has an unsupported volume"],
      }),
      filter: () => ({ code: "Success" as const, reasons: [] }),
    };
    const custom = new Scheduler({
      client: new RecordingClient(),
      podInformer: new FakeInformer<Pod>(),
      nodeInformer: new FakeInformer<Node>(),
      plugins: [broken],
      eventRecorder: new FakeEventRecorder(),
    });
    custom.cache.addNode(node("n1"));
    expect(() => custom.schedulePod(pod("a"))).toThrow(
      "0/1 nodes are available: pod has an unsupported volume.",
    );
  });

  it("filters only the nodes a metadata.name affinity names (upstream PreFilterResult), and counts the others as absent", () => {
    const { scheduler, nodeInformer } = setup();
    for (let i = 1; i <= 5; i++) nodeInformer.add(node(`n${i}`, i === 3 ? "100m" : "4"));
    const pinned = (name: string, cpu: string, ...nodeNames: string[][]) =>
      pod(name, cpu, {
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: nodeNames.map((values) => ({
                matchFields: [{ key: "metadata.name", operator: "In", values }],
              })),
            },
          },
        },
      });
    expect(scheduler.schedulePod(pinned("a", "100m", ["n2"]))).toEqual({
      nodeName: "n2",
      evaluatedNodes: 1,
      feasibleNodes: 1,
    });
    expect(scheduler.schedulePod(pinned("b", "100m", ["n2"], ["n4", "nosuch"])).evaluatedNodes).toBe(2);
    expect(() => scheduler.schedulePod(pinned("c", "1", ["n3"]))).toThrow(
      "0/5 nodes are available: 1 Insufficient cpu, 4 node(s) didn't satisfy plugin(s) [NodeAffinity].",
    );
    const conflicting = pinned("d", "100m", ["n1"]);
    conflicting.spec!.affinity!.nodeAffinity!.requiredDuringSchedulingIgnoredDuringExecution!.nodeSelectorTerms[0]!.matchFields!.push(
      { key: "metadata.name", operator: "In", values: ["n2"] },
    );
    expect(() => scheduler.schedulePod(conflicting)).toThrow(
      "0/5 nodes are available: pod affinity terms conflict.",
    );
  });

  it("breaks ties among equally scored nodes at random", () => {
    const picks = new Set<string>();
    for (const r of [0, 0.4, 0.99]) {
      const { scheduler, nodeInformer } = setup({ random: () => r });
      for (const name of ["n1", "n2", "n3"]) nodeInformer.add(node(name));
      picks.add(scheduler.schedulePod(pod("a")).nodeName);
    }
    expect(picks.size).toBeGreaterThan(1);
  });

  it("rotates the node it starts filtering at, as upstream's nextStartNodeIndex", () => {
    const { scheduler } = setup({ percentageOfNodesToScore: 1 });
    for (let i = 0; i < 200; i++) scheduler.cache.addNode(node(`n${i}`));
    // 200 nodes, 1 % → at least 100 nodes; two cycles cover all 200 once.
    const first = scheduler.schedulePod(pod("a"));
    const second = scheduler.schedulePod(pod("b"));
    expect(first.evaluatedNodes).toBe(100);
    expect(second.evaluatedNodes).toBe(100);
    const index = (name: string) => Number(name.slice(1));
    expect(index(first.nodeName)).toBeLessThan(100);
    expect(index(second.nodeName)).toBeGreaterThanOrEqual(100);
  });

  it("forgets the assumed pod when binding fails and backs the pod off", async () => {
    const { nodeInformer, podInformer, binder, recorder, scheduler, scheduleAll } = setup();
    binder.fail = new Error("connection reset");
    nodeInformer.add(node("n1"));
    podInformer.add(pod("a"));
    await scheduleAll();
    expect(scheduler.cache.counts()).toEqual({ nodes: 1, pods: 0, assumedPods: 0 });
    expect(scheduler.queue.whereIs("uid-a")).toBe("backoff");
    expect(recorder.events).toEqual(["Warning FailedScheduling connection reset"]);
  });

  it("leaves pods of another scheduler, and pods already bound, out of the queue", () => {
    const { podInformer, scheduler } = setup();
    podInformer.add(pod("theirs", "1", { schedulerName: "other" }));
    podInformer.add(pod("bound", "1", { nodeName: "n1" }));
    podInformer.add(pod("done", "1"));
    podInformer.update({ ...pod("done", "1"), status: { phase: "Succeeded" } });
    expect(scheduler.queue.pendingPods()).toEqual({ active: 0, backoff: 0, unschedulable: 0, gated: 0 });
    expect(scheduler.cache.counts().pods).toBe(1);
  });

  it("skips a pod being deleted with upstream's event", async () => {
    const { podInformer, nodeInformer, recorder, binder, scheduleAll } = setup();
    nodeInformer.add(node("n1"));
    const going = pod("going");
    const deleting: Pod = {
      ...going,
      metadata: { ...going.metadata, deletionTimestamp: "2026-01-01T00:00:00Z" },
    };
    podInformer.add(deleting);
    await scheduleAll();
    expect(binder.bound).toEqual([]);
    expect(recorder.events).toEqual(["Warning FailedScheduling skip schedule deleting pod: ns/going"]);
  });

  it("rejects a percentageOfNodesToScore outside [0, 100]", () => {
    expect(
      () =>
        new Scheduler({
          client: new RecordingClient(),
          podInformer: new FakeInformer<Pod>(),
          nodeInformer: new FakeInformer<Node>(),
          percentageOfNodesToScore: 101,
        }),
    ).toThrow("Scheduler: percentageOfNodesToScore must be within [0, 100], got 101");
  });

  it("reports each attempt's result and the scheduled pod's attempts to metrics", async () => {
    const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
    const podInformer = new FakeInformer<Pod>();
    const nodeInformer = new FakeInformer<Node>();
    const attempts: string[] = [];
    const scheduled: number[] = [];
    const scheduler = new Scheduler({
      client: new RecordingClient(),
      podInformer,
      nodeInformer,
      clock,
      binder: new RecordingBinder(),
      eventRecorder: new FakeEventRecorder(),
      metrics: {
        scheduleAttempt: (result, profile) => attempts.push(`${profile} ${result}`),
        podScheduled: (count) => scheduled.push(count),
      },
    });
    nodeInformer.add(node("n1", "1"));
    podInformer.add(pod("big", "2"));
    scheduler.scheduleOne((await scheduler.queue.pop())!);
    nodeInformer.add(node("n2", "4"));
    await clock.advance(1000);
    scheduler.queue.flushBackoffQCompleted();
    scheduler.scheduleOne((await scheduler.queue.pop())!);
    await clock.flush();
    expect(attempts).toEqual(["default-scheduler unschedulable", "default-scheduler scheduled"]);
    expect(scheduled).toEqual([2]);
  });

  it("without any node, reports 'no nodes available to schedule pods' as Unschedulable and backs the pod off", async () => {
    const { podInformer, recorder, client, scheduler, scheduleAll, clock } = setup();
    client.seed(pods, pod("a"));
    podInformer.add(pod("a"));
    await scheduleAll();
    await clock.flush();
    expect(recorder.events).toEqual(["Warning FailedScheduling no nodes available to schedule pods"]);
    expect(scheduler.queue.whereIs("uid-a")).toBe("backoff");
    const body = client.actionsOf("patch", "pods")[0]?.body as {
      status: { conditions: { reason: string }[] };
    };
    expect(body.status.conditions[0]?.reason).toBe("Unschedulable");
  });
});
