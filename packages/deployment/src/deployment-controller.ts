import {
  type DeepReadonly,
  type DeletedFinalStateUnknown,
  type Deployment,
  deployments,
  errorMessage,
  getControllerOf,
  type KubeObject,
  labelSelectorAsSelector,
  metaNamespaceKeyFunc,
  type Pod,
  pods,
  type ReplicaSet,
  type RunOptions,
  replicaSets,
  type Selector,
  splitMetaNamespaceKey,
} from "@reconcile/api";
import type { Client } from "@reconcile/client";
import {
  ClientReplicaSetControl,
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
  ReplicaSetControllerRefManager,
  recheckDeletionTimestamp,
  resolveControllerRef,
  type SyncMetrics,
  type SyncResult,
  TerminalError,
} from "@reconcile/controller";
import type { RateLimitingInterface } from "@reconcile/workqueue";
import { type AnyReplicaSet, getRollbackTo } from "./deployment-util.js";
import { DeploymentRollout, eventTarget, type PodMap } from "./rollout.js";

/** After this many failed syncs in a row a Deployment key is dropped until it changes (upstream `maxRetries`). */
export const maxRetries = 15;

/** The ReplicaSet informer index from a controller's uid to the ReplicaSets it controls. */
export const replicaSetsByControllerIndex = "deploymentControllerUID";

const namespaceIndex = "namespace";
const deploymentOwnerKind = { kind: "Deployment", group: "apps" } as const;

export interface DeploymentControllerOptions extends ControllerContext {
  /** Writes ReplicaSets, Deployments, Events; reads the Deployment afresh before adopting. Required. */
  client: Client;
  /** Informer over Deployments. Required. */
  deploymentInformer: ControllerInformer<Deployment>;
  /** Informer over ReplicaSets. Required. */
  replicaSetInformer: ControllerInformer<ReplicaSet>;
  /** Informer over pods (Recreate waits for old pods to be gone). Required. */
  podInformer: ControllerInformer<Pod>;
  /** The work queue of Deployment keys. Default: a `RateLimitingQueue` named `deployment` with the default controller rate limiter on `clock`. */
  queue?: RateLimitingInterface<string> | undefined;
  /** Sync counts and durations; the same as `syncMetrics`. Default: none. */
  metrics?: SyncMetrics | undefined;
}

/**
 * The Deployment controller (upstream `pkg/controller/deployment`): rolls
 * each Deployment's pod template out through ReplicaSets — RollingUpdate
 * within maxSurge/maxUnavailable or Recreate — scales them proportionally
 * when the Deployment is resized, keeps `revisionHistoryLimit` old ones for
 * `kubectl rollout undo`, and reports progress in the Deployment's status
 * and conditions. Events come from `deployment-controller`.
 */
export class DeploymentController {
  readonly queue: RateLimitingInterface<string>;
  readonly #harness: ControllerHarness<string>;
  readonly #client: Client;
  readonly #dInformer: ControllerInformer<Deployment>;
  readonly #rsInformer: ControllerInformer<ReplicaSet>;
  readonly #podInformer: ControllerInformer<Pod>;
  // Set once, by #addEventHandlers.
  #replicaSetHandler!: ControllerEventHandler<ReplicaSet>;

  constructor(options: DeploymentControllerOptions) {
    const { client, deploymentInformer, replicaSetInformer, podInformer } = options ?? {};
    this.#harness = defineController({
      name: "deployment",
      owner: "DeploymentController",
      context: { ...options, syncMetrics: options?.syncMetrics ?? options?.metrics },
      required: { client, deploymentInformer, replicaSetInformer, podInformer },
      events: { component: "deployment-controller", client },
      informers: { deployments: deploymentInformer, replicasets: replicaSetInformer, pods: podInformer },
      queues: [
        {
          name: "deployment",
          queue: options?.queue,
          workers: 5,
          maxRetries,
          sync: (key, context) => this.syncDeployment(key, context),
        },
      ],
    });
    this.#client = client;
    this.#dInformer = deploymentInformer;
    this.#rsInformer = replicaSetInformer;
    this.#podInformer = podInformer;
    this.queue = this.#harness.queue;

    this.#addEventHandlers();
  }

  /** Deployments, their ReplicaSets and (for Recreate) their pods wake the Deployment's key (upstream's handlers). */
  #addEventHandlers(): void {
    this.#dInformer.addEventHandler({
      onAdd: (d) => this.addDeployment(d),
      onUpdate: (oldD, curD) => this.updateDeployment(oldD, curD),
      onDelete: (obj) => this.deleteDeployment(obj),
    });
    ensureIndex(this.#rsInformer.getIndexer(), replicaSetsByControllerIndex, (rs) => {
      const ref = getControllerOf(rs);
      return ref === undefined ? [] : [ref.uid];
    });
    // A ReplicaSet wakes its controlling Deployment, an orphan every Deployment whose selector matches it.
    this.#replicaSetHandler = ownerEventHandler<ReplicaSet, Deployment>({
      ownerKind: deploymentOwnerKind,
      owners: this.#dInformer.getIndexer(),
      childKind: "ReplicaSet",
      enqueue: (key, _d, reason) => this.#harness.enqueue(key, reason),
      ownersOfOrphan: (rs) => this.#getDeploymentsForReplicaSet(rs),
    });
    this.#rsInformer.addEventHandler({
      onAdd: (rs) => this.addReplicaSet(rs),
      onUpdate: (oldRS, curRS) => this.updateReplicaSet(oldRS, curRS),
      onDelete: (obj) => this.deleteReplicaSet(obj),
    });
    this.#podInformer.addEventHandler({ onDelete: (obj) => this.deletePod(obj) });
  }

  /**
   * Builds the controller on a `SharedInformerFactory` (from
   * `@reconcile/informer`): its Deployment, ReplicaSet and pod informers.
   * Start the factory after this, so all three run.
   */
  static fromInformerFactory(
    factory: {
      forResource(resource: typeof deployments): ControllerInformer<Deployment>;
      forResource(resource: typeof replicaSets): ControllerInformer<ReplicaSet>;
      forResource(resource: typeof pods): ControllerInformer<Pod>;
    },
    options: Omit<DeploymentControllerOptions, "deploymentInformer" | "replicaSetInformer" | "podInformer">,
  ): DeploymentController {
    return new DeploymentController({
      ...options,
      deploymentInformer: factory.forResource(deployments),
      replicaSetInformer: factory.forResource(replicaSets),
      podInformer: factory.forResource(pods),
    });
  }

  /**
   * Waits for the caches to sync, then runs `workers` concurrent workers
   * (default 5, as kube-controller-manager's `--concurrent-deployment-syncs`)
   * until `signal` aborts. Resolves once the workers have stopped and pending
   * Events are written.
   */
  run(options: RunOptions & { workers?: number | undefined }): Promise<void> {
    return this.#harness.run(options);
  }

  // --- event handlers -------------------------------------------------------

  addDeployment(d: DeepReadonly<Deployment>): void {
    this.#enqueue(d, "object added");
  }

  updateDeployment(_old: DeepReadonly<Deployment>, cur: DeepReadonly<Deployment>): void {
    this.#enqueue(cur, "object updated");
  }

  deleteDeployment(obj: DeepReadonly<Deployment> | DeletedFinalStateUnknown<DeepReadonly<Deployment>>): void {
    const d = objectFromTombstone(obj);
    if (d?.metadata?.name === undefined) {
      this.#harness.logger.error({ object: obj }, "Couldn't get object from tombstone");
      return;
    }
    this.#enqueue(d, "object deleted");
  }

  /** A new ReplicaSet wakes its controlling Deployment, or, for an orphan, every Deployment that matches it. */
  addReplicaSet(rs: DeepReadonly<ReplicaSet>): void {
    if (rs.metadata?.deletionTimestamp != null) {
      // On a restart a ReplicaSet may show up already being deleted.
      this.deleteReplicaSet(rs);
      return;
    }
    this.#replicaSetHandler.onAdd?.(rs, false);
  }

  /** A changed ReplicaSet wakes its old and new owners, or the Deployments a changed orphan may now match. */
  updateReplicaSet(oldRS: DeepReadonly<ReplicaSet>, curRS: DeepReadonly<ReplicaSet>): void {
    this.#replicaSetHandler.onUpdate?.(oldRS, curRS);
  }

  deleteReplicaSet(obj: DeepReadonly<ReplicaSet> | DeletedFinalStateUnknown<DeepReadonly<ReplicaSet>>): void {
    const rs = objectFromTombstone(obj);
    if (rs?.metadata?.name === undefined) {
      this.#harness.logger.error({ object: obj }, "Couldn't get object from tombstone");
      return;
    }
    this.#replicaSetHandler.onDelete?.(obj);
  }

  /**
   * A deleted pod matters only to a Recreate Deployment, which waits for its
   * old pods to be gone: once none of its pods is left, sync it. (Upstream
   * lists the ReplicaSets through the client here; the cache serves as well
   * and keeps handlers free of I/O.)
   */
  deletePod(obj: DeepReadonly<Pod> | DeletedFinalStateUnknown<DeepReadonly<Pod>>): void {
    const pod = objectFromTombstone(obj);
    if (pod?.metadata?.name === undefined) {
      this.#harness.logger.error({ object: obj }, "Couldn't get object from tombstone");
      return;
    }
    const namespace = pod.metadata.namespace ?? "";
    const podRef = getControllerOf(pod);
    if (podRef === undefined || podRef.kind !== "ReplicaSet") return;
    const rs = this.#rsInformer.getIndexer().getByKey(namespacedKey(namespace, podRef.name));
    if (rs === undefined || rs.metadata?.uid !== podRef.uid) return;
    const d = resolveControllerRef(
      this.#dInformer.getIndexer(),
      namespace,
      getControllerOf(rs),
      deploymentOwnerKind,
    );
    if (d === undefined || d.spec?.strategy?.type !== "Recreate") return;
    const rsList = this.#rsInformer
      .getIndexer()
      .byIndex(replicaSetsByControllerIndex, d.metadata?.uid ?? "")
      .filter((candidate) => candidate.metadata?.namespace === namespace);
    let podCount = 0;
    for (const list of this.#getPodMapForDeployment(d, rsList).values()) podCount += list.length;
    if (podCount === 0) this.#enqueue(d, "last old Pod deleted");
  }

  // --- sync -------------------------------------------------------------------

  /**
   * Reconciles one Deployment (upstream `syncDeployment`): claims its
   * ReplicaSets, then, in this order, writes status only while it is being
   * deleted, records pause/resume, serves a paused Deployment or a scaling
   * event by resizing, a rollback request by copying the old template, and
   * otherwise takes one step of its strategy's rollout. Resolves with
   * `{ requeueAfterMs }` when a progress deadline is due before anything else
   * would wake the Deployment.
   */
  async syncDeployment(
    key: string,
    context: { logger?: Logger | undefined; signal?: AbortSignal | undefined } = {},
  ): Promise<SyncResult> {
    const { namespace, name } = splitMetaNamespaceKey(key);
    const logger = context.logger ?? this.#harness.logger.child({ namespace, name });
    const cached = this.#dInformer.getIndexer().getByKey(key);
    if (cached === undefined) {
      logger.debug({}, "Deployment has been deleted");
      return;
    }
    const d = structuredClone(cached) as Deployment;
    let requeueAfterMs: number | undefined;
    const rollout = new DeploymentRollout({
      client: this.#client,
      recorder: this.#harness.recorder,
      clock: this.#harness.clock,
      logger,
      signal: context.signal,
      getReplicaSet: (ns, rsName) => this.#rsInformer.getIndexer().getByKey(namespacedKey(ns, rsName)),
      enqueueAfter: (_key, ms) => {
        requeueAfterMs = ms;
      },
      enqueueRateLimited: (k) => this.queue.addRateLimited(k),
    });

    const selector = d.spec?.selector;
    if (
      selector !== undefined &&
      Object.keys(selector.matchLabels ?? {}).length === 0 &&
      (selector.matchExpressions ?? []).length === 0 &&
      Object.keys(selector).every((k) => k === "matchLabels" || k === "matchExpressions")
    ) {
      this.#harness.recorder.event(
        eventTarget(d),
        "Warning",
        "SelectingAll",
        "This deployment is selecting all pods. A non-empty selector is required.",
      );
      const status = (d.status ??= {});
      if ((status.observedGeneration ?? 0) < (d.metadata?.generation ?? 0)) {
        status.observedGeneration = d.metadata?.generation ?? 0;
        try {
          await this.#client.resource(deployments, namespace).updateStatus(d, signalOption(context.signal));
        } catch (error) {
          logger.debug({ err: error }, "Failed to record the observed generation");
        }
      }
      return;
    }

    const rsList = await this.#getReplicaSetsForDeployment(d, context.signal);
    await this.#syncRollout(rollout, d, rsList);
    return requeueAfterMs === undefined ? undefined : { requeueAfterMs };
  }

  async #syncRollout(
    rollout: DeploymentRollout,
    d: Deployment,
    rsList: readonly AnyReplicaSet[],
  ): Promise<void> {
    if (d.metadata?.deletionTimestamp != null) return rollout.syncStatusOnly(d, rsList);
    await rollout.checkPausedConditions(d);
    if (d.spec?.paused === true) return rollout.sync(d, rsList);
    // A rollback is not re-entrant: finish clearing the request before touching ReplicaSets.
    if (getRollbackTo(d) !== undefined) return rollout.rollback(d, rsList);
    if (await rollout.isScalingEvent(d, rsList)) return rollout.sync(d, rsList);
    const strategy = d.spec?.strategy?.type ?? "RollingUpdate";
    // Only Recreate reads the pods (upstream lists them on every sync).
    if (strategy === "Recreate")
      return rollout.rolloutRecreate(d, rsList, this.#getPodMapForDeployment(d, rsList));
    if (strategy === "RollingUpdate") return rollout.rolloutRolling(d, rsList);
    throw new TerminalError(`unexpected deployment strategy type: ${strategy}`);
  }

  /**
   * The ReplicaSets this Deployment owns after adopting matching orphans and
   * releasing owned ones that stopped matching (adoption only after a fresh
   * read confirms the Deployment is the same one and not being deleted).
   */
  async #getReplicaSetsForDeployment(
    d: Deployment,
    signal: AbortSignal | undefined,
  ): Promise<AnyReplicaSet[]> {
    const namespace = d.metadata?.namespace ?? "";
    const name = d.metadata?.name ?? "";
    const rsList = this.#rsInformer.getIndexer().byIndex(namespaceIndex, namespace);
    let selector: Selector;
    try {
      selector = labelSelectorAsSelector(d.spec?.selector);
    } catch (error) {
      // Retrying cannot fix a selector; an edit of the Deployment syncs it again.
      throw new TerminalError(
        `deployment ${namespace}/${name} has invalid label selector: ${errorMessage(error)}`,
      );
    }
    const canAdopt = recheckDeletionTimestamp(async () => {
      const fresh = await this.#client.resource(deployments, namespace).get(name, signalOption(signal));
      if (fresh.metadata?.uid !== d.metadata?.uid) {
        throw new Error(
          `original Deployment ${namespace}/${name} is gone: got uid ${fresh.metadata?.uid}, wanted ${d.metadata?.uid}`,
        );
      }
      return fresh;
    });
    const manager = new ReplicaSetControllerRefManager({
      replicaSetControl: new ClientReplicaSetControl({ client: this.#client }),
      controller: d,
      controllerKind: { apiVersion: "apps/v1", kind: "Deployment" },
      selector,
      canAdopt,
    });
    const { claimed, errors } = await manager.claimReplicaSets(rsList);
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, errors.map((e) => e.message).join("; "));
    return claimed;
  }

  /**
   * The Deployment's pods by the uid of their controlling ReplicaSet, every
   * claimed ReplicaSet present (empty when it has no pods); terminal pods included.
   */
  #getPodMapForDeployment(d: DeepReadonly<Deployment>, rsList: readonly AnyReplicaSet[]): PodMap {
    const podMap = new Map<string, DeepReadonly<Pod>[]>();
    for (const rs of rsList) podMap.set(rs.metadata?.uid ?? "", []);
    let selector: Selector;
    try {
      selector = labelSelectorAsSelector(d.spec?.selector);
    } catch {
      return podMap;
    }
    for (const pod of this.#podInformer.getIndexer().byIndex(namespaceIndex, d.metadata?.namespace ?? "")) {
      if (!selector.matches(pod.metadata?.labels)) continue;
      const ref = getControllerOf(pod);
      if (ref === undefined) continue;
      podMap.get(ref.uid)?.push(pod);
    }
    return podMap;
  }

  /** Deployments whose non-empty selector matches the ReplicaSet's labels (upstream `GetDeploymentsForReplicaSet`). */
  #getDeploymentsForReplicaSet(rs: DeepReadonly<KubeObject>): DeepReadonly<Deployment>[] {
    const matching = ownersSelecting<Deployment>(this.#dInformer.getIndexer(), rs);
    if (matching.length > 1) {
      this.#harness.logger.warn(
        {
          namespace: rs.metadata?.namespace,
          replicaSet: rs.metadata?.name,
          deployments: matching.map((d) => d.metadata?.name),
        },
        "user error! more than one deployment is selecting replica set",
      );
    }
    return matching;
  }

  #enqueue(d: DeepReadonly<Deployment>, reason: string): void {
    this.#harness.enqueue(metaNamespaceKeyFunc(d), reason);
  }
}

function namespacedKey(namespace: string, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

function signalOption(signal: AbortSignal | undefined): { signal?: AbortSignal } {
  return signal === undefined ? {} : { signal };
}
