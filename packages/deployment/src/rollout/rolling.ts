import type { Deployment } from "@reconcile/api";
import {
  type AnyReplicaSet,
  byCreationTimestamp,
  deploymentComplete,
  filterActiveReplicaSets,
  getAvailableReplicaCountForReplicaSets,
  getReplicaCountForReplicaSets,
  maxUnavailable,
  newRSNewReplicas,
  replicasOf,
  rsReplicas,
} from "../deployment-util.js";
import { ProgressRollout } from "./progress.js";

/** Upstream `rolling.go`: one step of a RollingUpdate within maxSurge and maxUnavailable. */
export class RollingRollout extends ProgressRollout {
  /** One step of a rolling update: scale the new ReplicaSet up, else old ones down, then status. */
  async rolloutRolling(d: Deployment, rsList: readonly AnyReplicaSet[]): Promise<void> {
    const [newRS, oldRSs] = await this.getAllReplicaSetsAndSyncRevision(d, rsList, true);
    const allRSs = [...oldRSs, newRS!];
    if (await this.reconcileNewReplicaSet(allRSs, newRS!, d)) {
      return this.syncRolloutStatus(allRSs, newRS, d);
    }
    if (await this.reconcileOldReplicaSets(allRSs, filterActiveReplicaSets(oldRSs), newRS!, d)) {
      return this.syncRolloutStatus(allRSs, newRS, d);
    }
    if (deploymentComplete(d, d.status ?? {})) await this.cleanupDeployment(oldRSs, d);
    return this.syncRolloutStatus(allRSs, newRS, d);
  }

  /** Scales the new ReplicaSet towards `spec.replicas` within maxSurge; returns whether it scaled. */
  async reconcileNewReplicaSet(
    allRSs: readonly AnyReplicaSet[],
    newRS: AnyReplicaSet,
    d: Deployment,
  ): Promise<boolean> {
    const replicas = replicasOf(d);
    if (rsReplicas(newRS) === replicas) return false;
    if (rsReplicas(newRS) > replicas) {
      return (await this.scaleReplicaSetAndRecordEvent(newRS, replicas, d)).scaled;
    }
    const newReplicasCount = newRSNewReplicas(d, allRSs, newRS);
    return (await this.scaleReplicaSetAndRecordEvent(newRS, newReplicasCount, d)).scaled;
  }

  /**
   * Scales old ReplicaSets down as far as maxUnavailable allows: unhealthy
   * replicas first (they count against availability anyway), then available
   * ones, oldest ReplicaSet first. Returns whether anything was scaled down;
   * a failed write is left for the next sync, as upstream.
   *
   * Why the new ReplicaSet's unavailable pods come off the budget, in numbers:
   * a Deployment of 10 with maxUnavailable 2 and maxSurge 3 may run 13 pods
   * and needs 8 available. Say the old ReplicaSet has 10 available pods and
   * the new one was just scaled to 3, none of them available yet (13 in all).
   * Counting pods alone, 13 − 8 = 5 old pods could go; but then only 5 pods
   * would be available, as the 3 new ones are not ready. Taking the new
   * ReplicaSet's 3 unavailable pods off leaves 13 − 8 − 3 = 2: the old
   * ReplicaSet goes to 8 and 8 pods stay available. Should the new pods never
   * become ready (a bad image), the rollout stops there instead of taking
   * the old pods down with it; and old pods that are themselves unhealthy
   * are scaled down first, since they cost no availability.
   */
  async reconcileOldReplicaSets(
    allRSs: readonly AnyReplicaSet[],
    oldRSs: readonly AnyReplicaSet[],
    newRS: AnyReplicaSet,
    d: Deployment,
  ): Promise<boolean> {
    const oldPodsCount = getReplicaCountForReplicaSets(oldRSs);
    if (oldPodsCount === 0) return false;
    const allPodsCount = getReplicaCountForReplicaSets(allRSs);
    const minAvailable = replicasOf(d) - maxUnavailable(d);
    const newRSUnavailablePodCount = rsReplicas(newRS) - (newRS.status?.availableReplicas ?? 0);
    const maxScaledDown = allPodsCount - minAvailable - newRSUnavailablePodCount;
    if (maxScaledDown <= 0) return false;
    let cleaned: { oldRSs: AnyReplicaSet[]; scaledDown: number };
    try {
      cleaned = await this.cleanupUnhealthyReplicas(oldRSs, d, maxScaledDown);
    } catch (error) {
      this.logger.debug({ err: error }, "Failed to clean up unhealthy replicas");
      return false;
    }
    let scaledDown: number;
    try {
      scaledDown = await this.scaleDownOldReplicaSetsForRollingUpdate(
        [...cleaned.oldRSs, newRS],
        cleaned.oldRSs,
        d,
      );
    } catch (error) {
      this.logger.debug({ err: error }, "Failed to scale down old replica sets");
      return false;
    }
    return cleaned.scaledDown + scaledDown > 0;
  }

  /** Scales old ReplicaSets down by their unavailable replicas, oldest first, up to `maxCleanupCount`. */
  async cleanupUnhealthyReplicas(
    oldRSs: readonly AnyReplicaSet[],
    d: Deployment,
    maxCleanupCount: number,
  ): Promise<{ oldRSs: AnyReplicaSet[]; scaledDown: number }> {
    const sorted = [...oldRSs].sort(byCreationTimestamp);
    let totalScaledDown = 0;
    for (let i = 0; i < sorted.length; i++) {
      if (totalScaledDown >= maxCleanupCount) break;
      const target = sorted[i]!;
      const replicas = rsReplicas(target);
      const available = target.status?.availableReplicas ?? 0;
      if (replicas === 0 || replicas === available) continue;
      const scaledDownCount = Math.min(maxCleanupCount - totalScaledDown, replicas - available);
      const newReplicasCount = replicas - scaledDownCount;
      if (newReplicasCount > replicas) {
        throw new Error(
          `when cleaning up unhealthy replicas, got invalid request to scale down ${target.metadata?.namespace}/${target.metadata?.name} ${replicas} -> ${newReplicasCount}`,
        );
      }
      const result = await this.scaleReplicaSetAndRecordEvent(target, newReplicasCount, d);
      totalScaledDown += scaledDownCount;
      sorted[i] = result.rs;
    }
    return { oldRSs: sorted, scaledDown: totalScaledDown };
  }

  /** Scales old ReplicaSets down by as many available pods as exceed minAvailable, oldest first. */
  async scaleDownOldReplicaSetsForRollingUpdate(
    allRSs: readonly AnyReplicaSet[],
    oldRSs: readonly AnyReplicaSet[],
    d: Deployment,
  ): Promise<number> {
    const minAvailable = replicasOf(d) - maxUnavailable(d);
    const availablePodCount = getAvailableReplicaCountForReplicaSets(allRSs);
    if (availablePodCount <= minAvailable) return 0;
    const sorted = [...oldRSs].sort(byCreationTimestamp);
    let totalScaledDown = 0;
    const totalScaleDownCount = availablePodCount - minAvailable;
    for (const target of sorted) {
      if (totalScaledDown >= totalScaleDownCount) break;
      const replicas = rsReplicas(target);
      if (replicas === 0) continue;
      const scaleDownCount = Math.min(replicas, totalScaleDownCount - totalScaledDown);
      await this.scaleReplicaSetAndRecordEvent(target, replicas - scaleDownCount, d);
      totalScaledDown += scaleDownCount;
    }
    return totalScaledDown;
  }
}
