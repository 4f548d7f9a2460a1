// Tables ported from upstream pkg/controller/deployment/util/deployment_util_test.go.
import type { Deployment, ReplicaSet } from "@reconcile/api";
import type { DeploymentCondition, DeploymentStatus } from "kubernetes-types/apps/v1.js";
import { describe, expect, it } from "vitest";
import { setDeploymentCondition } from "./deployment-conditions.js";
import {
  deploymentComplete,
  deploymentProgressing,
  deploymentTimedOut,
  desiredReplicasAnnotation,
  equalIgnoreHash,
  findActiveOrLatest,
  findNewReplicaSet,
  findOldReplicaSets,
  getAvailableReplicaCountForReplicaSets,
  getProportion,
  getReplicaCountForReplicaSets,
  getReplicaSetFraction,
  getScaledValueFromIntOrPercent,
  isSaturated,
  lastRevision,
  maxReplicasAnnotation,
  maxRevision,
  maxSurge,
  maxUnavailable,
  minAvailable,
  newRSNewReplicas,
  replicasAnnotationsNeedUpdate,
  resolveFenceposts,
  revisionAnnotation,
  revisionHistoryAnnotation,
  setDeploymentAnnotationsTo,
  setNewReplicaSetAnnotations,
  setReplicasAnnotations,
} from "./deployment-util.js";
import { bySizeNewer, bySizeOlder } from "./replica-set-order.js";

function deployment(
  replicas: number,
  options: {
    maxSurge?: number | string;
    maxUnavailable?: number | string;
    strategy?: "RollingUpdate" | "Recreate";
    pds?: number;
    generation?: number;
    status?: DeploymentStatus;
  } = {},
): Deployment {
  const strategy = options.strategy ?? "RollingUpdate";
  return {
    metadata: { name: "foo", namespace: "default", generation: options.generation ?? 1 },
    spec: {
      replicas,
      selector: { matchLabels: { foo: "bar" } },
      template: {
        metadata: { labels: { foo: "bar" } },
        spec: { containers: [{ name: "c", image: "nginx" }] },
      },
      strategy:
        strategy === "Recreate"
          ? { type: "Recreate" }
          : {
              type: "RollingUpdate",
              rollingUpdate: { maxSurge: options.maxSurge ?? 1, maxUnavailable: options.maxUnavailable ?? 0 },
            },
      ...(options.pds === undefined ? {} : { progressDeadlineSeconds: options.pds }),
    },
    status: options.status ?? {},
  };
}

function rs(
  name: string,
  replicas: number,
  options: { created?: string; available?: number; revision?: string; template?: ReplicaSet["spec"] } = {},
): ReplicaSet {
  return {
    metadata: {
      name,
      namespace: "default",
      uid: `uid-${name}`,
      creationTimestamp: options.created ?? "2016-05-20T00:00:00Z",
      ...(options.revision === undefined ? {} : { annotations: { [revisionAnnotation]: options.revision } }),
    },
    spec: {
      replicas,
      selector: { matchLabels: { foo: "bar" } },
      template: { metadata: { labels: { foo: "bar" } } },
    },
    status: { replicas, availableReplicas: options.available ?? 0 },
  };
}

describe("resolveFenceposts (TestResolveFenceposts)", () => {
  const cases: [string | number | undefined, string | number | undefined, number, number, number][] = [
    ["0%", "0%", 0, 0, 1],
    ["39%", "39%", 10, 4, 3],
    [undefined, "39%", 10, 0, 3],
    ["39%", undefined, 10, 4, 0],
    [undefined, undefined, 10, 0, 1],
  ];
  it.each(
    cases,
  )("maxSurge %s, maxUnavailable %s of %i resolve to [%i, %i]", (surge, unavailable, desired, s, u) => {
    expect(resolveFenceposts(surge, unavailable, desired)).toEqual([s, u]);
  });

  it("rejects a string that is no percentage and a malformed percentage", () => {
    expect(() => resolveFenceposts("oops", "39%", 10)).toThrow("string is not a percentage");
    expect(() => resolveFenceposts("55%", "urg", 10)).toThrow("string is not a percentage");
    expect(() => resolveFenceposts("5x%", 1, 10)).toThrow('invalid value "5x%"');
  });
});

describe("the fencepost table of the controllers digest", () => {
  const table: [number, number | string, number | string, number, number, number][] = [
    // replicas, maxSurge, maxUnavailable, surge, MaxUnavailable, minAvailable
    [10, "25%", "25%", 3, 2, 8],
    [100, "25%", "25%", 25, 25, 75],
    [5, "25%", "25%", 2, 1, 4],
    [4, "25%", "25%", 1, 1, 3],
    [3, "25%", "25%", 1, 0, 3],
    [1, "25%", "25%", 1, 0, 1],
    [10, 0, 0, 0, 1, 9],
    [0, "0%", "0%", 0, 0, 0],
    [10, "39%", "39%", 4, 3, 7],
    [7, "50%", "50%", 4, 3, 4],
    [5, 1, 10, 1, 5, 0],
    [10, "1%", "0%", 1, 0, 10],
    [2, "0%", "1%", 0, 1, 1],
  ];
  it.each(
    table,
  )("%i replicas, %s/%s: surge %i, unavailable %i, minAvailable %i", (replicas, s, u, surge, unav, min) => {
    const d = deployment(replicas, { maxSurge: s, maxUnavailable: u });
    expect(maxSurge(d)).toBe(surge);
    expect(maxUnavailable(d)).toBe(unav);
    expect(minAvailable(d)).toBe(min);
  });
});

describe("maxUnavailable (TestMaxUnavailable)", () => {
  const cases: [string, number, number | string, number][] = [
    ["maxUnavailable less than replicas", 10, 5, 5],
    ["maxUnavailable equal replicas", 10, 10, 10],
    ["maxUnavailable greater than replicas", 5, 10, 5],
    ["maxUnavailable with replicas is 0", 0, 10, 0],
    ["maxUnavailable less than replicas with percents", 10, "50%", 5],
    ["maxUnavailable equal replicas with percents", 10, "100%", 10],
    ["maxUnavailable greater than replicas with percents", 5, "100%", 5],
  ];
  it.each(cases)("%s", (_name, replicas, unavailable, expected) => {
    expect(maxUnavailable(deployment(replicas, { maxSurge: 1, maxUnavailable: unavailable }))).toBe(expected);
  });
  it("maxUnavailable with Recreate deployment strategy", () => {
    expect(maxUnavailable(deployment(10, { strategy: "Recreate" }))).toBe(0);
    expect(maxSurge(deployment(10, { strategy: "Recreate" }))).toBe(0);
  });
});

describe("minAvailable (TestMinAvailable)", () => {
  const cases: [string, number, number, number][] = [
    ["replicas greater than maxUnavailable", 10, 1, 9],
    ["replicas equal maxUnavailable", 10, 10, 0],
    ["replicas less than maxUnavailable", 10, 20, 0],
    ["replicas is 0", 0, 1, 0],
  ];
  it.each(cases)("%s", (_name, replicas, unavailable, expected) => {
    expect(minAvailable(deployment(replicas, { maxSurge: 1, maxUnavailable: unavailable }))).toBe(expected);
  });
  it("minAvailable with Recreate deployment strategy", () => {
    expect(minAvailable(deployment(10, { strategy: "Recreate" }))).toBe(0);
  });
});

describe("getScaledValueFromIntOrPercent", () => {
  it("rounds percentages up or down as asked and passes ints through", () => {
    expect(getScaledValueFromIntOrPercent("25%", 10, true)).toBe(3);
    expect(getScaledValueFromIntOrPercent("25%", 10, false)).toBe(2);
    expect(getScaledValueFromIntOrPercent(7, 10, true)).toBe(7);
    expect(() => getScaledValueFromIntOrPercent(undefined, 10, true)).toThrow("nil value for IntOrString");
  });
});

describe("newRSNewReplicas (TestNewRSNewReplicas)", () => {
  const cases: [string, "RollingUpdate" | "Recreate", number, number, number, number][] = [
    ["can not scale up - to newRSReplicas", "RollingUpdate", 1, 5, 1, 5],
    ["scale up - to depReplicas", "RollingUpdate", 6, 2, 10, 6],
    ["recreate - to depReplicas", "Recreate", 3, 1, 1, 3],
  ];
  it.each(cases)("%s", (_name, strategy, depReplicas, newRSReplicas, surge, expected) => {
    const d = deployment(depReplicas, { strategy, maxSurge: surge, maxUnavailable: 1 });
    const newRS = rs("foo-new", newRSReplicas);
    expect(newRSNewReplicas(d, [rs("foo-5", 5)], newRS)).toBe(expected);
  });
});

describe("deploymentComplete (TestDeploymentComplete)", () => {
  const cases: [string, number, number, number, number, boolean][] = [
    // desired, current, updated, available
    ["not complete: min but not all pods become available", 5, 5, 5, 4, false],
    ["not complete: min availability is not honored", 5, 5, 5, 3, false],
    ["complete", 5, 5, 5, 5, true],
    ["not complete: all pods are available but not updated", 5, 5, 4, 5, false],
    ["not complete: still running old pods", 1, 2, 1, 1, false],
    ["not complete: one replica deployment never comes up", 1, 1, 1, 0, false],
  ];
  it.each(cases)("%s", (_name, desired, current, updated, available, expected) => {
    const d = deployment(desired, { maxSurge: 1, maxUnavailable: 1, generation: 1 });
    const status = {
      replicas: current,
      updatedReplicas: updated,
      availableReplicas: available,
      observedGeneration: 1,
    };
    expect(deploymentComplete(d, status)).toBe(expected);
  });

  it("is not complete before the latest generation is observed", () => {
    const d = deployment(1, { generation: 2 });
    expect(
      deploymentComplete(d, { replicas: 1, updatedReplicas: 1, availableReplicas: 1, observedGeneration: 1 }),
    ).toBe(false);
  });
});

describe("deploymentProgressing (TestDeploymentProgressing)", () => {
  const status = (replicas: number, updated: number, ready: number, available: number): DeploymentStatus => ({
    replicas,
    updatedReplicas: updated,
    readyReplicas: ready,
    availableReplicas: available,
  });
  const cases: [string, DeploymentStatus, DeploymentStatus, boolean][] = [
    ["progressing: updated pods", status(10, 4, 4, 4), status(10, 6, 4, 4), true],
    ["not progressing", status(10, 4, 4, 4), status(10, 4, 4, 4), false],
    ["progressing: old pods removed", status(10, 4, 6, 6), status(8, 4, 6, 6), true],
    ["not progressing: less new pods", status(10, 7, 3, 3), status(10, 6, 3, 3), false],
    ["progressing: less overall but more new pods", status(10, 4, 7, 7), status(8, 6, 7, 7), true],
    ["progressing: more ready pods", status(10, 10, 9, 8), status(10, 10, 10, 8), true],
    ["progressing: more available pods", status(10, 10, 10, 9), status(10, 10, 10, 10), true],
  ];
  it.each(cases)("%s", (_name, old, next, expected) => {
    expect(deploymentProgressing(deployment(10, { status: old }), next)).toBe(expected);
  });
});

describe("deploymentTimedOut (TestDeploymentTimedOut)", () => {
  const now = Date.parse("2017-02-15T18:50:00Z");
  const progressing = (reason: string, lastUpdate: string): DeploymentStatus => ({
    conditions: [{ type: "Progressing", status: "True", reason, lastUpdateTime: lastUpdate }],
  });
  const cases: [string, number | undefined, DeploymentStatus, boolean][] = [
    [
      "nil progressDeadlineSeconds specified - no timeout",
      undefined,
      progressing("ReplicaSetUpdated", "2017-02-15T18:40:00Z"),
      false,
    ],
    [
      "infinite progressDeadlineSeconds specified - no timeout",
      2147483647,
      progressing("ReplicaSetUpdated", "2017-02-15T18:40:00Z"),
      false,
    ],
    [
      "progressDeadlineSeconds: 10s, now - 10s - no timeout",
      10,
      progressing("ReplicaSetUpdated", "2017-02-15T18:49:50Z"),
      false,
    ],
    [
      "progressDeadlineSeconds: 10s, now - 11s - timeout",
      10,
      progressing("ReplicaSetUpdated", "2017-02-15T18:49:49Z"),
      true,
    ],
    [
      "previous status was timed out",
      10,
      progressing("ProgressDeadlineExceeded", "2017-02-15T18:49:59Z"),
      true,
    ],
    [
      "complete rollout never times out",
      10,
      progressing("NewReplicaSetAvailable", "2017-02-15T18:40:00Z"),
      false,
    ],
    ["no Progressing condition - no timeout", 10, {}, false],
  ];
  it.each(cases)("%s", (_name, pds, status, expected) => {
    expect(deploymentTimedOut(deployment(1, pds === undefined ? {} : { pds }), status, now)).toBe(expected);
  });
});

describe("annotations (TestAnnotationUtils, TestReplicasAnnotationsNeedUpdate)", () => {
  it("raises the revision on every call and keeps the last revisions within the length limit", () => {
    const d = deployment(1);
    const target = rs("hash", 1);
    delete target.metadata!.annotations;
    for (let i = 10; i < 20; i++) {
      const next = String(i + 1);
      setNewReplicaSetAnnotations(d, target, next, true, 5);
      if (i >= 12) expect(target.metadata?.annotations?.[revisionHistoryAnnotation]).toBe(`${i - 1},${i}`);
      expect(target.metadata?.annotations?.[revisionAnnotation]).toBe(next);
    }
  });

  it("copies the Deployment's annotations except the skipped ones, and sets replica annotations on create", () => {
    const d = deployment(3, { maxSurge: 1 });
    d.metadata!.annotations = {
      "kubernetes.io/change-cause": "kubectl set image",
      [revisionAnnotation]: "7",
      "kubectl.kubernetes.io/last-applied-configuration": "{}",
    };
    const target = rs("new", 0);
    expect(setNewReplicaSetAnnotations(d, target, "8", false)).toBe(true);
    expect(target.metadata?.annotations).toEqual({
      "kubernetes.io/change-cause": "kubectl set image",
      [revisionAnnotation]: "8",
      [desiredReplicasAnnotation]: "3",
      [maxReplicasAnnotation]: "4",
    });
    expect(setNewReplicaSetAnnotations(d, target, "8", true)).toBe(false);
  });

  it("does not lower a revision, and leaves an unparsable one alone", () => {
    const d = deployment(1);
    const higher = rs("higher", 1, { revision: "9" });
    setNewReplicaSetAnnotations(d, higher, "4", true);
    expect(higher.metadata?.annotations?.[revisionAnnotation]).toBe("9");
    const bad = rs("bad", 1, { revision: "x" });
    expect(setNewReplicaSetAnnotations(d, bad, "4", true)).toBe(false);
  });

  it("a rollback target's annotations replace the Deployment's copyable ones", () => {
    const d = deployment(1);
    d.metadata!.annotations = { [revisionAnnotation]: "3", "kubernetes.io/change-cause": "v3" };
    const target = rs("old", 0, { revision: "1" });
    target.metadata!.annotations!["kubernetes.io/change-cause"] = "v1";
    setDeploymentAnnotationsTo(d, target);
    expect(d.metadata?.annotations).toEqual({
      [revisionAnnotation]: "3",
      "kubernetes.io/change-cause": "v1",
    });
  });

  const needCases: [string, Record<string, string> | undefined, boolean][] = [
    ["test Annotations nil", undefined, true],
    [
      "test desiredReplicas update",
      { [desiredReplicasAnnotation]: "8", [maxReplicasAnnotation]: "16" },
      true,
    ],
    ["test maxReplicas update", { [desiredReplicasAnnotation]: "10", [maxReplicasAnnotation]: "16" }, true],
    ["test needn't update", { [desiredReplicasAnnotation]: "10", [maxReplicasAnnotation]: "20" }, false],
  ];
  it.each(needCases)("%s", (_name, annotations, expected) => {
    const target = rs("r", 1);
    if (annotations === undefined) delete target.metadata!.annotations;
    else target.metadata!.annotations = annotations;
    expect(replicasAnnotationsNeedUpdate(target, 10, 20)).toBe(expected);
  });

  it("setReplicasAnnotations reports whether it changed anything", () => {
    const target = rs("r", 1);
    expect(setReplicasAnnotations(target, 10, 20)).toBe(true);
    expect(setReplicasAnnotations(target, 10, 20)).toBe(false);
  });
});

describe("revisions", () => {
  it("maxRevision and lastRevision skip unparsable annotations; duplicates of the max make it the last too", () => {
    const list = [
      rs("a", 0, { revision: "1" }),
      rs("b", 0, { revision: "3" }),
      rs("c", 0, { revision: "x" }),
      rs("d", 0),
    ];
    expect(maxRevision(list)).toBe(3);
    expect(lastRevision(list)).toBe(1);
    expect(lastRevision([rs("a", 0, { revision: "3" }), rs("b", 0, { revision: "3" })])).toBe(3);
    expect(lastRevision([rs("a", 0, { revision: "3" })])).toBe(0);
  });
});

describe("new and old ReplicaSets (TestFindNewReplicaSet, TestFindOldReplicaSets, TestEqualIgnoreHash)", () => {
  const d = deployment(1);
  const matching = (name: string, created: string): ReplicaSet => {
    const r = rs(name, 1, { created });
    r.spec!.template = structuredClone(d.spec!.template);
    r.spec!.template.metadata!.labels!["pod-template-hash"] = name;
    return r;
  };

  it("the oldest ReplicaSet with the Deployment's template (hash label ignored) is the new one", () => {
    const older = matching("older", "2016-05-20T00:00:00Z");
    const newer = matching("newer", "2016-05-20T01:00:00Z");
    const other = rs("other", 1);
    expect(findNewReplicaSet(d, [newer, other, older])?.metadata?.name).toBe("older");
    const [required, all] = findOldReplicaSets(d, [newer, other, older, rs("idle", 0)]);
    expect(all.map((r) => r.metadata?.name)).toEqual(["newer", "other", "idle"]);
    expect(required.map((r) => r.metadata?.name)).toEqual(["newer", "other"]);
    expect(findNewReplicaSet(d, [other])).toBeUndefined();
  });

  it("equalIgnoreHash ignores only the hash label; absent and empty are equal", () => {
    const a = { metadata: { labels: { foo: "bar", "pod-template-hash": "1" } }, spec: { containers: [] } };
    const b = { metadata: { labels: { foo: "bar", "pod-template-hash": "2" } } };
    expect(equalIgnoreHash(a, b)).toBe(true);
    expect(equalIgnoreHash(a, { metadata: { labels: { foo: "baz" } } })).toBe(false);
    expect(
      equalIgnoreHash(
        { metadata: { labels: { foo: "bar" } } },
        { metadata: { labels: { foo: "bar", x: "" } } },
      ),
    ).toBe(false);
  });
});

describe("counting and proportions", () => {
  it("sums spec and available replicas, skipping missing ReplicaSets", () => {
    const list = [rs("a", 2, { available: 1 }), undefined, rs("b", 3, { available: 3 })];
    expect(getReplicaCountForReplicaSets(list)).toBe(5);
    expect(getAvailableReplicaCountForReplicaSets(list)).toBe(4);
  });

  it("findActiveOrLatest: the only active one, the new one or the newest old one when none is, none when several are", () => {
    const newRS = rs("new", 0, { created: "2016-05-20T02:00:00Z" });
    const old1 = rs("old1", 0, { created: "2016-05-20T00:00:00Z" });
    const old2 = rs("old2", 0, { created: "2016-05-20T01:00:00Z" });
    expect(findActiveOrLatest(newRS, [old1, old2])?.metadata?.name).toBe("new");
    expect(findActiveOrLatest(undefined, [old1, old2])?.metadata?.name).toBe("old2");
    expect(findActiveOrLatest(newRS, [old1, rs("busy", 2)])?.metadata?.name).toBe("busy");
    expect(findActiveOrLatest(rs("n", 1), [rs("busy", 2)])).toBeUndefined();
    expect(findActiveOrLatest(undefined, [])).toBeUndefined();
  });

  it("isSaturated needs every replica in the new ReplicaSet, annotated and available", () => {
    const d = deployment(3);
    const full = rs("full", 3, { available: 3 });
    setReplicasAnnotations(full, 3, 4);
    expect(isSaturated(d, full)).toBe(true);
    const unavailable = rs("u", 3, { available: 2 });
    setReplicasAnnotations(unavailable, 3, 4);
    expect(isSaturated(d, unavailable)).toBe(false);
    expect(isSaturated(d, rs("unannotated", 3, { available: 3 }))).toBe(false);
    expect(isSaturated(d, undefined)).toBe(false);
  });

  it("getReplicaSetFraction scales a ReplicaSet's size to the new total, rounding half away from zero", () => {
    const d = deployment(10, { maxSurge: 0, maxUnavailable: 1 });
    const r = rs("r", 3);
    setReplicasAnnotations(r, 5, 5);
    expect(getReplicaSetFraction(r, d)).toBe(3);
    const half = rs("half", 1);
    setReplicasAnnotations(half, 4, 4);
    // 1 * 10 / 4 = 2.5 rounds to 3
    expect(getReplicaSetFraction(half, d)).toBe(2);
    expect(getReplicaSetFraction(r, deployment(0, { maxSurge: 0, maxUnavailable: 1 }))).toBe(-3);
  });

  it("getProportion never hands out more than is left", () => {
    const d = deployment(10, { maxSurge: 0, maxUnavailable: 1 });
    const r = rs("r", 3);
    setReplicasAnnotations(r, 5, 5);
    expect(getProportion(r, d, 5, 0)).toBe(3);
    expect(getProportion(r, d, 5, 4)).toBe(1);
    expect(getProportion(r, d, 5, 5)).toBe(0);
    expect(getProportion(rs("zero", 0), d, 5, 0)).toBe(0);
  });

  it("orders by size, breaking ties by age in the direction of the operation", () => {
    const a = rs("a", 2, { created: "2016-05-20T00:00:00Z" });
    const b = rs("b", 2, { created: "2016-05-20T01:00:00Z" });
    const c = rs("c", 5, { created: "2016-05-20T02:00:00Z" });
    expect([a, b, c].sort(bySizeNewer).map((r) => r.metadata?.name)).toEqual(["c", "b", "a"]);
    expect([a, b, c].sort(bySizeOlder).map((r) => r.metadata?.name)).toEqual(["c", "a", "b"]);
  });
});

describe("setDeploymentCondition", () => {
  const condition = (status: "True" | "False", reason: string, time: string): DeploymentCondition => ({
    type: "Progressing",
    status,
    reason,
    lastUpdateTime: time,
    lastTransitionTime: time,
  });

  it("keeps a condition with the same status and reason untouched", () => {
    const status: DeploymentStatus = { conditions: [condition("True", "A", "2020-01-01T00:00:00Z")] };
    setDeploymentCondition(status, condition("True", "A", "2021-01-01T00:00:00Z"));
    expect(status.conditions).toEqual([condition("True", "A", "2020-01-01T00:00:00Z")]);
  });

  it("keeps lastTransitionTime when only the reason changes, and replaces it when the status does", () => {
    const status: DeploymentStatus = { conditions: [condition("True", "A", "2020-01-01T00:00:00Z")] };
    setDeploymentCondition(status, condition("True", "B", "2021-01-01T00:00:00Z"));
    expect(status.conditions).toEqual([
      { ...condition("True", "B", "2021-01-01T00:00:00Z"), lastTransitionTime: "2020-01-01T00:00:00Z" },
    ]);
    setDeploymentCondition(status, condition("False", "C", "2022-01-01T00:00:00Z"));
    expect(status.conditions).toEqual([condition("False", "C", "2022-01-01T00:00:00Z")]);
  });
});
