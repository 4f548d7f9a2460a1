// DefaultPreemption end to end on the embedded API server: a pod no node
// fits evicts lower-priority pods (DisruptionTarget, delete, Preempted
// Event), is nominated to their node, waits while they terminate, and is
// bound there once they are gone; PodDisruptionBudgets steer the choice.
import {
  type DeepReadonly,
  events,
  eventsV1Events,
  type Node,
  nodes,
  type Pod,
  podDisruptionBudgets,
  pods,
  priorityClasses as priorityClassesResource,
} from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import type { Client } from "@reconcile/client";
import { FakeClock } from "@reconcile/clock";
import { SharedInformerFactory } from "@reconcile/informer";
import { afterEach, describe, expect, it } from "vitest";
import { podInfo } from "./node-info.js";
import {
  numCandidates,
  type PreemptionCandidate,
  pickOneCandidate,
  splitByBudgets,
} from "./plugins/default-preemption.js";
import { Scheduler } from "./scheduler.js";

const namespace = "default";
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

function start() {
  const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
  const server = new ApiServer({ clock });
  const client = server.client();
  const factory = new SharedInformerFactory({ client, clock });
  const scheduler = Scheduler.fromInformerFactory(factory, {
    client,
    clock,
    random: () => 0,
    reportingInstance: "default-scheduler-test",
  });
  const abort = new AbortController();
  factory.start(abort.signal);
  const run = scheduler.run({ signal: abort.signal });
  cleanups.push(async () => {
    abort.abort();
    await run;
    await factory.shutdown();
    await server.close();
  });
  return { clock, client };
}

/** The PriorityClass of each priority the tests use (the Priority admission plugin sets `spec.priority` from it). */
async function priorityClasses(client: Client): Promise<void> {
  for (const value of [10, 1000])
    await client.resource(priorityClassesResource).create({ metadata: { name: `p${value}` }, value });
}

const node = (name: string): Node => ({
  apiVersion: "v1",
  kind: "Node",
  metadata: { name, labels: { "kubernetes.io/hostname": name } },
  status: {
    capacity: { cpu: "1", memory: "4Gi", pods: "110" },
    allocatable: { cpu: "1", memory: "4Gi", pods: "110" },
  },
});

function pod(
  name: string,
  cpu: string,
  priority: number,
  extra: { nodeName?: string; labels?: Record<string, string> } = {},
): Pod {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace, ...(extra.labels ? { labels: extra.labels } : {}) },
    spec: {
      priorityClassName: `p${priority}`,
      ...(extra.nodeName ? { nodeName: extra.nodeName } : {}),
      containers: [{ name: "app", image: "pause", resources: { requests: { cpu } } }],
    },
  };
}

async function eventually(clock: FakeClock, check: () => Promise<boolean>, limitMs = 30_000): Promise<void> {
  for (let elapsed = 0; elapsed <= limitMs; elapsed += 10) {
    if (await check()) return;
    await clock.advance(10);
  }
  throw new Error(`condition not reached within ${limitMs} ms of fake time`);
}

const get = (client: Client, name: string) => client.resource(pods, namespace).get(name);
const noteOf = async (client: Client, reason: string) =>
  (await client.resource(eventsV1Events, namespace).list()).items
    .filter((event) => event.reason === reason)
    .map((event) => `${event.regarding?.name}: ${event.note}`);

describe("DefaultPreemption on the embedded API server", () => {
  it("evicts the lower-priority pod, nominates its node, waits while it terminates, then binds there", async () => {
    const { clock, client } = start();
    await priorityClasses(client);
    await client.resource(nodes).create(node("n1"));
    await client.resource(pods, namespace).create(pod("low", "800m", 10, { nodeName: "n1" }));
    const high = await client.resource(pods, namespace).create(pod("high", "500m", 1000));

    await eventually(clock, async () => (await get(client, "low")).metadata?.deletionTimestamp !== undefined);
    const victim = await get(client, "low");
    expect(victim.status?.conditions?.find((c) => c.type === "DisruptionTarget")).toEqual({
      type: "DisruptionTarget",
      status: "True",
      reason: "PreemptionByScheduler",
      message: "default-scheduler: preempting to accommodate a higher priority pod",
      lastTransitionTime: "2026-01-01T00:00:00Z",
      lastProbeTime: null,
    });
    await eventually(clock, async () => (await get(client, "high")).status?.nominatedNodeName === "n1");
    const waiting = await get(client, "high");
    // The cycle's own message: preemption succeeded, so it adds nothing.
    expect(waiting.status?.conditions?.find((c) => c.type === "PodScheduled")?.message).toBe(
      "0/1 nodes are available: 1 Insufficient cpu.",
    );
    await eventually(clock, async () => (await noteOf(client, "Preempted")).length > 0);
    expect(await noteOf(client, "Preempted")).toEqual([
      `low: Preempted by pod ${high.metadata?.uid} on node n1`,
    ]);
    const preempted = (await client.resource(eventsV1Events, namespace).list()).items.find(
      (e) => e.reason === "Preempted",
    )!;
    expect(preempted.action).toBe("Preempting");
    expect(preempted.related).toMatchObject({ kind: "Pod", name: "high", uid: high.metadata?.uid });

    // While the victim terminates the pod is retried (unschedulable pods are retried after 5 minutes),
    // but evicts nothing more.
    await client.resource(pods, namespace).create(pod("other-low", "100m", 10, { nodeName: "n1" }));
    for (let i = 0; i < 14; i++) await clock.advance(30_000);
    expect((await get(client, "other-low")).metadata?.deletionTimestamp).toBeUndefined();
    expect(
      (await get(client, "high")).status?.conditions?.find((c) => c.type === "PodScheduled")?.message,
    ).toBe(
      "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to a terminating pod on the nominated node.",
    );

    // The kubelet's final delete: the space is free. A lower-priority pod that arrives first does not
    // take it (the nomination holds it; the preemptor is still backing off), and the pod lands on its
    // nominated node.
    await client.resource(pods, namespace).delete("low", { gracePeriodSeconds: 0 });
    await client.resource(pods, namespace).create(pod("late-low", "500m", 10));
    await eventually(clock, async () => (await get(client, "high")).spec?.nodeName === "n1");
    await eventually(clock, async () => (await get(client, "late-low")).status?.conditions !== undefined);
    expect((await get(client, "late-low")).spec?.nodeName).toBeUndefined();
    expect(
      (await client.resource(events, namespace).list()).items.some((e) => e.reason === "Scheduled"),
    ).toBe(true);
  });

  it("spares a node whose victims a PodDisruptionBudget protects, and leaves equal or higher priority alone", async () => {
    const { clock, client } = start();
    await priorityClasses(client);
    for (const name of ["n1", "n2", "n3"]) await client.resource(nodes).create(node(name));
    await client
      .resource(pods, namespace)
      .create(pod("guarded", "800m", 10, { nodeName: "n1", labels: { app: "db" } }));
    await client
      .resource(pods, namespace)
      .create(pod("plain", "800m", 10, { nodeName: "n2", labels: { app: "web" } }));
    await client.resource(pods, namespace).create(pod("peer", "800m", 1000, { nodeName: "n3" }));
    await client.resource(podDisruptionBudgets, namespace).create({
      metadata: { name: "db", namespace },
      spec: { minAvailable: 1, selector: { matchLabels: { app: "db" } } },
    });
    // The disruption controller is not running here: the budget's status says no disruption is allowed.
    const pdb = await client.resource(podDisruptionBudgets, namespace).get("db");
    await client.resource(podDisruptionBudgets, namespace).updateStatus({
      ...pdb,
      status: {
        disruptionsAllowed: 0,
        currentHealthy: 1,
        desiredHealthy: 1,
        expectedPods: 1,
        observedGeneration: 1,
      },
    });
    await clock.advance(10);
    await client.resource(pods, namespace).create(pod("high", "500m", 1000));
    await eventually(clock, async () => (await get(client, "high")).status?.nominatedNodeName !== undefined);
    expect((await get(client, "high")).status?.nominatedNodeName).toBe("n2");
    expect((await get(client, "plain")).metadata?.deletionTimestamp).toBeDefined();
    expect((await get(client, "guarded")).metadata?.deletionTimestamp).toBeUndefined();
    expect((await get(client, "peer")).metadata?.deletionTimestamp).toBeUndefined();
  });

  it("says why when no eviction would help, and clears an old nomination", async () => {
    const { clock, client } = start();
    await priorityClasses(client);
    await client.resource(nodes).create(node("n1"));
    await client.resource(pods, namespace).create(pod("peer", "800m", 1000, { nodeName: "n1" }));
    await client.resource(pods, namespace).create(pod("high", "500m", 1000));
    await eventually(clock, async () => (await get(client, "high")).status?.conditions !== undefined);
    // A nomination left from before: the next attempt (after 5 minutes unschedulable) clears it.
    await client
      .resource(pods, namespace)
      .patch("high", { status: { nominatedNodeName: "n1" } }, { type: "merge", subresource: "status" });
    expect((await get(client, "high")).status?.nominatedNodeName).toBe("n1");
    for (let i = 0; i < 14; i++) await clock.advance(30_000);
    expect((await get(client, "high")).status?.nominatedNodeName).toBeUndefined();
    expect(
      (await get(client, "high")).status?.conditions?.find((c) => c.type === "PodScheduled")?.message,
    ).toBe(
      "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
    );
  });
});

describe("the nominated node first (evaluateNominatedNode)", () => {
  it("binds a pod to its nominated node when it fits there, though another node scores as well", async () => {
    const { clock, client } = start();
    await priorityClasses(client);
    // No node yet: the pod fails, and a nomination is set on it (as preemption would).
    await client.resource(pods, namespace).create(pod("high", "500m", 1000));
    await eventually(clock, async () => (await get(client, "high")).status?.conditions !== undefined);
    await client
      .resource(pods, namespace)
      .patch("high", { status: { nominatedNodeName: "n1" } }, { type: "merge", subresource: "status" });
    await clock.advance(10);
    // With random() = 0, ties go to the last feasible node (n2): only the nomination picks n1.
    for (const name of ["n1", "n2"]) await client.resource(nodes).create(node(name));
    await eventually(clock, async () => (await get(client, "high")).spec?.nodeName !== undefined);
    expect((await get(client, "high")).spec?.nodeName).toBe("n1");
  });
});

describe("pickOneNodeForPreemption (TestSelectBestCandidate)", () => {
  const now = Date.parse("2026-01-01T00:00:00Z");
  const victim = (priority: number, startTime?: string): DeepReadonly<Pod> => ({
    metadata: { name: `p${priority}` },
    spec: { priority, containers: [] },
    ...(startTime ? { status: { startTime } } : {}),
  });
  const candidate = (
    nodeName: string,
    victims: DeepReadonly<Pod>[],
    numPDBViolations = 0,
  ): PreemptionCandidate => ({
    nodeName,
    victims,
    numPDBViolations,
  });

  it.each([
    ["the fewest budget violations", [candidate("a", [victim(1)], 1), candidate("b", [victim(5)], 0)], "b"],
    [
      "the lowest most important victim",
      [candidate("a", [victim(5)]), candidate("b", [victim(3), victim(1)])],
      "b",
    ],
    [
      "the lowest sum of priorities",
      [candidate("a", [victim(3), victim(2)]), candidate("b", [victim(3), victim(1)])],
      "b",
    ],
    [
      "negative priorities sum as upstream's shifted int64",
      [candidate("a", [victim(-5), victim(-5)]), candidate("b", [victim(-5)])],
      "b",
    ],
    [
      "the fewest victims",
      [candidate("a", [victim(3), victim(0)]), candidate("b", [victim(3), victim(-1), victim(1)])],
      "a",
    ],
    [
      "the latest start of the most important victims",
      [
        candidate("a", [victim(3, "2025-12-31T10:00:00Z")]),
        candidate("b", [victim(3, "2025-12-31T12:00:00Z")]),
      ],
      "b",
    ],
    ["the first when all else ties", [candidate("a", [victim(3)]), candidate("b", [victim(3)])], "a"],
  ])("prefers %s", (_, candidates, chosen) => {
    expect(pickOneCandidate(candidates, now)?.nodeName).toBe(chosen);
  });

  it("has no choice without candidates", () => {
    expect(pickOneCandidate([], now)).toBeUndefined();
  });
});

describe("filterPodsWithPDBViolation", () => {
  const info = (name: string, labels: Record<string, string>, ns = namespace) =>
    podInfo({ metadata: { name, namespace: ns, labels }, spec: { containers: [] } });
  const budget = (
    allowed: number,
    selector: Record<string, string> | undefined,
    disrupted: string[] = [],
  ) => ({
    metadata: { name: "b", namespace },
    spec: selector === undefined ? {} : { selector: { matchLabels: selector } },
    status: {
      disruptionsAllowed: allowed,
      currentHealthy: 0,
      desiredHealthy: 0,
      expectedPods: 0,
      ...(disrupted.length > 0
        ? { disruptedPods: Object.fromEntries(disrupted.map((d) => [d, "2026-01-01T00:00:00Z"])) }
        : {}),
    },
  });
  const names = (split: ReturnType<typeof splitByBudgets>) => ({
    violating: split.violating.map((p) => p.pod.metadata?.name),
    nonViolating: split.nonViolating.map((p) => p.pod.metadata?.name),
  });

  it("spends a budget's disruptions in order, and counts a pod past them as violating", () => {
    const pods = [info("a", { app: "x" }), info("b", { app: "x" }), info("c", { app: "y" })];
    expect(names(splitByBudgets(pods, [budget(1, { app: "x" })]))).toEqual({
      violating: ["b"],
      nonViolating: ["a", "c"],
    });
  });

  it("passes over pods without labels, of other namespaces, already disrupted, and empty selectors", () => {
    const pods = [
      info("bare", {}),
      info("elsewhere", { app: "x" }, "other"),
      info("gone", { app: "x" }),
      info("x", { app: "x" }),
    ];
    expect(names(splitByBudgets(pods, [budget(0, { app: "x" }, ["gone"])]))).toEqual({
      violating: ["x"],
      nonViolating: ["bare", "elsewhere", "gone"],
    });
    expect(names(splitByBudgets([info("x", { app: "x" })], [budget(0, undefined)]))).toEqual({
      violating: [],
      nonViolating: ["x"],
    });
  });
});

describe("calculateNumCandidates", () => {
  it.each([
    [10, 10],
    [100, 100],
    [1000, 100],
    [5000, 500],
  ])("%i potential nodes try %i", (nodesCount, expected) => {
    expect(numCandidates(nodesCount)).toBe(expected);
  });
});
