import {
  type DeepReadonly,
  type Deployment,
  deployments,
  errorMessage,
  getControllerOf,
  hasStatusCause,
  isAlreadyExists,
  isNotFound,
  newControllerRef,
  type Pod,
  type ReplicaSet,
  replicaSets,
} from "@reconcile/api";
import type { Client } from "@reconcile/client";
import type { Clock } from "@reconcile/clock";
import { type EventRecorder, type Logger, noopLogger } from "@reconcile/controller";
import type { DeploymentStatus } from "kubernetes-types/apps/v1.js";
import {
  type AnyReplicaSet,
  byCreationTimestamp,
  byRevision,
  bySizeNewer,
  bySizeOlder,
  defaultDeploymentUniqueLabelKey,
  deploymentComplete,
  deploymentProgressing,
  deploymentTimedOut,
  equalIgnoreHash,
  failedRSCreateReason,
  filterActiveReplicaSets,
  findActiveOrLatest,
  findNewReplicaSet,
  findOldReplicaSets,
  foundNewRSReason,
  getActualReplicaCountForReplicaSets,
  getAvailableReplicaCountForReplicaSets,
  getDeploymentCondition,
  getDesiredReplicasAnnotation,
  getProportion,
  getReadyReplicaCountForReplicaSets,
  getReplicaCountForReplicaSets,
  getRollbackTo,
  hasProgressDeadline,
  hasRevisionHistoryLimit,
  isRollingUpdate,
  isSaturated,
  lastRevision,
  maxRevision,
  maxRevisionHistoryLengthInChars,
  maxSurge,
  maxUnavailable,
  minimumReplicasAvailable,
  minimumReplicasUnavailable,
  newDeploymentCondition,
  newReplicaSetReason,
  newRSAvailableReason,
  newRSNewReplicas,
  pausedDeployReason,
  removeDeploymentCondition,
  replicaSetToDeploymentCondition,
  replicaSetUpdatedReason,
  replicasAnnotationsNeedUpdate,
  replicasOf,
  resumedDeployReason,
  revision,
  rollbackDone,
  rollbackRevisionNotFound,
  rollbackTemplateUnchanged,
  rsReplicas,
  semanticEqual,
  setDeploymentAnnotationsTo,
  setDeploymentCondition,
  setDeploymentRevision,
  setNewReplicaSetAnnotations,
  setReplicasAnnotations,
  timedOutReason,
} from "./deployment-util.js";
import { computeHash } from "./template-hash.js";

/** The pods of a Deployment by the uid of the ReplicaSet that controls them (upstream `getPodMapForDeployment`). */
export type PodMap = ReadonlyMap<string, readonly DeepReadonly<Pod>[]>;

export interface DeploymentRolloutOptions {
  /** Writes ReplicaSets and Deployments. Required. */
  client: Client;
  /** Where ScalingReplicaSet and rollback Events go. Required. */
  recorder: EventRecorder;
  /** Time of conditions and of the progress deadline. Required. */
  clock: Clock;
  /** Reads a ReplicaSet from the cache (after a create answers AlreadyExists). Default: none found. */
  getReplicaSet?: ((namespace: string, name: string) => DeepReadonly<ReplicaSet> | undefined) | undefined;
  /** Looks at a Deployment again after `ms` (the progress deadline). Default: nothing. */
  enqueueAfter?: ((key: string, ms: number) => void) | undefined;
  /** Looks at a Deployment again soon, through the rate limiter. Default: nothing. */
  enqueueRateLimited?: ((key: string) => void) | undefined;
  /** Aborts in-flight writes (the worker stopping). */
  signal?: AbortSignal | undefined;
  logger?: Logger | undefined;
}

/** What a scaling call did: whether the size changed, and the ReplicaSet as it now is. */
export interface ScaleResult {
  scaled: boolean;
  rs: AnyReplicaSet;
}

/**
 * The Deployment controller's sync logic (upstream `sync.go`, `rolling.go`,
 * `recreate.go`, `rollback.go`, `progress.go`) over one Deployment copy `d`,
 * which the methods update in place as upstream's do (status, annotations,
 * resourceVersion after each write). ReplicaSets are read-only inputs; every
 * change is a write through the client.
 */
export class DeploymentRollout {
  readonly #client: Client;
  readonly #recorder: EventRecorder;
  readonly #clock: Clock;
  readonly #options: DeploymentRolloutOptions;
  readonly #logger: Logger;
  // ReplicaSets as this sync wrote them: a later step reads them instead of
  // the cache's older copy, which would only meet a 409 Conflict.
  readonly #written = new Map<string, ReplicaSet>();

  constructor(options: DeploymentRolloutOptions) {
    this.#client = options.client;
    this.#recorder = options.recorder;
    this.#clock = options.clock;
    this.#options = options;
    this.#logger = options.logger ?? noopLogger;
  }

  // --- sync.go ----------------------------------------------------------------

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
    const now = this.#clock.now();
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
    await this.#updateStatus(d);
  }

  /** `[newRS, allOldRSs]`, creating the new ReplicaSet when `create` and it is missing. */
  async getAllReplicaSetsAndSyncRevision(
    d: Deployment,
    rsList: readonly AnyReplicaSet[],
    create: boolean,
  ): Promise<[AnyReplicaSet | undefined, AnyReplicaSet[]]> {
    const current = rsList.map((rs) => this.#written.get(rs.metadata?.uid ?? "") ?? rs);
    for (const [uid, rs] of this.#written) {
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
    const namespace = d.metadata?.namespace ?? "";
    const status = (d.status ??= {});

    if (existingNewRS !== undefined) {
      const rsCopy = structuredClone(existingNewRS) as ReplicaSet;
      const annotationsUpdated = setNewReplicaSetAnnotations(
        d,
        rsCopy,
        newRevision,
        true,
        maxRevisionHistoryLengthInChars,
      );
      const minReadySecondsNeedsUpdate =
        (rsCopy.spec?.minReadySeconds ?? 0) !== (d.spec?.minReadySeconds ?? 0);
      if (annotationsUpdated || minReadySecondsNeedsUpdate) {
        const spec = (rsCopy.spec ??= { selector: {} });
        if (d.spec?.minReadySeconds === undefined) delete spec.minReadySeconds;
        else spec.minReadySeconds = d.spec.minReadySeconds;
        // The Deployment's revision follows on the next sync, as upstream.
        return await this.#updateReplicaSet(rsCopy);
      }
      let needsUpdate = setDeploymentRevision(d, rsCopy.metadata?.annotations?.[revisionAnnotationKey]);
      if (hasProgressDeadline(d) && getDeploymentCondition(status, "Progressing") === undefined) {
        const message = `Found new replica set "${rsCopy.metadata?.name}"`;
        setDeploymentCondition(
          status,
          newDeploymentCondition("Progressing", "True", foundNewRSReason, message, this.#clock.now()),
        );
        needsUpdate = true;
      }
      if (needsUpdate) await this.#updateStatus(d);
      return existingNewRS;
    }
    if (!create) return undefined;

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
      const created = await this.#client.resource(replicaSets, namespace).create(newRS, this.#callOptions());
      this.#written.set(created.metadata?.uid ?? "", created);
      createdRS = created;
    } catch (error) {
      if (isAlreadyExists(error)) {
        // A slow cache, or a hash collision with a ReplicaSet of another template.
        const rs = this.#options.getReplicaSet?.(namespace, rsName);
        if (rs === undefined) throw error;
        const ref = getControllerOf(rs);
        if (
          ref !== undefined &&
          ref.uid === d.metadata?.uid &&
          equalIgnoreHash(d.spec?.template, rs.spec?.template)
        ) {
          alreadyExists = true;
          createdRS = rs;
        } else {
          status.collisionCount = (status.collisionCount ?? 0) + 1;
          try {
            await this.#updateStatus(d);
            this.#logger.info(
              { collisionCount: status.collisionCount },
              "Found a hash collision for deployment - bumping collisionCount to resolve it",
            );
          } catch {
            // The AlreadyExists error below requeues the Deployment either way.
          }
          throw error;
        }
      } else if (hasStatusCause(error, "NamespaceTerminating")) {
        throw error;
      } else {
        const message = `Failed to create new replica set "${rsName}": ${errorMessage(error)}`;
        if (hasProgressDeadline(d)) {
          setDeploymentCondition(
            status,
            newDeploymentCondition("Progressing", "False", failedRSCreateReason, message, this.#clock.now()),
          );
          try {
            await this.#updateStatus(d);
          } catch {
            // The create error is the one worth reporting.
          }
        }
        this.#recorder.event(eventTarget(d), "Warning", failedRSCreateReason, message);
        throw error;
      }
    }
    if (!alreadyExists && newReplicasCount > 0) {
      this.#recorder.event(
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
        newDeploymentCondition("Progressing", "True", newReplicaSetReason, message, this.#clock.now()),
      );
      needsUpdate = true;
    }
    if (needsUpdate) await this.#updateStatus(d);
    return createdRS;
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
    const updated = await this.#updateReplicaSet(rsCopy);
    if (sizeNeedsUpdate) {
      this.#recorder.event(
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
        await this.#client
          .resource(replicaSets, rs.metadata?.namespace ?? "")
          .delete(rs.metadata?.name ?? "", this.#callOptions());
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
    await this.#updateStatus(d);
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
    const now = this.#clock.now();
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

  // --- rolling.go -----------------------------------------------------------------

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
      this.#logger.debug({ err: error }, "Failed to clean up unhealthy replicas");
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
      this.#logger.debug({ err: error }, "Failed to scale down old replica sets");
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

  // --- recreate.go --------------------------------------------------------------

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

  // --- rollback.go ---------------------------------------------------------------

  /**
   * Serves the deprecated rollback annotation: copies the template of the
   * requested revision (0: the previous one) into the Deployment and clears
   * the request. The next sync gives that ReplicaSet the next revision.
   */
  async rollback(d: Deployment, rsList: readonly AnyReplicaSet[]): Promise<void> {
    const [newRS, allOldRSs] = await this.getAllReplicaSetsAndSyncRevision(d, rsList, true);
    const allRSs = [...allOldRSs, newRS];
    let toRevision = getRollbackTo(d) ?? 0;
    if (toRevision === 0) {
      toRevision = lastRevision(allRSs);
      if (toRevision === 0) {
        this.#recorder.event(
          eventTarget(d),
          "Warning",
          rollbackRevisionNotFound,
          "Unable to find last revision.",
        );
        return this.#updateDeploymentAndClearRollbackTo(d);
      }
    }
    for (const rs of allRSs) {
      if (rs === undefined) continue;
      let v: number;
      try {
        v = revision(rs);
      } catch {
        continue;
      }
      if (v !== toRevision) continue;
      let performed = false;
      if (!equalIgnoreHash(d.spec?.template, rs.spec?.template)) {
        setFromReplicaSetTemplate(d, rs);
        setDeploymentAnnotationsTo(d, rs);
        performed = true;
      } else {
        this.#recorder.event(
          eventTarget(d),
          "Warning",
          rollbackTemplateUnchanged,
          `The rollback revision contains the same template as current deployment "${d.metadata?.name}"`,
        );
      }
      await this.#updateDeploymentAndClearRollbackTo(d);
      if (performed) {
        this.#recorder.event(
          eventTarget(d),
          "Normal",
          rollbackDone,
          `Rolled back deployment "${d.metadata?.name}" to revision ${toRevision}`,
        );
      }
      return;
    }
    this.#recorder.event(
      eventTarget(d),
      "Warning",
      rollbackRevisionNotFound,
      "Unable to find the revision to rollback to.",
    );
    return this.#updateDeploymentAndClearRollbackTo(d);
  }

  async #updateDeploymentAndClearRollbackTo(d: Deployment): Promise<void> {
    const annotations = d.metadata?.annotations;
    if (annotations !== undefined) delete annotations[deprecatedRollbackTo];
    const updated = await this.#client
      .resource(deployments, d.metadata?.namespace ?? "")
      .update(d, this.#callOptions());
    adoptMetadata(d, updated);
  }

  // --- progress.go ----------------------------------------------------------------

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
    const now = this.#clock.now();
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
    await this.#updateStatus(d);
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
    const after = lastUpdate + (d.spec?.progressDeadlineSeconds ?? 0) * 1000 - this.#clock.now();
    const key = deploymentKey(d);
    if (after < 1000) {
      this.#options.enqueueRateLimited?.(key);
      return 0;
    }
    this.#options.enqueueAfter?.(key, after + 1000);
    return after;
  }

  async #updateReplicaSet(rs: ReplicaSet): Promise<ReplicaSet> {
    const updated = await this.#client
      .resource(replicaSets, rs.metadata?.namespace ?? "")
      .update(rs, this.#callOptions());
    this.#written.set(updated.metadata?.uid ?? "", updated);
    return updated;
  }

  async #updateStatus(d: Deployment): Promise<void> {
    const updated = await this.#client
      .resource(deployments, d.metadata?.namespace ?? "")
      .updateStatus(d, this.#callOptions());
    // Later writes in this sync build on this one, instead of meeting a conflict.
    adoptMetadata(d, updated);
  }

  #callOptions(): { signal?: AbortSignal } {
    return this.#options.signal === undefined ? {} : { signal: this.#options.signal };
  }
}

/**
 * Whether any pod of an old ReplicaSet may still run: an old ReplicaSet
 * reports replicas, or a pod under any ReplicaSet but the new one is not
 * Succeeded or Failed (terminating ones count).
 */
export function oldPodsRunning(
  newRS: AnyReplicaSet | undefined,
  oldRSs: readonly AnyReplicaSet[],
  podMap: PodMap,
): boolean {
  if (getActualReplicaCountForReplicaSets(oldRSs) > 0) return true;
  for (const [rsUID, pods] of podMap) {
    if (newRS !== undefined && newRS.metadata?.uid === rsUID) continue;
    for (const pod of pods) {
      const phase = pod.status?.phase;
      if (phase === "Failed" || phase === "Succeeded") continue;
      return true;
    }
  }
  return false;
}

/** The ReplicaFailure conditions of the new ReplicaSet, or else of any ReplicaSet, as Deployment conditions. */
export function getReplicaFailures(
  allRSs: readonly (AnyReplicaSet | undefined)[],
  newRS: AnyReplicaSet | undefined,
): ReturnType<typeof replicaSetToDeploymentCondition>[] {
  const fromNew = (newRS?.status?.conditions ?? [])
    .filter((c) => c.type === "ReplicaFailure")
    .map(replicaSetToDeploymentCondition);
  if (fromNew.length > 0) return fromNew;
  const conditions: ReturnType<typeof replicaSetToDeploymentCondition>[] = [];
  for (const rs of allRSs) {
    for (const c of rs?.status?.conditions ?? []) {
      if (c.type === "ReplicaFailure") conditions.push(replicaSetToDeploymentCondition(c));
    }
  }
  return conditions;
}

/** Copies a ReplicaSet's template into the Deployment without its pod-template-hash label. */
export function setFromReplicaSetTemplate(d: Deployment, rs: AnyReplicaSet): void {
  const template = structuredClone(rs.spec?.template ?? {}) as NonNullable<
    ReplicaSet["spec"]
  >["template"] & {};
  const labels = template.metadata?.labels;
  if (labels !== undefined) delete labels[defaultDeploymentUniqueLabelKey];
  (d.spec ??= { selector: {}, template: {} }).template = template;
}

/** Deep equality of two statuses, a missing count being 0 as in Go. */
export function statusEqual(
  a: DeploymentStatus | DeepReadonly<DeploymentStatus> | undefined,
  b: DeploymentStatus | DeepReadonly<DeploymentStatus> | undefined,
): boolean {
  return semanticEqual(normalizeStatus(a), normalizeStatus(b));
}

function normalizeStatus(status: DeploymentStatus | DeepReadonly<DeploymentStatus> | undefined): unknown {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(status ?? {})) {
    if (value === 0 && key !== "collisionCount") continue;
    out[key] = value;
  }
  return out;
}

type CountField =
  | "observedGeneration"
  | "replicas"
  | "updatedReplicas"
  | "readyReplicas"
  | "availableReplicas"
  | "unavailableReplicas";

function setCount(status: DeploymentStatus, field: CountField, value: number): void {
  if (value !== 0) status[field] = value;
}

function adoptMetadata(d: Deployment, updated: Deployment): void {
  const meta = (d.metadata ??= {}) as { resourceVersion?: string; generation?: number };
  if (updated.metadata?.resourceVersion !== undefined)
    meta.resourceVersion = updated.metadata.resourceVersion;
  if (updated.metadata?.generation !== undefined) meta.generation = updated.metadata.generation;
}

const deploymentKind = { group: "apps", version: "v1", kind: "Deployment" } as const;
const revisionAnnotationKey = "deployment.kubernetes.io/revision";
const deprecatedRollbackTo = "deprecated.deployment.rollback.to";

/** The object Events are recorded about: cached objects may lack apiVersion and kind. */
export function eventTarget(d: Deployment | DeepReadonly<Deployment>): Deployment {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: d.metadata as Deployment["metadata"],
  } as Deployment;
}

function deploymentKey(d: Deployment): string {
  const namespace = d.metadata?.namespace;
  return namespace ? `${namespace}/${d.metadata?.name}` : (d.metadata?.name ?? "");
}
