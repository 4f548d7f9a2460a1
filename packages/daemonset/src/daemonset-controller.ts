import { setMaxListeners } from "node:events";
import {
  type ControllerRevision,
  controllerRevisions,
  type DaemonSet,
  type DeepReadonly,
  daemonSets,
  getControllerOf,
  hasStatusCause,
  isConflict,
  isNotFound,
  isPodAvailable,
  isPodReady,
  labelSelectorAsSelector,
  metaNamespaceKeyFunc,
  type Node,
  nodes,
  type Pod,
  pods,
  type RunOptions,
} from "@reconcile/api";
import type { Client } from "@reconcile/client";
import {
  Backoff,
  ClientPodControl,
  type ControllerContext,
  type ControllerHarness,
  type ControllerInformer,
  ControllerRevisionControllerRefManager,
  defineController,
  ensureIndex,
  objectFromTombstone,
  ownerEventHandler,
  ownersSelecting,
  type PodControl,
  PodControllerRefManager,
  recheckDeletionTimestamp,
  type SyncContext,
  type SyncResult,
  slowStartBatch,
} from "@reconcile/controller";
import { ControllerExpectations, outstandingOf } from "@reconcile/expectations";
import type { DaemonSetStatus } from "kubernetes-types/apps/v1.js";
import { cleanupHistory, constructHistory } from "./daemonset-history.js";
import {
  byCreationTimestampAndPhase,
  controllerKind,
  createPodTemplate,
  daemonSetRevisionLabel,
  isPodUpdated,
  nodeShouldRunDaemonPod,
  replaceNodeNameAffinity,
  targetNodeName,
  templateGeneration,
} from "./daemonset-util.js";
import { shouldIgnoreNodeUpdate } from "./node-events.js";
import { rollingUpdateStep } from "./rolling-update.js";

type DS = DeepReadonly<DaemonSet>;
type AnyPod = DeepReadonly<Pod>;

/** An index holding every object under "", for the DaemonSets and nodes a node event concerns. */
const everything = "daemonsetAll";

export interface DaemonSetControllerOptions extends ControllerContext {
  /** Writes pods, revisions, DaemonSet status and Events. Required. */
  client: Client;
  podInformer: ControllerInformer<Pod>;
  daemonSetInformer: ControllerInformer<DaemonSet>;
  controllerRevisionInformer: ControllerInformer<ControllerRevision>;
  nodeInformer: ControllerInformer<Node>;
  /** Default: `ClientPodControl` over `client`, recording Events as "daemonset-controller". */
  podControl?: PodControl | undefined;
  /** Most pods one sync creates or deletes (upstream `BurstReplicas`). Default 250. */
  burstReplicas?: number | undefined;
}

/**
 * The DaemonSet controller (upstream `pkg/controller/daemon`): one pod per
 * node the DaemonSet's template fits (node selector, required affinity,
 * taints it tolerates, with the tolerations every daemon pod gets), placed
 * by the scheduler through a `metadata.name` node affinity; pods on nodes it
 * no longer fits are deleted, failed ones replaced after a backoff. The
 * template history is kept in ControllerRevisions, and a RollingUpdate
 * replaces old pods within `maxUnavailable`, or beside them within `maxSurge`.
 */
export class DaemonSetController {
  readonly expectations: ControllerExpectations;
  readonly #harness: ControllerHarness<string>;
  readonly #client: Client;
  readonly #podInformer: ControllerInformer<Pod>;
  readonly #dsInformer: ControllerInformer<DaemonSet>;
  readonly #revisionInformer: ControllerInformer<ControllerRevision>;
  readonly #nodeInformer: ControllerInformer<Node>;
  readonly #podControl: PodControl;
  readonly #burst: number;
  /** Per DaemonSet and node: the backoff before a failed pod there is deleted again. */
  readonly #failedPodsBackoff: Backoff;

  constructor(options: DaemonSetControllerOptions) {
    const { client, podInformer, daemonSetInformer, controllerRevisionInformer, nodeInformer, podControl } =
      options ?? {};
    this.#harness = defineController({
      name: "daemonset",
      owner: "DaemonSetsController",
      context: options,
      required: { client, podInformer, daemonSetInformer, controllerRevisionInformer, nodeInformer },
      events: { component: "daemonset-controller", client },
      informers: {
        pods: podInformer,
        daemonsets: daemonSetInformer,
        controllerrevisions: controllerRevisionInformer,
        nodes: nodeInformer,
      },
      queues: [{ name: "daemonset", workers: 2, sync: (key, context) => this.syncDaemonSet(key, context) }],
      inspect: () => ({ expectations: outstandingOf(this.expectations) }),
    });
    [this.#client, this.#podInformer, this.#dsInformer] = [client, podInformer, daemonSetInformer];
    [this.#revisionInformer, this.#nodeInformer] = [controllerRevisionInformer, nodeInformer];
    this.#podControl = podControl ?? new ClientPodControl({ client, recorder: this.#harness.recorder });
    this.#burst = options.burstReplicas ?? 250;
    this.expectations = new ControllerExpectations({ clock: this.#harness.clock });
    this.#failedPodsBackoff = new Backoff(this.#harness.clock, 1_000, 15 * 60_000);
    this.#addEventHandlers();
  }

  static fromInformerFactory(
    factory: {
      forResource(resource: typeof pods): ControllerInformer<Pod>;
      forResource(resource: typeof daemonSets): ControllerInformer<DaemonSet>;
      forResource(resource: typeof controllerRevisions): ControllerInformer<ControllerRevision>;
      forResource(resource: typeof nodes): ControllerInformer<Node>;
    },
    options: Omit<
      DaemonSetControllerOptions,
      "podInformer" | "daemonSetInformer" | "controllerRevisionInformer" | "nodeInformer"
    >,
  ): DaemonSetController {
    return new DaemonSetController({
      ...options,
      podInformer: factory.forResource(pods),
      daemonSetInformer: factory.forResource(daemonSets),
      controllerRevisionInformer: factory.forResource(controllerRevisions),
      nodeInformer: factory.forResource(nodes),
    });
  }

  /** Waits for the caches, then runs the workers until `signal` aborts. */
  run(options: RunOptions & { workers?: number | undefined }): Promise<void> {
    return this.#harness.run(options);
  }

  #enqueue(ds: DS, reason: string): void {
    this.#harness.enqueue(metaNamespaceKeyFunc(ds), reason);
  }

  #addEventHandlers(): void {
    ensureIndex(this.#dsInformer.getIndexer(), everything, () => [""]);
    ensureIndex(this.#nodeInformer.getIndexer(), everything, () => [""]);
    this.#dsInformer.addEventHandler({
      onAdd: (ds) => this.#enqueue(ds, "DaemonSet added"),
      onUpdate: (_old, ds) => this.#enqueue(ds, "DaemonSet updated"),
      onDelete: (obj) => {
        const ds = objectFromTombstone(obj);
        if (ds?.metadata === undefined) return;
        this.expectations.deleteExpectations(metaNamespaceKeyFunc(ds));
        this.#enqueue(ds, "DaemonSet deleted");
      },
    });
    this.#revisionInformer.addEventHandler(
      ownerEventHandler<ControllerRevision, DaemonSet>({
        ownerKind: { kind: controllerKind.kind, group: "apps" },
        owners: this.#dsInformer.getIndexer(),
        childKind: "ControllerRevision",
        enqueue: (key, _ds, reason) => this.#harness.enqueue(key, reason),
        ownersOfOrphan: (revision) => ownersSelecting<DaemonSet>(this.#dsInformer.getIndexer(), revision),
      }),
    );
    const podHandler = ownerEventHandler<Pod, DaemonSet>({
      ownerKind: { kind: controllerKind.kind, group: "apps" },
      owners: this.#dsInformer.getIndexer(),
      childKind: "Pod",
      enqueue: (key, _ds, reason) => this.#harness.enqueue(key, reason),
      observe: {
        created: (key) => this.expectations.creationObserved(key),
        deleted: (key) => this.expectations.deletionObserved(key),
      },
      ownersOfOrphan: (pod) => ownersSelecting<DaemonSet>(this.#dsInformer.getIndexer(), pod),
    });
    this.#podInformer.addEventHandler({
      onAdd: (pod, initial) => podHandler.onAdd?.(pod, initial),
      onDelete: (obj) => podHandler.onDelete?.(obj),
      onUpdate: (oldPod, pod) => {
        podHandler.onUpdate?.(oldPod, pod);
        if (isPodReady(oldPod) || !isPodReady(pod)) return;
        const ref = getControllerOf(pod);
        if (ref?.kind !== controllerKind.kind) return;
        const key = `${pod.metadata?.namespace ?? ""}/${ref.name}`;
        const minReady = this.#dsInformer.getIndexer().getByKey(key)?.spec?.minReadySeconds ?? 0;
        if (minReady > 0) this.#harness.enqueueAfter(key, minReady * 1000 + 1000, "minReadySeconds passed");
      },
    });
    this.#nodeInformer.addEventHandler({
      onAdd: (node) => {
        for (const ds of this.#daemonSets())
          if (nodeShouldRunDaemonPod(node, ds).shouldRun) this.#enqueue(ds, "Node added");
      },
      onUpdate: (oldNode, node) => {
        if (shouldIgnoreNodeUpdate(oldNode, node)) return;
        for (const ds of this.#daemonSets()) {
          const before = nodeShouldRunDaemonPod(oldNode, ds);
          const after = nodeShouldRunDaemonPod(node, ds);
          if (
            before.shouldRun !== after.shouldRun ||
            before.shouldContinueRunning !== after.shouldContinueRunning
          )
            this.#enqueue(ds, "Node changed");
        }
      },
      onDelete: () => {
        for (const ds of this.#daemonSets()) this.#enqueue(ds, "Node deleted");
      },
    });
  }

  #daemonSets(): DS[] {
    return this.#dsInformer.getIndexer().byIndex(everything, "");
  }

  #nodes(): DeepReadonly<Node>[] {
    return this.#nodeInformer.getIndexer().byIndex(everything, "");
  }

  /** Reconciles one DaemonSet (upstream `syncDaemonSet`). */
  async syncDaemonSet(key: string, context: Partial<SyncContext> = {}): Promise<SyncResult> {
    const { signal } = context;
    if (signal !== undefined) setMaxListeners(0, signal);
    const ds = this.#dsInformer.getIndexer().getByKey(key);
    if (ds === undefined) {
      this.expectations.deleteExpectations(key);
      return;
    }
    const selector = ds.spec?.selector;
    if (
      selector === undefined ||
      (Object.keys(selector.matchLabels ?? {}).length === 0 && (selector.matchExpressions ?? []).length === 0)
    ) {
      this.#harness.recorder.event(
        ds,
        "Warning",
        "SelectingAll",
        "This daemon set is selecting all pods. A non-empty selector is required.",
      );
      return;
    }
    if (ds.metadata?.deletionTimestamp != null) return;
    const canAdopt = this.#canAdopt(ds, signal);
    const claimed = await this.#claimPods(ds, canAdopt, signal);
    const revisions = await this.#claimRevisions(ds, canAdopt, signal);
    const { current, old } = await constructHistory(this.#client, ds, revisions, claimed, signal);
    const hash = current.metadata?.labels?.[daemonSetRevisionLabel] ?? "";
    const nodeList = this.#nodes();
    if (!this.expectations.satisfiedExpectations(key))
      return this.#updateStatus(ds, nodeList, claimed, hash, false, signal);
    await this.#manage(key, ds, nodeList, claimed, hash, signal);
    if (this.expectations.satisfiedExpectations(key) && ds.spec?.updateStrategy?.type === "RollingUpdate") {
      const step = rollingUpdateStep(
        ds,
        nodeList,
        this.#nodeToPods(claimed),
        hash,
        this.#harness.clock.now(),
      );
      await this.#syncNodes(key, ds, step.podsToDelete, step.nodesNeedingPods, hash, signal);
    }
    await cleanupHistory(this.#client, ds, old, claimed, signal);
    return this.#updateStatus(ds, nodeList, claimed, hash, true, signal);
  }

  #canAdopt(ds: DS, signal: AbortSignal | undefined) {
    const namespace = ds.metadata?.namespace ?? "";
    const name = ds.metadata?.name ?? "";
    return recheckDeletionTimestamp(async () => {
      const fresh = await this.#client.resource(daemonSets, namespace).get(name, { signal });
      if (fresh.metadata?.uid !== ds.metadata?.uid)
        throw new Error(
          `original DaemonSet ${namespace}/${name} is gone: got uid ${fresh.metadata?.uid}, wanted ${ds.metadata?.uid}`,
        );
      return fresh;
    });
  }

  async #claimPods(
    ds: DS,
    canAdopt: () => Promise<void>,
    signal: AbortSignal | undefined,
  ): Promise<AnyPod[]> {
    const manager = new PodControllerRefManager({
      podControl: this.#podControl,
      controller: ds,
      controllerKind,
      selector: labelSelectorAsSelector(ds.spec?.selector),
      canAdopt,
      signal,
    });
    const { claimed, errors } = await manager.claimPods(
      this.#podInformer.getIndexer().byIndex("namespace", ds.metadata?.namespace ?? ""),
    );
    if (errors.length > 0)
      throw errors.length === 1
        ? errors[0]
        : new AggregateError(errors, errors.map((e) => e.message).join("; "));
    return claimed;
  }

  async #claimRevisions(ds: DS, canAdopt: () => Promise<void>, signal: AbortSignal | undefined) {
    const manager = new ControllerRevisionControllerRefManager({
      client: this.#client,
      controller: ds,
      controllerKind,
      selector: labelSelectorAsSelector(ds.spec?.selector),
      canAdopt,
      signal,
    });
    const { claimed, errors } = await manager.claimControllerRevisions(
      this.#revisionInformer.getIndexer().byIndex("namespace", ds.metadata?.namespace ?? ""),
    );
    if (errors.length > 0) throw errors[0];
    return claimed;
  }

  /** The daemon pods by the node each is for; terminal pods being deleted are left out (upstream `getNodesToDaemonPods`). */
  #nodeToPods(claimed: readonly AnyPod[]): Map<string, AnyPod[]> {
    const byNode = new Map<string, AnyPod[]>();
    for (const pod of claimed) {
      const phase = pod.status?.phase;
      if ((phase === "Succeeded" || phase === "Failed") && pod.metadata?.deletionTimestamp != null) continue;
      const node = targetNodeName(pod);
      if (node === undefined) continue;
      const list = byNode.get(node);
      if (list === undefined) byNode.set(node, [pod]);
      else list.push(pod);
    }
    return byNode;
  }

  /** Creates the missing daemon pods and deletes the ones that must go (upstream `manage`). */
  async #manage(
    key: string,
    ds: DS,
    nodeList: readonly DeepReadonly<Node>[],
    claimed: readonly AnyPod[],
    hash: string,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const nodeToPods = this.#nodeToPods(claimed);
    const needing: string[] = [];
    const toDelete: string[] = [];
    for (const node of nodeList) {
      const result = this.#podsShouldBeOnNode(ds, node, nodeToPods.get(node.metadata?.name ?? ""), hash);
      needing.push(...result.needing);
      toDelete.push(...result.toDelete);
    }
    // Unscheduled pods for nodes that are gone (scheduled ones are the pod GC's).
    const names = new Set(nodeList.map((node) => node.metadata?.name));
    for (const [node, list] of nodeToPods)
      if (!names.has(node))
        for (const pod of list) if (!pod.spec?.nodeName) toDelete.push(pod.metadata?.name ?? "");
    await this.#syncNodes(key, ds, toDelete, needing, hash, signal);
  }

  /** What one node needs: a pod made, or pods deleted (upstream `podsShouldBeOnNode`). */
  #podsShouldBeOnNode(
    ds: DS,
    node: DeepReadonly<Node>,
    onNode: AnyPod[] | undefined,
    hash: string,
  ): { needing: string[]; toDelete: string[] } {
    const nodeName = node.metadata?.name ?? "";
    const { shouldRun, shouldContinueRunning } = nodeShouldRunDaemonPod(node, ds);
    if (shouldRun && onNode === undefined) return { needing: [nodeName], toDelete: [] };
    if (!shouldContinueRunning)
      return {
        needing: [],
        toDelete: (onNode ?? [])
          .filter((p) => p.metadata?.deletionTimestamp == null)
          .map((p) => p.metadata?.name ?? ""),
      };
    const toDelete: string[] = [];
    const running: AnyPod[] = [];
    for (const pod of onNode ?? []) {
      if (pod.metadata?.deletionTimestamp != null) continue;
      if (pod.status?.phase === "Failed") {
        // Kubelets reject some pods: back off rather than fight them in a hot loop.
        const backoffKey = `${ds.metadata?.uid}/${ds.metadata?.generation}/${nodeName}`;
        if (this.#failedPodsBackoff.isInBackOffSinceUpdate(backoffKey)) {
          this.#harness.enqueueAfter(
            metaNamespaceKeyFunc(ds),
            this.#failedPodsBackoff.get(backoffKey),
            "failed pod backoff",
          );
          continue;
        }
        this.#failedPodsBackoff.next(backoffKey, this.#harness.clock.now());
        this.#harness.recorder.event(
          ds,
          "Warning",
          "FailedDaemonPod",
          `Found failed daemon pod ${pod.metadata?.namespace}/${pod.metadata?.name} on node ${nodeName}, will try to kill it`,
        );
        toDelete.push(pod.metadata?.name ?? "");
      } else if (pod.status?.phase === "Succeeded") {
        toDelete.push(pod.metadata?.name ?? "");
      } else running.push(pod);
    }
    if (running.length <= 1) return { needing: [], toDelete };
    running.sort(byCreationTimestampAndPhase);
    if (
      ds.spec?.updateStrategy?.rollingUpdate?.maxSurge === undefined ||
      ds.spec.updateStrategy.type !== "RollingUpdate" ||
      isZero(ds.spec.updateStrategy.rollingUpdate.maxSurge)
    ) {
      for (const pod of running.slice(1)) toDelete.push(pod.metadata?.name ?? "");
      return { needing: [], toDelete };
    }
    // Surging: keep the oldest new pod, and the oldest old pod until the new one is available.
    let oldestNew: AnyPod | undefined;
    let oldestOld: AnyPod | undefined;
    for (const pod of running) {
      const isNew = pod.metadata?.labels?.[daemonSetRevisionLabel] === hash;
      if (isNew && oldestNew === undefined) oldestNew = pod;
      else if (!isNew && oldestOld === undefined) oldestOld = pod;
      else toDelete.push(pod.metadata?.name ?? "");
    }
    if (oldestNew !== undefined && oldestOld !== undefined) {
      const now = this.#harness.clock.now();
      if (!isPodReady(oldestOld) || isPodAvailable(oldestNew, ds.spec?.minReadySeconds ?? 0, now))
        toDelete.push(oldestOld.metadata?.name ?? "");
    }
    return { needing: [], toDelete };
  }

  /** Creates pods on `nodesNeedingPods` in slow-start batches and deletes `podsToDelete`, each at most `burstReplicas` (upstream `syncNodes`). */
  async #syncNodes(
    key: string,
    ds: DS,
    podsToDelete: readonly string[],
    nodesNeedingPods: readonly string[],
    hash: string,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const createDiff = Math.min(nodesNeedingPods.length, this.#burst);
    const deleteDiff = Math.min(podsToDelete.length, this.#burst);
    this.expectations.setExpectations(key, createDiff, deleteDiff);
    const template = createPodTemplate(ds, hash);
    const meta = ds.metadata ?? {};
    const ref = {
      ...controllerKind,
      name: meta.name ?? "",
      uid: meta.uid ?? "",
      controller: true,
      blockOwnerDeletion: true,
    };
    const namespace = meta.namespace ?? "";
    const errors: unknown[] = [];
    const { successes, error } = await slowStartBatch(createDiff, 1, async (i) => {
      const podTemplate = structuredClone(template);
      podTemplate.spec!.affinity = replaceNodeNameAffinity(podTemplate.spec!.affinity, nodesNeedingPods[i]!);
      try {
        await this.#podControl.createPods(namespace, podTemplate, ds, ref, { signal });
      } catch (failure) {
        if (hasStatusCause(failure, "NamespaceTerminating")) return;
        this.expectations.creationObserved(key);
        throw failure;
      }
    });
    if (error !== undefined) {
      errors.push(error);
      // Creations never attempted are not expected; the next sync tries again.
      const attempted = Math.min(createDiff, nextBatchEnd(successes + 1));
      const skipped = createDiff - attempted;
      if (skipped > 0) this.expectations.lowerExpectations(key, skipped, 0);
    }
    await Promise.all(
      podsToDelete.slice(0, deleteDiff).map(async (name) => {
        try {
          await this.#podControl.deletePod(namespace, name, ds, { signal });
        } catch (failure) {
          this.expectations.deletionObserved(key);
          if (!isNotFound(failure)) errors.push(failure);
        }
      }),
    );
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, errors.map((e) => String(e)).join("; "));
  }

  /** Counts the DaemonSet's pods into its status and writes it when it changed (upstream `updateDaemonSetStatus`). */
  async #updateStatus(
    ds: DS,
    nodeList: readonly DeepReadonly<Node>[],
    claimed: readonly AnyPod[],
    hash: string,
    updateObservedGeneration: boolean,
    signal: AbortSignal | undefined,
  ): Promise<SyncResult> {
    const nodeToPods = this.#nodeToPods(claimed);
    const now = this.#harness.clock.now();
    const minReady = ds.spec?.minReadySeconds ?? 0;
    const generation = templateGeneration(ds);
    let [desired, current, misscheduled, ready, available, updated] = [0, 0, 0, 0, 0, 0];
    for (const node of nodeList) {
      const onNode = nodeToPods.get(node.metadata?.name ?? "") ?? [];
      if (!nodeShouldRunDaemonPod(node, ds).shouldRun) {
        if (onNode.length > 0) misscheduled++;
        continue;
      }
      desired++;
      if (onNode.length === 0) continue;
      current++;
      const pod = [...onNode].sort(byCreationTimestampAndPhase)[0]!;
      if (isPodReady(pod)) {
        ready++;
        if (isPodAvailable(pod, minReady, now)) available++;
      }
      if (isPodUpdated(pod, hash, generation)) updated++;
    }
    const status: DaemonSetStatus = {
      ...(ds.status?.collisionCount !== undefined ? { collisionCount: ds.status.collisionCount } : {}),
      currentNumberScheduled: current,
      desiredNumberScheduled: desired,
      numberAvailable: available,
      numberMisscheduled: misscheduled,
      numberReady: ready,
      numberUnavailable: desired - available,
      observedGeneration: updateObservedGeneration
        ? (ds.metadata?.generation ?? 0)
        : (ds.status?.observedGeneration ?? 0),
      updatedNumberScheduled: updated,
    };
    await this.#storeStatus(ds, status, signal);
    return minReady > 0 && ready !== available ? { requeueAfterMs: minReady * 1000 } : undefined;
  }

  async #storeStatus(ds: DS, status: DaemonSetStatus, signal: AbortSignal | undefined): Promise<void> {
    const old = ds.status;
    const same = (Object.keys(status) as (keyof DaemonSetStatus)[]).every(
      (field) => old?.[field] === status[field],
    );
    if (same) return;
    const api = this.#client.resource(daemonSets, ds.metadata?.namespace ?? "");
    try {
      await api.updateStatus({ ...(structuredClone(ds) as DaemonSet), status }, { signal });
    } catch (error) {
      if (!isConflict(error)) throw error;
      // One retry on a fresh read (upstream `StatusUpdateRetries`).
      const fresh = await api.get(ds.metadata?.name ?? "", { signal });
      await api.updateStatus(
        {
          ...fresh,
          status: {
            ...status,
            ...(fresh.status?.collisionCount !== undefined
              ? { collisionCount: fresh.status.collisionCount }
              : {}),
          },
        },
        { signal },
      );
    }
  }
}

function isZero(value: DeepReadonly<number | string>): boolean {
  return value === 0 || value === "0" || value === "0%";
}

/** Where the slow-start batch that held call number `n` (1-based) ended: 1, 3, 7, 15, … */
function nextBatchEnd(n: number): number {
  let end = 0;
  for (let size = 1; end < n; size *= 2) end += size;
  return end;
}
