import type { Pod } from "@reconcile/api";
import { describe, expect, it } from "vitest";
import {
  boundsWithBehavior,
  boundsWithRules,
  ScalingHistory,
  scaleDownLimit,
  scaleUpLimit,
} from "./normalize.js";
import {
  defaultReplicaCalculatorSettings,
  type PodMetricsInfo,
  rawResourceReplicas,
  resourceReplicas,
} from "./replica-calculator.js";

const now = Date.parse("2026-01-01T01:00:00Z");
const longAgo = "2026-01-01T00:00:00Z";

interface PodCase {
  ready?: "True" | "False";
  phase?: string;
  request?: string;
  usage?: number;
  started?: string;
  readySince?: string;
  deleted?: boolean;
}

function setup(cases: PodCase[]): { pods: Pod[]; metrics: PodMetricsInfo } {
  const pods: Pod[] = [];
  const metrics: PodMetricsInfo = new Map();
  cases.forEach((c, i) => {
    const name = `pod-${i}`;
    pods.push({
      metadata: { name, namespace: "ns", ...(c.deleted ? { deletionTimestamp: longAgo } : {}) },
      spec: { containers: [{ name: "c", image: "x", resources: { requests: { cpu: c.request ?? "1" } } }] },
      status: {
        phase: c.phase ?? "Running",
        startTime: c.started ?? longAgo,
        conditions: [
          { type: "Ready", status: c.ready ?? "True", lastTransitionTime: c.readySince ?? longAgo },
        ],
      },
    });
    if (c.usage !== undefined) metrics.set(name, { value: c.usage, timestamp: now, windowMs: 20_000 });
  });
  return { pods, metrics };
}

const calc = (current: number, target: number, cases: PodCase[]) => {
  const { pods, metrics } = setup(cases);
  return resourceReplicas(
    current,
    target,
    "cpu",
    undefined,
    metrics,
    pods,
    defaultReplicaCalculatorSettings,
    now,
  );
};

// Cases of upstream's replica_calculator_test.go (TestReplicaCalc*, resource utilization), and the
// missing-metrics rules worked through by hand.
describe("resourceReplicas", () => {
  it.each([
    ["ScaleUp", 3, 30, [{ usage: 300 }, { usage: 500 }, { usage: 700 }], 5, 50],
    [
      "ScaleDown",
      5,
      50,
      [{ usage: 100 }, { usage: 300 }, { usage: 500 }, { usage: 250 }, { usage: 250 }],
      3,
      28,
    ],
    [
      "Tolerance",
      3,
      100,
      [
        { usage: 1010, request: "900m" },
        { usage: 1030, request: "1" },
        { usage: 1020, request: "1100m" },
      ],
      3,
      102,
    ],
    [
      "ScaleUpUnreadyLessScale",
      3,
      30,
      [{ usage: 300, ready: "False" as const }, { usage: 500 }, { usage: 700 }],
      4,
      60,
    ],
    [
      "ScaleUpUnreadyNoScale",
      3,
      30,
      [{ usage: 400 }, { usage: 500, ready: "False" as const }, { usage: 700, ready: "False" as const }],
      3,
      40,
    ],
    [
      "ScaleUpIgnoresFailedPods",
      2,
      30,
      [{ usage: 500 }, { usage: 700 }, { phase: "Failed", usage: 100 }],
      4,
      60,
    ],
    [
      "ScaleUpIgnoresDeletionPods",
      2,
      30,
      [{ usage: 500 }, { usage: 700 }, { deleted: true, usage: 100 }],
      4,
      60,
    ],
    ["ScaleUpPendingLessScale", 3, 30, [{ phase: "Pending" }, { usage: 500 }, { usage: 700 }], 4, 60],
    // A pod without metrics counts as using nothing on the way up, its whole request on the way down.
    ["missing metrics, scale up", 4, 50, [{ usage: 1000 }, { usage: 1000 }, { usage: 1000 }, {}], 6, 100],
    ["missing metrics, scale down", 4, 50, [{ usage: 100 }, { usage: 100 }, { usage: 100 }, {}], 3, 10],
    [
      "missing metrics, smaller scale up",
      4,
      50,
      [{ usage: 400 }, { usage: 950 }, { usage: 1000 }, {}],
      5,
      78,
    ],
    // Counting a missing pod at its request would turn a scale-down into a scale-up: no change.
    [
      "missing metrics, no change of direction",
      4,
      90,
      [{ usage: 800 }, { usage: 800 }, { usage: 800 }, {}],
      4,
      80,
    ],
  ] as const)("%s", (_name, current, target, cases, replicas, utilization) => {
    const result = calc(current, target, cases as unknown as PodCase[]);
    expect([result.replicas, result.utilization]).toEqual([replicas, utilization]);
  });

  it("counts a CPU sample taken less than a window after a pod became ready, inside its initialization period, as unready", () => {
    const recent = new Date(now - 10_000).toISOString();
    const result = calc(2, 50, [{ usage: 1000 }, { usage: 1000, started: recent, readySince: recent }]);
    // Only the settled pod counts (200%): 4 wanted; the fresh one is read as 0 on the way up.
    expect([result.replicas, result.utilization]).toEqual([2, 100]);
  });

  it("fails as upstream when nothing can be measured", () => {
    expect(() => calc(1, 50, [])).toThrow("no pods returned by selector while calculating replica count");
    expect(() => calc(1, 50, [{ ready: "False", usage: 100 }])).toThrow(
      "did not receive metrics for targeted pods (pods might be unready)",
    );
    const { pods, metrics } = setup([{ usage: 100 }]);
    delete pods[0]!.spec!.containers[0]!.resources;
    expect(() =>
      resourceReplicas(1, 50, "cpu", undefined, metrics, pods, defaultReplicaCalculatorSettings, now),
    ).toThrow("missing request for cpu in container c of Pod pod-0");
  });

  it("scales on an average value against the target usage", () => {
    const { pods, metrics } = setup([{ usage: 800 }, { usage: 800 }]);
    expect(rawResourceReplicas(2, 400, "cpu", metrics, pods, defaultReplicaCalculatorSettings, now)).toEqual({
      replicas: 4,
      rawAverage: 800,
      timestamp: now,
    });
  });
});

describe("bounds and rates", () => {
  it("limits a scale without a behavior to twice the current count (at least 4) and to min/max", () => {
    expect(boundsWithRules(3, 10, 1, 20)).toMatchObject({ replicas: 6, reason: "ScaleUpLimit" });
    expect(boundsWithRules(3, 10, 1, 5)).toMatchObject({ replicas: 5, reason: "TooManyReplicas" });
    expect(boundsWithRules(1, 3, 1, 10)).toMatchObject({ replicas: 3, reason: "DesiredWithinRange" });
    expect(boundsWithRules(3, 0, 2, 10)).toMatchObject({ replicas: 2, reason: "TooFewReplicas" });
  });

  it("applies the scaling policies over their periods, Max and Min, and Disabled", () => {
    const history = new ScalingHistory();
    const up = {
      selectPolicy: "Max",
      policies: [
        { type: "Pods", value: 4, periodSeconds: 15 },
        { type: "Percent", value: 100, periodSeconds: 15 },
      ],
    };
    expect(scaleUpLimit(history, "k", 3, up, now)).toBe(7);
    expect(scaleUpLimit(history, "k", 10, up, now)).toBe(20);
    expect(scaleUpLimit(history, "k", 10, { ...up, selectPolicy: "Min" }, now)).toBe(14);
    expect(scaleUpLimit(history, "k", 10, { ...up, selectPolicy: "Disabled" }, now)).toBe(10);
    const down = { selectPolicy: "Max", policies: [{ type: "Pods", value: 1, periodSeconds: 60 }] };
    history.storeScaleEvent("k", { up, down }, 5, 4, now - 30_000);
    // One pod already removed within the minute: the period started at 5, so 4 is the floor now.
    expect(scaleDownLimit(history, "k", 4, down, now)).toBe(4);
    expect(scaleDownLimit(history, "k", 4, down, now + 31_000)).toBe(3);
    expect(
      boundsWithBehavior(history, "k", { current: 4, desired: 1, min: 1, max: 10, up, down }, now),
    ).toMatchObject({ replicas: 4, reason: "ScaleDownLimit" });
  });

  it("holds a scale-down at the highest recommendation of the stabilization window", () => {
    const history = new ScalingHistory();
    history.recordInitial("k", 5, now);
    expect(history.stabilize("k", 2, 300_000, now + 60_000)).toBe(5);
    expect(history.stabilize("k", 2, 300_000, now + 301_000)).toBe(2);
  });
});
