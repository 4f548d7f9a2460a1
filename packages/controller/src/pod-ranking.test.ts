import type { Pod } from "@reconcile/api";
import { describe, expect, it } from "vitest";
import {
  activePodsWithRanksLess,
  getDeletionCostFromPodAnnotations,
  podDeletionCostAnnotation,
  rankPodsByRelatedPodsOnSameNode,
  sortActivePods,
  sortActivePodsWithRanks,
} from "./pod-ranking.js";

const now = Date.parse("2026-06-15T12:00:00Z");
const hour = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();
const then1Month = iso(now - 30 * 24 * hour);
const then2Hours = iso(now - 2 * hour);
const then5Hours = iso(now - 5 * hour);
const then8Hours = iso(now - 8 * hour);
const nowTime = iso(now);

function pod(
  name: string,
  nodeName: string,
  phase: string,
  ready: boolean,
  restarts: number,
  readySince: string | undefined,
  created: string | undefined,
  annotations?: Record<string, string>,
): Pod {
  return {
    metadata: {
      name,
      ...(created === undefined ? {} : { creationTimestamp: created }),
      ...(annotations === undefined ? {} : { annotations }),
    },
    spec: { containers: [], ...(nodeName === "" ? {} : { nodeName }) },
    status: {
      phase,
      ...(ready
        ? {
            conditions: [
              { type: "Ready", status: "True", ...(readySince ? { lastTransitionTime: readySince } : {}) },
            ],
            containerStatuses: [{ name: "c", image: "i", imageID: "", ready: true, restartCount: restarts }],
          }
        : {}),
    },
  };
}

// The pods of upstream's TestSortingActivePodsWithRanks.
const unscheduledPod = pod("unscheduled", "", "Pending", false, 0, undefined, undefined);
const scheduledPendingPod = pod("pending", "node", "Pending", false, 0, undefined, undefined);
const unknownPhasePod = pod("unknown-phase", "node", "Unknown", false, 0, undefined, undefined);
const runningNotReadyPod = pod("not-ready", "node", "Running", false, 0, undefined, undefined);
const runningReadyNoLastTransitionTimePod = pod(
  "ready-no-last-transition-time",
  "node",
  "Running",
  true,
  0,
  undefined,
  undefined,
);
const runningReadyNow = pod("ready-now", "node", "Running", true, 0, nowTime, nowTime);
const runningReadyThen = pod("ready-then", "node", "Running", true, 0, then1Month, then1Month);
const runningReadyNowHighRestarts = pod(
  "ready-high-restarts",
  "node",
  "Running",
  true,
  9001,
  nowTime,
  nowTime,
);
const runningReadyNowCreatedThen = pod(
  "ready-now-created-then",
  "node",
  "Running",
  true,
  0,
  nowTime,
  then1Month,
);
const lowPodDeletionCost = pod("low-deletion-cost", "node", "Running", true, 0, nowTime, then1Month, {
  [podDeletionCostAnnotation]: "10",
});
const highPodDeletionCost = pod("high-deletion-cost", "node", "Running", true, 0, nowTime, then1Month, {
  [podDeletionCostAnnotation]: "100",
});
const unscheduled5Hours = pod("unscheduled-5-hours", "", "Pending", false, 0, then5Hours, then5Hours);
const unscheduled8Hours = pod("unscheduled-8-hours", "", "Pending", false, 0, then8Hours, then8Hours);
const ready2Hours = pod("ready-2-hours", "", "Running", true, 0, then2Hours, then1Month);
const ready5Hours = pod("ready-5-hours", "", "Running", true, 0, then5Hours, then1Month);
const ready8Hours = pod("ready-8-hours", "", "Running", true, 0, then8Hours, then1Month);

describe("activePodsWithRanksLess", () => {
  it.each([
    [unscheduledPod, unscheduledPod],
    [scheduledPendingPod, scheduledPendingPod],
    [unknownPhasePod, unknownPhasePod],
    [runningNotReadyPod, runningNotReadyPod],
    [runningReadyNowCreatedThen, runningReadyNowCreatedThen],
    [runningReadyNow, runningReadyNow],
    [runningReadyThen, runningReadyThen],
    [runningReadyNowHighRestarts, runningReadyNowHighRestarts],
    [unscheduled5Hours, unscheduled8Hours],
    [ready5Hours, ready8Hours],
  ])("holds %s and %s equivalent at equal ranks", (p1, p2) => {
    const a = { pod: p1, rank: 1 };
    const b = { pod: p2, rank: 1 };
    expect(activePodsWithRanksLess(a, b, { now })).toBe(false);
    expect(activePodsWithRanksLess(b, a, { now })).toBe(false);
  });

  it.each([
    { lesser: [unscheduledPod, 1], greater: [scheduledPendingPod, 2] },
    { lesser: [unscheduledPod, 2], greater: [scheduledPendingPod, 1] },
    { lesser: [scheduledPendingPod, 1], greater: [unknownPhasePod, 2] },
    { lesser: [unknownPhasePod, 1], greater: [runningNotReadyPod, 2] },
    { lesser: [runningNotReadyPod, 1], greater: [runningReadyNoLastTransitionTimePod, 1] },
    { lesser: [runningReadyNoLastTransitionTimePod, 1], greater: [runningReadyNow, 1] },
    { lesser: [runningReadyNow, 2], greater: [runningReadyNoLastTransitionTimePod, 1] },
    { lesser: [runningReadyNow, 1], greater: [runningReadyThen, 1] },
    { lesser: [runningReadyNow, 2], greater: [runningReadyThen, 1] },
    { lesser: [runningReadyNowHighRestarts, 1], greater: [runningReadyNow, 1] },
    { lesser: [runningReadyNow, 2], greater: [runningReadyNowHighRestarts, 1] },
    { lesser: [runningReadyNow, 1], greater: [runningReadyNowCreatedThen, 1] },
    { lesser: [runningReadyNowCreatedThen, 2], greater: [runningReadyNow, 1] },
    { lesser: [lowPodDeletionCost, 2], greater: [highPodDeletionCost, 1] },
    { lesser: [highPodDeletionCost, 2], greater: [lowPodDeletionCost, 1], podDeletionCost: false },
    { lesser: [ready2Hours, 1], greater: [ready5Hours, 1] },
  ] as const)("orders $lesser.0.metadata.name (rank $lesser.1) before $greater.0.metadata.name (rank $greater.1)", (test) => {
    const options = { now, podDeletionCost: "podDeletionCost" in test ? test.podDeletionCost : true };
    const lesser = { pod: test.lesser[0], rank: test.lesser[1] };
    const greater = { pod: test.greater[0], rank: test.greater[1] };
    expect(activePodsWithRanksLess(lesser, greater, options)).toBe(true);
    expect(activePodsWithRanksLess(greater, lesser, options)).toBe(false);
  });

  it("breaks ties inside one log2 age bucket by uid, skipping restarts and creation time", () => {
    const a = pod("a", "node", "Running", true, 0, then5Hours, then1Month);
    const b = pod("b", "node", "Running", true, 7, then8Hours, then5Hours);
    Object.assign(a.metadata!, { uid: "uid-b" });
    Object.assign(b.metadata!, { uid: "uid-a" });
    expect(activePodsWithRanksLess({ pod: b, rank: 0 }, { pod: a, rank: 0 }, { now })).toBe(true);
    expect(activePodsWithRanksLess({ pod: a, rank: 0 }, { pod: b, rank: 0 }, { now })).toBe(false);
    // Without logarithmic buckets the more recently ready pod goes first.
    const plain = { now, logarithmicScaleDown: false };
    expect(activePodsWithRanksLess({ pod: a, rank: 0 }, { pod: b, rank: 0 }, plain)).toBe(true);
  });

  it("compares exact ready times when no now is given", () => {
    expect(activePodsWithRanksLess({ pod: ready5Hours, rank: 1 }, { pod: ready8Hours, rank: 1 })).toBe(true);
  });
});

describe("sortActivePodsWithRanks", () => {
  it("sorts a shuffled set into the deletion order", () => {
    const expected = [
      unscheduledPod,
      scheduledPendingPod,
      unknownPhasePod,
      runningNotReadyPod,
      runningReadyNoLastTransitionTimePod,
      runningReadyNowHighRestarts,
      runningReadyNow,
      runningReadyThen,
    ];
    const shuffled = [
      expected[5]!,
      expected[2]!,
      expected[7]!,
      expected[0]!,
      expected[6]!,
      expected[3]!,
      expected[1]!,
      expected[4]!,
    ];
    const sorted = sortActivePodsWithRanks(
      shuffled,
      shuffled.map(() => 1),
      { now },
    );
    expect(sorted.map((p) => p.metadata?.name)).toEqual(expected.map((p) => p.metadata?.name));
    expect(shuffled[0]).toBe(expected[5]);
  });

  it("rejects a ranks array of the wrong length", () => {
    expect(() => sortActivePodsWithRanks([runningReadyNow], [])).toThrow(
      "sortActivePodsWithRanks: 1 pods but 0 ranks; give one rank per pod",
    );
  });
});

describe("sortActivePods", () => {
  it("orders by assignment, phase, readiness, ready time, restarts, then newest first", () => {
    const older = pod("older", "node", "Running", true, 0, then8Hours, then8Hours);
    const newer = pod("newer", "node", "Running", true, 0, then8Hours, then5Hours);
    const input = [older, runningReadyThen, newer, runningReadyNow, runningNotReadyPod, unscheduledPod];
    expect(sortActivePods(input).map((p) => p.metadata?.name)).toEqual([
      "unscheduled",
      "not-ready",
      "ready-now",
      "newer",
      "older",
      "ready-then",
    ]);
  });
});

describe("rankPodsByRelatedPodsOnSameNode", () => {
  it("counts active related pods per node, unscheduled pods sharing the empty node", () => {
    const onA = pod("a1", "a", "Running", false, 0, undefined, undefined);
    const onA2 = pod("a2", "a", "Running", false, 0, undefined, undefined);
    const onB = pod("b1", "b", "Running", false, 0, undefined, undefined);
    const doneOnB = pod("b2", "b", "Succeeded", false, 0, undefined, undefined);
    const unscheduled1 = pod("u1", "", "Pending", false, 0, undefined, undefined);
    const unscheduled2 = pod("u2", "", "Pending", false, 0, undefined, undefined);
    const deletingOnC = pod("c1", "c", "Running", false, 0, undefined, undefined);
    Object.assign(deletingOnC.metadata!, { deletionTimestamp: nowTime });
    const related = [onA, onA2, onB, doneOnB, unscheduled1, unscheduled2, deletingOnC];
    expect(rankPodsByRelatedPodsOnSameNode([onA, onB, unscheduled1, deletingOnC], related)).toEqual([
      2, 1, 2, 0,
    ]);
  });
});

describe("getDeletionCostFromPodAnnotations", () => {
  it.each([
    [undefined, 0],
    [{}, 0],
    [{ [podDeletionCostAnnotation]: "0" }, 0],
    [{ [podDeletionCostAnnotation]: "100" }, 100],
    [{ [podDeletionCostAnnotation]: "-100" }, -100],
    [{ [podDeletionCostAnnotation]: "2147483647" }, 2147483647],
    [{ [podDeletionCostAnnotation]: "-2147483648" }, -2147483648],
    [{ [podDeletionCostAnnotation]: "-0" }, 0],
    [{ [podDeletionCostAnnotation]: "-008" }, -8],
  ])("parses %j as %d", (annotations, cost) => {
    expect(getDeletionCostFromPodAnnotations(annotations)).toBe(cost);
  });

  it.each(["", "+10", "008", "-", "1.5", "ten", "2147483648", " 1"])("rejects %j", (value) => {
    expect(() => getDeletionCostFromPodAnnotations({ [podDeletionCostAnnotation]: value })).toThrow(
      `invalid ${podDeletionCostAnnotation} annotation ${JSON.stringify(value)}`,
    );
  });

  it("treats an invalid cost as zero when ordering", () => {
    const invalid = pod("invalid", "node", "Running", true, 0, nowTime, nowTime, {
      [podDeletionCostAnnotation]: "+10",
    });
    const negative = pod("negative", "node", "Running", true, 0, nowTime, nowTime, {
      [podDeletionCostAnnotation]: "-1",
    });
    expect(activePodsWithRanksLess({ pod: negative, rank: 0 }, { pod: invalid, rank: 0 }, { now })).toBe(
      true,
    );
  });
});
