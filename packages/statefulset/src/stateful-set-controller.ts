import { setMaxListeners } from "node:events";
import {
  type ControllerRevision,
  controllerRevisions,
  type DeepReadonly,
  getControllerOf,
  isConflict,
  isPodReady,
  labelSelectorAsSelector,
  metaNamespaceKeyFunc,
  type Pod,
  persistentVolumeClaims,
  pods,
  type RunOptions,
  type StatefulSet,
  statefulSets,
} from "@reconcile/api";
import type { Client } from "@reconcile/client";
import {
  ClientPodControl,
  type ControllerContext,
  type ControllerHarness,
  type ControllerInformer,
  ControllerRevisionHistory,
  defineController,
  objectFromTombstone,
  ownerEventHandler,
  ownersSelecting,
  PodControllerRefManager,
  recheckDeletionTimestamp,
  type SyncContext,
  type SyncResult,
} from "@reconcile/controller";
import type { StatefulSetStatus } from "kubernetes-types/apps/v1.js";
import type { PersistentVolumeClaim } from "kubernetes-types/core/v1.js";
import { StatefulPodControl } from "./stateful-pod-control.js";
import { StatefulSetControl } from "./stateful-set-control.js";
import {
  completeRollingUpdate,
  controllerKind,
  inconsistentStatus,
  isMemberOf,
} from "./stateful-set-utils.js";

export interface StatefulSetControllerOptions extends ControllerContext {
  /** Writes pods, claims, revisions, StatefulSet status and Events. Required. */
  client: Client;
  podInformer: ControllerInformer<Pod>;
  statefulSetInformer: ControllerInformer<StatefulSet>;
  controllerRevisionInformer: ControllerInformer<ControllerRevision>;
  persistentVolumeClaimInformer: ControllerInformer<PersistentVolumeClaim>;
  /**
   * Honour `updateStrategy.rollingUpdate.maxUnavailable` (the
   * MaxUnavailableStatefulSet feature, alpha and off in Kubernetes 1.32,
   * where a rolling update replaces one pod at a time). Default false.
   */
  maxUnavailable?: boolean | undefined;
}

/**
 * The StatefulSet controller (upstream `pkg/controller/statefulset`): pods
 * named `<set>-<ordinal>` with stable hostnames under the set's Service,
 * made in ordinal order and each waited on to be Running and Ready
 * (OrderedReady) or all at once (Parallel), claims from
 * `volumeClaimTemplates` made before their pod and kept or deleted as the
 * retention policy says, and rolling updates from the highest ordinal down
 * to the partition, with the template history in ControllerRevisions.
 */
export class StatefulSetController {
  readonly #harness: ControllerHarness<string>;
  readonly #client: Client;
  readonly #podInformer: ControllerInformer<Pod>;
  readonly #setInformer: ControllerInformer<StatefulSet>;
  readonly #control: StatefulSetControl;
  readonly #podControl: StatefulPodControl;
  readonly #history: ControllerRevisionHistory;
  /** Per set key, the resourceVersion of the last status this controller wrote. */
  readonly #written = new Map<string, number>();

  constructor(options: StatefulSetControllerOptions) {
    const { client, podInformer, statefulSetInformer, controllerRevisionInformer } = options ?? {};
    const { persistentVolumeClaimInformer } = options ?? {};
    this.#harness = defineController({
      name: "statefulset",
      owner: "StatefulSetController",
      context: options,
      required: {
        client,
        podInformer,
        statefulSetInformer,
        controllerRevisionInformer,
        persistentVolumeClaimInformer,
      },
      events: { component: "statefulset-controller", client },
      informers: {
        pods: podInformer,
        statefulsets: statefulSetInformer,
        controllerrevisions: controllerRevisionInformer,
        persistentvolumeclaims: persistentVolumeClaimInformer,
      },
      queues: [{ name: "statefulset", workers: 5, sync: (key, context) => this.sync(key, context) }],
    });
    [this.#client, this.#podInformer, this.#setInformer] = [client, podInformer, statefulSetInformer];
    this.#history = new ControllerRevisionHistory({
      client,
      indexer: controllerRevisionInformer.getIndexer(),
    });
    this.#podControl = new StatefulPodControl({
      client,
      recorder: this.#harness.recorder,
      pods: podInformer.getIndexer(),
      claims: persistentVolumeClaimInformer.getIndexer(),
    });
    this.#control = new StatefulSetControl({
      podControl: this.#podControl,
      history: this.#history,
      now: () => this.#harness.clock.now(),
      maxUnavailable: options.maxUnavailable ?? false,
    });
    this.#addEventHandlers();
  }

  static fromInformerFactory(
    factory: {
      forResource(resource: typeof pods): ControllerInformer<Pod>;
      forResource(resource: typeof statefulSets): ControllerInformer<StatefulSet>;
      forResource(resource: typeof controllerRevisions): ControllerInformer<ControllerRevision>;
      forResource(resource: typeof persistentVolumeClaims): ControllerInformer<PersistentVolumeClaim>;
    },
    options: Omit<
      StatefulSetControllerOptions,
      "podInformer" | "statefulSetInformer" | "controllerRevisionInformer" | "persistentVolumeClaimInformer"
    >,
  ): StatefulSetController {
    return new StatefulSetController({
      ...options,
      podInformer: factory.forResource(pods),
      statefulSetInformer: factory.forResource(statefulSets),
      controllerRevisionInformer: factory.forResource(controllerRevisions),
      persistentVolumeClaimInformer: factory.forResource(persistentVolumeClaims),
    });
  }

  /** Waits for the caches, then runs the workers until `signal` aborts. */
  run(options: RunOptions & { workers?: number | undefined }): Promise<void> {
    return this.#harness.run(options);
  }

  #addEventHandlers(): void {
    this.#setInformer.addEventHandler({
      onAdd: (set) => this.#harness.enqueue(metaNamespaceKeyFunc(set), "StatefulSet added"),
      onUpdate: (_old, set) => this.#harness.enqueue(metaNamespaceKeyFunc(set), "StatefulSet updated"),
      onDelete: (obj) => {
        const set = objectFromTombstone(obj);
        if (set?.metadata === undefined) return;
        this.#written.delete(metaNamespaceKeyFunc(set));
        this.#harness.enqueue(metaNamespaceKeyFunc(set), "StatefulSet deleted");
      },
    });
    const handler = ownerEventHandler<Pod, StatefulSet>({
      ownerKind: { kind: controllerKind.kind, group: "apps" },
      owners: this.#setInformer.getIndexer(),
      childKind: "Pod",
      enqueue: (key, _set, reason) => this.#harness.enqueue(key, reason),
      ownersOfOrphan: (pod) => ownersSelecting<StatefulSet>(this.#setInformer.getIndexer(), pod),
    });
    this.#podInformer.addEventHandler({
      onAdd: (pod, initial) => handler.onAdd?.(pod, initial),
      onDelete: (obj) => handler.onDelete?.(obj),
      onUpdate: (oldPod, pod) => {
        handler.onUpdate?.(oldPod, pod);
        // A pod that just became ready is available minReadySeconds later: look again then.
        if (isPodReady(oldPod) || !isPodReady(pod)) return;
        const ref = getControllerOf(pod);
        if (ref?.kind !== controllerKind.kind) return;
        const key = `${pod.metadata?.namespace ?? ""}/${ref.name}`;
        const set = this.#setInformer.getIndexer().getByKey(key);
        const minReady = set?.spec?.minReadySeconds ?? 0;
        if (set?.metadata?.uid === ref.uid && minReady > 0)
          this.#harness.enqueueAfter(key, minReady * 1000 + 1000, "minReadySeconds passed");
      },
    });
  }

  /** Reconciles one StatefulSet (upstream `sync` and `syncStatefulSet`). */
  async sync(key: string, context: Partial<SyncContext> = {}): Promise<SyncResult> {
    const { signal } = context;
    if (signal !== undefined) setMaxListeners(0, signal);
    const set = this.#setInformer.getIndexer().getByKey(key);
    if (set === undefined) {
      this.#written.delete(key);
      return;
    }
    // A cache older than our own last status write would count pods created since twice.
    if (Number(set.metadata?.resourceVersion) < (this.#written.get(key) ?? 0)) return;
    const canAdopt = this.#canAdopt(set, signal);
    await this.#adoptOrphanRevisions(set, canAdopt, signal);
    const claimed = await this.#claimPods(set, canAdopt, signal);
    const { status, error } = await this.#control.update(set, claimed, signal);
    await this.#writeStatus(key, set, status, signal);
    if (error !== undefined) throw error;
    const minReady = set.spec?.minReadySeconds ?? 0;
    if (minReady > 0 && status.availableReplicas !== (set.spec?.replicas ?? 1))
      return { requeueAfterMs: minReady * 1000 };
    return undefined;
  }

  #canAdopt(set: DeepReadonly<StatefulSet>, signal: AbortSignal | undefined) {
    const namespace = set.metadata?.namespace ?? "";
    const name = set.metadata?.name ?? "";
    return recheckDeletionTimestamp(async () => {
      const fresh = await this.#client.resource(statefulSets, namespace).get(name, { signal });
      if (fresh.metadata?.uid !== set.metadata?.uid)
        throw new Error(
          `original StatefulSet ${namespace}/${name} is gone: got uid ${fresh.metadata?.uid}, wanted ${set.metadata?.uid}`,
        );
      return fresh;
    });
  }

  async #adoptOrphanRevisions(
    set: DeepReadonly<StatefulSet>,
    canAdopt: () => Promise<void>,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const orphans = this.#control
      .listRevisions(set)
      .filter((revision) => getControllerOf(revision) === undefined);
    if (orphans.length === 0) return;
    try {
      await canAdopt();
    } catch (error) {
      throw new Error(
        `can't adopt ControllerRevisions: ${error instanceof Error ? error.message : String(error)}`,
        {
          cause: error,
        },
      );
    }
    for (const revision of orphans) await this.#history.adopt(set, controllerKind, revision, { signal });
  }

  async #claimPods(
    set: DeepReadonly<StatefulSet>,
    canAdopt: () => Promise<void>,
    signal: AbortSignal | undefined,
  ): Promise<DeepReadonly<Pod>[]> {
    const selector = labelSelectorAsSelector(set.spec?.selector);
    const manager = new PodControllerRefManager({
      podControl: new ClientPodControl({ client: this.#client }),
      controller: set,
      controllerKind,
      selector,
      canAdopt,
      signal,
    });
    const candidates = this.#podInformer.getIndexer().byIndex("namespace", set.metadata?.namespace ?? "");
    const { claimed, errors } = await manager.claimPods(candidates, (pod) => isMemberOf(set, pod));
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, errors.map((e) => e.message).join("; "));
    return claimed;
  }

  /** Writes the status when it changed, finishing a completed rolling update (upstream `updateStatefulSetStatus`). */
  async #writeStatus(
    key: string,
    set: DeepReadonly<StatefulSet>,
    status: StatefulSetStatus,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    completeRollingUpdate(set, status);
    if (!inconsistentStatus(set, status)) return;
    const api = this.#client.resource(statefulSets, set.metadata?.namespace ?? "");
    let current = set;
    for (let attempt = 0; ; attempt++) {
      try {
        const written = await api.updateStatus({ ...structuredClone(current), status } as StatefulSet, {
          signal,
        });
        this.#written.set(key, Number(written.metadata?.resourceVersion));
        return;
      } catch (error) {
        if (!isConflict(error) || attempt >= 9) throw error;
        current = await api.get(set.metadata?.name ?? "", { signal });
      }
    }
  }
}
