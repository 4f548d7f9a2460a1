import {
  type DeepReadonly,
  isNotFound,
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
import type { NodeCondition, NodeStatus, ObjectReference, Taint } from "kubernetes-types/core/v1.js";
import { type NodeLifecycleMetrics, noopNodeLifecycleMetrics } from "./metrics.js";
import { ensureNodeNameIndex, podsOnNode, updatePodCondition } from "./pods.js";
import { RateLimitedTimedQueue } from "./rate-limited-timed-queue.js";
import {
  notReadyTaintTemplate,
  swapNodeTaints,
  taintExists,
  taintNodeDiskPressure,
  taintNodeMemoryPressure,
  taintNodeNetworkUnavailable,
  taintNodeNotReady,
  taintNodePIDPressure,
  taintNodeUnreachable,
  taintNodeUnschedulable,
  taintSetDiff,
  unreachableTaintTemplate,
} from "./taints.js";
import { zoneKeyOf } from "./zones.js";

/** The controller's name in kube-controller-manager. */
export const nodeLifecycleControllerName = "node-lifecycle-controller";
/** The namespace of the kubelets' heartbeat Leases. */
export const nodeLeaseNamespace = "kube-node-lease";
/** Nodes with this label are left out of the zone health maths (upstream `labelNodeDisruptionExclusion`). */
export const nodeDisruptionExclusionLabel = "node.kubernetes.io/exclude-disruption";

/** A zone's health as the controller sees it (upstream `ZoneState`). */
export type ZoneState = "Initial" | "Normal" | "FullDisruption" | "PartialDisruption";

export interface NodeLifecycleControllerOptions extends ControllerContext {
  /** Where Node status, taints and pod status are written. Required. */
  client: Client;
  nodeInformer: ControllerInformer<Node>;
  /** Leases of every namespace; those in `kube-node-lease` are the kubelets' heartbeats. */
  leaseInformer: ControllerInformer<Lease>;
  podInformer: ControllerInformer<Pod>;
  /** The `node_collector_*` families. Default: none. (Every timestamp compared comes from `clock`, so node clock skew does not matter; Events come from `node-controller`.) */
  metrics?: NodeLifecycleMetrics | undefined;
  /** `--node-monitor-period`: how often every node's health is checked. Default 5,000 ms. */
  nodeMonitorPeriodMs?: number | undefined;
  /** `--node-monitor-grace-period`: silence after which a node that posted Ready is Unknown. Default 50,000 ms. */
  nodeMonitorGracePeriodMs?: number | undefined;
  /** `--node-startup-grace-period`: the same for a node that never posted Ready. Default 60,000 ms. */
  nodeStartupGracePeriodMs?: number | undefined;
  /** `--node-eviction-rate`: nodes tainted NoExecute per second per healthy zone. Default 0.1. */
  nodeEvictionRate?: number | undefined;
  /** `--secondary-node-eviction-rate`: the same in a partially disrupted large zone. Default 0.01. */
  secondaryNodeEvictionRate?: number | undefined;
  /** `--large-cluster-size-threshold`: above this many nodes a zone is large. Default 50. */
  largeClusterSizeThreshold?: number | undefined;
  /** `--unhealthy-zone-threshold`: share of not-Ready nodes (more than 2) that makes a zone partially disrupted. Default 0.55. */
  unhealthyZoneThreshold?: number | undefined;
  /** How often the zones' tainting queues are polled (upstream `NodeEvictionPeriod`, not a flag). Default 100 ms. */
  nodeEvictionPeriodMs?: number | undefined;
}

/** What the controller remembers about a node between passes (upstream `nodeHealthData`). */
interface NodeHealth {
  /** The status last seen; cached objects are never mutated, so it is kept without a copy. */
  status: DeepReadonly<NodeStatus>;
  /** When the controller last saw the kubelet alive: a new Ready heartbeat or a renewed Lease. */
  probeTimestamp: number;
  readyTransitionTimestamp: number;
  lease: DeepReadonly<Lease> | undefined;
}

/** Node conditions that become Unknown when the kubelet goes quiet; NetworkUnavailable is the network's, left alone. */
const conditionsSetUnknown = ["Ready", "MemoryPressure", "DiskPressure", "PIDPressure"] as const;

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
  readonly #zoneStates = new Map<string, ZoneState>();
  readonly #zoneTainters = new Map<string, RateLimitedTimedQueue>();
  readonly #evictionsByZone = new Map<string, number>();
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
    return new Map(this.#zoneStates);
  }

  /** NoExecute taints applied per zone since start (upstream `node_collector_evictions_total`). */
  evictionsByZone(): ReadonlyMap<string, number> {
    return new Map(this.#evictionsByZone);
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
    for (const node of newZoneRepresentatives) this.#addZoneTainterFor(node);
    for (const node of added) {
      const name = node.metadata?.name ?? "";
      this.#harness.logger.info({ node: name }, "Controller observed a new Node");
      this.#recordNodeEvent(node, "RegisteredNode", `Registered Node ${name} in Controller`);
      this.#knownNodes.set(name, node);
      this.#addZoneTainterFor(node);
      await this.#markNodeAsReachable(node, signal);
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
        await this.#processTaintBaseEviction(node, observedReady, signal);
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
    await this.#handleDisruption(zoneConditions, allNodes, signal);
    this.#metrics.updateAllNodesHealthDuration((this.#harness.clock.now() - passStarted) / 1000);
  }

  /**
   * Adds the queued NoExecute taints, zone by zone, as fast as each zone's
   * limiter allows (upstream `doNoExecuteTaintingPass`): `unreachable` for a
   * node whose Ready is Unknown, `not-ready` for False, each replacing the
   * other; a node Ready again leaves the queue untainted.
   */
  async doNoExecuteTaintingPass(signal?: AbortSignal): Promise<void> {
    for (const [zone, tainter] of [...this.#zoneTainters]) {
      await tainter.try(async (value) => {
        const node = this.#nodes.getIndexer().getByKey(value.value);
        if (node === undefined) {
          this.#harness.logger.info({ node: value.value }, "Node no longer present in nodeLister");
          return [true, 0];
        }
        const ready = getNodeCondition(node.status, "Ready");
        if (ready === undefined) return [false, 50];
        let taintToAdd: Taint;
        let oppositeTaint: Taint;
        if (ready.status === "False") {
          taintToAdd = { ...notReadyTaintTemplate };
          oppositeTaint = { ...unreachableTaintTemplate };
        } else if (ready.status === "Unknown") {
          taintToAdd = { ...unreachableTaintTemplate };
          oppositeTaint = { ...notReadyTaintTemplate };
        } else {
          return [true, 0];
        }
        const swapped = await this.#swapTaints(node, [taintToAdd], [oppositeTaint], signal);
        if (swapped) {
          this.#evictionsByZone.set(zone, (this.#evictionsByZone.get(zone) ?? 0) + 1);
          this.#metrics.eviction(zone, 1);
        }
        return [swapped, 0];
      });
    }
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
      else if (!this.#zoneStates.has(zoneKeyOf(node))) newZoneRepresentatives.push(node);
    }
    if (this.#knownNodes.size + added.length !== allNodes.length) {
      const present = new Set(allNodes.map((n) => n.metadata?.name ?? ""));
      for (const [name, node] of this.#knownNodes) if (!present.has(name)) deleted.push(node);
    }
    return { added, deleted, newZoneRepresentatives };
  }

  /** Upstream `addPodEvictorForNewZone`. */
  #addZoneTainterFor(node: DeepReadonly<Node>): void {
    const zone = zoneKeyOf(node);
    if (this.#zoneStates.has(zone)) return;
    this.#zoneStates.set(zone, "Initial");
    this.#zoneTainters.set(
      zone,
      new RateLimitedTimedQueue({ qps: this.#settings.evictionQps, clock: this.#harness.clock }),
    );
    if (!this.#evictionsByZone.has(zone)) {
      this.#evictionsByZone.set(zone, 0);
      this.#metrics.eviction(zone, 0);
    }
  }

  /**
   * Upstream `tryUpdateNodeHealth`: refreshes what is known of the node's
   * heartbeat and, past the grace period, writes its conditions Unknown.
   * Returns the Ready condition as observed and as it is now.
   */
  async #tryUpdateNodeHealth(node: DeepReadonly<Node>, signal?: AbortSignal): Promise<HealthResult> {
    const name = node.metadata?.name ?? "";
    const now = this.#harness.clock.now();
    const created = parseTime(node.metadata?.creationTimestamp) ?? now;
    let health = this.#nodeHealth.get(name);
    const status: DeepReadonly<NodeStatus> = node.status ?? {};
    const currentReady = getNodeCondition(node.status, "Ready");
    let observedReady: DeepReadonly<NodeCondition>;
    let gracePeriod: number;
    if (currentReady === undefined) {
      // Never posted: a stand-in Unknown condition dated at the node's creation.
      const at = node.metadata?.creationTimestamp;
      observedReady = {
        type: "Ready",
        status: "Unknown",
        ...(at === undefined ? {} : { lastHeartbeatTime: at, lastTransitionTime: at }),
      };
      gracePeriod = this.#settings.startupGracePeriodMs;
      if (health !== undefined) health = { ...health, status };
      else health = { status, probeTimestamp: created, readyTransitionTimestamp: created, lease: undefined };
    } else {
      observedReady = currentReady;
      gracePeriod = this.#settings.monitorGracePeriodMs;
    }

    const savedReady = health === undefined ? undefined : getNodeCondition(health.status, "Ready");
    const savedLease = health?.lease;
    if (health === undefined) {
      this.#harness.logger.info({ node: name }, "Missing timestamp for Node. Assuming now as a timestamp");
      health = { status, probeTimestamp: now, readyTransitionTimestamp: now, lease: undefined };
    } else if (savedReady === undefined && currentReady !== undefined) {
      health = { status, probeTimestamp: now, readyTransitionTimestamp: now, lease: savedLease };
    } else if (savedReady !== undefined && currentReady === undefined) {
      this.#harness.logger.error({ node: name }, "ReadyCondition was removed from Status of Node");
      health = { status, probeTimestamp: now, readyTransitionTimestamp: now, lease: savedLease };
    } else if (
      savedReady !== undefined &&
      currentReady !== undefined &&
      savedReady.lastHeartbeatTime !== currentReady.lastHeartbeatTime
    ) {
      const transitioned = savedReady.lastTransitionTime !== currentReady.lastTransitionTime;
      health = {
        status,
        probeTimestamp: now,
        readyTransitionTimestamp: transitioned ? now : health.readyTransitionTimestamp,
        lease: savedLease,
      };
    }
    // A renewed Lease counts as a heartbeat too (a kubelet that never posted status but renews is left alone).
    const observedLease = this.#leases.getIndexer().getByKey(`${nodeLeaseNamespace}/${name}`);
    if (
      observedLease !== undefined &&
      (savedLease === undefined || renewedSince(savedLease, observedLease))
    ) {
      health = { ...health, lease: observedLease, probeTimestamp: now };
    }
    this.#nodeHealth.set(name, health);

    let current = currentReady;
    if (now > health.probeTimestamp + gracePeriod) {
      const nowTimestamp = rfc3339(now);
      const updatedStatus = structuredClone((node.status ?? {}) as NodeStatus);
      const updated: Node = { ...(node as Node), status: updatedStatus };
      const conditions = (updatedStatus.conditions ??= []);
      for (const type of conditionsSetUnknown) {
        const condition = conditions.find((c) => c.type === type);
        if (condition === undefined) {
          conditions.push({
            type,
            status: "Unknown",
            reason: "NodeStatusNeverUpdated",
            message: "Kubelet never posted node status.",
            ...(node.metadata?.creationTimestamp === undefined
              ? {}
              : { lastHeartbeatTime: node.metadata.creationTimestamp }),
            lastTransitionTime: nowTimestamp,
          });
        } else if (condition.status !== "Unknown") {
          condition.status = "Unknown";
          condition.reason = "NodeStatusUnknown";
          condition.message = "Kubelet stopped posting node status.";
          condition.lastTransitionTime = nowTimestamp;
        }
      }
      current = getNodeCondition(updated.status, "Ready");
      if (JSON.stringify(current) !== JSON.stringify(observedReady)) {
        await this.#client.resource(nodes).updateStatus(updated, { signal });
        this.#nodeHealth.set(name, {
          status: updatedStatus,
          probeTimestamp: health.probeTimestamp,
          readyTransitionTimestamp: now,
          lease: observedLease,
        });
      }
    }
    return { observedReady, currentReady: current };
  }

  /** Upstream `processTaintBaseEviction`: reacts to the Ready condition as the pass found it. */
  async #processTaintBaseEviction(
    node: DeepReadonly<Node>,
    observedReady: DeepReadonly<NodeCondition>,
    signal?: AbortSignal,
  ): Promise<void> {
    const name = node.metadata?.name ?? "";
    const taints = node.spec?.taints;
    switch (observedReady.status) {
      case "False":
        if (taintExists(taints, unreachableTaintTemplate)) {
          // Already tainted unreachable: swap at once, no rate limit.
          if (
            !(await this.#swapTaints(
              node,
              [{ ...notReadyTaintTemplate }],
              [unreachableTaintTemplate],
              signal,
            ))
          ) {
            this.#harness.logger.error(
              { node: name },
              "Failed to instantly swap UnreachableTaint to NotReadyTaint",
            );
          }
        } else if (this.#markNodeForTainting(node, "False")) {
          this.#harness.logger.info({ node: name }, "Node is NotReady. Adding it to the Taint queue");
        }
        break;
      case "Unknown":
        if (taintExists(taints, notReadyTaintTemplate)) {
          if (
            !(await this.#swapTaints(
              node,
              [{ ...unreachableTaintTemplate }],
              [notReadyTaintTemplate],
              signal,
            ))
          ) {
            this.#harness.logger.error(
              { node: name },
              "Failed to instantly swap NotReadyTaint to UnreachableTaint",
            );
          }
        } else if (this.#markNodeForTainting(node, "Unknown")) {
          this.#harness.logger.info({ node: name }, "Node is unresponsive. Adding it to the Taint queue");
        }
        break;
      case "True":
        if (await this.#markNodeAsReachable(node, signal)) {
          this.#harness.logger.info({ node: name }, "Node is healthy again, removed all taints");
        }
        break;
    }
  }

  /** Upstream `markNodeForTainting`: queues the node in its zone (anew if its NoExecute taint is missing). */
  #markNodeForTainting(node: DeepReadonly<Node>, status: "False" | "Unknown"): boolean {
    const name = node.metadata?.name ?? "";
    const tainter = this.#tainterOf(node);
    const template = status === "False" ? notReadyTaintTemplate : unreachableTaintTemplate;
    if (!taintExists(node.spec?.taints, template)) tainter.remove(name);
    return tainter.add(name, node.metadata?.uid ?? "");
  }

  /** Upstream `markNodeAsReachable`: both NoExecute taints off, and out of the zone queue. */
  async #markNodeAsReachable(node: DeepReadonly<Node>, signal?: AbortSignal): Promise<boolean> {
    const taints = node.spec?.taints;
    if (taintExists(taints, unreachableTaintTemplate) || taintExists(taints, notReadyTaintTemplate)) {
      try {
        await swapNodeTaints(
          this.#client,
          this.#harness.clock,
          node,
          [],
          [unreachableTaintTemplate, notReadyTaintTemplate],
          signal,
        );
      } catch (error) {
        if (!isNotFound(error)) {
          this.#harness.logger.error(
            { node: node.metadata?.name, err: error },
            "Failed to remove taints from node",
          );
          return false;
        }
      }
    }
    return this.#tainterOf(node).remove(node.metadata?.name ?? "");
  }

  #tainterOf(node: DeepReadonly<Node>): RateLimitedTimedQueue {
    const zone = zoneKeyOf(node);
    let tainter = this.#zoneTainters.get(zone);
    if (tainter === undefined) {
      this.#addZoneTainterFor(node);
      tainter = this.#zoneTainters.get(zone) as RateLimitedTimedQueue;
    }
    return tainter;
  }

  /** `SwapNodeControllerTaint`: false (logged) when the write failed. */
  async #swapTaints(
    node: DeepReadonly<Node>,
    toAdd: readonly Taint[],
    toRemove: readonly Taint[],
    signal?: AbortSignal,
  ): Promise<boolean> {
    try {
      return await swapNodeTaints(this.#client, this.#harness.clock, node, toAdd, toRemove, signal);
    } catch (error) {
      if (isNotFound(error)) return true;
      this.#harness.logger.error({ node: node.metadata?.name, err: error }, "Failed to swap node taints");
      return false;
    }
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

  /** Upstream `handleDisruption`: zone states from the Ready conditions, and the tainting rates they call for. */
  async #handleDisruption(
    zoneConditions: ReadonlyMap<string, (DeepReadonly<NodeCondition> | undefined)[]>,
    allNodes: readonly DeepReadonly<Node>[],
    signal?: AbortSignal,
  ): Promise<void> {
    const newZoneStates = new Map<string, ZoneState>();
    let allAreFullyDisrupted = true;
    for (const [zone, conditions] of zoneConditions) {
      const { notReady, state } = computeZoneState(conditions, this.#settings.unhealthyZoneThreshold);
      this.#metrics.zoneHealth(zone, conditions.length, notReady);
      if (state !== "FullDisruption") allAreFullyDisrupted = false;
      newZoneStates.set(zone, state);
      if (!this.#zoneStates.has(zone)) this.#zoneStates.set(zone, "Initial");
    }
    let allWasFullyDisrupted = true;
    for (const [zone, state] of [...this.#zoneStates]) {
      if (!zoneConditions.has(zone)) {
        this.#metrics.zoneHealth(zone, 0, 0);
        this.#zoneStates.delete(zone);
        continue;
      }
      if (state !== "FullDisruption") {
        allWasFullyDisrupted = false;
        break;
      }
    }
    if (allAreFullyDisrupted && allWasFullyDisrupted) return;
    if (allAreFullyDisrupted) {
      // Every zone dark at once is more likely the control plane's network than every node: stop tainting.
      this.#harness.logger.info(
        {},
        "Controller detected that all Nodes are not-Ready. Entering master disruption mode",
      );
      await Promise.all(allNodes.map((node) => this.#markNodeAsReachable(node, signal)));
      for (const zone of this.#zoneStates.keys()) this.#zoneTainters.get(zone)?.swapLimiter(0);
      for (const zone of this.#zoneStates.keys()) this.#zoneStates.set(zone, "FullDisruption");
      return;
    }
    if (allWasFullyDisrupted) {
      this.#harness.logger.info(
        {},
        "Controller detected that some Nodes are Ready. Exiting master disruption mode",
      );
      const now = this.#harness.clock.now();
      for (const node of allNodes) {
        const name = node.metadata?.name ?? "";
        const health = this.#nodeHealth.get(name);
        if (health !== undefined) {
          this.#nodeHealth.set(name, { ...health, probeTimestamp: now, readyTransitionTimestamp: now });
        }
      }
      for (const zone of this.#zoneStates.keys()) {
        const state = newZoneStates.get(zone) ?? "Normal";
        this.#setLimiterInZone(zone, zoneConditions.get(zone)?.length ?? 0, state);
        this.#zoneStates.set(zone, state);
      }
      return;
    }
    for (const [zone, state] of [...this.#zoneStates]) {
      const newState = newZoneStates.get(zone);
      if (newState === undefined || newState === state) continue;
      this.#harness.logger.info({ zone, newState }, "Controller detected that zone is now in new state");
      this.#setLimiterInZone(zone, zoneConditions.get(zone)?.length ?? 0, newState);
      this.#zoneStates.set(zone, newState);
    }
  }

  /** Upstream `setLimiterInZone`: the normal rate, or in a partly disrupted zone the secondary rate when large, else none. */
  #setLimiterInZone(zone: string, zoneSize: number, state: ZoneState): void {
    const tainter = this.#zoneTainters.get(zone);
    if (tainter === undefined) return;
    switch (state) {
      case "Normal":
      case "FullDisruption":
        tainter.swapLimiter(this.#settings.evictionQps);
        break;
      case "PartialDisruption":
        tainter.swapLimiter(
          zoneSize > this.#settings.largeClusterThreshold ? this.#settings.secondaryEvictionQps : 0,
        );
        break;
      default:
        break;
    }
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

interface HealthResult {
  observedReady: DeepReadonly<NodeCondition>;
  currentReady: DeepReadonly<NodeCondition> | undefined;
}

/**
 * A zone's state from its nodes' Ready conditions (upstream
 * `ComputeZoneState`): no Ready node → FullDisruption; more than 2 not Ready
 * making at least `unhealthyThreshold` of the zone → PartialDisruption; else
 * Normal. Also returns how many are not Ready.
 */
export function computeZoneState(
  readyConditions: readonly (DeepReadonly<NodeCondition> | undefined)[],
  unhealthyThreshold: number,
): { notReady: number; state: ZoneState } {
  let ready = 0;
  let notReady = 0;
  for (const condition of readyConditions) {
    if (condition?.status === "True") ready++;
    else notReady++;
  }
  if (ready === 0 && notReady > 0) return { notReady, state: "FullDisruption" };
  if (notReady > 2 && notReady / (notReady + ready) >= unhealthyThreshold) {
    return { notReady, state: "PartialDisruption" };
  }
  return { notReady, state: "Normal" };
}

function getNodeCondition(
  status: DeepReadonly<NodeStatus> | NodeStatus | undefined,
  type: string,
): DeepReadonly<NodeCondition> | undefined {
  return status?.conditions?.find((c) => c.type === type);
}

function nodeReference(node: DeepReadonly<Node>): ObjectReference {
  const name = node.metadata?.name ?? "";
  return { apiVersion: "v1", kind: "Node", name, uid: node.metadata?.uid ?? name };
}

function renewedSince(saved: DeepReadonly<Lease>, observed: DeepReadonly<Lease>): boolean {
  const before = parseTime(saved.spec?.renewTime);
  const after = parseTime(observed.spec?.renewTime);
  return before !== undefined && after !== undefined && before < after;
}

function parseTime(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

function positive(value: number, name: string): number {
  if (!(typeof value === "number" && value > 0 && Number.isFinite(value))) {
    throw new RangeError(`NodeLifecycleController: ${name} must be a positive number, got ${String(value)}`);
  }
  return value;
}

function nonNegative(value: number, name: string): number {
  if (!(typeof value === "number" && value >= 0 && Number.isFinite(value))) {
    throw new RangeError(
      `NodeLifecycleController: ${name} must be a non-negative number, got ${String(value)}`,
    );
  }
  return value;
}

interface NodeLifecycleSettings {
  monitorPeriodMs: number;
  monitorGracePeriodMs: number;
  startupGracePeriodMs: number;
  evictionQps: number;
  secondaryEvictionQps: number;
  largeClusterThreshold: number;
  unhealthyZoneThreshold: number;
  evictionPeriodMs: number;
}

/** The controller's flags with upstream's defaults, each checked. */
function nodeLifecycleSettings(options: NodeLifecycleControllerOptions): NodeLifecycleSettings {
  const settings = {
    monitorPeriodMs: positive(options.nodeMonitorPeriodMs ?? 5_000, "nodeMonitorPeriodMs"),
    monitorGracePeriodMs: positive(options.nodeMonitorGracePeriodMs ?? 50_000, "nodeMonitorGracePeriodMs"),
    startupGracePeriodMs: positive(options.nodeStartupGracePeriodMs ?? 60_000, "nodeStartupGracePeriodMs"),
    evictionQps: nonNegative(options.nodeEvictionRate ?? 0.1, "nodeEvictionRate"),
    secondaryEvictionQps: nonNegative(options.secondaryNodeEvictionRate ?? 0.01, "secondaryNodeEvictionRate"),
    largeClusterThreshold: nonNegative(options.largeClusterSizeThreshold ?? 50, "largeClusterSizeThreshold"),
    unhealthyZoneThreshold: nonNegative(options.unhealthyZoneThreshold ?? 0.55, "unhealthyZoneThreshold"),
    evictionPeriodMs: positive(options.nodeEvictionPeriodMs ?? 100, "nodeEvictionPeriodMs"),
  };
  if (settings.monitorGracePeriodMs < settings.monitorPeriodMs) {
    throw new RangeError(
      `NodeLifecycleController: nodeMonitorGracePeriodMs (${settings.monitorGracePeriodMs}) must not be shorter than nodeMonitorPeriodMs (${settings.monitorPeriodMs})`,
    );
  }
  return settings;
}
