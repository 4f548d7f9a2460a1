import {
  type DeepReadonly,
  isNotFound,
  type Node,
  nodes,
  type Pod,
  type PodCondition,
  pods,
  type RunOptions,
  rfc3339,
} from "@reconcile/api";
import type { Client } from "@reconcile/client";
import {
  type ControllerContext,
  type ControllerHarness,
  type ControllerInformer,
  defineController,
  ensureIndex,
} from "@reconcile/controller";

/** The index under which every object sits (value ""). */
const everything = "podgcAll";

/** How often the collector looks (`gcCheckPeriod`). */
export const gcCheckPeriodMs = 20_000;
/** How long a node must stay missing before its pods are orphans (`quarantineTime`). */
export const quarantineMs = 40_000;
/** `--terminated-pod-gc-threshold`'s default. */
export const defaultTerminatedPodThreshold = 12_500;

export interface PodGCControllerOptions extends ControllerContext {
  /** Deletes pods and writes their status. Required. */
  client: Client;
  podInformer: ControllerInformer<Pod>;
  nodeInformer: ControllerInformer<Node>;
  /** Terminated pods kept before the oldest are deleted; 0 keeps them all. Default 12,500. */
  terminatedPodThreshold?: number | undefined;
}

/**
 * The pod garbage collector (upstream `pkg/controller/podgc`): every 20 s it
 * deletes the oldest terminated (Succeeded or Failed) pods beyond the
 * threshold, the pods of nodes that have been gone for 40 s (after asking
 * the server, marking them Failed with `DisruptionTarget` reason
 * `DeletionByPodGC` first), terminating pods on out-of-service nodes, and
 * terminating pods that were never scheduled. Its deletes are forced (grace 0).
 */
export class PodGCController {
  readonly #harness: ControllerHarness<string>;
  readonly #client: Client;
  readonly #pods: ControllerInformer<Pod>;
  readonly #nodes: ControllerInformer<Node>;
  readonly #threshold: number;

  constructor(options: PodGCControllerOptions) {
    const { client, podInformer, nodeInformer } = options ?? {};
    this.#harness = defineController({
      name: "pod-garbage-collector",
      owner: "PodGCController",
      context: options,
      required: { client, podInformer, nodeInformer },
      informers: { pods: podInformer, nodes: nodeInformer },
      queues: [{ name: "orphaned_pods_nodes", sync: (node) => this.#collectOrphansOf(node) }],
      periodic: [{ name: "pod garbage collection", periodMs: gcCheckPeriodMs, run: () => this.gc() }],
    });
    [this.#client, this.#pods, this.#nodes] = [client, podInformer, nodeInformer];
    this.#threshold = options.terminatedPodThreshold ?? defaultTerminatedPodThreshold;
    // The collector looks at every pod and node: one index holding them all.
    ensureIndex(podInformer.getIndexer(), everything, () => [""]);
    ensureIndex(nodeInformer.getIndexer(), everything, () => [""]);
  }

  static fromInformerFactory(
    factory: {
      forResource(resource: typeof pods): ControllerInformer<Pod>;
      forResource(resource: typeof nodes): ControllerInformer<Node>;
    },
    options: Omit<PodGCControllerOptions, "podInformer" | "nodeInformer">,
  ): PodGCController {
    return new PodGCController({
      ...options,
      podInformer: factory.forResource(pods),
      nodeInformer: factory.forResource(nodes),
    });
  }

  run(options: RunOptions & { workers?: number | undefined }): Promise<void> {
    return this.#harness.run(options);
  }

  /** One pass (upstream `gc`). */
  async gc(): Promise<void> {
    const all = this.#pods.getIndexer().byIndex(everything, "");
    const existing = new Set(
      this.#nodes
        .getIndexer()
        .byIndex(everything, "")
        .map((n) => n.metadata?.name ?? ""),
    );
    await this.#collectOutOfService(all);
    if (this.#threshold > 0) await this.#collectTerminated(all);
    // Nodes a pod is bound to but the cache lacks: look again after the quarantine.
    for (const pod of all) {
      const node = pod.spec?.nodeName;
      if (node && !existing.has(node)) this.#harness.enqueueAfter(node, quarantineMs, "node missing");
    }
    for (const pod of all) {
      if (pod.metadata?.deletionTimestamp != null && !pod.spec?.nodeName)
        await this.#forceDelete(pod, undefined);
    }
  }

  async #collectTerminated(all: readonly DeepReadonly<Pod>[]): Promise<void> {
    const terminated = all.filter((p) => p.status?.phase === "Succeeded" || p.status?.phase === "Failed");
    const excess = terminated.length - this.#threshold;
    if (excess <= 0) return;
    terminated.sort((a, b) =>
      (a.metadata?.creationTimestamp ?? "").localeCompare(b.metadata?.creationTimestamp ?? ""),
    );
    for (const pod of terminated.slice(0, excess)) await this.#forceDelete(pod, undefined);
  }

  /** Terminating pods on nodes tainted `node.kubernetes.io/out-of-service` and not Ready (`gcTerminating`). */
  async #collectOutOfService(all: readonly DeepReadonly<Pod>[]): Promise<void> {
    const outOfService = new Set<string>();
    for (const node of this.#nodes.getIndexer().byIndex(everything, "")) {
      const tainted = (node.spec?.taints ?? []).some((t) => t.key === "node.kubernetes.io/out-of-service");
      const ready = node.status?.conditions?.find((c) => c.type === "Ready")?.status === "True";
      if (tainted && !ready) outOfService.add(node.metadata?.name ?? "");
    }
    if (outOfService.size === 0) return;
    for (const pod of all) {
      if (pod.metadata?.deletionTimestamp == null || !outOfService.has(pod.spec?.nodeName ?? "")) continue;
      await this.#forceDelete(pod, "PodGC: node is out-of-service");
    }
  }

  /** The pods of a node that is still missing after the quarantine, once the server confirms it. */
  async #collectOrphansOf(nodeName: string): Promise<void> {
    if (this.#nodes.getIndexer().getByKey(nodeName) !== undefined) return;
    const gone = await this.#client
      .resource(nodes)
      .get(nodeName)
      .then(() => false)
      .catch((error: unknown) => {
        if (isNotFound(error)) return true;
        throw error;
      });
    if (!gone) return;
    for (const pod of this.#pods.getIndexer().byIndex(everything, "")) {
      if (pod.spec?.nodeName === nodeName) await this.#forceDelete(pod, "PodGC: node no longer exists");
    }
  }

  /** Marks a pod that has not finished Failed with `DisruptionTarget` (when `why` is given), then deletes it at once. */
  async #forceDelete(pod: DeepReadonly<Pod>, why: string | undefined): Promise<void> {
    const resource = this.#client.resource(pods, pod.metadata?.namespace);
    const name = pod.metadata?.name ?? "";
    const phase = pod.status?.phase;
    try {
      if (why !== undefined && phase !== "Succeeded" && phase !== "Failed") {
        const now = rfc3339(this.#harness.clock.now());
        const condition: PodCondition = {
          type: "DisruptionTarget",
          status: "True",
          reason: "DeletionByPodGC",
          message: why,
          lastTransitionTime: now,
        };
        const conditions = [
          ...(pod.status?.conditions ?? []).filter((c) => c.type !== "DisruptionTarget"),
          condition,
        ];
        await resource.updateStatus({
          ...(pod as Pod),
          status: { ...(pod.status as Pod["status"]), phase: "Failed", conditions },
        });
      }
      this.#harness.logger.info({ pod: `${pod.metadata?.namespace}/${name}` }, "Forced deletion of pod");
      await resource.delete(name, { gracePeriodSeconds: 0 });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }
}
