import {
  type Deployment,
  errorMessage,
  getControllerOf,
  hasStatusCause,
  isAlreadyExists,
  isNotFound,
  newControllerRef,
  type ReplicaSet,
  replicaSets,
} from "@reconcile/api";
import { computeHash } from "@reconcile/controller";
import type { DeploymentStatus } from "kubernetes-types/apps/v1.js";
import {
  getDeploymentCondition,
  newDeploymentCondition,
  setDeploymentCondition,
} from "../deployment-conditions.js";
import {
  type AnyReplicaSet,
  defaultDeploymentUniqueLabelKey,
  equalIgnoreHash,
  failedRSCreateReason,
  filterActiveReplicaSets,
  findActiveOrLatest,
  findNewReplicaSet,
  findOldReplicaSets,
  foundNewRSReason,
  getActualReplicaCountForReplicaSets,
  getAvailableReplicaCountForReplicaSets,
  getDesiredReplicasAnnotation,
  getProportion,
  getReadyReplicaCountForReplicaSets,
  getReplicaCountForReplicaSets,
  getRollbackTo,
  hasProgressDeadline,
  hasRevisionHistoryLimit,
  isRollingUpdate,
  isSaturated,
  maxRevision,
  maxRevisionHistoryLengthInChars,
  maxSurge,
  maxUnavailable,
  minimumReplicasAvailable,
  minimumReplicasUnavailable,
  newReplicaSetReason,
  newRSNewReplicas,
  pausedDeployReason,
  replicasAnnotationsNeedUpdate,
  replicasOf,
  resumedDeployReason,
  revisionAnnotation,
  rsReplicas,
  setDeploymentRevision,
  setNewReplicaSetAnnotations,
  setReplicasAnnotations,
  timedOutReason,
} from "../deployment-util.js";
import { byRevision, bySizeNewer, bySizeOlder } from "../replica-set-order.js";
import { deploymentKind, eventTarget, RolloutCore, type ScaleResult, setCount, statusEqual } from "./core.js";

/** Upstream `sync.go`: the new and old ReplicaSets, scaling (proportional during a rollout), cleanup of old revisions, status. */
export class SyncRollout extends RolloutCore {
  /** Scaling and paused Deployments: resize ReplicaSets without rolling out, then write status. */
  async sync(d: Deployment, rsList: readonly AnyReplicaSet[]): Promise<void> {
    const [newRS, oldRSs] = await this.getAllReplicaSetsAndSyncRevision(d, rsList, false);
    await this.scale(d, newRS, oldRSs);
    if (d.spec?.paused === true && getRollbackTo(d) === undefined) await this.cleanupDeployment(oldRSs, d);
    await this.syncDeploymentStatus([...oldRSs, newRS], newRS, d);
  }

  /** A Deployment being deleted: status only, no scaling. */
  async syncStatusOnly(d: Deployment, rsList: readonly AnyReplicaSet[]): Promise<void> {
    const [newRS, oldRSs] = await this.getAllReplicaSetsAndSyncRevision(d, rsList, false);
    await this.syncDeploymentStatus([...oldRSs, newRS], newRS, d);
  }

  /**
   * Whether `spec.replicas` changed since the active ReplicaSets were sized:
   * one of them has a desired-replicas annotation other than `spec.replicas`.
   */
  async isScalingEvent(d: Deployment, rsList: readonly AnyReplicaSet[]): Promise<boolean> {
    const [newRS, oldRSs] = await this.getAllReplicaSetsAndSyncRevision(d, rsList, false);
    for (const rs of filterActiveReplicaSets([...oldRSs, newRS])) {
      const desired = getDesiredReplicasAnnotation(rs);
      if (desired !== undefined && desired !== replicasOf(d)) return true;
    }
    return false;
  }

  /**
   * Records the Progressing condition Unknown/DeploymentPaused when the
   * Deployment is paused and DeploymentResumed when it is resumed, so a long
   * pause never counts against the progress deadline.
   */
  async checkPausedConditions(d: Deployment): Promise<void> {
    if (!hasProgressDeadline(d)) return;
    const status = (d.status ??= {});
    const cond = getDeploymentCondition(status, "Progressing");
    if (cond?.reason === timedOutReason) return; // a reported lack of progress stays
    const pausedCondExists = cond?.reason === pausedDeployReason;
    const now = this.clock.now();
    if (d.spec?.paused === true && !pausedCondExists) {
      setDeploymentCondition(
        status,
        newDeploymentCondition("Progressing", "Unknown", pausedDeployReason, "Deployment is paused", now),
      );
    } else if (d.spec?.paused !== true && pausedCondExists) {
      setDeploymentCondition(
        status,
        newDeploymentCondition("Progressing", "Unknown", resumedDeployReason, "Deployment is resumed", now),
      );
    } else {
      return;
    }
    await this.updateStatus(d);
  }

  /** `[newRS, allOldRSs]`, creating the new ReplicaSet when `create` and it is missing. */
  async getAllReplicaSetsAndSyncRevision(
    d: Deployment,
    rsList: readonly AnyReplicaSet[],
    create: boolean,
  ): Promise<[AnyReplicaSet | undefined, AnyReplicaSet[]]> {
    const current = rsList.map((rs) => this.written.get(rs.metadata?.uid ?? "") ?? rs);
    for (const [uid, rs] of this.written) {
      if (!rsList.some((listed) => listed.metadata?.uid === uid)) current.push(rs);
    }
    const [, allOldRSs] = findOldReplicaSets(d, current);
    const newRS = await this.getNewReplicaSet(d, current, allOldRSs, create);
    return [newRS, allOldRSs];
  }

  /**
   * The new ReplicaSet with its annotations brought up to date (upstream
   * `getNewReplicaSet`); created, sized by `newRSNewReplicas`, when missing
   * and `create`. A name taken by a ReplicaSet with another template is a hash
   * collision: `status.collisionCount` goes up and the error is returned, so
   * the next attempt hashes differently.
   */
  async getNewReplicaSet(
    d: Deployment,
    rsList: readonly AnyReplicaSet[],
    oldRSs: readonly AnyReplicaSet[],
    create: boolean,
  ): Promise<AnyReplicaSet | undefined> {
    const existingNewRS = findNewReplicaSet(d, rsList);
    const newRevision = String(maxRevision(oldRSs) + 1);
    d.status ??= {};
    if (existingNewRS !== undefined) return this.#syncExistingNewReplicaSet(d, existingNewRS, newRevision);
    if (!create) return undefined;
    return this.#createNewReplicaSet(d, oldRSs, newRevision);
  }

  /** The new ReplicaSet exists: bring its annotations and minReadySeconds, then the Deployment's revision, up to date. */
  async #syncExistingNewReplicaSet(
    d: Deployment,
    existingNewRS: AnyReplicaSet,
    newRevision: string,
  ): Promise<AnyReplicaSet> {
    const status = d.status ?? {};
    const rsCopy = structuredClone(existingNewRS) as ReplicaSet;
    const annotationsUpdated = setNewReplicaSetAnnotations(
      d,
      rsCopy,
      newRevision,
      true,
      maxRevisionHistoryLengthInChars,
    );
    const minReadySecondsNeedsUpdate = (rsCopy.spec?.minReadySeconds ?? 0) !== (d.spec?.minReadySeconds ?? 0);
    if (annotationsUpdated || minReadySecondsNeedsUpdate) {
      const spec = (rsCopy.spec ??= { selector: {} });
      if (d.spec?.minReadySeconds === undefined) delete spec.minReadySeconds;
      else spec.minReadySeconds = d.spec.minReadySeconds;
      // The Deployment's revision follows on the next sync, as upstream.
      return await this.updateReplicaSet(rsCopy);
    }
    let needsUpdate = setDeploymentRevision(d, rsCopy.metadata?.annotations?.[revisionAnnotation]);
    if (hasProgressDeadline(d) && getDeploymentCondition(status, "Progressing") === undefined) {
      const message = `Found new replica set "${rsCopy.metadata?.name}"`;
      setDeploymentCondition(
        status,
        newDeploymentCondition("Progressing", "True", foundNewRSReason, message, this.clock.now()),
      );
      needsUpdate = true;
    }
    if (needsUpdate) await this.updateStatus(d);
    return existingNewRS;
  }

  /** No new ReplicaSet yet: create it from the template with the pod-template-hash, sized by `newRSNewReplicas`. */
  async #createNewReplicaSet(
    d: Deployment,
    oldRSs: readonly AnyReplicaSet[],
    newRevision: string,
  ): Promise<AnyReplicaSet> {
    const status = d.status ?? {};
    const namespace = d.metadata?.namespace ?? "";
    const template = structuredClone(d.spec?.template ?? {});
    const hash = computeHash(d.spec?.template, status.collisionCount);
    const templateMeta = (template.metadata ??= {});
    templateMeta.labels = { ...templateMeta.labels, [defaultDeploymentUniqueLabelKey]: hash };
    const selector = structuredClone(d.spec?.selector ?? {});
    selector.matchLabels = { ...selector.matchLabels, [defaultDeploymentUniqueLabelKey]: hash };
    const rsName = `${d.metadata?.name}-${hash}`;
    const newRS: ReplicaSet = {
      apiVersion: "apps/v1",
      kind: "ReplicaSet",
      metadata: {
        name: rsName,
        namespace,
        ownerReferences: [newControllerRef(d, deploymentKind)],
        labels: { ...templateMeta.labels },
      },
      spec: { replicas: 0, selector, template },
    };
    if (d.spec?.minReadySeconds !== undefined) newRS.spec!.minReadySeconds = d.spec.minReadySeconds;
    const newReplicasCount = newRSNewReplicas(d, [...oldRSs, newRS], newRS);
    newRS.spec!.replicas = newReplicasCount;
    setNewReplicaSetAnnotations(d, newRS, newRevision, false, maxRevisionHistoryLengthInChars);

    let alreadyExists = false;
    let createdRS: AnyReplicaSet;
    try {
      const created = await this.client.resource(replicaSets, namespace).create(newRS, this.callOptions());
      this.written.set(created.metadata?.uid ?? "", created);
      createdRS = created;
    } catch (error) {
      createdRS = await this.#createFailed(d, rsName, error);
      alreadyExists = true;
    }
    if (!alreadyExists && newReplicasCount > 0) {
      this.recorder.event(
        eventTarget(d),
        "Normal",
        "ScalingReplicaSet",
        `Scaled up replica set ${createdRS.metadata?.name} from 0 to ${newReplicasCount}`,
      );
    }
    let needsUpdate = setDeploymentRevision(d, newRevision);
    if (!alreadyExists && hasProgressDeadline(d)) {
      const message = `Created new replica set "${createdRS.metadata?.name}"`;
      setDeploymentCondition(
        status,
        newDeploymentCondition("Progressing", "True", newReplicaSetReason, message, this.clock.now()),
      );
      needsUpdate = true;
    }
    if (needsUpdate) await this.updateStatus(d);
    return createdRS;
  }

  /**
   * The new ReplicaSet's create failed. AlreadyExists with our own template
   * under that name (a slow cache) is that ReplicaSet, returned; with another
   * template it is a hash collision: `status.collisionCount` goes up and the
   * error is thrown, so the next attempt hashes differently. Any other
   * failure is recorded (a Progressing=False condition, a Warning Event) and
   * thrown; one in a namespace being deleted only thrown.
   */
  async #createFailed(d: Deployment, rsName: string, error: unknown): Promise<AnyReplicaSet> {
    const status = d.status ?? {};
    if (isAlreadyExists(error)) {
      // A slow cache, or a hash collision with a ReplicaSet of another template.
      const rs = this.options.getReplicaSet?.(d.metadata?.namespace ?? "", rsName);
      if (rs === undefined) throw error;
      const ref = getControllerOf(rs);
      if (
        ref !== undefined &&
        ref.uid === d.metadata?.uid &&
        equalIgnoreHash(d.spec?.template, rs.spec?.template)
      ) {
        return rs;
      }
      status.collisionCount = (status.collisionCount ?? 0) + 1;
      try {
        await this.updateStatus(d);
        this.logger.info(
          { collisionCount: status.collisionCount },
          "Found a hash collision for deployment - bumping collisionCount to resolve it",
        );
      } catch {
        // The AlreadyExists error below requeues the Deployment either way.
      }
      throw error;
    }
    if (hasStatusCause(error, "NamespaceTerminating")) throw error;
    const message = `Failed to create new replica set "${rsName}": ${errorMessage(error)}`;
    if (hasProgressDeadline(d)) {
      setDeploymentCondition(
        status,
        newDeploymentCondition("Progressing", "False", failedRSCreateReason, message, this.clock.now()),
      );
      try {
        await this.updateStatus(d);
      } catch {
        // The create error is the one worth reporting.
      }
    }
    this.recorder.event(eventTarget(d), "Warning", failedRSCreateReason, message);
    throw error;
  }

  /**
   * Resizes ReplicaSets for a changed `spec.replicas` (upstream `scale`): the
   * only active one (or the latest) takes everything; a saturated new one
   * lets the old ones go to 0; otherwise, in a rolling update, the change is
   * shared in proportion to their sizes and the leftover goes to the largest.
   */
  async scale(
    d: Deployment,
    newRS: AnyReplicaSet | undefined,
    oldRSs: readonly AnyReplicaSet[],
  ): Promise<void> {
    const activeOrLatest = findActiveOrLatest(newRS, oldRSs);
    if (activeOrLatest !== undefined) {
      if (rsReplicas(activeOrLatest) === replicasOf(d)) return;
      await this.scaleReplicaSetAndRecordEvent(activeOrLatest, replicasOf(d), d);
      return;
    }
    if (isSaturated(d, newRS)) {
      for (const old of filterActiveReplicaSets(oldRSs)) await this.scaleReplicaSetAndRecordEvent(old, 0, d);
      return;
    }
    if (!isRollingUpdate(d)) return;
    const allRSs = filterActiveReplicaSets([...oldRSs, newRS]);
    const allRSsReplicas = getReplicaCountForReplicaSets(allRSs);
    const allowedSize = replicasOf(d) > 0 ? replicasOf(d) + maxSurge(d) : 0;
    const toAdd = allowedSize - allRSsReplicas;
    let operation = "";
    if (toAdd > 0) {
      allRSs.sort(bySizeNewer);
      operation = "up";
    } else if (toAdd < 0) {
      allRSs.sort(bySizeOlder);
      operation = "down";
    }
    let added = 0;
    const sizes: number[] = [];
    for (const rs of allRSs) {
      if (toAdd !== 0) {
        const proportion = getProportion(rs, d, toAdd, added);
        sizes.push(rsReplicas(rs) + proportion);
        added += proportion;
      } else {
        sizes.push(rsReplicas(rs));
      }
    }
    for (let i = 0; i < allRSs.length; i++) {
      let size = sizes[i]!;
      if (i === 0 && toAdd !== 0) size = Math.max(0, size + toAdd - added);
      await this.scaleReplicaSet(allRSs[i]!, size, d, operation);
    }
  }

  /** Scales to `newScale` unless already there, recording a ScalingReplicaSet Event. */
  async scaleReplicaSetAndRecordEvent(
    rs: AnyReplicaSet,
    newScale: number,
    d: Deployment,
  ): Promise<ScaleResult> {
    if (rsReplicas(rs) === newScale) return { scaled: false, rs };
    return this.scaleReplicaSet(rs, newScale, d, rsReplicas(rs) < newScale ? "up" : "down");
  }

  /** Writes the size and the desired/max replica annotations when either is out of date. */
  async scaleReplicaSet(
    rs: AnyReplicaSet,
    newScale: number,
    d: Deployment,
    operation: string,
  ): Promise<ScaleResult> {
    const oldScale = rsReplicas(rs);
    const sizeNeedsUpdate = oldScale !== newScale;
    const desired = replicasOf(d);
    const max = desired + maxSurge(d);
    if (!sizeNeedsUpdate && !replicasAnnotationsNeedUpdate(rs, desired, max)) return { scaled: false, rs };
    const rsCopy = structuredClone(rs) as ReplicaSet;
    (rsCopy.spec ??= { selector: {} }).replicas = newScale;
    setReplicasAnnotations(rsCopy, desired, max);
    const updated = await this.updateReplicaSet(rsCopy);
    if (sizeNeedsUpdate) {
      this.recorder.event(
        eventTarget(d),
        "Normal",
        "ScalingReplicaSet",
        `Scaled ${operation} replica set ${updated.metadata?.name} from ${oldScale} to ${newScale}`,
      );
    }
    return { scaled: sizeNeedsUpdate, rs: updated };
  }

  /**
   * Deletes the oldest old ReplicaSets beyond `revisionHistoryLimit`, only
   * those fully scaled down and observed so (upstream `cleanupDeployment`).
   */
  async cleanupDeployment(oldRSs: readonly AnyReplicaSet[], d: Deployment): Promise<void> {
    if (!hasRevisionHistoryLimit(d)) return;
    const cleanable = oldRSs.filter((rs) => rs.metadata?.deletionTimestamp == null);
    const diff = cleanable.length - (d.spec?.revisionHistoryLimit ?? 10);
    if (diff <= 0) return;
    cleanable.sort(byRevision);
    for (let i = 0; i < diff; i++) {
      const rs = cleanable[i]!;
      if (
        (rs.status?.replicas ?? 0) !== 0 ||
        rsReplicas(rs) !== 0 ||
        (rs.metadata?.generation ?? 0) > (rs.status?.observedGeneration ?? 0) ||
        rs.metadata?.deletionTimestamp != null
      ) {
        continue;
      }
      try {
        await this.client
          .resource(replicaSets, rs.metadata?.namespace ?? "")
          .delete(rs.metadata?.name ?? "", this.callOptions());
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    }
  }

  /** Writes the computed status when it differs from the Deployment's. */
  async syncDeploymentStatus(
    allRSs: readonly (AnyReplicaSet | undefined)[],
    newRS: AnyReplicaSet | undefined,
    d: Deployment,
  ): Promise<void> {
    const newStatus = this.calculateStatus(allRSs, newRS, d);
    if (statusEqual(d.status, newStatus)) return;
    d.status = newStatus;
    await this.updateStatus(d);
  }

  /** The status the ReplicaSets add up to, with the Available condition (upstream `calculateStatus`). */
  calculateStatus(
    allRSs: readonly (AnyReplicaSet | undefined)[],
    newRS: AnyReplicaSet | undefined,
    d: Deployment,
  ): DeploymentStatus {
    const availableReplicas = getAvailableReplicaCountForReplicaSets(allRSs);
    const totalReplicas = getReplicaCountForReplicaSets(allRSs);
    const status: DeploymentStatus = {};
    // Zero counts are left out, as Go's omitempty writes them.
    setCount(status, "observedGeneration", d.metadata?.generation ?? 0);
    setCount(status, "replicas", getActualReplicaCountForReplicaSets(allRSs));
    setCount(status, "updatedReplicas", getActualReplicaCountForReplicaSets([newRS]));
    setCount(status, "readyReplicas", getReadyReplicaCountForReplicaSets(allRSs));
    setCount(status, "availableReplicas", availableReplicas);
    setCount(status, "unavailableReplicas", Math.max(0, totalReplicas - availableReplicas));
    if (d.status?.collisionCount !== undefined) status.collisionCount = d.status.collisionCount;
    if (d.status?.conditions !== undefined) status.conditions = d.status.conditions.map((c) => ({ ...c }));
    const now = this.clock.now();
    if (availableReplicas >= replicasOf(d) - maxUnavailable(d)) {
      setDeploymentCondition(
        status,
        newDeploymentCondition(
          "Available",
          "True",
          minimumReplicasAvailable,
          "Deployment has minimum availability.",
          now,
        ),
      );
    } else {
      setDeploymentCondition(
        status,
        newDeploymentCondition(
          "Available",
          "False",
          minimumReplicasUnavailable,
          "Deployment does not have minimum availability.",
          now,
        ),
      );
    }
    return status;
  }
}
