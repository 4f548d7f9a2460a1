import {
  type DeepReadonly,
  isNotFound,
  jsonEqual,
  type Node,
  nodes,
  type Pod,
  podKey,
  pods,
  type RunOptions,
  rfc3339,
  splitMetaNamespaceKey,
} from "@reconcile/api";
import type { Client } from "@reconcile/client";
import {
  type ControllerContext,
  type ControllerHarness,
  type ControllerInformer,
  defineController,
  objectFromTombstone,
} from "@reconcile/controller";
import type { RateLimitingInterface } from "@reconcile/workqueue";
import type { ObjectReference, Taint, Toleration } from "kubernetes-types/core/v1.js";
import { noopTaintEvictionMetrics, type TaintEvictionMetrics } from "./metrics.js";
import { ensureNodeNameIndex, podsOnNode, updatePodCondition } from "./pods.js";
import { getMatchingTolerations, getMinTolerationTimeMs, getNoExecuteTaints } from "./taints.js";
import { TimedWorkerQueue } from "./timed-workers.js";

/** The controller's name in kube-controller-manager and the source of its Events. */
export const taintEvictionControllerName = "taint-eviction-controller";
/** The reason of the Events about scheduled and cancelled deletions. */
export const taintManagerEvictionReason = "TaintManagerEviction";
/** The reason of the `DisruptionTarget` condition set before the deletion. */
export const deletionByTaintManagerReason = "DeletionByTaintManager";

export interface TaintEvictionControllerOptions extends ControllerContext {
  /** Where pods are deleted and their status written. Required. */
  client: Client;
  podInformer: ControllerInformer<Pod>;
  nodeInformer: ControllerInformer<Node>;
  /** The `taint_eviction_controller_*` families. Default: none. (Queues `noexec_taint_node` and `noexec_taint_pod`; Events from `taint-eviction-controller`.) */
  metrics?: TaintEvictionMetrics | undefined;
  /** Attempts of one deletion before it is given up until the next pod or node change (upstream 5). Default 5. */
  deleteRetries?: number | undefined;
  /** Pause between those attempts (upstream 10 ms). Default 10. */
  deleteRetryDelayMs?: number | undefined;
}

/**
 * kube-controller-manager's taint eviction controller
 * (`taint-eviction-controller`, upstream's NoExecute taint manager): a pod
 * bound to a node with a NoExecute taint it does not tolerate is deleted at
 * once; one that tolerates every such taint is deleted when the shortest
 * `tolerationSeconds` of the tolerations it uses runs out (never, if none sets
 * one). When the taints go or the pod comes to tolerate them, the scheduled
 * deletion is cancelled. Before deleting, the pod gets the `DisruptionTarget`
 * condition (reason `DeletionByTaintManager`).
 */
export class TaintEvictionController {
  readonly #client: Client;
  readonly #pods: ControllerInformer<Pod>;
  readonly #nodes: ControllerInformer<Node>;
  readonly #metrics: TaintEvictionMetrics;
  readonly #deleteRetries: number;
  readonly #deleteRetryDelayMs: number;
  /** NoExecute taints of the nodes that have any (upstream `taintedNodes`). */
  readonly #taintedNodes = new Map<string, Taint[]>();
  readonly #harness: ControllerHarness<string>;
  readonly #nodeQueue: RateLimitingInterface<string>;
  readonly #podQueue: RateLimitingInterface<string>;
  readonly #evictions: TimedWorkerQueue;
  /** Pods deleted by this controller since it started (upstream `taint_eviction_controller_pod_deletions_total`). */
  podDeletions = 0;

  constructor(options: TaintEvictionControllerOptions) {
    [this.#client, this.#pods, this.#nodes] = [options.client, options.podInformer, options.nodeInformer];
    this.#metrics = options.metrics ?? noopTaintEvictionMetrics;
    this.#deleteRetries = options.deleteRetries ?? 5;
    this.#deleteRetryDelayMs = options.deleteRetryDelayMs ?? 10;
    this.#harness = defineController({
      name: taintEvictionControllerName,
      context: options,
      events: { component: taintEvictionControllerName, client: options.client },
      informers: { pods: this.#pods, nodes: this.#nodes },
      // Upstream's `UpdateWorkerSize` workers for each queue.
      queues: [
        { name: "noexec_taint_node", workers: 8, sync: async (name) => this.handleNodeUpdate(name) },
        { name: "noexec_taint_pod", workers: "run", sync: async (key) => this.handlePodUpdate(key) },
      ],
      onStop: () => this.#evictions.stop(),
    });
    this.#nodeQueue = this.#harness.queues.get("noexec_taint_node")!;
    this.#podQueue = this.#harness.queues.get("noexec_taint_pod")!;
    this.#evictions = new TimedWorkerQueue({
      clock: this.#harness.clock,
      work: (key, at) => this.#deletePod(key, at),
    });
    this.#addEventHandlers();
  }

  /** Pod and node changes reschedule or cancel the pods' deletions (upstream's handlers). */
  #addEventHandlers(): void {
    ensureNodeNameIndex(this.#pods.getIndexer());
    this.#pods.addEventHandler({
      onAdd: (pod) => this.#podUpdated(undefined, pod),
      onUpdate: (oldPod, pod) => this.#podUpdated(oldPod, pod),
      onDelete: (obj) => this.#podUpdated(objectFromTombstone(obj), undefined),
    });
    this.#nodes.addEventHandler({
      onAdd: (node) => this.#nodeUpdated(undefined, node),
      onUpdate: (oldNode, node) => this.#nodeUpdated(oldNode, node),
      onDelete: (obj) => this.#nodeUpdated(objectFromTombstone(obj), undefined),
    });
  }

  /** Builds the controller on a `SharedInformerFactory`: its pod and Node informers. */
  static fromInformerFactory(
    factory: {
      forResource(resource: typeof pods): ControllerInformer<Pod>;
      forResource(resource: typeof nodes): ControllerInformer<Node>;
    },
    options: Omit<TaintEvictionControllerOptions, "podInformer" | "nodeInformer">,
  ): TaintEvictionController {
    return new TaintEvictionController({
      ...options,
      podInformer: factory.forResource(pods),
      nodeInformer: factory.forResource(nodes),
    });
  }

  /**
   * Waits for the caches, then handles node and pod changes (default 8
   * workers each, upstream `UpdateWorkerSize`) until `signal` aborts; pending
   * deletions are cancelled and running ones awaited before it settles.
   */
  run(options: RunOptions & { workers?: number | undefined }): Promise<void> {
    return this.#harness.run(options);
  }

  /** Keys (`namespace/name`) of the pods whose deletion is scheduled and not yet due. */
  scheduledEvictions(): string[] {
    return this.#evictions.scheduledKeys();
  }

  /** Re-reads a node's NoExecute taints and (re)schedules or cancels its pods' deletions (upstream `handleNodeUpdate`). */
  handleNodeUpdate(nodeName: string): void {
    const node = this.#nodes.getIndexer().getByKey(nodeName);
    if (node === undefined) {
      this.#taintedNodes.delete(nodeName);
      return;
    }
    const taints = getNoExecuteTaints(node.spec?.taints);
    if (taints.length === 0) this.#taintedNodes.delete(nodeName);
    else this.#taintedNodes.set(nodeName, taints);
    // The taints are recorded before the pods are listed: a pod arriving later is handled on its own event.
    const podsHere = podsOnNode(this.#pods.getIndexer(), nodeName);
    if (taints.length === 0) {
      for (const pod of podsHere) this.#cancelWorkWithEvent(podKey(pod));
      return;
    }
    const now = this.#harness.clock.now();
    for (const pod of podsHere) {
      this.#processPodOnNode(podKey(pod), nodeName, pod.spec?.tolerations ?? [], taints, now);
    }
    return;
  }

  /** Schedules, keeps or cancels one pod's deletion after it changed (upstream `handlePodUpdate`). */
  handlePodUpdate(key: string): void {
    const pod = this.#pods.getIndexer().getByKey(key);
    if (pod === undefined) {
      this.#cancelWorkWithEvent(key);
      return;
    }
    const nodeName = pod.spec?.nodeName;
    if (!nodeName) return;
    const taints = this.#taintedNodes.get(nodeName);
    // No NoExecute taints (or no node): any deletion was cancelled when they went.
    if (taints === undefined) return;
    this.#processPodOnNode(key, nodeName, pod.spec?.tolerations ?? [], taints, this.#harness.clock.now());
    return;
  }

  #podUpdated(oldPod: DeepReadonly<Pod> | undefined, pod: DeepReadonly<Pod> | undefined): void {
    if (
      oldPod !== undefined &&
      pod !== undefined &&
      oldPod.spec?.nodeName === pod.spec?.nodeName &&
      jsonEqual(oldPod.spec?.tolerations ?? [], pod.spec?.tolerations ?? [])
    ) {
      return;
    }
    const subject = pod ?? oldPod;
    if (subject !== undefined) this.#podQueue.add(podKey(subject));
  }

  #nodeUpdated(oldNode: DeepReadonly<Node> | undefined, node: DeepReadonly<Node> | undefined): void {
    if (
      oldNode !== undefined &&
      node !== undefined &&
      jsonEqual(getNoExecuteTaints(oldNode.spec?.taints), getNoExecuteTaints(node.spec?.taints))
    ) {
      return;
    }
    const name = (node ?? oldNode)?.metadata?.name;
    if (name) this.#nodeQueue.add(name);
  }

  /** Upstream `processPodOnNode`. */
  #processPodOnNode(
    key: string,
    nodeName: string,
    tolerations: readonly DeepReadonly<Toleration>[],
    taints: readonly Taint[],
    now: number,
  ): void {
    if (taints.length === 0) this.#cancelWorkWithEvent(key);
    const { allTolerated, used } = getMatchingTolerations(taints, tolerations);
    if (!allTolerated) {
      this.#harness.logger.info(
        { pod: key, node: nodeName },
        "Not all taints are tolerated after update for pod on node",
      );
      // Whatever was scheduled goes: the pod is deleted now.
      this.#cancelWorkWithEvent(key);
      this.#evictions.addWork(key, now, now);
      return;
    }
    const minTolerationMs = getMinTolerationTimeMs(used);
    if (minTolerationMs < 0) {
      this.#cancelWorkWithEvent(key);
      return;
    }
    let startTime = now;
    const triggerTime = now + minTolerationMs;
    const scheduled = this.#evictions.getWorker(key);
    if (scheduled !== undefined && scheduled !== null) {
      startTime = scheduled.createdAt;
      // The running countdown is kept (upstream: when it started earlier, which on a wall clock is
      // always; on a clock that has not moved, the same instant counts as earlier too).
      if (startTime + minTolerationMs <= triggerTime) return;
      this.#cancelWorkWithEvent(key);
    }
    this.#evictions.addWork(key, startTime, triggerTime);
  }

  #cancelWorkWithEvent(key: string): void {
    if (!this.#evictions.cancelWork(key)) return;
    this.#harness.recorder.event(
      podReference(key),
      "Normal",
      taintManagerEvictionReason,
      `Cancelling deletion of Pod ${key}`,
    );
  }

  /** Upstream `deletePodHandler`: the Event, then up to `deleteRetries` attempts of condition + delete. */
  async #deletePod(key: string, fireAt: number): Promise<void> {
    this.#harness.logger.info({ pod: key }, "NoExecuteTaintManager is deleting pod");
    this.#harness.recorder.event(
      podReference(key),
      "Normal",
      taintManagerEvictionReason,
      `Marking for deletion Pod ${key}`,
    );
    let lastError: unknown;
    for (let attempt = 0; attempt < this.#deleteRetries; attempt++) {
      try {
        await this.#addConditionAndDeletePod(key);
        this.podDeletions++;
        this.#metrics.podDeleted(Math.max(0, this.#harness.clock.now() - fireAt) / 1000);
        return;
      } catch (error) {
        if (isNotFound(error)) return;
        lastError = error;
      }
      await this.#harness.clock.sleep(this.#deleteRetryDelayMs);
    }
    this.#harness.logger.error({ pod: key, err: lastError }, "Failed to delete pod after retries");
    throw lastError;
  }

  async #addConditionAndDeletePod(key: string): Promise<void> {
    const { namespace, name } = splitMetaNamespaceKey(key);
    const podClient = this.#client.resource(pods, namespace);
    const pod = await podClient.get(name);
    const status = structuredClone(pod.status ?? {});
    const changed = updatePodCondition(
      status,
      {
        type: "DisruptionTarget",
        status: "True",
        reason: deletionByTaintManagerReason,
        message: "Taint manager: deleting due to NoExecute taint",
      },
      rfc3339(this.#harness.clock.now()),
    );
    // A conflict fails this attempt; the next one reads the pod afresh.
    if (changed) await podClient.updateStatus({ ...pod, status });
    await podClient.delete(name, { preconditions: { uid: pod.metadata?.uid } });
  }
}

function podReference(key: string): ObjectReference {
  const { namespace, name } = splitMetaNamespaceKey(key);
  return { apiVersion: "v1", kind: "Pod", namespace, name };
}
