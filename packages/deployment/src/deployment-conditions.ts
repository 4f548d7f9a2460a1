import type { DeepReadonly } from "@reconcile/api";
import { rfc3339 } from "@reconcile/api";
import type { DeploymentCondition, DeploymentStatus, ReplicaSetCondition } from "kubernetes-types/apps/v1.js";

// A Deployment's conditions (upstream deployment_util.go's NewDeploymentCondition, GetDeploymentCondition,
// SetDeploymentCondition, RemoveDeploymentCondition, ReplicaSetToDeploymentCondition).

/** A condition with both times at `nowMs` (upstream `NewDeploymentCondition`). */
export function newDeploymentCondition(
  type: string,
  status: "True" | "False" | "Unknown",
  reason: string,
  message: string,
  nowMs: number,
): DeploymentCondition {
  const time = rfc3339(nowMs);
  return { type, status, lastUpdateTime: time, lastTransitionTime: time, reason, message };
}

export function getDeploymentCondition<S extends DeploymentStatus | DeepReadonly<DeploymentStatus>>(
  status: S,
  type: string,
): NonNullable<S["conditions"]>[number] | undefined {
  return status.conditions?.find((c) => c.type === type) as NonNullable<S["conditions"]>[number] | undefined;
}

/**
 * Sets `condition` on `status` (upstream `SetDeploymentCondition`): a
 * condition with the same status and reason is left as it is; one with the
 * same status keeps its lastTransitionTime; the new one goes last.
 */
export function setDeploymentCondition(status: DeploymentStatus, condition: DeploymentCondition): void {
  const current = getDeploymentCondition(status, condition.type);
  if (current !== undefined && current.status === condition.status && current.reason === condition.reason) {
    return;
  }
  const next = { ...condition };
  if (current !== undefined && current.status === condition.status && current.lastTransitionTime) {
    next.lastTransitionTime = current.lastTransitionTime;
  }
  status.conditions = [...(status.conditions ?? []).filter((c) => c.type !== condition.type), next];
}

export function removeDeploymentCondition(status: DeploymentStatus, type: string): void {
  if (status.conditions === undefined) return;
  status.conditions = status.conditions.filter((c) => c.type !== type);
  if (status.conditions.length === 0) delete status.conditions;
}

/** A ReplicaSet's condition as a Deployment condition, both times its lastTransitionTime. */
export function replicaSetToDeploymentCondition(
  condition: ReplicaSetCondition | DeepReadonly<ReplicaSetCondition>,
): DeploymentCondition {
  const out: DeploymentCondition = { type: condition.type, status: condition.status };
  if (condition.lastTransitionTime !== undefined) {
    out.lastTransitionTime = condition.lastTransitionTime;
    out.lastUpdateTime = condition.lastTransitionTime;
  }
  if (condition.reason !== undefined) out.reason = condition.reason;
  if (condition.message !== undefined) out.message = condition.message;
  return out;
}
