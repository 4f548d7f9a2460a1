import type { Deployment } from "@reconcile/api";
import type { DeploymentStatus } from "kubernetes-types/apps/v1.js";
import {
  getDeploymentCondition,
  newDeploymentCondition,
  removeDeploymentCondition,
  setDeploymentCondition,
} from "../deployment-conditions.js";
import {
  type AnyReplicaSet,
  deploymentComplete,
  deploymentProgressing,
  deploymentTimedOut,
  hasProgressDeadline,
  newRSAvailableReason,
  replicaSetUpdatedReason,
  timedOutReason,
} from "../deployment-util.js";
import { deploymentKey, getReplicaFailures, statusEqual } from "./core.js";
import { SyncRollout } from "./sync.js";

/** Upstream `progress.go`: the Progressing condition, its deadline, and the look again when it falls due. */
export class ProgressRollout extends SyncRollout {
  /**
   * Writes the rollout's status with its Progressing condition (upstream
   * `syncRolloutStatus`): NewReplicaSetAvailable once complete,
   * ReplicaSetUpdated while it progresses, ProgressDeadlineExceeded once the
   * deadline has passed without progress; and ReplicaFailure from the
   * ReplicaSets. With nothing to write, it arranges to look again at the deadline.
   */
  async syncRolloutStatus(
    allRSs: readonly (AnyReplicaSet | undefined)[],
    newRS: AnyReplicaSet | undefined,
    d: Deployment,
  ): Promise<void> {
    const newStatus = this.calculateStatus(allRSs, newRS, d);
    if (!hasProgressDeadline(d)) removeDeploymentCondition(newStatus, "Progressing");
    const currentCond = getDeploymentCondition(d.status ?? {}, "Progressing");
    const isCompleteDeployment =
      (newStatus.replicas ?? 0) === (newStatus.updatedReplicas ?? 0) &&
      currentCond?.reason === newRSAvailableReason;
    const now = this.clock.now();
    const rsName = newRS?.metadata?.name;
    const name = d.metadata?.name;
    if (hasProgressDeadline(d) && !isCompleteDeployment) {
      if (deploymentComplete(d, newStatus)) {
        const message =
          rsName !== undefined
            ? `ReplicaSet "${rsName}" has successfully progressed.`
            : `Deployment "${name}" has successfully progressed.`;
        setDeploymentCondition(
          newStatus,
          newDeploymentCondition("Progressing", "True", newRSAvailableReason, message, now),
        );
      } else if (deploymentProgressing(d, newStatus)) {
        const message =
          rsName !== undefined
            ? `ReplicaSet "${rsName}" is progressing.`
            : `Deployment "${name}" is progressing.`;
        const condition = newDeploymentCondition(
          "Progressing",
          "True",
          replicaSetUpdatedReason,
          message,
          now,
        );
        // Progress refreshes lastUpdateTime even with the same reason, which SetDeploymentCondition would not.
        if (currentCond !== undefined) {
          if (currentCond.status === "True" && currentCond.lastTransitionTime !== undefined) {
            condition.lastTransitionTime = currentCond.lastTransitionTime;
          }
          removeDeploymentCondition(newStatus, "Progressing");
        }
        setDeploymentCondition(newStatus, condition);
      } else if (deploymentTimedOut(d, newStatus, now)) {
        const message =
          rsName !== undefined
            ? `ReplicaSet "${rsName}" has timed out progressing.`
            : `Deployment "${name}" has timed out progressing.`;
        setDeploymentCondition(
          newStatus,
          newDeploymentCondition("Progressing", "False", timedOutReason, message, now),
        );
      }
    }
    const failures = getReplicaFailures(allRSs, newRS);
    if (failures.length > 0) setDeploymentCondition(newStatus, failures[0]!);
    else removeDeploymentCondition(newStatus, "ReplicaFailure");

    if (statusEqual(d.status, newStatus)) {
      this.requeueStuckDeployment(d, newStatus);
      return;
    }
    d.status = newStatus;
    await this.updateStatus(d);
  }

  /**
   * Arranges a progress check at the deadline (`lastUpdateTime +
   * progressDeadlineSeconds`, plus a second against timer skew), or at once
   * through the rate limiter when less than a second is left. Returns the
   * wait in ms, 0 for "now", -1 when no check is due (no deadline, complete,
   * or already timed out).
   */
  requeueStuckDeployment(d: Deployment, newStatus: DeploymentStatus): number {
    const currentCond = getDeploymentCondition(d.status ?? {}, "Progressing");
    if (!hasProgressDeadline(d) || currentCond === undefined) return -1;
    if (deploymentComplete(d, newStatus) || currentCond.reason === timedOutReason) return -1;
    const lastUpdate = Date.parse(currentCond.lastUpdateTime ?? "");
    if (Number.isNaN(lastUpdate)) return -1;
    const after = lastUpdate + (d.spec?.progressDeadlineSeconds ?? 0) * 1000 - this.clock.now();
    const key = deploymentKey(d);
    if (after < 1000) {
      this.options.enqueueRateLimited?.(key);
      return 0;
    }
    this.options.enqueueAfter?.(key, after + 1000);
    return after;
  }
}
