import { newConflict, type Pod, type ReplicaSet, replicaSets } from "@reconcile/api";
import { RecordingClient } from "@reconcile/controller/testing";
import { describe, expect, it } from "vitest";
import { calculateStatus, updateReplicaSetStatus } from "./replica-set-status.js";

const now = Date.parse("2026-03-01T10:00:00Z");
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

function rs(
  options: { replicas?: number; minReadySeconds?: number; status?: ReplicaSet["status"] } = {},
): ReplicaSet {
  return {
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    metadata: { name: "web", namespace: "prod", uid: "rs-uid", generation: 1 },
    spec: {
      replicas: options.replicas ?? 1,
      minReadySeconds: options.minReadySeconds ?? 0,
      selector: { matchLabels: { app: "web" } },
      template: { metadata: { labels: { app: "web", tier: "front" } }, spec: { containers: [] } },
    },
    status: options.status ?? { replicas: 0 },
  };
}

function pod(labels: Record<string, string>, ready: boolean | "since-now" = true): Pod {
  return {
    metadata: { name: "p", namespace: "prod", labels },
    status: {
      phase: "Running",
      conditions: ready
        ? [
            {
              type: "Ready",
              status: "True",
              lastTransitionTime: iso(ready === "since-now" ? now : now - 3_600_000),
            },
          ]
        : [{ type: "Ready", status: "False" }],
    },
  };
}

const full = { app: "web", tier: "front" };
const partial = { app: "web" };

describe("calculateStatus", () => {
  it.each([
    [
      "1 fully labelled pod",
      rs(),
      [pod(full)],
      { replicas: 1, fullyLabeledReplicas: 1, readyReplicas: 1, availableReplicas: 1 },
    ],
    [
      "1 not fully labelled pod",
      rs(),
      [pod(partial)],
      { replicas: 1, fullyLabeledReplicas: 0, readyReplicas: 1, availableReplicas: 1 },
    ],
    [
      "2 fully labelled pods",
      rs({ replicas: 2 }),
      [pod(full), pod(full)],
      { replicas: 2, fullyLabeledReplicas: 2, readyReplicas: 2, availableReplicas: 2 },
    ],
    [
      "2 not fully labelled pods",
      rs({ replicas: 2 }),
      [pod(partial), pod(partial)],
      { replicas: 2, fullyLabeledReplicas: 0, readyReplicas: 2, availableReplicas: 2 },
    ],
    [
      "1 fully and 1 not fully labelled pod",
      rs({ replicas: 2 }),
      [pod(full), pod(partial)],
      { replicas: 2, fullyLabeledReplicas: 1, readyReplicas: 2, availableReplicas: 2 },
    ],
    [
      "1 non-ready pod",
      rs(),
      [pod(full, false)],
      { replicas: 1, fullyLabeledReplicas: 1, readyReplicas: 0, availableReplicas: 0 },
    ],
    [
      "1 ready but non-available pod",
      rs({ minReadySeconds: 3600 }),
      [pod(full, "since-now")],
      { replicas: 1, fullyLabeledReplicas: 1, readyReplicas: 1, availableReplicas: 0 },
    ],
    [
      "1 pod ready just over minReadySeconds",
      rs({ minReadySeconds: 3599 }),
      [pod(full)],
      { replicas: 1, fullyLabeledReplicas: 1, readyReplicas: 1, availableReplicas: 1 },
    ],
    [
      "1 pod ready exactly minReadySeconds",
      rs({ minReadySeconds: 3600 }),
      [pod(full)],
      { replicas: 1, fullyLabeledReplicas: 1, readyReplicas: 1, availableReplicas: 0 },
    ],
  ])("counts %s", (_name, replicaSet, pods, expected) => {
    expect(calculateStatus(replicaSet, pods, undefined, now)).toEqual(expected);
  });

  const failure = (reason: string | undefined, message: string) => ({
    type: "ReplicaFailure",
    status: "True",
    ...(reason ? { reason } : {}),
    message,
    lastTransitionTime: iso(now),
  });

  it.each([
    [
      "FailedCreate when there are too few pods",
      rs({ replicas: 2 }),
      [pod(full)],
      failure("FailedCreate", "fake manageReplicasErr"),
    ],
    [
      "FailedDelete when there are too many pods",
      rs({ replicas: 0 }),
      [pod(full)],
      failure("FailedDelete", "fake manageReplicasErr"),
    ],
    [
      "no reason when the count is right",
      rs({ replicas: 1 }),
      [pod(full)],
      failure(undefined, "fake manageReplicasErr"),
    ],
  ])("adds a ReplicaFailure condition with %s", (_name, replicaSet, pods, condition) => {
    const status = calculateStatus(replicaSet, pods, new Error("fake manageReplicasErr"), now);
    expect(status.conditions).toEqual([condition]);
  });

  it("removes the ReplicaFailure condition once there is no error", () => {
    const replicaSet = rs({ status: { replicas: 1, conditions: [failure("FailedCreate", "old")] } });
    expect(calculateStatus(replicaSet, [pod(full)], undefined, now).conditions).toBeUndefined();
  });

  it("leaves an existing ReplicaFailure condition unchanged on a new error", () => {
    const old = { ...failure("FailedCreate", "old"), lastTransitionTime: "2026-01-01T00:00:00Z" };
    const replicaSet = rs({ replicas: 0, status: { replicas: 1, conditions: [old] } });
    expect(calculateStatus(replicaSet, [pod(full)], new Error("new"), now).conditions).toEqual([old]);
  });

  it("keeps observedGeneration from the current status and does not modify the input", () => {
    const replicaSet = rs({ status: { replicas: 5, observedGeneration: 7 } });
    const status = calculateStatus(replicaSet, [], undefined, now);
    expect(status.observedGeneration).toBe(7);
    expect(replicaSet.status).toEqual({ replicas: 5, observedGeneration: 7 });
  });
});

describe("updateReplicaSetStatus", () => {
  function seeded(status: NonNullable<ReplicaSet["status"]>) {
    const client = new RecordingClient();
    const stored = client.seed(replicaSets, { ...rs(), status });
    return { client, stored };
  }
  const counts = { replicas: 1, fullyLabeledReplicas: 1, readyReplicas: 1, availableReplicas: 1 };

  it("makes no call when counts, conditions and observedGeneration are current", async () => {
    const { client, stored } = seeded({ ...counts, observedGeneration: 1 });
    expect(await updateReplicaSetStatus(client, stored, { ...counts, observedGeneration: 1 })).toBe(stored);
    expect(client.actions).toEqual([]);
  });

  it("writes when only observedGeneration is behind, stamping the generation", async () => {
    const { client, stored } = seeded({ ...counts, observedGeneration: 0 });
    const updated = await updateReplicaSetStatus(client, stored, { ...counts });
    expect(updated.status).toEqual({ ...counts, observedGeneration: 1 });
    expect(client.actionsOf("updateStatus")).toHaveLength(1);
  });

  it("retries once after a conflict on a freshly read object", async () => {
    const { client, stored } = seeded({ replicas: 0 });
    let failures = 1;
    client.reactors.push((action) =>
      action.verb === "updateStatus" && failures-- > 0
        ? newConflict({ group: "apps", resource: "replicasets" }, "web")
        : undefined,
    );
    const updated = await updateReplicaSetStatus(client, stored, { ...counts });
    expect(updated.status?.replicas).toBe(1);
    expect(client.actions.map((a) => a.verb)).toEqual(["updateStatus", "get", "updateStatus"]);
  });

  it("gives up after two updates and one get with the update error", async () => {
    const { client, stored } = seeded({ replicas: 0 });
    const conflict = newConflict({ group: "apps", resource: "replicasets" }, "web");
    client.reactors.push((action) => (action.verb === "updateStatus" ? conflict : undefined));
    await expect(updateReplicaSetStatus(client, stored, { ...counts })).rejects.toBe(conflict);
    expect(client.actions.map((a) => a.verb)).toEqual(["updateStatus", "get", "updateStatus"]);
  });
});
