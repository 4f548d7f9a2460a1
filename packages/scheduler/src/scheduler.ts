import {
  type DeepReadonly,
  errorMessage,
  metaNamespaceKeyFunc,
  type Node,
  namespaces as namespacesResource,
  nodes as nodesResource,
  type Pod,
  persistentVolumeClaims,
  persistentVolumes,
  podDisruptionBudgets,
  pods as podsResource,
  replicaSets,
  replicationControllers,
  services,
  statefulSets,
  storageClasses,
} from "@reconcile/api";
import type { Client } from "@reconcile/client";
import { type Clock, realClock } from "@reconcile/clock";
import {
  ClientEventsV1Recorder,
  type ControllerInformer,
  type EventRecorder,
  type Logger,
  noopLogger,
  waitForInformersSynced,
} from "@reconcile/controller";
import { namespaceLister } from "./affinity-terms.js";
import { type Binder, ClientBinder } from "./binder.js";
import { SchedulerCache } from "./cache.js";
import { DecisionLog, type SchedulingDecision } from "./decisions.js";
import { addAllEventHandlers, defaultSchedulerName } from "./event-handlers.js";
import { type Diagnosis, FitError, NoNodesAvailableError, truncateMessage } from "./fit-error.js";
import {
  type ClusterEvent,
  type CycleState,
  type Plugin,
  runFilters,
  type Status,
  setNodeLists,
  unresolvable,
  unschedulable,
} from "./framework.js";
import type { NodeInfo } from "./node-info.js";
import { fitsNominatedNode, Nominator, runFiltersWithNominatedPods } from "./nominator.js";
import { PodStatusWriter, withKind } from "./pod-status-writer.js";
import { numFeasibleNodesToFind, prioritizeNodes, selectHost } from "./scoring.js";

export { defaultSchedulerName };

import {
  findPreemption,
  type PreemptionCandidate,
  type PreemptionContext,
} from "./plugins/default-preemption.js";
import { defaultPluginsWith, spreadingListers, volumeListers } from "./plugins/index.js";
import type { SchedulerInformerFactory, SchedulerMetrics, SchedulerOptions } from "./scheduler-options.js";
import { type PendingPods, type QueuedPodInfo, SchedulingQueue } from "./scheduling-queue.js";

export type { ScheduleResult, SchedulerMetrics, SchedulerOptions } from "./scheduler-options.js";

/** Where a successful cycle puts the pod. */
interface ScheduleResultOk {
  nodeName: string;
  evaluatedNodes: number;
  feasibleNodes: number;
  /** With a decision log: the nodes filtered out, and the nodes scored with their totals. */
  diagnosis?: Diagnosis | undefined;
  scored?: { feasible: readonly NodeInfo[]; totals: readonly number[] } | undefined;
}

// How long the scheduling loop runs cycles back to back before it yields to the event loop, in
// ms: at least the shorter, and with pods still waiting after a turn, as long as the rest of the
// process then ran, up to the longer.
const minCycleSliceMs = 10;
const maxCycleSliceMs = 100;

/**
 * A kube-scheduler in miniature (upstream `pkg/scheduler`): pods whose
 * `schedulerName` is ours wait in a {@link SchedulingQueue}; each cycle runs
 * the plugins' PreFilter and Filter over the cached nodes, scores the
 * feasible ones, assumes the pod onto the best (so it counts there at once)
 * and binds it in the background; a pod that fits nowhere gets a
 * `FailedScheduling` Event with upstream's message
 * (`0/3 nodes are available: 3 Insufficient cpu.`) and a `PodScheduled=False`
 * condition, and waits for a cluster event that could help it.
 */
export class Scheduler {
  readonly queue: SchedulingQueue;
  readonly cache = new SchedulerCache();
  readonly schedulerName: string;
  readonly #client: Client;
  readonly #podInformer: ControllerInformer<Pod>;
  readonly #nodeInformer: ControllerInformer<Node>;
  readonly #volumeInformers: SchedulerOptions["volumeInformers"];
  readonly #namespaceInformer: SchedulerOptions["namespaceInformer"];
  readonly #pdbInformer: SchedulerOptions["podDisruptionBudgetInformer"];
  readonly #spreadingInformers: SchedulerOptions["spreadingInformers"];
  readonly #nominator = new Nominator();
  readonly #statusWriter: PodStatusWriter;
  readonly #clock: Clock;
  readonly #binder: Binder;
  readonly #recorder: EventRecorder;
  readonly #ownedRecorder: ClientEventsV1Recorder | undefined;
  readonly #plugins: readonly Plugin[];
  readonly #percentageOfNodesToScore: number;
  readonly #random: () => number;
  readonly #cyclesPerTurn: number | undefined;
  readonly #logger: Logger;
  readonly #metrics: SchedulerMetrics | undefined;
  readonly #decisions: DecisionLog | undefined;
  readonly #introspection: SchedulerOptions["introspection"];
  /** Bindings and condition writes in flight; `run` settles only after they have. */
  readonly #writes = new Set<Promise<void>>();
  #nextStartNodeIndex = 0;
  #signal: AbortSignal = new AbortController().signal;

  constructor(options: SchedulerOptions) {
    if (!options?.client) throw new TypeError("Scheduler: client is required");
    if (!options.podInformer) throw new TypeError("Scheduler: podInformer is required");
    if (!options.nodeInformer) throw new TypeError("Scheduler: nodeInformer is required");
    const percentage = options.percentageOfNodesToScore ?? 0;
    if (!(percentage >= 0 && percentage <= 100)) {
      throw new RangeError(`Scheduler: percentageOfNodesToScore must be within [0, 100], got ${percentage}`);
    }
    this.#client = options.client;
    this.#podInformer = options.podInformer;
    this.#nodeInformer = options.nodeInformer;
    this.schedulerName = options.schedulerName ?? defaultSchedulerName;
    this.#clock = options.clock ?? realClock;
    const volumes = options.volumeInformers;
    this.#volumeInformers = volumes;
    this.#namespaceInformer = options.namespaceInformer;
    this.#pdbInformer = options.podDisruptionBudgetInformer;
    const namespaces = namespaceLister(options.namespaceInformer);
    const spreading = (this.#spreadingInformers = options.spreadingInformers);
    this.#plugins =
      options.plugins ??
      defaultPluginsWith({
        namespaces,
        spreading: spreading === undefined ? undefined : spreadingListers(spreading),
        volumes: volumes === undefined ? undefined : volumeListers(volumes),
      });
    this.#percentageOfNodesToScore = percentage;
    this.#random = options.random ?? Math.random;
    const perTurn = options.cyclesPerTurn;
    if (perTurn !== undefined && !(Number.isInteger(perTurn) && perTurn >= 1))
      throw new RangeError(`Scheduler: cyclesPerTurn must be a positive integer, got ${perTurn}`);
    this.#cyclesPerTurn = perTurn;
    this.#logger = (options.logger ?? noopLogger).child({ component: this.schedulerName });
    this.#metrics = options.metrics;
    if (options.decisionLog) this.#decisions = new DecisionLog(options.decisionLog);
    this.#introspection = options.introspection;
    this.#binder = options.binder ?? new ClientBinder({ client: this.#client, now: () => this.#clock.now() });
    if (options.eventRecorder === undefined) {
      this.#ownedRecorder = new ClientEventsV1Recorder({
        client: this.#client,
        reportingController: this.schedulerName,
        reportingInstance: options.reportingInstance,
        clock: this.#clock,
        logger: this.#logger,
      });
    }
    this.#recorder = options.eventRecorder ?? this.#ownedRecorder!;
    this.#statusWriter = new PodStatusWriter({
      client: this.#client,
      clock: this.#clock,
      logger: this.#logger,
      recorder: this.#recorder,
      schedulerName: this.schedulerName,
      signal: () => this.#signal,
    });
    const pluginEvents = new Map<string, ReadonlySet<ClusterEvent>>();
    for (const plugin of this.#plugins) pluginEvents.set(plugin.name, new Set(plugin.events ?? []));
    this.queue = new SchedulingQueue({
      clock: this.#clock,
      pluginEvents,
      podInitialBackoffMs: options.podInitialBackoffMs,
      podMaxBackoffMs: options.podMaxBackoffMs,
    });
    addAllEventHandlers({
      cache: this.cache,
      queue: this.queue,
      plugins: this.#plugins,
      schedulerName: this.schedulerName,
      podInformer: this.#podInformer,
      nodeInformer: this.#nodeInformer,
      volumeInformers: volumes,
      namespaceLabels: namespaces?.labels,
    });
    // Nominations follow the pods' status (upstream's queue updates its nominator on pod events).
    this.#nominator.follow(this.#podInformer, this.schedulerName);
  }

  /** Builds the scheduler on a `SharedInformerFactory`'s pod and node informers; start the factory after this. */
  static fromInformerFactory(
    factory: SchedulerInformerFactory,
    options: Omit<SchedulerOptions, "podInformer" | "nodeInformer">,
  ): Scheduler {
    return new Scheduler({
      ...options,
      podInformer: factory.forResource(podsResource),
      nodeInformer: factory.forResource(nodesResource),
      volumeInformers: options.volumeInformers ?? {
        claims: factory.forResource(persistentVolumeClaims),
        volumes: factory.forResource(persistentVolumes),
        classes: factory.forResource(storageClasses),
      },
      namespaceInformer: options.namespaceInformer ?? factory.forResource(namespacesResource),
      podDisruptionBudgetInformer:
        options.podDisruptionBudgetInformer ?? factory.forResource(podDisruptionBudgets),
      spreadingInformers: options.spreadingInformers ?? {
        services: factory.forResource(services),
        replicationControllers: factory.forResource(replicationControllers),
        replicaSets: factory.forResource(replicaSets),
        statefulSets: factory.forResource(statefulSets),
      },
    });
  }

  /**
   * Waits for the pod and node caches, then schedules one pod at a time
   * until `signal` aborts. Settles once the queue's timers are cleared, the
   * bindings in flight have ended (the signal aborts their requests) and
   * pending Events are written.
   */
  async run({ signal }: { signal: AbortSignal }): Promise<void> {
    this.#signal = signal;
    const queueRun = this.queue.run({ signal });
    const source = { kind: "scheduler", name: this.schedulerName, snapshot: () => this.inspect() };
    const unregister = this.#introspection?.register(source);
    try {
      const synced = await waitForInformersSynced({
        informers: {
          pods: this.#podInformer,
          nodes: this.#nodeInformer,
          ...(this.#namespaceInformer === undefined ? {} : { namespaces: this.#namespaceInformer }),
          ...this.#spreadingInformers,
          ...(this.#volumeInformers === undefined
            ? {}
            : {
                claims: this.#volumeInformers.claims,
                volumes: this.#volumeInformers.volumes,
                classes: this.#volumeInformers.classes,
              }),
        },
        signal,
        clock: this.#clock,
      });
      if (!synced) return;
      this.#logger.info({}, "Caches are synced, scheduling");
      let sliceMs = minCycleSliceMs;
      for (;;) {
        let info = await this.queue.pop(signal);
        if (info === undefined) break;
        // Cycles run one at a time, several per turn of the event loop: a turn
        // costs whatever else is waiting (informer events, controller syncs),
        // so one cycle per turn would pace scheduling by the rest of the
        // process. After a slice, informer events and bindings get their turn.
        const perTurn = this.#cyclesPerTurn;
        const sliceEnd = perTurn === undefined ? performance.now() + sliceMs : 0;
        let cycles = 0;
        while (info !== undefined) {
          this.#cycle(info);
          cycles++;
          if (signal.aborted || (perTurn === undefined ? performance.now() >= sliceEnd : cycles >= perTurn))
            break;
          info = this.queue.tryPop();
        }
        const yielded = perTurn === undefined ? performance.now() : 0;
        await new Promise<void>((resolve) => setImmediate(resolve));
        if (perTurn !== undefined) continue;
        // A slice that ran out of time (rather than out of pods) leaves a backlog: the next one is
        // as long as the rest of the process just ran, so that the scheduler has half the event
        // loop, as kube-scheduler has a process of its own; otherwise a busy process would leave
        // pods queued for seconds.
        sliceMs =
          info === undefined
            ? minCycleSliceMs
            : Math.min(maxCycleSliceMs, Math.max(minCycleSliceMs, performance.now() - yielded));
      }
    } finally {
      unregister?.();
      this.queue.close();
      await queueRun;
      await Promise.allSettled(this.#writes);
      await this.#ownedRecorder?.flush();
    }
  }

  #cycle(info: QueuedPodInfo): void {
    try {
      this.scheduleOne(info);
    } catch (error) {
      // Only a failing logger or recorder can get here: the pod must not be lost.
      this.queue.done(info.key);
      this.queue.addUnschedulableIfNotPresent(info, this.queue.schedulingCycle());
      this.#logger.error({ err: error }, "Scheduling cycle failed");
    }
  }

  /**
   * One scheduling cycle for a popped pod (upstream `ScheduleOne`): filter,
   * score, assume, then bind in the background. Synchronous up to the bind,
   * so the cache cannot change under it.
   */
  scheduleOne(info: QueuedPodInfo): void {
    const pod = info.pod;
    const uid = pod.metadata?.uid ?? "";
    if (pod.metadata?.deletionTimestamp) {
      this.queue.done(uid);
      this.#recorder.event(
        withKind(pod),
        "Warning",
        "FailedScheduling",
        `skip schedule deleting pod: ${pod.metadata.namespace}/${pod.metadata.name}`,
        { action: "Scheduling" },
      );
      return;
    }
    if (this.cache.isAssumed(uid)) {
      this.queue.done(uid);
      return;
    }
    const cycle = this.queue.schedulingCycle();
    const started = this.#clock.now();
    let result: ScheduleResultOk;
    try {
      result = this.schedulePod(pod);
    } catch (error) {
      this.#decisions?.failed(pod, cycle, started, error);
      this.#handleFailure(info, error, cycle, started);
      return;
    }
    this.#decisions?.scheduled(pod, cycle, started, result);
    // Object.assign, not a spread and a new member: that costs V8 a new hidden class each time.
    const spec = Object.assign({}, pod.spec!, { nodeName: result.nodeName });
    const assumed: DeepReadonly<Pod> = { ...pod, spec };
    this.cache.assumePod(assumed);
    this.#nominator.delete(uid);
    this.queue.done(uid);
    this.#track(this.#bind(info, assumed, result.nodeName, cycle, started));
  }

  /** The scheduler now: where its pods wait, the nodes it knows, its last decisions (with `decisionLog`). */
  inspect(): { queue: PendingPods; nodes: number; decisions: SchedulingDecision[] } {
    const decisions = this.#decisions?.list() ?? [];
    return { queue: this.queue.pendingPods(), nodes: this.cache.nodeList().length, decisions };
  }

  /**
   * Picks a node for `pod` (upstream `schedulePod`), or throws a FitError
   * whose message is the FailedScheduling text. Exposed for tests and tools;
   * it neither assumes nor binds.
   */
  schedulePod(pod: DeepReadonly<Pod>): ScheduleResultOk {
    const allNodes = this.cache.nodeList();
    if (allNodes.length === 0) throw new NoNodesAvailableError();
    const state: CycleState = new Map();
    setNodeLists(state, this.cache);
    const diagnosis: Diagnosis = { nodeToStatus: new Map(), unschedulablePlugins: new Set() };
    const filters: Plugin[] = [];
    let preFilterRejection: Status | undefined;
    // The PreFilterResults, intersected: the only nodes worth filtering, and which plugins said so.
    let nodeNames: ReadonlySet<string> | undefined;
    const narrowing: string[] = [];
    for (const plugin of this.#plugins) {
      if (plugin.filter === undefined) continue;
      const status = plugin.preFilter?.(state, pod, allNodes);
      if (status?.code === "Skip") continue;
      filters.push(plugin);
      if (status?.nodeNames !== undefined) {
        const names = status.nodeNames;
        nodeNames = nodeNames === undefined ? names : new Set([...nodeNames].filter((n) => names.has(n)));
        narrowing.push(plugin.name);
        if (nodeNames.size === 0) {
          for (const name of narrowing) diagnosis.unschedulablePlugins.add(name);
          preFilterRejection ??= unschedulable(
            narrowing.length === 1
              ? `node(s) didn't satisfy plugin ${narrowing[0]}`
              : `node(s) didn't satisfy plugin(s) [${[...narrowing].sort().join(" ")}] simultaneously`,
          );
          break;
        }
      }
      if (status === undefined || status.code === "Success") continue;
      if (status.code === "Error")
        throw new Error(`running PreFilter plugin "${plugin.name}": ${status.reasons.join(", ")}`);
      diagnosis.unschedulablePlugins.add(plugin.name);
      preFilterRejection ??= status;
      if (status.code === "UnschedulableAndUnresolvable") break;
    }
    if (preFilterRejection !== undefined) {
      diagnosis.preFilterMsg = preFilterRejection.reasons.join(", ");
      // Every node has the PreFilter's status for preemption (upstream's SetAbsentNodesStatus), which
      // then says whether evicting anything could help.
      const rejection = preFilterRejection;
      const everyNode: Diagnosis = {
        nodeToStatus: new Map(allNodes.map((info) => [info.name, rejection])),
        unschedulablePlugins: diagnosis.unschedulablePlugins,
      };
      const preemption = this.#preemption({ pod, allNodes, diagnosis: everyNode, filters, state });
      diagnosis.postFilterMsg = preemption.message;
      throw new FitError(allNodes.length, diagnosis, preemption);
    }
    const nominated = fitsNominatedNode(pod, filters, state, this.#nominator, (name) =>
      this.cache.nodeInfo(name),
    );
    if (nominated !== undefined) return { nodeName: nominated, evaluatedNodes: 1, feasibleNodes: 1 };
    let nodes = allNodes;
    if (nodeNames !== undefined) {
      nodes = [];
      for (const name of nodeNames) {
        const info = this.cache.nodeInfo(name);
        if (info?.node !== undefined) (nodes as NodeInfo[]).push(info);
      }
      diagnosis.absentNodes = {
        count: allNodes.length - nodes.length,
        status: unresolvable(`node(s) didn't satisfy plugin(s) [${[...narrowing].sort().join(" ")}]`),
      };
    }
    const feasible = this.#findNodesThatPassFilters(state, pod, nodes, filters, diagnosis);
    if (feasible.length === 0) {
      const preemption = this.#preemption({ pod, allNodes, diagnosis, filters, state });
      diagnosis.postFilterMsg = preemption.message;
      throw new FitError(allNodes.length, diagnosis, preemption);
    }
    const evaluatedNodes = feasible.length + diagnosis.nodeToStatus.size;
    const kept = this.#decisions === undefined ? undefined : diagnosis;
    if (feasible.length === 1) {
      return { nodeName: feasible[0]!.name, evaluatedNodes, feasibleNodes: 1, diagnosis: kept };
    }
    const totals = prioritizeNodes(this.#plugins, state, pod, feasible, allNodes);
    const nodeName = selectHost(feasible, totals, this.#random);
    const scored = kept && { feasible, totals };
    return { nodeName, evaluatedNodes, feasibleNodes: feasible.length, diagnosis: kept, scored };
  }

  /** DefaultPreemption's PostFilter over this cycle's statuses, with the budgets the informer holds. */
  #preemption(cycle: Pick<PreemptionContext, "pod" | "allNodes" | "diagnosis" | "filters" | "state">) {
    const pdbs = this.#pdbInformer?.getIndexer().byIndex("namespace", cycle.pod.metadata?.namespace ?? "");
    const nominatedOn = (nodeName: string) => this.#nominator.nominatedOn(nodeName);
    return findPreemption({
      ...cycle,
      pdbs: pdbs ?? [],
      now: this.#clock.now(),
      random: this.#random,
      nominatedOn,
    });
  }

  /** How many feasible nodes to find before scoring (upstream `numFeasibleNodesToFind`). */
  numFeasibleNodesToFind(numAllNodes: number): number {
    return numFeasibleNodesToFind(numAllNodes, this.#percentageOfNodesToScore);
  }

  // --- the cycle's steps ------------------------------------------------------

  #findNodesThatPassFilters(
    state: CycleState,
    pod: DeepReadonly<Pod>,
    allNodes: readonly NodeInfo[],
    filters: readonly Plugin[],
    diagnosis: Diagnosis,
  ): NodeInfo[] {
    const want = this.numFeasibleNodesToFind(allNodes.length);
    // Nominated pods are rare: without any, each node is filtered plainly.
    const nominator = this.#nominator.size > 0 ? this.#nominator : undefined;
    const feasible: NodeInfo[] = [];
    const n = allNodes.length;
    const start = this.#nextStartNodeIndex % n;
    let processed = 0;
    for (let i = 0; i < n && feasible.length < want; i++) {
      const nodeInfo = allNodes[(start + i) % n]!;
      processed++;
      const status =
        nominator === undefined
          ? runFilters(filters, state, pod, nodeInfo)
          : runFiltersWithNominatedPods(filters, state, pod, nodeInfo, nominator.nominatedOn(nodeInfo.name));
      if (status === undefined) {
        feasible.push(nodeInfo);
        continue;
      }
      if (status.code === "Error") {
        throw new Error(
          `running Filter plugin "${status.plugin}" on node "${nodeInfo.name}": ${status.reasons.join(", ")}`,
        );
      }
      diagnosis.nodeToStatus.set(nodeInfo.name, status);
      diagnosis.unschedulablePlugins.add(status.plugin ?? "");
    }
    this.#nextStartNodeIndex = (start + processed) % n;
    return feasible;
  }

  #track(write: Promise<void>): void {
    this.#writes.add(write);
    // Both writes handle their own failures; only a throwing logger or recorder can reject them.
    const forget = () => {
      this.#writes.delete(write);
    };
    write.then(forget, forget);
  }

  async #bind(
    info: QueuedPodInfo,
    assumed: DeepReadonly<Pod>,
    nodeName: string,
    cycle: number,
    started: number,
  ): Promise<void> {
    const uid = assumed.metadata?.uid ?? "";
    try {
      await this.#binder.bind(assumed, nodeName, { signal: this.#signal });
    } catch (error) {
      this.cache.forgetPod(uid);
      // Resources the pod held may let a parked pod fit now.
      this.queue.moveAllToActiveOrBackoffQueue("AssignedPodDelete");
      if (this.#signal.aborted) return;
      this.#handleFailure(info, error, cycle, started, true);
      return;
    }
    this.cache.finishBinding(uid);
    const { namespace, name } = assumed.metadata ?? {};
    this.#recorder.event(
      withKind(assumed),
      "Normal",
      "Scheduled",
      `Successfully assigned ${namespace}/${name} to ${nodeName}`,
      { action: "Binding" },
    );
    const seconds = (this.#clock.now() - started) / 1000;
    this.#metrics?.scheduleAttempt("scheduled", this.schedulerName, seconds);
    this.#metrics?.podScheduled(
      info.attempts,
      (this.#clock.now() - (info.initialAttemptTimestamp ?? started)) / 1000,
    );
  }

  // upstream handleSchedulingFailure: Event, requeue from the informer's copy, PodScheduled=False.
  #handleFailure(
    info: QueuedPodInfo,
    error: unknown,
    cycle: number,
    started: number,
    afterAssume = false,
  ): void {
    const fit = FitError.isInstance(error) ? error : undefined;
    // Rejected (Unschedulable) when no node fits or there is none; anything else is a SchedulerError.
    const rejected = fit !== undefined || NoNodesAvailableError.isInstance(error);
    const reason = rejected ? "Unschedulable" : "SchedulerError";
    const message = errorMessage(error);
    const pod = info.pod;
    const key = metaNamespaceKeyFunc(pod);
    this.#metrics?.scheduleAttempt(
      rejected ? "unschedulable" : "error",
      this.schedulerName,
      (this.#clock.now() - started) / 1000,
    );
    const current = this.#podInformer.getIndexer().getByKey(key);
    if (current !== undefined && current.metadata?.uid === info.key && !current.spec?.nodeName) {
      info.pod = current;
      info.unschedulablePlugins = fit?.diagnosis.unschedulablePlugins ?? new Set();
      this.queue.addUnschedulableIfNotPresent(info, cycle);
    }
    if (!afterAssume) this.queue.done(info.key);
    if (current === undefined || current.metadata?.uid !== info.key) return; // deleted meanwhile
    this.#logger.debug(
      { namespace: pod.metadata?.namespace, name: pod.metadata?.name, reason, err: error },
      "Unable to schedule pod",
    );
    this.#recorder.event(withKind(current), "Warning", "FailedScheduling", truncateMessage(message), {
      action: "Scheduling",
    });
    // DefaultPreemption found whom to evict: they go, and the pod is nominated to their node; or no
    // node could be made to fit, and an earlier nomination is cleared.
    const preemption = fit?.preemption;
    let nominatedNodeName: string | undefined;
    if (preemption?.candidate !== undefined) {
      nominatedNodeName = preemption.candidate.nodeName;
      this.#nominator.add(current, nominatedNodeName);
      this.#track(this.#prepareCandidate(current, preemption.candidate));
    } else if (preemption?.clearNomination) {
      nominatedNodeName = "";
      this.#nominator.delete(info.key);
    }
    this.#track(this.#statusWriter.setPodScheduledFalse(current, reason, message, nominatedNodeName));
  }

  /** `prepareCandidate`: lower-priority nominations to the node go (those pods may not fit), the victims too. */
  async #prepareCandidate(preemptor: DeepReadonly<Pod>, candidate: PreemptionCandidate): Promise<void> {
    for (const pod of this.#nominator.takeLowerPriority(candidate.nodeName, preemptor.spec?.priority ?? 0))
      this.#track(this.#statusWriter.clearNominatedNodeName(pod));
    await this.#statusWriter.evictVictims(preemptor, candidate);
  }
}
