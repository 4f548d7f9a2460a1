import {
  type DeepReadonly,
  DeletedFinalStateUnknown,
  errorMessage,
  getControllerOf,
  hasStatusCause,
  isNotFound,
  isPodActive,
  isPodReady,
  labelSelectorAsSelector,
  metaNamespaceKeyFunc,
  newControllerRef,
  type OwnerReference,
  type Pod,
  podKey,
  pods,
  type ReplicaSet,
  type RunOptions,
  replicaSets,
  type Selector,
  splitMetaNamespaceKey,
} from "@reconcile/api";
import type { Client } from "@reconcile/client";
import {
  ClientPodControl,
  type ControllerContext,
  type ControllerEventHandler,
  type ControllerHarness,
  type ControllerInformer,
  defineController,
  ensureIndex,
  type Logger,
  objectFromTombstone,
  ownerEventHandler,
  ownersSelecting,
  type PodControl,
  PodControllerRefManager,
  rankPodsByRelatedPodsOnSameNode,
  recheckDeletionTimestamp,
  resolveControllerRef,
  type SyncMetrics,
  slowStartBatch,
  slowStartInitialBatchSize,
  sortActivePodsWithRanks,
  TerminalError,
} from "@reconcile/controller";
import { outstandingOf, UIDTrackingControllerExpectations } from "@reconcile/expectations";
import type { RateLimitingInterface } from "@reconcile/workqueue";
import { calculateStatus, updateReplicaSetStatus } from "./replica-set-status.js";

/** The most pods one sync creates or deletes (upstream `BurstReplicas`). */
export const burstReplicas = 500;

/** The ReplicaSet informer index from a controller's uid to the ReplicaSets it controls. */
export const controllerUIDIndex = "controllerUID";

/**
 * The pod informer index the controller adds: a controlled pod under its
 * controller's uid, an orphan under `orphan/<namespace>`. A sync then visits
 * only its own pods and the orphans of its namespace (the only pods a claim
 * can take), not every pod of the namespace.
 */
export const podsByControllerIndex = "podsByController";

const controllerKind = { group: "apps", version: "v1", kind: "ReplicaSet" } as const;
const namespaceIndex = "namespace";

/** The expectations the controller keeps; `UIDTrackingControllerExpectations` from `@reconcile/expectations`. */
export interface ReplicaSetExpectations {
  expectCreations(key: string, adds: number): void;
  expectDeletions(key: string, podKeys: readonly string[]): void;
  creationObserved(key: string): void;
  deletionObserved(key: string, podKey: string): void;
  satisfiedExpectations(key: string): boolean;
  deleteExpectations(key: string): void;
}

export interface ReplicaSetControllerOptions extends ControllerContext {
  /** Writes pods, ReplicaSet status, Events; reads the ReplicaSet afresh before adopting. Required. */
  client: Client;
  /** Informer over pods (all namespaces, or the namespace the controller serves). Required. */
  podInformer: ControllerInformer<Pod>;
  /** Informer over ReplicaSets. Required. */
  replicaSetInformer: ControllerInformer<ReplicaSet>;
  /** Most creates or deletes per sync. Default 500. */
  burstReplicas?: number | undefined;
  /** How pods are created and deleted. Default: `ClientPodControl` over `client`, recording Events as "replicaset-controller". */
  podControl?: PodControl | undefined;
  /** Default: `UIDTrackingControllerExpectations` on `clock` (5-minute TTL). */
  expectations?: ReplicaSetExpectations | undefined;
  /** The work queue of ReplicaSet keys. Default: a `RateLimitingQueue` named `replicaset` with the default controller rate limiter on `clock`. */
  queue?: RateLimitingInterface<string> | undefined;
  /** Sync counts and durations; the same as `syncMetrics`. Default: none. */
  metrics?: SyncMetrics | undefined;
}

/**
 * The ReplicaSet controller (upstream `pkg/controller/replicaset`): keeps the
 * number of active pods matching each ReplicaSet's selector at
 * `spec.replicas`, adopting orphans and releasing pods that stopped matching,
 * and reports the counts in the ReplicaSet's status.
 *
 * Informers feed handlers that enqueue ReplicaSet keys; `run` starts workers
 * that sync one key at a time each. Expectations cover the gap between a
 * write and the informer seeing it, so a slow watch never causes extra pods.
 */
export class ReplicaSetController {
  readonly queue: RateLimitingInterface<string>;
  readonly expectations: ReplicaSetExpectations;
  readonly #harness: ControllerHarness<string>;
  readonly #client: Client;
  readonly #podInformer: ControllerInformer<Pod>;
  readonly #rsInformer: ControllerInformer<ReplicaSet>;
  readonly #burstReplicas: number;
  readonly #podControl: PodControl;
  // Set once, by #addEventHandlers: the pods' owner handler with the expectations hooks.
  #podHandler!: ControllerEventHandler<Pod>;

  constructor(options: ReplicaSetControllerOptions) {
    const { client, podInformer, replicaSetInformer, podControl } = options ?? {};
    this.#harness = defineController({
      name: "replicaset",
      owner: "ReplicaSetController",
      context: { ...options, syncMetrics: options?.syncMetrics ?? options?.metrics },
      required: { client, podInformer, replicaSetInformer },
      // A pod control of the caller's records its own Events.
      events: podControl === undefined ? { component: "replicaset-controller", client } : undefined,
      informers: { pods: podInformer, replicasets: replicaSetInformer },
      queues: [
        { name: "replicaset", queue: options?.queue, workers: 5, sync: (k, c) => this.syncReplicaSet(k, c) },
      ],
      inspect: () => ({ expectations: outstandingOf(this.expectations) }),
    });
    this.#burstReplicas = positiveInteger(options.burstReplicas ?? burstReplicas, "burstReplicas");
    [this.#client, this.#podInformer, this.#rsInformer] = [client, podInformer, replicaSetInformer];
    this.queue = this.#harness.queue;
    this.#podControl = podControl ?? new ClientPodControl({ client, recorder: this.#harness.recorder });
    this.expectations =
      options.expectations ?? new UIDTrackingControllerExpectations({ clock: this.#harness.clock });
    this.#addEventHandlers();
  }

  /** ReplicaSets and their pods wake the ReplicaSet's key, observing expectations on the way (upstream's handlers). */
  #addEventHandlers(): void {
    this.#rsInformer.addEventHandler({
      onAdd: (rs) => this.addReplicaSet(rs),
      onUpdate: (oldRS, curRS) => this.updateReplicaSet(oldRS, curRS),
      onDelete: (obj) => this.deleteReplicaSet(obj),
    });
    ensureIndex(this.#rsInformer.getIndexer(), controllerUIDIndex, (rs) => {
      const ref = getControllerOf(rs);
      return ref === undefined ? [] : [ref.uid];
    });
    ensureIndex(this.#podInformer.getIndexer(), podsByControllerIndex, podsByControllerIndexFunc);
    this.#podHandler = ownerEventHandler<Pod, ReplicaSet>({
      ownerKind: { kind: controllerKind.kind, group: controllerKind.group },
      owners: this.#rsInformer.getIndexer(),
      childKind: "Pod",
      enqueue: (key, _rs, reason) => this.#harness.enqueue(key, reason),
      // Expectations see each pod come and go before the sync they wake.
      observe: {
        created: (key) => this.expectations.creationObserved(key),
        deleted: (key, pod) => this.expectations.deletionObserved(key, podKey(pod as DeepReadonly<Pod>)),
      },
      ownersOfOrphan: (pod) => this.#getPodReplicaSets(pod as DeepReadonly<Pod>),
    });
    this.#podInformer.addEventHandler({
      onAdd: (pod) => this.addPod(pod),
      onUpdate: (oldPod, curPod) => this.updatePod(oldPod, curPod),
      onDelete: (obj) => this.deletePod(obj),
    });
  }

  /**
   * Builds the controller on a `SharedInformerFactory` (from
   * `@reconcile/informer`): its pod and ReplicaSet informers. Start the
   * factory after this, so both informers run.
   */
  static fromInformerFactory(
    factory: {
      forResource(resource: typeof pods): ControllerInformer<Pod>;
      forResource(resource: typeof replicaSets): ControllerInformer<ReplicaSet>;
    },
    options: Omit<ReplicaSetControllerOptions, "podInformer" | "replicaSetInformer">,
  ): ReplicaSetController {
    return new ReplicaSetController({
      ...options,
      podInformer: factory.forResource(pods),
      replicaSetInformer: factory.forResource(replicaSets),
    });
  }

  /**
   * Waits for both caches to sync, then runs `workers` concurrent workers
   * until `signal` aborts. Resolves once the workers have stopped and pending
   * Events are written; rejects with a `CacheSyncTimeoutError` when
   * `cacheSyncTimeoutMs` passes before the caches sync.
   */
  run(options: RunOptions & { workers?: number | undefined }): Promise<void> {
    return this.#harness.run(options);
  }

  // --- event handlers -------------------------------------------------------

  addReplicaSet(rs: DeepReadonly<ReplicaSet>): void {
    this.#enqueue(rs, "object added");
  }

  /**
   * Enqueues on every update, even status-only ones, so a periodic resync
   * retries failed creates. A changed uid means the old ReplicaSet was deleted.
   */
  updateReplicaSet(oldRS: DeepReadonly<ReplicaSet>, curRS: DeepReadonly<ReplicaSet>): void {
    if (curRS.metadata?.uid !== oldRS.metadata?.uid) {
      this.deleteReplicaSet(new DeletedFinalStateUnknown(metaNamespaceKeyFunc(oldRS), oldRS));
    }
    this.#enqueue(curRS, "object updated");
  }

  deleteReplicaSet(obj: DeepReadonly<ReplicaSet> | DeletedFinalStateUnknown<DeepReadonly<ReplicaSet>>): void {
    const rs = objectFromTombstone(obj);
    if (rs?.metadata?.name === undefined) {
      this.#harness.logger.error({ object: obj }, "Couldn't get object from tombstone");
      return;
    }
    const key = metaNamespaceKeyFunc(rs);
    this.expectations.deleteExpectations(key);
    this.#harness.enqueue(key, "object deleted");
  }

  /** A created pod: observe it for its owner, or wake every ReplicaSet an orphan matches. */
  addPod(pod: DeepReadonly<Pod>): void {
    this.#podHandler.onAdd?.(pod, false);
  }

  /**
   * A changed pod: wake its old and new owners, or the ReplicaSets a changed
   * orphan may now match; a pod that just became ready wakes its owner again
   * once `minReadySeconds` have passed.
   */
  updatePod(oldPod: DeepReadonly<Pod>, curPod: DeepReadonly<Pod>): void {
    this.#podHandler.onUpdate?.(oldPod, curPod);
    if (curPod.metadata?.deletionTimestamp != null || isPodReady(oldPod) || !isPodReady(curPod)) return;
    const rs = this.#resolveControllerRef(curPod.metadata?.namespace ?? "", getControllerOf(curPod));
    // Become available after minReadySeconds: look again then (plus a second of slack).
    const minReadySeconds = rs?.spec?.minReadySeconds ?? 0;
    if (rs !== undefined && minReadySeconds > 0) {
      this.#harness.enqueueAfter(metaNamespaceKeyFunc(rs), minReadySeconds * 1000 + 1000, "Pod available");
    }
  }

  /** A deleted pod (or its tombstone): observe the deletion for its owner. */
  deletePod(obj: DeepReadonly<Pod> | DeletedFinalStateUnknown<DeepReadonly<Pod>>): void {
    if (objectFromTombstone(obj)?.metadata?.name === undefined) {
      this.#harness.logger.error({ object: obj }, "Couldn't get object from tombstone");
      return;
    }
    this.#podHandler.onDelete?.(obj);
  }

  // --- sync -------------------------------------------------------------------

  /**
   * Reconciles one ReplicaSet: claims its pods, creates or deletes pods when
   * its expectations are satisfied, and writes its status. Rejects (to be
   * retried with backoff) when a claim, a pod write or the status write
   * fails, and with a `TerminalError` (not retried) for an invalid selector.
   * `context.logger` (the workers pass one bound to the key and a
   * reconcileID) receives this sync's log lines; `context.signal` aborts its
   * API calls.
   */
  async syncReplicaSet(
    key: string,
    context: { logger?: Logger | undefined; signal?: AbortSignal | undefined } = {},
  ): Promise<void> {
    const signal = context.signal;
    const { namespace, name } = splitMetaNamespaceKey(key);
    const logger = context.logger ?? this.#harness.logger.child({ namespace, name });
    const rs = this.#rsInformer.getIndexer().getByKey(key);
    if (rs === undefined) {
      logger.debug({}, "ReplicaSet has been deleted");
      this.expectations.deleteExpectations(key);
      return;
    }
    // Read before listing pods: a pod observed after this point is in the list.
    const rsNeedsSync = this.expectations.satisfiedExpectations(key);
    let selector: Selector;
    try {
      selector = labelSelectorAsSelector(rs.spec?.selector);
    } catch (error) {
      // A bad selector will not get better by retrying (upstream logs it and returns nil).
      throw new TerminalError(
        `error converting pod selector to selector for rs ${key}: ${errorMessage(error)}`,
        {
          cause: error,
        },
      );
    }
    // Upstream lists every pod of the namespace; pods controlled by others are
    // ignored by the claim anyway, so only owned pods and orphans are read.
    const podIndexer = this.#podInformer.getIndexer();
    const activePods: DeepReadonly<Pod>[] = [];
    for (const indexedValue of [rs.metadata?.uid ?? "", orphanIndexValue(namespace)]) {
      for (const pod of podIndexer.byIndex(podsByControllerIndex, indexedValue)) {
        if (pod.metadata?.namespace === namespace && isPodActive(pod)) activePods.push(pod);
      }
    }
    const filteredPods = await this.#claimPods(rs, selector, activePods, signal);

    let manageError: unknown;
    if (rsNeedsSync && rs.metadata?.deletionTimestamp == null) {
      try {
        await this.#manageReplicas(filteredPods, rs, key, logger, signal);
      } catch (error) {
        manageError = error;
      }
    }
    const newStatus = calculateStatus(rs, filteredPods, manageError, this.#harness.clock.now());
    const updated = await updateReplicaSetStatus(this.#client, rs, newStatus, { signal });
    const replicas = updated.spec?.replicas ?? 1;
    const minReadySeconds = updated.spec?.minReadySeconds ?? 0;
    if (
      manageError === undefined &&
      minReadySeconds > 0 &&
      (updated.status?.readyReplicas ?? 0) === replicas &&
      (updated.status?.availableReplicas ?? 0) !== replicas
    ) {
      // A safety net against clock skew between here and the pods' transition times.
      this.#harness.enqueueAfter(key, minReadySeconds * 1000, "Pod available");
    }
    if (manageError !== undefined) throw manageError;
  }

  async #claimPods(
    rs: DeepReadonly<ReplicaSet>,
    selector: Selector,
    pods: DeepReadonly<Pod>[],
    signal: AbortSignal | undefined,
  ): Promise<DeepReadonly<Pod>[]> {
    const namespace = rs.metadata?.namespace ?? "";
    const name = rs.metadata?.name ?? "";
    // Adopt only if a fresh read shows the same ReplicaSet, not being deleted.
    const canAdopt = recheckDeletionTimestamp(async () => {
      const fresh = await this.#client.resource(replicaSets, namespace).get(name, { signal });
      if (fresh.metadata?.uid !== rs.metadata?.uid) {
        throw new Error(
          `original ReplicaSet ${namespace}/${name} is gone: got uid ${fresh.metadata?.uid}, wanted ${rs.metadata?.uid}`,
        );
      }
      return fresh;
    });
    const manager = new PodControllerRefManager({
      podControl: this.#podControl,
      controller: rs,
      controllerKind: { apiVersion: "apps/v1", kind: controllerKind.kind },
      selector,
      canAdopt,
      signal,
    });
    const { claimed, errors } = await manager.claimPods(pods);
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, errors.map((e) => e.message).join("; "));
    return claimed;
  }

  async #manageReplicas(
    filteredPods: DeepReadonly<Pod>[],
    rs: DeepReadonly<ReplicaSet>,
    key: string,
    logger: Logger,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const diff = filteredPods.length - (rs.spec?.replicas ?? 1);
    const namespace = rs.metadata?.namespace ?? "";
    // PodControl records Events on this; cached objects may lack kind.
    const eventTarget = { apiVersion: "apps/v1", kind: controllerKind.kind, metadata: rs.metadata ?? {} };
    if (diff < 0) {
      const count = Math.min(-diff, this.#burstReplicas);
      // Expect before the first create: the informer may see a pod before createPods returns.
      this.expectations.expectCreations(key, count);
      logger.debug({ need: rs.spec?.replicas, creating: count }, "Too few replicas");
      const controllerRef: OwnerReference = newControllerRef(rs, controllerKind);
      const template = rs.spec?.template ?? {};
      const { successes, error } = await slowStartBatch(count, slowStartInitialBatchSize, async () => {
        try {
          await this.#podControl.createPods(namespace, template, eventTarget, controllerRef, { signal });
        } catch (err) {
          // Creates into a terminating namespace are doomed; not an error worth retrying.
          if (hasStatusCause(err, "NamespaceTerminating")) return;
          throw err;
        }
      });
      // Creations that failed or were never attempted will never be observed.
      const skipped = count - successes;
      for (let i = 0; i < skipped; i++) this.expectations.creationObserved(key);
      if (error !== undefined) throw error;
      return;
    }
    if (diff > 0) {
      const count = Math.min(diff, this.#burstReplicas);
      logger.debug({ need: rs.spec?.replicas, deleting: count }, "Too many replicas");
      const relatedPods = this.#getIndirectlyRelatedPods(rs);
      const podsToDelete = getPodsToDelete(filteredPods, relatedPods, count, this.#harness.clock.now());
      // Expect the exact pods, so the update and the delete of one pod count once.
      this.expectations.expectDeletions(key, podsToDelete.map(podKey));
      const errors: unknown[] = [];
      await Promise.all(
        podsToDelete.map(async (pod) => {
          try {
            await this.#podControl.deletePod(namespace, pod.metadata?.name ?? "", eventTarget, { signal });
          } catch (err) {
            // The informer will never see this deletion.
            this.expectations.deletionObserved(key, podKey(pod));
            if (!isNotFound(err)) errors.push(err);
          }
        }),
      );
      if (errors.length > 0) throw errors[0];
    }
  }

  // All pods of ReplicaSets controlled by the same owner (e.g. a Deployment's), for ranking.
  #getIndirectlyRelatedPods(rs: DeepReadonly<ReplicaSet>): DeepReadonly<Pod>[] {
    const ref = getControllerOf(rs);
    if (ref === undefined) return [];
    const related: DeepReadonly<Pod>[] = [];
    const seen = new Set<string>();
    const podIndexer = this.#podInformer.getIndexer();
    for (const relatedRS of this.#rsInformer.getIndexer().byIndex(controllerUIDIndex, ref.uid)) {
      let selector: Selector;
      try {
        selector = labelSelectorAsSelector(relatedRS.spec?.selector);
      } catch {
        continue;
      }
      for (const pod of podIndexer.byIndex(namespaceIndex, relatedRS.metadata?.namespace ?? "")) {
        if (!selector.matches(pod.metadata?.labels)) continue;
        const uid = pod.metadata?.uid ?? "";
        if (seen.has(uid)) continue;
        seen.add(uid);
        related.push(pod);
      }
    }
    return related;
  }

  #resolveControllerRef(
    namespace: string,
    ref: OwnerReference | undefined,
  ): DeepReadonly<ReplicaSet> | undefined {
    return resolveControllerRef(this.#rsInformer.getIndexer(), namespace, ref, controllerKind);
  }

  // ReplicaSets whose (non-empty) selector matches the pod's labels (upstream GetPodReplicaSets).
  #getPodReplicaSets(pod: DeepReadonly<Pod>): DeepReadonly<ReplicaSet>[] {
    const matching = ownersSelecting(this.#rsInformer.getIndexer(), pod);
    if (matching.length > 1) {
      this.#harness.logger.warn(
        {
          namespace: pod.metadata?.namespace,
          pod: pod.metadata?.name,
          replicaSets: matching.map((rs) => rs.metadata?.name),
        },
        "user error! more than one ReplicaSet is selecting pods with the same labels",
      );
    }
    return matching;
  }

  #enqueue(rs: DeepReadonly<ReplicaSet>, reason: string): void {
    this.#harness.enqueue(metaNamespaceKeyFunc(rs), reason);
  }
}

/**
 * The `count` pods to delete: all of them in their given order when every pod
 * goes, else the first `count` in the rank-aware deletion order, ranking each
 * pod by how many related pods share its node (upstream `getPodsToDelete`).
 */
export function getPodsToDelete<P extends Pod | DeepReadonly<Pod>>(
  filteredPods: readonly P[],
  relatedPods: readonly (Pod | DeepReadonly<Pod>)[],
  count: number,
  nowMs: number,
): P[] {
  if (count < filteredPods.length) {
    const ranks = rankPodsByRelatedPodsOnSameNode(filteredPods, relatedPods);
    return sortActivePodsWithRanks(filteredPods, ranks, { now: nowMs }).slice(0, count);
  }
  return filteredPods.slice(0, count);
}

function podsByControllerIndexFunc(pod: DeepReadonly<Pod>): readonly string[] {
  const ref = pod.metadata?.ownerReferences?.find((owner) => owner.controller === true);
  return [ref === undefined ? orphanIndexValue(pod.metadata?.namespace ?? "") : ref.uid];
}

function orphanIndexValue(namespace: string): string {
  return `orphan/${namespace}`;
}

function positiveInteger(value: number, option: string): number {
  if (!Number.isInteger(value) || value < 1) {
    throw new RangeError(`ReplicaSetController: ${option} must be a positive integer, got ${value}`);
  }
  return value;
}
