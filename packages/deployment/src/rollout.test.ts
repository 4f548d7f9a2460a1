// Tables ported from upstream pkg/controller/deployment: sync_test.go,
// rolling_test.go, recreate_test.go and progress_test.go. Writes go to a
// RecordingClient, whose actions stand in for the fake clientset's.
import {
  type DeepReadonly,
  type Deployment,
  deployments,
  type Pod,
  type ReplicaSet,
  replicaSets,
} from "@reconcile/api";
import { FakeClock } from "@reconcile/clock";
import { computeHash } from "@reconcile/controller";
import { FakeEventRecorder, RecordingClient } from "@reconcile/controller/testing";
import type { DeploymentCondition, DeploymentStatus } from "kubernetes-types/apps/v1.js";
import { describe, expect, it } from "vitest";
import { maxSurge, revisionAnnotation, setReplicasAnnotations } from "./deployment-util.js";
import { DeploymentRollout, oldPodsRunning } from "./rollout.js";

const newTimestamp = "2016-05-20T02:00:00Z";
const oldTimestamp = "2016-05-20T01:00:00Z";
const olderTimestamp = "2016-05-20T00:00:00Z";

/** Upstream's test `newDeployment`: RollingUpdate with maxSurge and maxUnavailable 0 unless given. */
function newDeployment(
  replicas: number,
  options: {
    maxSurge?: number | string;
    maxUnavailable?: number | string;
    revisionHistoryLimit?: number;
  } = {},
): Deployment {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "foo", namespace: "default", uid: "deployment-uid", generation: 1 },
    spec: {
      replicas,
      selector: { matchLabels: { foo: "bar" } },
      template: { metadata: { labels: { foo: "bar" } } },
      strategy: {
        type: "RollingUpdate",
        rollingUpdate: { maxSurge: options.maxSurge ?? 0, maxUnavailable: options.maxUnavailable ?? 0 },
      },
      ...(options.revisionHistoryLimit === undefined
        ? {}
        : { revisionHistoryLimit: options.revisionHistoryLimit }),
    },
    status: {},
  };
}

/** Upstream's test `rs`. */
function rs(name: string, replicas: number, created = newTimestamp): ReplicaSet {
  return {
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    metadata: { name, namespace: "default", creationTimestamp: created },
    spec: { replicas, selector: { matchLabels: {} }, template: {} },
    status: { replicas: 0 },
  };
}

function harness(clock = new FakeClock(Date.parse("2017-02-15T18:49:00Z"))) {
  const client = new RecordingClient();
  const recorder = new FakeEventRecorder();
  const enqueued: [string, number | "rate-limited"][] = [];
  const rollout = new DeploymentRollout({
    client,
    recorder,
    clock,
    enqueueAfter: (key, ms) => enqueued.push([key, ms]),
    enqueueRateLimited: (key) => enqueued.push([key, "rate-limited"]),
  });
  const seed = (r: ReplicaSet) => client.seed(replicaSets, r);
  return { client, recorder, rollout, seed, enqueued, clock };
}

/** The size each ReplicaSet was last updated to, or its size when never updated. */
function sizesAfter(client: RecordingClient, rss: readonly ReplicaSet[]): Record<string, number> {
  const sizes: Record<string, number> = {};
  for (const r of rss) sizes[r.metadata!.name!] = r.spec!.replicas!;
  for (const action of client.actionsOf("update", "replicasets")) {
    const body = action.body as ReplicaSet;
    sizes[body.metadata!.name!] = body.spec!.replicas!;
  }
  return sizes;
}

describe("scale (TestScale)", () => {
  type Case = {
    name: string;
    deployment: Deployment;
    oldDeployment: Deployment;
    newRS?: ReplicaSet;
    oldRSs: ReplicaSet[];
    expectedNew?: number;
    expectedOld: number[];
    desiredReplicasAnnotations?: Record<string, number>;
  };
  const updatedTemplate = (replicas: number) => {
    const d = newDeployment(replicas);
    d.spec!.template.metadata!.labels!.another = "label";
    return d;
  };
  const brokenNew = rs("foo-v2", 2);
  brokenNew.status!.availableReplicas = 0;
  const cases: Case[] = [
    {
      name: "normal scaling event: 10 -> 12",
      deployment: newDeployment(12),
      oldDeployment: newDeployment(10),
      newRS: rs("foo-v1", 10),
      oldRSs: [],
      expectedNew: 12,
      expectedOld: [],
    },
    {
      name: "normal scaling event: 10 -> 5",
      deployment: newDeployment(5),
      oldDeployment: newDeployment(10),
      newRS: rs("foo-v1", 10),
      oldRSs: [],
      expectedNew: 5,
      expectedOld: [],
    },
    {
      name: "proportional scaling: 5 -> 10",
      deployment: newDeployment(10),
      oldDeployment: newDeployment(5),
      newRS: rs("foo-v2", 2),
      oldRSs: [rs("foo-v1", 3, oldTimestamp)],
      expectedNew: 4,
      expectedOld: [6],
    },
    {
      name: "proportional scaling: 5 -> 3",
      deployment: newDeployment(3),
      oldDeployment: newDeployment(5),
      newRS: rs("foo-v2", 2),
      oldRSs: [rs("foo-v1", 3, oldTimestamp)],
      expectedNew: 1,
      expectedOld: [2],
    },
    {
      name: "proportional scaling: 9 -> 4",
      deployment: newDeployment(4),
      oldDeployment: newDeployment(9),
      newRS: rs("foo-v2", 8),
      oldRSs: [rs("foo-v1", 1, oldTimestamp)],
      expectedNew: 4,
      expectedOld: [0],
    },
    {
      name: "proportional scaling: 7 -> 10",
      deployment: newDeployment(10),
      oldDeployment: newDeployment(7),
      newRS: rs("foo-v3", 2),
      oldRSs: [rs("foo-v2", 3, oldTimestamp), rs("foo-v1", 2, olderTimestamp)],
      expectedNew: 3,
      expectedOld: [4, 3],
    },
    {
      name: "proportional scaling: 13 -> 8",
      deployment: newDeployment(8),
      oldDeployment: newDeployment(13),
      newRS: rs("foo-v3", 2),
      oldRSs: [rs("foo-v2", 8, oldTimestamp), rs("foo-v1", 3, olderTimestamp)],
      expectedNew: 1,
      expectedOld: [5, 2],
    },
    {
      name: "leftover distribution: 3 -> 4",
      deployment: newDeployment(4),
      oldDeployment: newDeployment(3),
      newRS: rs("foo-v3", 1),
      oldRSs: [rs("foo-v2", 1, oldTimestamp), rs("foo-v1", 1, olderTimestamp)],
      expectedNew: 2,
      expectedOld: [1, 1],
    },
    {
      name: "leftover distribution: 3 -> 2",
      deployment: newDeployment(2),
      oldDeployment: newDeployment(3),
      newRS: rs("foo-v3", 1),
      oldRSs: [rs("foo-v2", 1, oldTimestamp), rs("foo-v1", 1, olderTimestamp)],
      expectedNew: 1,
      expectedOld: [1, 0],
    },
    {
      name: "proportional scaling (no new rs): 4 -> 5",
      deployment: newDeployment(5),
      oldDeployment: newDeployment(4),
      oldRSs: [rs("foo-v2", 2, oldTimestamp), rs("foo-v1", 2, olderTimestamp)],
      expectedOld: [3, 2],
    },
    {
      name: "proportional scaling: 6 -> 0",
      deployment: newDeployment(0),
      oldDeployment: newDeployment(6),
      newRS: rs("foo-v3", 3),
      oldRSs: [rs("foo-v2", 2, oldTimestamp), rs("foo-v1", 1, olderTimestamp)],
      expectedNew: 0,
      expectedOld: [0, 0],
    },
    {
      name: "proportional scaling: 0 -> 6",
      deployment: newDeployment(6),
      oldDeployment: newDeployment(6),
      newRS: rs("foo-v3", 0),
      oldRSs: [rs("foo-v2", 0, oldTimestamp), rs("foo-v1", 0, olderTimestamp)],
      expectedNew: 6,
      expectedOld: [0, 0],
    },
    {
      name: "failed rs update",
      deployment: newDeployment(5),
      oldDeployment: newDeployment(5),
      newRS: rs("foo-v3", 2),
      oldRSs: [rs("foo-v2", 1, oldTimestamp), rs("foo-v1", 1, olderTimestamp)],
      expectedNew: 2,
      expectedOld: [2, 1],
      desiredReplicasAnnotations: { "foo-v2": 3 },
    },
    {
      name: "deployment with surge pods",
      deployment: newDeployment(20, { maxSurge: 2 }),
      oldDeployment: newDeployment(10, { maxSurge: 2 }),
      newRS: rs("foo-v2", 6),
      oldRSs: [rs("foo-v1", 6, oldTimestamp)],
      expectedNew: 11,
      expectedOld: [11],
    },
    {
      name: "change both surge and size",
      deployment: newDeployment(50, { maxSurge: 6 }),
      oldDeployment: newDeployment(10, { maxSurge: 3 }),
      newRS: rs("foo-v2", 5),
      oldRSs: [rs("foo-v1", 8, oldTimestamp)],
      expectedNew: 22,
      expectedOld: [34],
    },
    {
      name: "change both size and template",
      deployment: updatedTemplate(14),
      oldDeployment: newDeployment(10),
      oldRSs: [rs("foo-v2", 7), rs("foo-v1", 3, oldTimestamp)],
      expectedOld: [10, 4],
    },
    {
      name: "saturated but broken new replica set does not affect old pods",
      deployment: newDeployment(2, { maxSurge: 1, maxUnavailable: 1 }),
      oldDeployment: newDeployment(2, { maxSurge: 1, maxUnavailable: 1 }),
      newRS: brokenNew,
      oldRSs: [rs("foo-v1", 1, oldTimestamp)],
      expectedNew: 2,
      expectedOld: [1],
    },
  ];

  it.each(cases)("$name", async (test) => {
    const { client, rollout, seed } = harness();
    const annotate = (r: ReplicaSet) => {
      const desired =
        test.desiredReplicasAnnotations?.[r.metadata!.name!] ?? test.oldDeployment.spec!.replicas!;
      setReplicasAnnotations(r, desired, desired + maxSurge(test.oldDeployment));
      return seed(r);
    };
    const newRS = test.newRS === undefined ? undefined : annotate(structuredClone(test.newRS));
    const oldRSs = test.oldRSs.map((r) => annotate(structuredClone(r)));
    await rollout.scale(structuredClone(test.deployment), newRS, oldRSs);
    const sizes = sizesAfter(client, [...(newRS ? [newRS] : []), ...oldRSs]);
    if (test.expectedNew !== undefined) expect(sizes[newRS!.metadata!.name!]).toBe(test.expectedNew);
    expect(oldRSs.map((r) => sizes[r.metadata!.name!])).toEqual(test.expectedOld);
    // Every ReplicaSet touched carries the new desired and max annotations.
    for (const action of client.actionsOf("update", "replicasets")) {
      const body = action.body as ReplicaSet;
      expect(body.metadata?.annotations?.["deployment.kubernetes.io/desired-replicas"]).toBe(
        String(test.deployment.spec!.replicas),
      );
    }
  });

  it("records a ScalingReplicaSet event per size change", async () => {
    const { recorder, rollout, seed } = harness();
    const newRS = rs("foo-v2", 2);
    const oldRS = rs("foo-v1", 3, oldTimestamp);
    for (const r of [newRS, oldRS]) setReplicasAnnotations(r, 5, 5);
    await rollout.scale(newDeployment(10), seed(newRS), [seed(oldRS)]);
    expect(recorder.events).toEqual([
      "Normal ScalingReplicaSet Scaled up replica set foo-v1 from 3 to 6",
      "Normal ScalingReplicaSet Scaled up replica set foo-v2 from 2 to 4",
    ]);
  });
});

describe("cleanupDeployment (TestDeploymentController_cleanupDeployment)", () => {
  const withStatus = (name: string, specReplicas: number, statusReplicas: number, revision: number) => {
    const r = rs(name, specReplicas);
    Object.assign(r, { status: { replicas: statusReplicas } });
    r.metadata!.annotations = { [revisionAnnotation]: String(revision) };
    return r;
  };
  const alreadyDeleted = withStatus("foo-1", 0, 0, 1);
  Object.assign(alreadyDeleted.metadata!, { deletionTimestamp: newTimestamp });
  const cases: [string, ReplicaSet[], number, string[]][] = [
    [
      "3 scaled-down, limit 1",
      [withStatus("foo-1", 0, 0, 1), withStatus("foo-2", 0, 0, 2), withStatus("foo-3", 0, 0, 3)],
      1,
      ["foo-1", "foo-2"],
    ],
    [
      "only those with spec and status replicas 0",
      [
        withStatus("foo-1", 0, 0, 1),
        withStatus("foo-2", 0, 1, 2),
        withStatus("foo-3", 1, 0, 3),
        withStatus("foo-4", 1, 1, 4),
      ],
      0,
      ["foo-1"],
    ],
    ["limit 0", [withStatus("foo-1", 0, 0, 1), withStatus("foo-2", 0, 0, 2)], 0, ["foo-1", "foo-2"]],
    ["none scaled down", [withStatus("foo-1", 1, 1, 1), withStatus("foo-2", 1, 1, 2)], 0, []],
    ["already being deleted", [alreadyDeleted], 0, []],
    [
      "unlimited revisionHistoryLimit",
      [withStatus("foo-1", 0, 0, 1), withStatus("foo-2", 0, 0, 2), withStatus("foo-3", 0, 0, 3)],
      2147483647,
      [],
    ],
  ];
  it.each(cases)("%s", async (_name, oldRSs, limit, deleted) => {
    const { client, rollout, seed } = harness();
    const seeded = oldRSs.map((r) => seed(structuredClone(r)));
    await rollout.cleanupDeployment(seeded, newDeployment(1, { revisionHistoryLimit: limit }));
    expect(client.actionsOf("delete", "replicasets").map((a) => a.name)).toEqual(deleted);
  });

  it("skips a ReplicaSet whose latest generation is not yet observed", async () => {
    const { client, rollout, seed } = harness();
    const r = seed(withStatus("foo-1", 0, 0, 1));
    Object.assign(r.metadata!, { generation: 2 });
    r.status!.observedGeneration = 1;
    await rollout.cleanupDeployment([r], newDeployment(1, { revisionHistoryLimit: 0 }));
    expect(client.actionsOf("delete")).toEqual([]);
  });
});

describe("reconcileNewReplicaSet (TestDeploymentController_reconcileNewReplicaSet)", () => {
  const cases: [number, number, number, number, number | undefined][] = [
    // deploymentReplicas, maxSurge, oldReplicas, newReplicas, expected new size (undefined: no scaling)
    [10, 0, 10, 0, undefined],
    [10, 2, 10, 0, 2],
    [10, 2, 5, 0, 7],
    [10, 2, 10, 2, undefined],
    [2, 0, 0, 4, 2],
  ];
  it.each(
    cases,
  )("%i replicas, maxSurge %i, old %i, new %i → %s", async (replicas, surge, oldReplicas, newReplicas, expected) => {
    const { client, rollout, seed } = harness();
    const newRS = seed(rs("foo-v2", newReplicas));
    const oldRS = seed(rs("foo-v1", oldReplicas, oldTimestamp));
    const d = newDeployment(replicas, { maxSurge: surge, maxUnavailable: 0 });
    const scaled = await rollout.reconcileNewReplicaSet([newRS, oldRS], newRS, d);
    expect(scaled).toBe(expected !== undefined);
    const updates = client.actionsOf("update", "replicasets");
    if (expected === undefined) expect(updates).toEqual([]);
    else expect(updates.map((a) => (a.body as ReplicaSet).spec?.replicas)).toEqual([expected]);
  });
});

describe("reconcileOldReplicaSets (TestDeploymentController_reconcileOldReplicaSets)", () => {
  const cases: [number, number, number, number, number, number, number | undefined][] = [
    // replicas, maxUnavailable, oldReplicas, newReplicas, oldAvailable, newAvailable, expected old size
    [10, 0, 10, 0, 10, 0, 9],
    [10, 2, 10, 0, 10, 0, 8],
    // unhealthy old replicas are cleaned up first
    [10, 2, 10, 0, 8, 0, 8],
    // one unhealthy replica cleaned up, one available scaled down
    [10, 2, 10, 0, 9, 0, 8],
    // the new ReplicaSet's unavailable pods stop further scaling down
    [10, 2, 8, 2, 8, 0, undefined],
  ];
  it.each(
    cases,
  )("%i replicas, maxUnavailable %i, old %i, new %i, available %i/%i → %s", async (replicas, unavailable, oldReplicas, newReplicas, oldAvailable, newAvailable, expected) => {
    const { client, rollout, seed } = harness();
    const newRS = rs("foo-new", newReplicas);
    Object.assign(newRS, { status: { availableReplicas: newAvailable } });
    const oldRS = rs("foo-old", oldReplicas, oldTimestamp);
    Object.assign(oldRS, { status: { availableReplicas: oldAvailable } });
    const seededNew = seed(newRS);
    const seededOld = seed(oldRS);
    const d = newDeployment(replicas, { maxSurge: 0, maxUnavailable: unavailable });
    const scaled = await rollout.reconcileOldReplicaSets([seededOld, seededNew], [seededOld], seededNew, d);
    expect(scaled).toBe(expected !== undefined);
    const last = client.actionsOf("update", "replicasets").at(-1)?.body as ReplicaSet | undefined;
    if (expected !== undefined) expect(last?.spec?.replicas).toBe(expected);
    else expect(last).toBeUndefined();
  });
});

describe("cleanupUnhealthyReplicas (TestDeploymentController_cleanupUnhealthyReplicas)", () => {
  const cases: [number, number, number, number][] = [
    // oldReplicas, readyPods, maxCleanupCount, cleanupCountExpected
    [10, 8, 1, 1],
    [10, 8, 3, 2],
    [10, 8, 0, 0],
    [10, 10, 3, 0],
  ];
  it.each(
    cases,
  )("old %i with %i available, at most %i → %i cleaned", async (oldReplicas, ready, max, expected) => {
    const { client, rollout, seed } = harness();
    const oldRS = rs("foo-v2", oldReplicas);
    Object.assign(oldRS, { status: { availableReplicas: ready } });
    const d = newDeployment(10, { maxSurge: 2, maxUnavailable: 2 });
    const result = await rollout.cleanupUnhealthyReplicas([seed(oldRS)], d, max);
    expect(result.scaledDown).toBe(expected);
    expect(client.actionsOf("update").length).toBe(expected > 0 ? 1 : 0);
  });
});

describe("scaleDownOldReplicaSetsForRollingUpdate (TestDeploymentController_scaleDownOldReplicaSetsForRollingUpdate)", () => {
  const cases: [number, number, number, number, number | undefined][] = [
    // replicas, maxUnavailable, readyPods, oldReplicas, expected old size
    [10, 0, 10, 10, 9],
    [10, 2, 10, 10, 8],
    [10, 2, 8, 10, undefined],
    [10, 2, 10, 0, undefined],
    [1, 0, 1, 1, 0],
  ];
  it.each(
    cases,
  )("%i replicas, maxUnavailable %i, %i available of old %i → %s", async (replicas, unavailable, ready, oldReplicas, expected) => {
    const { client, rollout, seed } = harness();
    const oldRS = rs("foo-v2", oldReplicas);
    Object.assign(oldRS, { status: { availableReplicas: ready } });
    const seeded = seed(oldRS);
    const d = newDeployment(replicas, { maxSurge: 0, maxUnavailable: unavailable });
    await rollout.scaleDownOldReplicaSetsForRollingUpdate([seeded], [seeded], d);
    const updates = client
      .actionsOf("update", "replicasets")
      .map((a) => (a.body as ReplicaSet).spec?.replicas);
    expect(updates).toEqual(expected === undefined ? [] : [expected]);
  });
});

describe("recreate (TestScaleDownOldReplicaSets, TestOldPodsRunning)", () => {
  it("scales every old ReplicaSet to 0", async () => {
    const { client, rollout, seed } = harness();
    const d = newDeployment(3);
    d.spec!.strategy = { type: "Recreate" };
    const scaled = await rollout.scaleDownOldReplicaSetsForRecreate(
      [seed(rs("foo-0", 3)), seed(rs("foo-1", 0))],
      d,
    );
    expect(scaled).toBe(true);
    expect(client.actionsOf("update").map((a) => [a.name, (a.body as ReplicaSet).spec?.replicas])).toEqual([
      ["foo-0", 0],
    ]);
  });

  const pod = (phase: string): DeepReadonly<Pod> => ({ metadata: { name: phase }, status: { phase } });
  const withUID = (uid: string, statusReplicas = 0) => {
    const r = rs(uid, 0);
    Object.assign(r.metadata!, { uid: uid });
    Object.assign(r, { status: { replicas: statusReplicas } });
    return r;
  };
  const cases: [
    string,
    ReplicaSet | undefined,
    ReplicaSet[],
    Record<string, DeepReadonly<Pod>[]>,
    boolean,
  ][] = [
    ["no old RSs", undefined, [], {}, false],
    [
      "old RSs with running pods",
      undefined,
      [withUID("some-uid"), withUID("other-uid")],
      { "some-uid": [pod("Running")], "other-uid": [pod("Running")] },
      true,
    ],
    ["old RSs without pods but with non-zero status replicas", undefined, [withUID("rs-1", 1)], {}, true],
    ["old RSs without pods or non-zero status replicas", undefined, [withUID("rs-1")], {}, false],
    [
      "old RSs with zero status replicas but pods in terminal state are present",
      undefined,
      [withUID("uid-1")],
      { "uid-1": [pod("Failed"), pod("Succeeded")] },
      false,
    ],
    [
      "old RSs with zero status replicas but pod in unknown phase present",
      undefined,
      [withUID("uid-1")],
      { "uid-1": [pod("Unknown")] },
      true,
    ],
    [
      "old RSs with zero status replicas with pending pod present",
      undefined,
      [withUID("uid-1")],
      { "uid-1": [pod("Pending")] },
      true,
    ],
    [
      "old RSs with zero status replicas with running pod present",
      undefined,
      [withUID("uid-1")],
      { "uid-1": [pod("Running")] },
      true,
    ],
    [
      "old RSs with zero status replicas but pods in terminal state and pending are present",
      undefined,
      [withUID("uid-1")],
      { "uid-1": [pod("Failed"), pod("Succeeded"), pod("Pending")] },
      true,
    ],
    [
      "only the new RS has pods",
      withUID("new-uid"),
      [withUID("uid-1")],
      { "new-uid": [pod("Running")], "uid-1": [] },
      false,
    ],
  ];
  it.each(cases)("%s", (_name, newRS, oldRSs, podMap, expected) => {
    expect(oldPodsRunning(newRS, oldRSs, new Map(Object.entries(podMap)))).toBe(expected);
  });
});

describe("requeueStuckDeployment (TestRequeueStuckDeployment)", () => {
  const failed: DeploymentCondition[] = [
    { type: "Progressing", status: "False", reason: "ProgressDeadlineExceeded" },
  ];
  const stuck: DeploymentCondition[] = [
    {
      type: "Progressing",
      status: "True",
      reason: "ReplicaSetUpdated",
      lastUpdateTime: "2017-02-15T18:49:00Z",
    },
  ];
  const current = (
    pds: number | undefined,
    replicas: number,
    statusReplicas: number,
    updated: number,
    available: number,
    conditions?: DeploymentCondition[],
  ): Deployment => {
    const d = newDeployment(replicas, { maxSurge: 1, maxUnavailable: 1 });
    d.metadata!.name = "progress-test";
    if (pds !== undefined) d.spec!.progressDeadlineSeconds = pds;
    d.status = {
      replicas: statusReplicas,
      updatedReplicas: updated,
      availableReplicas: available,
      observedGeneration: 1,
    };
    if (conditions) d.status.conditions = conditions;
    return d;
  };
  const status = (replicas: number, updated: number, available: number): DeploymentStatus => ({
    replicas,
    updatedReplicas: updated,
    availableReplicas: available,
    observedGeneration: 1,
  });
  const cases: [string, Deployment, DeploymentStatus, string, number, (number | "rate-limited")[]][] = [
    [
      "nil progressDeadlineSeconds specified",
      current(undefined, 4, 3, 3, 2),
      status(3, 2, 2),
      "18:49:00",
      -1,
      [],
    ],
    [
      "infinite progressDeadlineSeconds specified",
      current(2147483647, 4, 3, 3, 2),
      status(3, 2, 2),
      "18:49:00",
      -1,
      [],
    ],
    ["no progressing condition found", current(60, 4, 3, 3, 2), status(3, 2, 2), "18:49:00", -1, []],
    [
      "complete deployment does not need to be requeued",
      current(60, 3, 3, 3, 3, stuck),
      status(3, 3, 3),
      "18:49:00",
      -1,
      [],
    ],
    [
      "already failed deployment does not need to be requeued",
      current(60, 3, 3, 3, 0, failed),
      status(3, 3, 0),
      "18:49:00",
      -1,
      [],
    ],
    ["stuck deployment - 30s", current(60, 3, 3, 3, 1, stuck), status(3, 3, 1), "18:49:30", 30_000, [31_000]],
    ["stuck deployment - 1s", current(60, 3, 3, 3, 1, stuck), status(3, 3, 1), "18:49:59", 1_000, [2_000]],
    [
      "failed deployment - less than a second => now",
      current(60, 3, 3, 3, 1, stuck),
      status(3, 3, 1),
      "18:49:59.5",
      0,
      ["rate-limited"],
    ],
    [
      "failed deployment - now",
      current(60, 3, 3, 3, 1, stuck),
      status(3, 3, 1),
      "18:50:00",
      0,
      ["rate-limited"],
    ],
    [
      "failed deployment - 1s after deadline",
      current(60, 3, 3, 3, 1, stuck),
      status(3, 3, 1),
      "18:50:01",
      0,
      ["rate-limited"],
    ],
    [
      "failed deployment - 60s after deadline",
      current(60, 3, 3, 3, 1, stuck),
      status(3, 3, 1),
      "18:51:00",
      0,
      ["rate-limited"],
    ],
  ];
  it.each(cases)("%s", (_name, d, next, now, expected, enqueuedAfter) => {
    const { rollout, enqueued } = harness(new FakeClock(Date.parse(`2017-02-15T${now}Z`)));
    expect(rollout.requeueStuckDeployment(d, next)).toBe(expected);
    expect(enqueued.map(([, when]) => when)).toEqual(enqueuedAfter);
  });
});

describe("syncRolloutStatus (TestSyncRolloutStatus)", () => {
  const at = "2017-02-15T18:49:00Z";
  const progressingCondition = (
    reason: string,
    status: "True" | "False" = "True",
    time = "2017-02-15T18:40:00Z",
  ) => ({
    type: "Progressing",
    status,
    reason,
    message: "",
    lastUpdateTime: time,
    lastTransitionTime: time,
  });

  async function run(d: Deployment, newRSStatus: ReplicaSet["status"], newReplicas = 2) {
    const { client, rollout, seed } = harness();
    client.seed(deployments, d);
    const stored = client.peek(deployments, "default", "foo")!;
    Object.assign(d.metadata!, { resourceVersion: stored.metadata!.resourceVersion! });
    const newRS = rs("foo-new", newReplicas);
    Object.assign(newRS, { status: newRSStatus });
    const seeded = seed(newRS);
    await rollout.syncRolloutStatus([seeded], seeded, d);
    const updates = client.actionsOf("updateStatus", "deployments");
    return updates.length === 0 ? undefined : (updates.at(-1)!.body as Deployment).status;
  }

  const pdsDeployment = (conditions: DeploymentCondition[], status: DeploymentStatus = {}) => {
    const d = newDeployment(2, { maxSurge: 1, maxUnavailable: 0 });
    d.spec!.progressDeadlineSeconds = 60;
    Object.assign(d, { status: { ...status, conditions } });
    return d;
  };

  it("General: remove Progressing condition and do not estimate progress if deployment has no Progress Deadline", async () => {
    const d = newDeployment(2, { maxSurge: 1, maxUnavailable: 0 });
    Object.assign(d, { status: { conditions: [progressingCondition("ReplicaSetUpdated")] } });
    const status = await run(d, { replicas: 2, readyReplicas: 2, availableReplicas: 2 });
    expect(status?.conditions?.map((c) => c.type)).toEqual(["Available"]);
  });

  it("General: do not estimate progress of deployment with only one active ReplicaSet", async () => {
    const d = pdsDeployment([progressingCondition("NewReplicaSetAvailable")], {
      replicas: 2,
      updatedReplicas: 2,
      availableReplicas: 2,
      readyReplicas: 2,
      observedGeneration: 1,
    });
    const status = await run(d, { replicas: 2, readyReplicas: 2, availableReplicas: 2 });
    expect(status?.conditions?.find((c) => c.type === "Progressing")).toEqual(
      progressingCondition("NewReplicaSetAvailable"),
    );
  });

  it("DeploymentProgressing: dont update lastTransitionTime if deployment already has Progressing=True", async () => {
    const d = pdsDeployment([progressingCondition("ReplicaSetUpdated")], { replicas: 1, updatedReplicas: 1 });
    const status = await run(d, { replicas: 2, readyReplicas: 1, availableReplicas: 1 });
    expect(status?.conditions?.find((c) => c.type === "Progressing")).toEqual({
      type: "Progressing",
      status: "True",
      reason: "ReplicaSetUpdated",
      message: 'ReplicaSet "foo-new" is progressing.',
      lastUpdateTime: at,
      lastTransitionTime: "2017-02-15T18:40:00Z",
    });
  });

  it("DeploymentProgressing: update everything if deployment has Progressing=False", async () => {
    const d = pdsDeployment([progressingCondition("ReplicaSetCreateError", "False")], {
      replicas: 1,
      updatedReplicas: 1,
    });
    const status = await run(d, { replicas: 2, readyReplicas: 1, availableReplicas: 1 });
    expect(status?.conditions?.find((c) => c.type === "Progressing")).toMatchObject({
      status: "True",
      reason: "ReplicaSetUpdated",
      lastUpdateTime: at,
      lastTransitionTime: at,
    });
  });

  it("DeploymentComplete: update lastTransitionTime if deployment has Progressing=False", async () => {
    const d = pdsDeployment([progressingCondition("ProgressDeadlineExceeded", "False")]);
    const status = await run(d, { replicas: 2, readyReplicas: 2, availableReplicas: 2 });
    expect(status?.conditions?.find((c) => c.type === "Progressing")).toEqual({
      type: "Progressing",
      status: "True",
      reason: "NewReplicaSetAvailable",
      message: 'ReplicaSet "foo-new" has successfully progressed.',
      lastUpdateTime: at,
      lastTransitionTime: at,
    });
  });

  it("DeploymentTimedOut: update status if rollout exceeds Progress Deadline", async () => {
    const d = pdsDeployment([progressingCondition("ReplicaSetUpdated")], {
      replicas: 2,
      updatedReplicas: 2,
      readyReplicas: 1,
      availableReplicas: 1,
    });
    const status = await run(d, { replicas: 2, readyReplicas: 1, availableReplicas: 1 });
    expect(status?.conditions?.find((c) => c.type === "Progressing")).toMatchObject({
      status: "False",
      reason: "ProgressDeadlineExceeded",
      message: 'ReplicaSet "foo-new" has timed out progressing.',
    });
  });

  it("moves the new ReplicaSet's ReplicaFailure into the Deployment", async () => {
    const d = pdsDeployment([progressingCondition("NewReplicaSetAvailable")], {
      replicas: 2,
      updatedReplicas: 2,
      readyReplicas: 2,
      availableReplicas: 2,
      observedGeneration: 1,
    });
    const failure = {
      type: "ReplicaFailure",
      status: "True",
      reason: "FailedCreate",
      message: "quota",
      lastTransitionTime: at,
    };
    const status = await run(d, {
      replicas: 2,
      readyReplicas: 2,
      availableReplicas: 2,
      conditions: [failure],
    });
    expect(status?.conditions?.find((c) => c.type === "ReplicaFailure")).toEqual({
      ...failure,
      lastUpdateTime: at,
    });
  });

  it("writes nothing when the status is unchanged", async () => {
    const d = pdsDeployment([progressingCondition("NewReplicaSetAvailable")], {
      replicas: 2,
      updatedReplicas: 2,
      readyReplicas: 2,
      availableReplicas: 2,
      observedGeneration: 1,
    });
    d.status!.conditions!.unshift({
      type: "Available",
      status: "True",
      reason: "MinimumReplicasAvailable",
      message: "Deployment has minimum availability.",
      lastUpdateTime: at,
      lastTransitionTime: at,
    });
    expect(await run(d, { replicas: 2, readyReplicas: 2, availableReplicas: 2 })).toBeUndefined();
  });
});

describe("getNewReplicaSet", () => {
  it("creates the new ReplicaSet sized by the fenceposts, with revision max(old)+1, and records it", async () => {
    const { client, recorder, rollout, seed } = harness();
    const d = newDeployment(4, { maxSurge: 1, maxUnavailable: 0 });
    d.spec!.progressDeadlineSeconds = 600;
    d.metadata!.annotations = { "kubernetes.io/change-cause": "v2" };
    client.seed(deployments, d);
    Object.assign(d.metadata!, {
      resourceVersion: client.peek(deployments, "default", "foo")!.metadata!.resourceVersion!,
    });
    const old = rs("foo-old", 4, oldTimestamp);
    old.metadata!.annotations = { [revisionAnnotation]: "3" };
    old.spec!.template = { metadata: { labels: { foo: "bar", version: "1" } } };
    const created = (await rollout.getNewReplicaSet(d, [seed(old)], [seed(old)], true)) as ReplicaSet;
    const hash = created.metadata!.labels!["pod-template-hash"]!;
    expect(created.metadata?.name).toBe(`foo-${hash}`);
    expect(created.spec?.replicas).toBe(1);
    expect(created.metadata?.annotations).toEqual({
      "kubernetes.io/change-cause": "v2",
      [revisionAnnotation]: "4",
      "deployment.kubernetes.io/desired-replicas": "4",
      "deployment.kubernetes.io/max-replicas": "5",
    });
    expect(created.metadata?.ownerReferences).toEqual([
      {
        apiVersion: "apps/v1",
        kind: "Deployment",
        name: "foo",
        uid: "deployment-uid",
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    expect(recorder.events).toEqual([
      `Normal ScalingReplicaSet Scaled up replica set foo-${hash} from 0 to 1`,
    ]);
    const status = client.actionsOf("updateStatus").at(-1)!.body as Deployment;
    expect(status.metadata?.annotations?.[revisionAnnotation]).toBe("4");
    expect(status.status?.conditions).toEqual([
      {
        type: "Progressing",
        status: "True",
        reason: "NewReplicaSetCreated",
        message: `Created new replica set "foo-${hash}"`,
        lastUpdateTime: "2017-02-15T18:49:00Z",
        lastTransitionTime: "2017-02-15T18:49:00Z",
      },
    ]);
  });

  it("on a name taken by another template, bumps collisionCount and fails, so the next attempt hashes differently", async () => {
    const { client } = harness();
    const d = newDeployment(1);
    client.seed(deployments, d);
    Object.assign(d.metadata!, {
      resourceVersion: client.peek(deployments, "default", "foo")!.metadata!.resourceVersion!,
    });
    const firstName = `foo-${computeHash(d.spec!.template)}`;
    const squatter = rs(firstName, 1);
    squatter.spec!.template = { metadata: { labels: { other: "template" } } };
    client.seed(replicaSets, squatter);
    const withLookup = new DeploymentRollout({
      client,
      recorder: new FakeEventRecorder(),
      clock: new FakeClock(0),
      getReplicaSet: () => squatter,
    });
    await expect(withLookup.getNewReplicaSet(d, [], [], true)).rejects.toThrow(/already exists/);
    expect(d.status?.collisionCount).toBe(1);
    expect((client.actionsOf("updateStatus").at(-1)!.body as Deployment).status?.collisionCount).toBe(1);
    const second = (await withLookup.getNewReplicaSet(d, [], [], true)) as ReplicaSet;
    expect(second.metadata?.name).toBe(`foo-${computeHash(d.spec!.template, 1)}`);
  });
});

describe("one sync, several steps", () => {
  it("a step reads the ReplicaSet as an earlier step of the same sync wrote it, not the cache's stale copy", async () => {
    const { client, rollout, seed } = harness();
    const d = newDeployment(2, { maxSurge: 1, maxUnavailable: 0 });
    client.seed(deployments, d);
    Object.assign(d.metadata!, {
      resourceVersion: client.peek(deployments, "default", "foo")!.metadata!.resourceVersion,
    });
    // Rolled back to revision 1's template: its ReplicaSet is the new one again.
    const back = rs("foo-1", 0, olderTimestamp);
    Object.assign(back.spec!, { template: structuredClone(d.spec!.template) });
    back.metadata!.annotations = { [revisionAnnotation]: "1" };
    const current = rs("foo-2", 2, oldTimestamp);
    current.metadata!.annotations = { [revisionAnnotation]: "2" };
    Object.assign(current, { status: { replicas: 2, availableReplicas: 2 } });
    const cached = [seed(back), seed(current)];
    expect(await rollout.isScalingEvent(d, cached)).toBe(false);
    await rollout.rolloutRolling(d, cached);
    const updates = client
      .actionsOf("update", "replicasets")
      .map((a) => [
        a.name,
        (a.body as ReplicaSet).spec?.replicas,
        (a.body as ReplicaSet).metadata?.annotations?.[revisionAnnotation],
      ]);
    expect(updates).toEqual([
      ["foo-1", 0, "3"],
      ["foo-1", 1, "3"],
    ]);
  });
});
