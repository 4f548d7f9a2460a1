// Cycles with InterPodAffinity and PodTopologySpread: placement, FailedScheduling texts, preemption's
// what-ifs, and which assigned-pod events requeue a parked pod.
import type { Pod } from "@reconcile/api";
import { pod as buildPod, node } from "@reconcile/api/testing";
import type { PodAffinityTerm } from "kubernetes-types/core/v1.js";
import { describe, expect, it } from "vitest";
import { setup } from "./scheduler-testing.js";

const hostname = "kubernetes.io/hostname";
const apart = (app: string): PodAffinityTerm => ({
  topologyKey: hostname,
  labelSelector: { matchLabels: { app } },
});

function pod(
  name: string,
  labels: Record<string, string>,
  spec: Partial<Pod["spec"]> = {},
  nodeName?: string,
): Pod {
  const built = buildPod(name, {
    namespace: "ns",
    labels,
    resourceVersion: "1",
    requests: { cpu: "100m" },
    spec,
  });
  return nodeName === undefined ? built : { ...built, spec: { ...built.spec!, nodeName } };
}

const antiAffine = (name: string, app: string, priority?: number): Pod =>
  pod(
    name,
    { app },
    {
      affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [apart(app)] } },
      ...(priority === undefined ? {} : { priority }),
    },
  );

describe("Scheduler with pod (anti-)affinity", () => {
  it("spreads pods that repel each other one per node, and explains the one left over", async () => {
    const { nodeInformer, podInformer, binder, recorder, scheduleAll } = setup();
    for (const name of ["n1", "n2", "n3"]) nodeInformer.add(node(name));
    for (const name of ["a", "b", "c", "d"]) podInformer.add(antiAffine(name, "web"));
    await scheduleAll();
    const nodesUsed = binder.bound.map((binding) => binding.split("→")[1]).sort();
    expect(nodesUsed).toEqual(["n1", "n2", "n3"]);
    expect(recorder.events.at(-1)).toBe(
      "Warning FailedScheduling 0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.",
    );
  });

  it("explains an existing pod's anti-affinity in its own words", async () => {
    const { nodeInformer, podInformer, recorder, scheduleAll } = setup();
    nodeInformer.add(node("n1"));
    podInformer.add(antiAffine("guard", "web"));
    await scheduleAll();
    podInformer.add(pod("plain", { app: "web" }));
    await scheduleAll();
    expect(recorder.events.at(-1)).toBe(
      "Warning FailedScheduling 0/1 nodes are available: 1 node(s) didn't satisfy existing pods anti-affinity rules. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
    );
  });

  it("preemption's what-if removes lower-priority pods from the plugins' state, not only from the node", async () => {
    const { nodeInformer, podInformer, recorder, scheduleAll } = setup();
    nodeInformer.add(node("n1"));
    podInformer.add(pod("low", { app: "web" }, {}, "n1"));
    podInformer.add(antiAffine("high", "web", 1000));
    await scheduleAll();
    // Evicting "low" would let "high" in, so there is no "preemption:" explanation of why not.
    expect(recorder.events.at(-1)).toBe(
      "Warning FailedScheduling 0/1 nodes are available: 1 node(s) didn't match pod anti-affinity rules.",
    );
  });

  it("requeues a pod waiting for affinity when an assigned pod its term selects arrives, not for others", async () => {
    const { nodeInformer, podInformer, scheduler, scheduleAll } = setup();
    nodeInformer.add(node("n1"));
    const follower = pod(
      "follower",
      {},
      {
        affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [apart("db")] } },
      },
    );
    podInformer.add(follower);
    await scheduleAll();
    expect(scheduler.queue.whereIs("uid-follower")).toBe("unschedulable");
    podInformer.add(pod("cache", { app: "cache" }, {}, "n1"));
    expect(scheduler.queue.whereIs("uid-follower")).toBe("unschedulable");
    podInformer.add(pod("db", { app: "db" }, {}, "n1"));
    expect(scheduler.queue.whereIs("uid-follower")).toBe("backoff");
  });

  it("a node added while a pod waits for affinity moves it: the one-node check leaves cross-node plugins out", async () => {
    const { nodeInformer, podInformer, scheduler, scheduleAll } = setup();
    nodeInformer.add(node("n1"));
    podInformer.add(
      pod(
        "follower",
        {},
        {
          affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [apart("db")] } },
        },
      ),
    );
    await scheduleAll();
    expect(scheduler.queue.whereIs("uid-follower")).toBe("unschedulable");
    // On n2 alone no db pod is visible, yet another node's pods may satisfy the term: upstream moves the pod.
    nodeInformer.add(node("n2"));
    expect(scheduler.queue.whereIs("uid-follower")).toBe("backoff");
  });

  it("requeues a pod a spread constraint held back when an assigned pod in its namespace changes labels", async () => {
    const { nodeInformer, podInformer, scheduler, scheduleAll } = setup();
    nodeInformer.add({ ...node("n1"), metadata: { name: "n1", labels: { zone: "a" } } });
    nodeInformer.add({ ...node("n2"), metadata: { name: "n2", labels: { zone: "b" } } });
    const existing = pod("x", { app: "web" }, {}, "n1");
    podInformer.add(existing);
    const spread = pod(
      "s",
      { app: "web" },
      {
        nodeSelector: { zone: "a" },
        topologySpreadConstraints: [
          {
            maxSkew: 1,
            topologyKey: "zone",
            whenUnsatisfiable: "DoNotSchedule",
            labelSelector: { matchLabels: { app: "web" } },
            nodeAffinityPolicy: "Ignore",
          },
        ],
      },
    );
    podInformer.add(spread);
    await scheduleAll();
    expect(scheduler.queue.whereIs("uid-s")).toBe("unschedulable");
    podInformer.update({ ...existing, metadata: { ...existing.metadata, labels: { app: "other" } } });
    expect(scheduler.queue.whereIs("uid-s")).toBe("backoff");
  });
});
