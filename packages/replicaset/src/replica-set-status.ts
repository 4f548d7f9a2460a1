import {
  type DeepReadonly,
  errorMessage,
  isPodAvailable,
  isPodReady,
  type Pod,
  type ReplicaSet,
  replicaSets,
  rfc3339,
  selectorFromSet,
} from "@reconcile/api";
import type { Client } from "@reconcile/client";
import type { ReplicaSetCondition, ReplicaSetStatus } from "kubernetes-types/apps/v1.js";

/** The condition type a ReplicaSet gets when creating or deleting pods fails. */
export const replicaSetReplicaFailure = "ReplicaFailure";

/** How many times a failed status update is retried, after a fresh GET (upstream `statusUpdateRetries`). */
export const statusUpdateRetries = 1;

/**
 * The status a ReplicaSet should have for its active, owned pods (upstream
 * `calculateStatus`): counts of pods, fully labeled, ready and available
 * (ready for longer than `minReadySeconds` at `nowMs`), and the
 * `ReplicaFailure` condition — added when `manageError` is set and the
 * condition is absent, removed when there is no error, left alone otherwise.
 * Other fields (`observedGeneration`) are copied from the current status.
 */
export function calculateStatus(
  rs: ReplicaSet | DeepReadonly<ReplicaSet>,
  filteredPods: readonly (Pod | DeepReadonly<Pod>)[],
  manageError: unknown,
  nowMs: number,
): ReplicaSetStatus {
  const newStatus = structuredClone(rs.status ?? { replicas: 0 }) as ReplicaSetStatus;
  const templateLabels = selectorFromSet(rs.spec?.template?.metadata?.labels);
  const minReadySeconds = rs.spec?.minReadySeconds ?? 0;
  let fullyLabeled = 0;
  let ready = 0;
  let available = 0;
  for (const pod of filteredPods) {
    if (templateLabels.matches(pod.metadata?.labels)) fullyLabeled++;
    if (isPodReady(pod)) {
      ready++;
      if (isPodAvailable(pod, minReadySeconds, nowMs)) available++;
    }
  }
  const failure = newStatus.conditions?.find((c) => c.type === replicaSetReplicaFailure);
  if (manageError != null && failure === undefined) {
    const diff = filteredPods.length - (rs.spec?.replicas ?? 1);
    const reason = diff < 0 ? "FailedCreate" : diff > 0 ? "FailedDelete" : "";
    setCondition(newStatus, {
      type: replicaSetReplicaFailure,
      status: "True",
      ...(reason ? { reason } : {}),
      message: errorMessage(manageError),
      lastTransitionTime: rfc3339(nowMs),
    });
  } else if (manageError == null && failure !== undefined) {
    removeCondition(newStatus, replicaSetReplicaFailure);
  }
  newStatus.replicas = filteredPods.length;
  newStatus.fullyLabeledReplicas = fullyLabeled;
  newStatus.readyReplicas = ready;
  newStatus.availableReplicas = available;
  return newStatus;
}

/**
 * Writes `newStatus` unless nothing changed (the four counts, conditions, and
 * an observedGeneration already equal to the generation), setting
 * `observedGeneration` to the generation of the ReplicaSet acted on. A failed
 * update is retried once on a freshly read object. Resolves with the
 * ReplicaSet as the server has it (or `rs` when nothing was written).
 * `options.signal` aborts the writes and the re-read.
 */
export async function updateReplicaSetStatus<R extends ReplicaSet | DeepReadonly<ReplicaSet>>(
  client: Client,
  rs: R,
  newStatus: ReplicaSetStatus,
  options: { signal?: AbortSignal | undefined } = {},
): Promise<R | ReplicaSet> {
  const { signal } = options;
  const current = rs.status;
  if (
    (current?.replicas ?? 0) === (newStatus.replicas ?? 0) &&
    (current?.fullyLabeledReplicas ?? 0) === (newStatus.fullyLabeledReplicas ?? 0) &&
    (current?.readyReplicas ?? 0) === (newStatus.readyReplicas ?? 0) &&
    (current?.availableReplicas ?? 0) === (newStatus.availableReplicas ?? 0) &&
    (rs.metadata?.generation ?? 0) === (current?.observedGeneration ?? 0) &&
    conditionsEqual(current?.conditions, newStatus.conditions)
  ) {
    return rs;
  }
  const status: ReplicaSetStatus = { ...newStatus, observedGeneration: rs.metadata?.generation ?? 0 };
  const resource = client.resource(replicaSets, rs.metadata?.namespace);
  let target: ReplicaSet | DeepReadonly<ReplicaSet> = rs;
  for (let attempt = 0; ; attempt++) {
    try {
      return await resource.updateStatus({ ...(target as ReplicaSet), status }, { signal });
    } catch (error) {
      if (attempt >= statusUpdateRetries || signal?.aborted) throw error;
    }
    // The GET error, if any, is what the caller sees (as upstream).
    target = await resource.get(rs.metadata?.name ?? "", { signal });
  }
}

function setCondition(status: ReplicaSetStatus, condition: ReplicaSetCondition): void {
  const current = status.conditions?.find((c) => c.type === condition.type);
  if (current && current.status === condition.status && current.reason === condition.reason) return;
  status.conditions = [...(status.conditions ?? []).filter((c) => c.type !== condition.type), condition];
}

function removeCondition(status: ReplicaSetStatus, type: string): void {
  const kept = (status.conditions ?? []).filter((c) => c.type !== type);
  if (kept.length === 0) delete status.conditions;
  else status.conditions = kept;
}

// Absent and empty condition lists are the same (Go's nil slice after RemoveCondition).
function conditionsEqual(
  a: readonly DeepReadonly<ReplicaSetCondition>[] | undefined,
  b: readonly ReplicaSetCondition[] | undefined,
): boolean {
  const left = a ?? [];
  const right = b ?? [];
  if (left.length !== right.length) return false;
  return left.every((condition, i) => sameCondition(condition, right[i]!));
}

function sameCondition(a: DeepReadonly<ReplicaSetCondition>, b: ReplicaSetCondition): boolean {
  return (
    a.type === b.type &&
    a.status === b.status &&
    (a.reason ?? "") === (b.reason ?? "") &&
    (a.message ?? "") === (b.message ?? "") &&
    (a.lastTransitionTime ?? "") === (b.lastTransitionTime ?? "")
  );
}
