import type { Deployment } from "@reconcile/api";
import {
  type AnyReplicaSet,
  deploymentComplete,
  filterActiveReplicaSets,
  replicasOf,
  rsReplicas,
} from "../deployment-util.js";
import { oldPodsRunning, type PodMap } from "./core.js";
import { RollingRollout } from "./rolling.js";

/** Upstream `recreate.go`: every old pod gone before the new ReplicaSet scales up. */
export class RecreateRollout extends RollingRollout {
  /**
   * One step of a Recreate rollout: scale every old ReplicaSet to 0, wait
   * until no old pod exists (terminating ones included), and only then
   * create or scale up the new ReplicaSet.
   */
  async rolloutRecreate(d: Deployment, rsList: readonly AnyReplicaSet[], podMap: PodMap): Promise<void> {
    let [newRS, oldRSs] = await this.getAllReplicaSetsAndSyncRevision(d, rsList, false);
    let allRSs = [...oldRSs, newRS];
    if (await this.scaleDownOldReplicaSetsForRecreate(filterActiveReplicaSets(oldRSs), d)) {
      return this.syncRolloutStatus(allRSs, newRS, d);
    }
    if (oldPodsRunning(newRS, oldRSs, podMap)) return this.syncRolloutStatus(allRSs, newRS, d);
    if (newRS === undefined) {
      [newRS, oldRSs] = await this.getAllReplicaSetsAndSyncRevision(d, rsList, true);
      allRSs = [...oldRSs, newRS];
    }
    await this.scaleReplicaSetAndRecordEvent(newRS!, replicasOf(d), d);
    if (deploymentComplete(d, d.status ?? {})) await this.cleanupDeployment(oldRSs, d);
    return this.syncRolloutStatus(allRSs, newRS, d);
  }

  /** Scales every given ReplicaSet to 0; returns whether any was scaled. */
  async scaleDownOldReplicaSetsForRecreate(
    oldRSs: readonly AnyReplicaSet[],
    d: Deployment,
  ): Promise<boolean> {
    let scaled = false;
    for (const rs of oldRSs) {
      if (rsReplicas(rs) === 0) continue;
      if ((await this.scaleReplicaSetAndRecordEvent(rs, 0, d)).scaled) scaled = true;
    }
    return scaled;
  }
}
