import type { Pod } from "@reconcile/api";
import { FakeClock } from "@reconcile/clock";
import { describe, expect, it } from "vitest";
import type { ClusterEvent } from "./framework.js";
import { type QueuedPodInfo, SchedulingQueue } from "./scheduling-queue.js";

function pod(
  name: string,
  options: { priority?: number; gates?: string[]; labels?: Record<string, string> } = {},
): Pod {
  return {
    metadata: {
      name,
      namespace: "ns",
      uid: `uid-${name}`,
      resourceVersion: "1",
      ...(options.labels ? { labels: options.labels } : {}),
    },
    spec: {
      containers: [],
      ...(options.priority !== undefined ? { priority: options.priority } : {}),
      ...(options.gates ? { schedulingGates: options.gates.map((name) => ({ name })) } : {}),
    },
  };
}

function setup() {
  const clock = new FakeClock(1_000_000);
  const pluginEvents = new Map<string, Set<ClusterEvent>>([
    ["NodeResourcesFit", new Set<ClusterEvent>(["NodeAdd", "AssignedPodDelete"])],
    ["TaintToleration", new Set<ClusterEvent>(["NodeTaintChange"])],
  ]);
  const queue = new SchedulingQueue({ clock, pluginEvents });
  return { clock, queue };
}

async function popName(queue: SchedulingQueue): Promise<string | undefined> {
  const info = await queue.pop();
  return info?.pod.metadata?.name;
}

/** Pops a pod and fails it with `plugins` as the rejectors. */
async function failAttempt(queue: SchedulingQueue, plugins: string[]): Promise<QueuedPodInfo> {
  const info = (await queue.pop())!;
  const cycle = queue.schedulingCycle();
  info.unschedulablePlugins = new Set(plugins);
  queue.addUnschedulableIfNotPresent(info, cycle);
  queue.done(info.key);
  return info;
}

describe("SchedulingQueue", () => {
  it("tryPop hands out what pop would, without waiting, and undefined when activeQ is empty", async () => {
    const { clock, queue } = setup();
    expect(queue.tryPop()).toBeUndefined();
    expect(queue.schedulingCycle()).toBe(0);
    queue.add(pod("low", { priority: 1 }));
    await clock.advance(1);
    queue.add(pod("high", { priority: 10 }));
    const first = queue.tryPop();
    expect(first?.pod.metadata?.name).toBe("high");
    expect(first?.attempts).toBe(1);
    expect(queue.whereIs("uid-high")).toBe("inFlight");
    expect(queue.schedulingCycle()).toBe(1);
    expect(queue.tryPop()?.pod.metadata?.name).toBe("low");
    expect(queue.schedulingCycle()).toBe(2);
    expect(queue.tryPop()).toBeUndefined();
    expect(queue.schedulingCycle()).toBe(2);
  });

  it("pops higher priority first, then the earlier queue time", async () => {
    const { clock, queue } = setup();
    queue.add(pod("low", { priority: 1 }));
    await clock.advance(1);
    queue.add(pod("high-later", { priority: 10 }));
    queue.add(pod("none"));
    await clock.advance(1);
    queue.add(pod("high-latest", { priority: 10 }));
    const order = [];
    for (let i = 0; i < 4; i++) order.push(await popName(queue));
    expect(order).toEqual(["high-later", "high-latest", "low", "none"]);
  });

  it("waits in pop until a pod arrives, and resolves undefined once closed", async () => {
    const { queue } = setup();
    const next = queue.pop();
    queue.add(pod("a"));
    expect((await next)?.pod.metadata?.name).toBe("a");
    const waiting = queue.pop();
    queue.close();
    expect(await waiting).toBeUndefined();
  });

  it("backs off 1 s, 2 s, 4 s, 8 s, then 10 s at most", () => {
    const { queue } = setup();
    expect([0, 1, 2, 3, 4, 5, 6].map((attempts) => queue.backoffDuration(attempts))).toEqual([
      0, 1000, 2000, 4000, 8000, 10_000, 10_000,
    ]);
  });

  it("parks a rejected pod and moves it on an event its rejector registered, to backoffQ while it backs off", async () => {
    const { clock, queue } = setup();
    queue.add(pod("a"));
    const info = await failAttempt(queue, ["NodeResourcesFit"]);
    expect(queue.whereIs(info.key)).toBe("unschedulable");
    queue.moveAllToActiveOrBackoffQueue("NodeTaintChange");
    expect(queue.whereIs(info.key)).toBe("unschedulable");
    queue.moveAllToActiveOrBackoffQueue("NodeAdd");
    expect(queue.whereIs(info.key)).toBe("backoff");
    await clock.advance(999);
    queue.flushBackoffQCompleted();
    expect(queue.whereIs(info.key)).toBe("backoff");
    await clock.advance(1);
    queue.flushBackoffQCompleted();
    expect(queue.whereIs(info.key)).toBe("active");
    expect(queue.pendingPods()).toEqual({ active: 1, backoff: 0, unschedulable: 0, gated: 0 });
  });

  it("moves a parked pod straight to activeQ when its backoff is over, and only if preCheck passes", async () => {
    const { clock, queue } = setup();
    queue.add(pod("a"));
    const info = await failAttempt(queue, ["NodeResourcesFit"]);
    await clock.advance(5000);
    queue.moveAllToActiveOrBackoffQueue("NodeAdd", () => false);
    expect(queue.whereIs(info.key)).toBe("unschedulable");
    queue.moveAllToActiveOrBackoffQueue("NodeAdd", () => true);
    expect(queue.whereIs(info.key)).toBe("active");
  });

  it("sends a pod that failed with an error (no rejector) to backoffQ", async () => {
    const { queue } = setup();
    queue.add(pod("a"));
    const info = await failAttempt(queue, []);
    expect(queue.whereIs(info.key)).toBe("backoff");
  });

  it("sends a rejected pod to backoffQ when a move request came during its attempt", async () => {
    const { queue } = setup();
    queue.add(pod("a"));
    const info = (await queue.pop())!;
    const cycle = queue.schedulingCycle();
    queue.moveAllToActiveOrBackoffQueue("NodeAdd"); // an event while the pod was being scheduled
    info.unschedulablePlugins = new Set(["NodeResourcesFit"]);
    queue.addUnschedulableIfNotPresent(info, cycle);
    expect(queue.whereIs(info.key)).toBe("backoff");
  });

  it("retries a parked pod after 5 minutes without a helpful event", async () => {
    const { clock, queue } = setup();
    queue.add(pod("a"));
    const info = await failAttempt(queue, ["TaintToleration"]);
    await clock.advance(300_000);
    queue.flushUnschedulablePodsLeftover();
    expect(queue.whereIs(info.key)).toBe("unschedulable");
    await clock.advance(1);
    queue.flushUnschedulablePodsLeftover();
    expect(queue.whereIs(info.key)).toBe("active");
  });

  it("refreshes the queue time on each failure, so a retried pod queues behind pods that came before its failure", async () => {
    const { clock, queue } = setup();
    queue.add(pod("retried"));
    const info = (await queue.pop())!;
    const cycle = queue.schedulingCycle();
    await clock.advance(1);
    queue.add(pod("other"));
    await clock.advance(1);
    queue.addUnschedulableIfNotPresent(info, cycle); // an error: to backoffQ, queue time now
    queue.done(info.key);
    await clock.advance(1000);
    queue.flushBackoffQCompleted();
    expect(info.attempts).toBe(1);
    expect([await popName(queue), await popName(queue)]).toEqual(["other", "retried"]);
  });

  it("parks a pod with scheduling gates as gated, and activates it when the last gate goes", async () => {
    const { queue } = setup();
    const gated = pod("a", { gates: ["example.com/wait"] });
    queue.add(gated);
    expect(queue.pendingPods()).toEqual({ active: 0, backoff: 0, unschedulable: 0, gated: 1 });
    queue.moveAllToActiveOrBackoffQueue("ForceActivate");
    expect(queue.whereIs("uid-a")).toBe("gated");
    const ungated: Pod = { ...pod("a"), metadata: { ...pod("a").metadata, resourceVersion: "2" } };
    queue.update(gated, ungated);
    expect(queue.whereIs("uid-a")).toBe("active");
    expect((await queue.pop())?.attempts).toBe(1);
  });

  it("retries a parked pod whose spec or labels change, but not on a status-only update", async () => {
    const { queue } = setup();
    const original = pod("a");
    queue.add(original);
    const info = await failAttempt(queue, ["TaintToleration"]);
    const statusOnly = {
      ...original,
      metadata: { ...original.metadata, resourceVersion: "2" },
      status: { phase: "Pending" },
    };
    queue.update(original, statusOnly);
    expect(queue.whereIs(info.key)).toBe("unschedulable");
    const relabelled = pod("a", { labels: { tier: "web" } });
    queue.update(statusOnly, relabelled);
    expect(queue.whereIs(info.key)).toBe("backoff");
  });

  it("forgets a deleted pod wherever it waits", async () => {
    const { queue } = setup();
    queue.add(pod("a"));
    queue.add(pod("b"));
    await failAttempt(queue, ["NodeResourcesFit"]);
    queue.delete(pod("a"));
    queue.delete(pod("b"));
    expect(queue.pendingPods()).toEqual({ active: 0, backoff: 0, unschedulable: 0, gated: 0 });
  });

  it("run flushes backoffQ every second on the clock and leaves no timer after abort", async () => {
    const { clock, queue } = setup();
    queue.add(pod("a"));
    const info = await failAttempt(queue, []);
    const abort = new AbortController();
    const run = queue.run({ signal: abort.signal });
    await clock.advance(1000);
    expect(queue.whereIs(info.key)).toBe("active");
    abort.abort();
    await run;
    expect(clock.pendingTimers()).toEqual([]);
    expect(await queue.pop()).toBeDefined();
    expect(await queue.pop()).toBeUndefined();
  });

  it("rejects a backoff that is not a positive number", () => {
    expect(() => new SchedulingQueue({ podInitialBackoffMs: 0 })).toThrow(
      "SchedulingQueue: podInitialBackoffMs must be a positive number of ms, got 0",
    );
  });
});
