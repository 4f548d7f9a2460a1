import { type Node, type Pod, pods } from "@reconcile/api";
import { node as buildNode, pod as buildPod } from "@reconcile/api/testing";
import { Introspection } from "@reconcile/controller";
import { describe, expect, it } from "vitest";
import { DecisionLog } from "./decisions.js";
import { setup } from "./scheduler-testing.js";

const node = (name: string, cpu: string, extra: Partial<Node> = {}): Node => ({
  ...buildNode(name, { cpu }),
  ...extra,
});
const pod = (name: string, cpu: string): Pod =>
  buildPod(name, { namespace: "ns", labels: {}, resourceVersion: "1", requests: { cpu } });

describe("the scheduler's decision log", () => {
  it("records the node picked with each feasible node's score and each rejected node's filter verdict", async () => {
    const introspection = new Introspection();
    const { nodeInformer, podInformer, scheduler, binder, clock } = setup({ decisionLog: 10, introspection });
    nodeInformer.add(node("small", "1"));
    nodeInformer.add(node("big", "8"));
    nodeInformer.add(node("mid", "4"));
    nodeInformer.add(node("closed", "8", { spec: { unschedulable: true } }));
    const at = clock.now();
    podInformer.add(pod("a", "2"));
    // It shows itself while it runs.
    expect(introspection.snapshot()).toEqual([]);
    const abort = new AbortController();
    const running = scheduler.run({ signal: abort.signal });
    for (let i = 0; i < 20 && binder.bound.length === 0; i++) await clock.flush();
    expect(binder.bound).toEqual(["a→big"]);
    const [source] = introspection.snapshot();
    expect(source!.kind).toBe("scheduler");
    expect(source!.name).toBe("default-scheduler");
    const state = source!.state as ReturnType<ReturnType<typeof setup>["scheduler"]["inspect"]>;
    expect(state.queue).toEqual({ active: 0, backoff: 0, unschedulable: 0, gated: 0 });
    expect(state.nodes).toBe(4);
    expect(state.decisions).toHaveLength(1);
    const decision = state.decisions[0]!;
    expect(decision).toMatchObject({
      pod: "ns/a",
      uid: "uid-a",
      at,
      result: "Scheduled",
      node: "big",
      evaluatedNodes: 4,
      feasibleNodes: 2,
      rejected: [
        { node: "closed", plugin: "NodeUnschedulable", reasons: ["node(s) were unschedulable"] },
        { node: "small", plugin: "NodeResourcesFit", reasons: ["Insufficient cpu"] },
      ],
    });
    expect(decision.scores.map((s) => s.node)).toEqual(["big", "mid"]);
    expect(decision.scores[0]!.score).toBeGreaterThan(decision.scores[1]!.score);
    abort.abort();
    await running;
    expect(introspection.snapshot()).toEqual([]);
  });

  it("records a pod that fits nowhere with the FailedScheduling text", async () => {
    const { nodeInformer, podInformer, client, scheduler, scheduleAll } = setup({ decisionLog: 10 });
    nodeInformer.add(node("n1", "1"));
    client.seed(pods, pod("big", "2"));
    podInformer.add(pod("big", "2"));
    await scheduleAll();
    expect(scheduler.inspect().decisions).toMatchObject([
      {
        pod: "ns/big",
        result: "Unschedulable",
        message: expect.stringMatching(/^0\/1 nodes are available: 1 Insufficient cpu\./),
        evaluatedNodes: 1,
        feasibleNodes: 0,
        rejected: [{ node: "n1", plugin: "NodeResourcesFit", reasons: ["Insufficient cpu"] }],
        scores: [],
      },
    ]);
  });

  it("keeps nothing by default", async () => {
    const { nodeInformer, podInformer, scheduler, scheduleAll } = setup();
    nodeInformer.add(node("n1", "4"));
    podInformer.add(pod("a", "1"));
    await scheduleAll();
    expect(scheduler.inspect().decisions).toEqual([]);
  });

  it("forgets the oldest decision beyond its capacity", () => {
    const log = new DecisionLog(2);
    for (const name of ["a", "b", "c"]) log.failed(pod(name, "1"), 1, 0, new Error("no"));
    expect(log.list().map((d) => [d.pod, d.result, d.message])).toEqual([
      ["ns/b", "Error", "no"],
      ["ns/c", "Error", "no"],
    ]);
  });
});
