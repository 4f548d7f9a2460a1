import {
  type DeepReadonly,
  isNotFound,
  jsonEqual,
  type Lease,
  leases,
  type Node,
  nodes,
  type Pod,
  type PodStatus,
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
  objectFromTombstone,
  type PeriodicTask,
  type SyncResult,
} from "@reconcile/controller";
import { parallelizeUntil, type RateLimitingInterface } from "@reconcile/workqueue";
import type { NodeCondition, ObjectReference, Taint } from "kubernetes-types/core/v1.js";
import { type NodeLifecycleMetrics, noopNodeLifecycleMetrics } from "./metrics.js";
import {
  getNodeCondition,
  type HealthResult,
  type NodeHealth,
  nodeWithStatusUnknown,
  observeNodeHealth,
} from "./node-health.js";
import { ensureNodeNameIndex, podsOnNode, updatePodCondition } from "./pods.js";
import { type NodeLifecycleFlags, type NodeLifecycleSettings, nodeLifecycleSettings } from "./settings.js";
import {
  swapNodeTaints,
  taintNodeDiskPressure,
  taintNodeMemoryPressure,
  taintNodeNetworkUnavailable,
  taintNodeNotReady,
  taintNodePIDPressure,
  taintNodeUnreachable,
  taintNodeUnschedulable,
  taintSetDiff,
} from "./taints.js";
import { type ZoneState, ZoneTainters } from "./zone-tainting.js";
import { zoneKeyOf } from "./zones.js";

export { computeZoneState, type ZoneState } from "./zone-tainting.js";

/** The controller's name in kube-controller-manager. */
export const nodeLifecycleControllerName = "node-lifecycle-controller";
/** The namespace of the kubelets' heartbeat Leases. */
export const nodeLeaseNamespace = "kube-node-lease";
/** Nodes with this label are left out of the zone health maths (upstream `labelNodeDisruptionExclusion`). */
export const nodeDisruptionExclusionLabel = "node.kubernetes.io/exclude-disruption";

export interface NodeLifecycleControllerOptions extends ControllerContext, NodeLifecycleFlags {
  /** Where Node status, taints and pod status are written. Required. */
  client: Client;
  nodeInformer: ControllerInformer<Node>;
  /** Leases of every namespace; those in `kube-node-lease` are the kubelets' heartbeats. */
  leaseInformer: ControllerInformer<Lease>;
  podInformer: ControllerInformer<Pod>;
  /** The `node_collector_*` families. Default: none. (Every timestamp compared comes from `clock`, so node clock skew does not matter; Events come from `node-controller`.) */
  metrics?: NodeLifecycleMetrics | undefined;
}

/** NoSchedule taints that mirror node conditions (upstream `nodeConditionToTaintKeyStatusMap`). */
const conditionTaints: Record<string, Record<string, string>> = {
  Ready: { False: taintNodeNotReady, Unknown: taintNodeUnreachable },
  MemoryPressure: { True: taintNodeMemoryPressure },
  DiskPressure: { True: taintNodeDiskPressure },
  NetworkUnavailable: { True: taintNodeNetworkUnavailable },
  PIDPressure: { True: taintNodePIDPressure },
};
const conditionTaintKeys = new Set(
  Object.values(conditionTaints).flatMap((byStatus) => Object.values(byStatus)),
);

/** Beta labels kept equal to their GA label (upstream `labelsToReconcile`). */
const labelsToReconcile = [
  { primary: "kubernetes.io/os", secondary: "beta.kubernetes.io/os" },
  { primary: "kubernetes.io/arch", secondary: "beta.kubernetes.io/arch" },
];

/**
 * kube-controller-manager's node lifecycle controller
 * (`node-lifecycle-controller`): every `nodeMonitorPeriodMs` it checks each
 * node's heartbeat — its Ready condition's `lastHeartbeatTime` and its Lease
 * in `kube-node-lease` — and marks a node silent for longer than the grace
 * period Unknown (`NodeStatusUnknown`, "Kubelet stopped posting node
 * status."), then its pods Ready=False. It keeps the NoSchedule taints in
 * step with the node's conditions and `spec.unschedulable`, and adds the
 * `unreachable` / `not-ready` NoExecute taints through per-zone rate-limited
 * queues (which stop when a zone, or every zone, looks disrupted), removing
 * them when the node is Ready again. Evicting the pods is the
 * {@link TaintEvictionController}'s part.
 */
export class NodeLifecycleController {
  readonly #client: Client;
  readonly #nodes: ControllerInformer<Node>;
  readonly #leases: ControllerInformer<Lease>;
  readonly #pods: ControllerInformer<Pod>;
  readonly #metrics: NodeLifecycleMetrics;
  readonly #settings: NodeLifecycleSettings;
  readonly #harness: ControllerHarness<string>;

  readonly #knownNodes = new Map<string, DeepReadonly<Node>>();
  readonly #nodeHealth = new Map<string, NodeHealth>();
  readonly #zones: ZoneTainters;
  /** Nodes whose pods could not all be marked not ready; tried again on the next pass. */
  readonly #nodesToRetry = new Set<string>();
  readonly #nodeUpdateQueue: RateLimitingInterface<string>;
  readonly #podUpdateQueue: RateLimitingInterface<string>;

  constructor(options: NodeLifecycleControllerOptions) {
    [this.#client, this.#nodes, this.#leases] = [options.client, options.nodeInformer, options.leaseInformer];
    this.#pods = options.podInformer;
    this.#settings = nodeLifecycleSettings(options);
    this.#metrics = options.metrics ?? noopNodeLifecycleMetrics;
    this.#harness = defineController({
      name: nodeLifecycleControllerName,
      // Upstream records with the component name `node-controller`.
      events: { component: "node-controller", client: options.client },
      context: options,
      informers: { nodes: this.#nodes, leases: this.#leases, pods: this.#pods },
      queues: [
        { name: "node_lifecycle_controller", workers: 8, sync: (name) => this.syncNode(name) },
        { name: "node_lifecycle_controller_pods", workers: 4, sync: (key) => this.processPod(key) },
      ],
      periodic: this.#periodicPasses(),
    });
    this.#zones = new ZoneTainters({
      ...this.#settings,
      client: options.client,
      nodes: this.#nodes.getIndexer(),
      clock: this.#harness.clock,
      logger: this.#harness.logger,
      metrics: this.#metrics,
    });
    this.#nodeUpdateQueue = this.#harness.queues.get("node_lifecycle_controller")!;
    this.#podUpdateQueue = this.#harness.queues.get("node_lifecycle_controller_pods")!;
    this.#addEventHandlers();
  }

  /** The node-health pass every `nodeMonitorPeriodMs`, the NoExecute tainting pass every `nodeEvictionPeriodMs`. */
  #periodicPasses(): PeriodicTask[] {
    return [
      {
        name: "monitorNodeHealth",
        periodMs: this.#settings.monitorPeriodMs,
        run: (signal) => this.monitorNodeHealth(signal),
      },
      {
        name: "doNoExecuteTaintingPass",
        periodMs: this.#settings.evictionPeriodMs,
        run: (signal) => this.doNoExecuteTaintingPass(signal),
      },
    ];
  }

  /** Node changes queue a node sync; pod changes queue a pod check (upstream's handlers). */
  #addEventHandlers(): void {
    ensureNodeNameIndex(this.#pods.getIndexer());
    this.#pods.addEventHandler({
      onAdd: (pod) => this.#podUpdated(undefined, pod),
      onUpdate: (oldPod, pod) => this.#podUpdated(oldPod, pod),
    });
    this.#nodes.addEventHandler({
      onAdd: (node) => this.#nodeUpdateQueue.add(node.metadata?.name ?? ""),
      onUpdate: (_, node) => this.#nodeUpdateQueue.add(node.metadata?.name ?? ""),
      onDelete: (obj) => this.#nodesToRetry.delete(objectFromTombstone(obj).metadata?.name ?? ""),
    });
  }

  /** Builds the controller on a `SharedInformerFactory`: its Node, Lease and pod informers. */
  static fromInformerFactory(
    factory: {
      forResource(resource: typeof nodes): ControllerInformer<Node>;
      forResource(resource: typeof leases): ControllerInformer<Lease>;
      forResource(resource: typeof pods): ControllerInformer<Pod>;
    },
    options: Omit<NodeLifecycleControllerOptions, "nodeInformer" | "leaseInformer" | "podInformer">,
  ): NodeLifecycleController {
    return new NodeLifecycleController({
      ...options,
      nodeInformer: factory.forResource(nodes),
      leaseInformer: factory.forResource(leases),
      podInformer: factory.forResource(pods),
    });
  }

  /**
   * Waits for the caches, then runs the node-health pass every
   * `nodeMonitorPeriodMs`, the NoExecute tainting pass every
   * `nodeEvictionPeriodMs`, and the node (`workers`, default 8) and pod (4)
   * workers until `signal` aborts; settles after a full stop.
   */
  run(options: RunOptions & { workers?: number | undefined }): Promise<void> {
    return this.#harness.run(options);
  }

  /** Each zone's state after the last health pass (zone keys as {@link zoneKeyOf} gives them). */
  zoneStates(): ReadonlyMap<string, ZoneState> {
    return new Map(this.#zones.states);
  }

  /** NoExecute taints applied per zone since start (upstream `node_collector_evictions_total`). */
  evictionsByZone(): ReadonlyMap<string, number> {
    return this.#zones.evictions();
  }

  /**
   * One health pass over every node (upstream `monitorNodeHealth`): new and
   * deleted nodes are recorded, each node's heartbeat is checked and a silent
   * one marked Unknown, NoExecute tainting is queued or undone, pods of a node
   * that stopped being Ready are marked not ready, and zone states and their
   * tainting rates are updated.
   */
  async monitorNodeHealth(signal?: AbortSignal): Promise<void> {
    const passStarted = this.#harness.clock.now();
    const allNodes = this.#nodes.getIndexer().byIndex("namespace", "");
    const { added, deleted, newZoneRepresentatives } = this.#classifyNodes(allNodes);
    for (const node of newZoneRepresentatives) this.#zones.addZoneOf(node);
    for (const node of added) {
      const name = node.metadata?.name ?? "";
      this.#harness.logger.info({ node: name }, "Controller observed a new Node");
      this.#recordNodeEvent(node, "RegisteredNode", `Registered Node ${name} in Controller`);
      this.#knownNodes.set(name, node);
      this.#zones.addZoneOf(node);
      await this.#zones.markNodeAsReachable(node, signal);
    }
    for (const node of deleted) {
      const name = node.metadata?.name ?? "";
      this.#harness.logger.info({ node: name }, "Controller observed a Node deletion");
      this.#recordNodeEvent(node, "RemovingNode", `Removing Node ${name} from Controller`);
      this.#knownNodes.delete(name);
      this.#nodeHealth.delete(name);
    }

    const zoneConditions = new Map<string, (DeepReadonly<NodeCondition> | undefined)[]>();
    await parallelizeUntil({ workers: 8, pieces: allNodes.length, signal }, async (piece) => {
      const cached = allNodes[piece];
      if (cached === undefined) return;
      let node: DeepReadonly<Node> = cached;
      let result: HealthResult | undefined;
      const nodeStarted = this.#harness.clock.now();
      for (let attempt = 0; attempt < 5; attempt++) {
        try {
          result = await this.#tryUpdateNodeHealth(node, signal);
          break;
        } catch (error) {
          this.#harness.logger.warn(
            { node: node.metadata?.name, err: error },
            "Failed to update node health; re-reading it",
          );
          try {
            node = await this.#client.resource(nodes).get(node.metadata?.name ?? "", { signal });
          } catch (getError) {
            this.#harness.logger.error({ node: node.metadata?.name, err: getError }, "Failed to read node");
            return;
          }
        }
      }
      this.#metrics.updateNodeHealthDuration((this.#harness.clock.now() - nodeStarted) / 1000);
      if (result === undefined) {
        this.#harness.logger.error(
          { node: node.metadata?.name },
          "Update health of Node from Controller error, skipping",
        );
        return;
      }
      const name = node.metadata?.name ?? "";
      const { observedReady, currentReady } = result;
      if (!(nodeDisruptionExclusionLabel in (node.metadata?.labels ?? {}))) {
        const zone = zoneKeyOf(node);
        const list = zoneConditions.get(zone) ?? [];
        list.push(currentReady);
        zoneConditions.set(zone, list);
      }
      if (currentReady !== undefined) {
        const podsHere = podsOnNode(this.#pods.getIndexer(), name);
        await this.#zones.processTaintBaseEviction(node, observedReady, signal);
        const needsRetry = this.#nodesToRetry.has(name);
        const becameNotReady = currentReady.status !== "True" && observedReady.status === "True";
        if (becameNotReady) {
          this.#recordNodeStatusChange(node, "NodeNotReady");
        }
        if (becameNotReady || (needsRetry && currentReady.status !== "True")) {
          if (!(await this.#markPodsNotReady(podsHere, name, signal))) {
            this.#nodesToRetry.add(name);
            return;
          }
        }
      }
      this.#nodesToRetry.delete(name);
    });
    await this.#zones.handleDisruption(zoneConditions, {
      enterMasterDisruption: async () => {
        await Promise.all(allNodes.map((node) => this.#zones.markNodeAsReachable(node, signal)));
      },
      exitMasterDisruption: () => {
        const now = this.#harness.clock.now();
        for (const node of allNodes) {
          const name = node.metadata?.name ?? "";
          const health = this.#nodeHealth.get(name);
          if (health !== undefined) {
            this.#nodeHealth.set(name, { ...health, probeTimestamp: now, readyTransitionTimestamp: now });
          }
        }
      },
    });
    this.#metrics.updateAllNodesHealthDuration((this.#harness.clock.now() - passStarted) / 1000);
  }

  /**
   * Adds the queued NoExecute taints, zone by zone, as fast as each zone's
   * limiter allows (upstream `doNoExecuteTaintingPass`): `unreachable` for a
   * node whose Ready is Unknown, `not-ready` for False, each replacing the
   * other; a node Ready again leaves the queue untainted.
   */
  doNoExecuteTaintingPass(signal?: AbortSignal): Promise<void> {
    return this.#zones.doNoExecuteTaintingPass(signal);
  }

  /**
   * Keeps a node's NoSchedule taints in step with its conditions and
   * `spec.unschedulable` (upstream `doNoScheduleTaintingPass`), and its beta
   * os/arch labels with the GA ones (`reconcileNodeLabels`).
   */
  async syncNode(name: string): Promise<SyncResult> {
    const node = this.#nodes.getIndexer().getByKey(name);
    if (node === undefined) return {};
    const wanted: Taint[] = [];
    for (const condition of node.status?.conditions ?? []) {
      const key = conditionTaints[condition.type]?.[condition.status];
      if (key !== undefined) wanted.push({ key, effect: "NoSchedule" });
    }
    if (node.spec?.unschedulable) wanted.push({ key: taintNodeUnschedulable, effect: "NoSchedule" });
    const current = (node.spec?.taints ?? []).filter(
      (t) => t.effect === "NoSchedule" && (t.key === taintNodeUnschedulable || conditionTaintKeys.has(t.key)),
    );
    const { toAdd, toRemove } = taintSetDiff(wanted, current);
    if (toAdd.length > 0 || toRemove.length > 0) {
      await swapNodeTaints(this.#client, this.#harness.clock, node, toAdd, toRemove);
    }
    await this.#reconcileNodeLabels(name);
    return {};
  }

  /** Marks a pod newly bound to a not-Ready node not ready (upstream `processPod`). */
  async processPod(key: string): Promise<SyncResult> {
    const pod = this.#pods.getIndexer().getByKey(key);
    if (pod === undefined) return {};
    const nodeName = pod.spec?.nodeName ?? "";
    const health = this.#nodeHealth.get(nodeName);
    // Not seen by a health pass yet (or deleted): the pass will handle the pod.
    if (health === undefined) return {};
    if (this.#nodes.getIndexer().getByKey(nodeName) === undefined) {
      throw new Error(`node ${nodeName} of pod ${key} is not in the cache`);
    }
    const ready = getNodeCondition(health.status, "Ready");
    if (ready === undefined) return {};
    if (ready.status !== "True" && !(await this.#markPodsNotReady([pod], nodeName))) {
      throw new Error(`unable to mark pod ${key} not ready on node ${nodeName}`);
    }
    return {};
  }

  #podUpdated(oldPod: DeepReadonly<Pod> | undefined, pod: DeepReadonly<Pod>): void {
    const nodeName = pod.spec?.nodeName;
    if (nodeName && (oldPod === undefined || oldPod.spec?.nodeName !== nodeName)) {
      this.#podUpdateQueue.add(`${pod.metadata?.namespace ?? ""}/${pod.metadata?.name ?? ""}`);
    }
  }

  /** Upstream `classifyNodes`. */
  #classifyNodes(allNodes: readonly DeepReadonly<Node>[]) {
    const added: DeepReadonly<Node>[] = [];
    const deleted: DeepReadonly<Node>[] = [];
    const newZoneRepresentatives: DeepReadonly<Node>[] = [];
    for (const node of allNodes) {
      if (!this.#knownNodes.has(node.metadata?.name ?? "")) added.push(node);
      else if (!this.#zones.states.has(zoneKeyOf(node))) newZoneRepresentatives.push(node);
    }
    if (this.#knownNodes.size + added.length !== allNodes.length) {
      const present = new Set(allNodes.map((n) => n.metadata?.name ?? ""));
      for (const [name, node] of this.#knownNodes) if (!present.has(name)) deleted.push(node);
    }
    return { added, deleted, newZoneRepresentatives };
  }

  /**
   * Upstream `tryUpdateNodeHealth`: refreshes what is known of the node's
   * heartbeat and, past the grace period, writes its conditions Unknown.
   * Returns the Ready condition as observed and as it is now.
   */
  async #tryUpdateNodeHealth(node: DeepReadonly<Node>, signal?: AbortSignal): Promise<HealthResult> {
    const name = node.metadata?.name ?? "";
    const now = this.#harness.clock.now();
    const lease = this.#leases.getIndexer().getByKey(`${nodeLeaseNamespace}/${name}`);
    const saved = this.#nodeHealth.get(name);
    const { health, observedReady, currentReady, gracePeriodMs } = observeNodeHealth(
      node,
      saved,
      lease,
      now,
      {
        startupGracePeriodMs: this.#settings.startupGracePeriodMs,
        monitorGracePeriodMs: this.#settings.monitorGracePeriodMs,
      },
      this.#harness.logger,
    );
    this.#nodeHealth.set(name, health);
    if (now <= health.probeTimestamp + gracePeriodMs) return { observedReady, currentReady };
    const updated = nodeWithStatusUnknown(node, now);
    const current = getNodeCondition(updated.status, "Ready");
    if (!jsonEqual(current, observedReady)) {
      await this.#client.resource(nodes).updateStatus(updated, { signal });
      this.#nodeHealth.set(name, {
        status: updated.status ?? {},
        probeTimestamp: health.probeTimestamp,
        readyTransitionTimestamp: now,
        lease,
      });
    }
    return { observedReady, currentReady: current };
  }

  /**
   * Upstream `MarkPodsNotReady`: each pod on the node gets Ready=False and a
   * Warning `NodeNotReady` Event. False when some write failed.
   */
  async #markPodsNotReady(podsHere: readonly DeepReadonly<Pod>[], nodeName: string, signal?: AbortSignal) {
    let ok = true;
    const now = rfc3339(this.#harness.clock.now());
    for (const cached of podsHere) {
      if (cached.spec?.nodeName !== nodeName) continue;
      const status = structuredClone((cached.status ?? {}) as PodStatus);
      const pod: Pod = { ...structuredClone(cached as Pod), status };
      const ready = status.conditions?.find((c) => c.type === "Ready");
      if (ready === undefined) continue;
      if (!updatePodCondition(status, { ...ready, status: "False" }, now)) continue;
      try {
        const namespace = pod.metadata?.namespace ?? "";
        await this.#client.resource(pods, namespace).updateStatus(pod, { signal });
      } catch (error) {
        if (isNotFound(error)) continue;
        this.#harness.logger.info(
          { pod: `${pod.metadata?.namespace}/${pod.metadata?.name}`, err: error },
          "Failed to update status for pod",
        );
        ok = false;
        continue;
      }
      this.#harness.recorder.event(pod, "Warning", "NodeNotReady", "Node is not ready");
    }
    return ok;
  }

  /** Upstream `reconcileNodeLabels`. */
  async #reconcileNodeLabels(name: string): Promise<void> {
    const node = this.#nodes.getIndexer().getByKey(name);
    const labels = node?.metadata?.labels;
    if (node === undefined || labels === undefined) return;
    const toUpdate: Record<string, string> = {};
    for (const { primary, secondary } of labelsToReconcile) {
      const value = labels[primary];
      if (value === undefined) continue;
      if (labels[secondary] !== value) toUpdate[secondary] = value;
    }
    if (Object.keys(toUpdate).length === 0) return;
    await this.#client.resource(nodes).patch(name, { metadata: { labels: toUpdate } }, { type: "merge" });
  }

  #recordNodeEvent(node: DeepReadonly<Node>, reason: string, message: string): void {
    const name = node.metadata?.name ?? "";
    this.#harness.recorder.event(nodeReference(node), "Normal", reason, `Node ${name} event: ${message}`);
  }

  /** Upstream `RecordNodeStatusChange`. */
  #recordNodeStatusChange(node: DeepReadonly<Node>, newStatus: string): void {
    const name = node.metadata?.name ?? "";
    this.#harness.recorder.event(
      nodeReference(node),
      "Normal",
      newStatus,
      `Node ${name} status is now: ${newStatus}`,
    );
  }
}

function nodeReference(node: DeepReadonly<Node>): ObjectReference {
  const name = node.metadata?.name ?? "";
  return { apiVersion: "v1", kind: "Node", name, uid: node.metadata?.uid ?? name };
}
