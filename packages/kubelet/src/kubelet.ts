// The kubelet (`pkg/kubelet/kubelet.go`) around the pod workers: the pod source (an informer
// on pods bound to this node, or a shared one fed by a NodeSimulator), `syncLoop` /
// `syncLoopIteration` over config changes, PLEG events, the 1 s sync tick, probe results and
// the 2 s housekeeping tick, admission against the node's allocatable resources, and the
// PodSyncer the workers call: syncPod, syncTerminatingPod, syncTerminatingRuntimePod and
// syncTerminatedPod. Around them: the node's registration and status, its Lease, the status
// manager, the probe manager and container logs.
import { setMaxListeners } from "node:events";
import { copyJson, type DeepReadonly, kubernetesVersion, type Pod } from "@reconcile/api";
import type { Client } from "@reconcile/client";
import { type Clock, realClock } from "@reconcile/clock";
import { ClientEventRecorder, type EventRecorder, type Logger, noopLogger } from "@reconcile/controller";
import type { ResourceEventHandler } from "@reconcile/informer";
import type { PodStatus } from "kubernetes-types/core/v1.js";
import { PodAdmission } from "./admission.js";
import { podConfigHandler, runApiSource } from "./config/api-source.js";
import { runStaticPodSources } from "./config/static-pod-sources.js";
import { clientEnvironment } from "./container-env.js";
import type { KubeletOptions } from "./kubelet-options.js";
import { type ContainerLogOptions, type ContainerLogResult, readContainerLogs } from "./logs.js";
import { MirrorPods } from "./mirror-pods.js";
import { NodeFilesystem } from "./node-filesystem.js";
import { NodeLease } from "./node-lease.js";
import { defaultNodeResources, NodeStatusManager, nodeRef } from "./node-status.js";
import { isRuntimePodStatusTerminal, Pleg, type RuntimePodStatus } from "./pleg.js";
import { runtimePodCleanups } from "./pod-cleanups.js";
import { PodManager } from "./pod-manager.js";
import { podRef } from "./pod-ref.js";
import { PodStartupLatencyTracker } from "./pod-startup-latency.js";
import { generateAPIPodStatus } from "./pod-status.js";
import {
  BasicWorkQueue,
  type ConfigPod,
  newPodWorkers,
  type PodStatusFunc,
  type PodSyncer,
  type RunnablePodWorkers,
  type RunningPod,
  type SyncPodType,
} from "./pod-workers/index.js";
import { ProbeManager } from "./prober.js";
import type { ContainerRuntime } from "./runtime/runtime.js";
import { SimulatedRuntime } from "./runtime/simulated-runtime.js";
import { RuntimeManager } from "./runtime-manager.js";
import { isMirrorPod, podFullName } from "./static-pods.js";
import { StatusManager } from "./status-manager.js";
import { type LoopMessage, SyncLoop } from "./sync-loop.js";
import { VolumeManager, VolumeMountError } from "./volume-manager.js";

export type { KubeletMetrics, KubeletOptions } from "./kubelet-options.js";

/** See the file comment. */
export class Kubelet implements PodSyncer<RuntimePodStatus> {
  readonly nodeName: string;
  readonly runtime: ContainerRuntime;
  readonly statusManager: StatusManager;
  readonly nodeStatus: NodeStatusManager;
  readonly nodeLease: NodeLease;
  readonly podWorkers: RunnablePodWorkers;
  /**
   * The node's files: volumes are set up here and containers see them
   * through their mounts. A {@link SimulatedRuntime}'s own, else a new one.
   */
  readonly filesystem: NodeFilesystem;
  readonly volumeManager: VolumeManager;
  /** Feeds this kubelet its pods when `podSource` is `external`. */
  readonly podHandler: ResourceEventHandler<Pod>;

  readonly #client: Client;
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #logger: Logger;
  readonly #podStartLatency: PodStartupLatencyTracker;
  readonly #recorder: EventRecorder;
  readonly #ownsRecorder: boolean;
  readonly #ownsRuntime: boolean;
  readonly #podSource: "informer" | "external";
  readonly #nodeIP: string;
  readonly pleg: Pleg;
  readonly #workQueue: BasicWorkQueue;
  readonly #runtimeManager: RuntimeManager;
  readonly #probeManager: ProbeManager;
  readonly #options: KubeletOptions;
  /** Pods from config, mirror pods, and which pods are static. */
  readonly #podManager = new PodManager();
  readonly #mirrorPods: MirrorPods;
  /** Admitted pods and their requests: what admission counts as used, and their sum. */
  readonly #admitted: PodAdmission;
  readonly #syncLoop: SyncLoop;
  #sourcesReady = false;
  #running = false;

  constructor(options: KubeletOptions) {
    if (!options?.nodeName) throw new TypeError("Kubelet: nodeName is required");
    if (options.client === undefined) throw new TypeError("Kubelet: client is required");
    this.#options = options;
    this.nodeName = options.nodeName;
    this.#client = options.client;
    this.#clock = options.clock ?? realClock;
    this.#random = options.random ?? Math.random;
    this.#logger = options.logger ?? noopLogger;
    this.#syncLoop = new SyncLoop({ clock: this.#clock, logger: this.#logger, nodeName: this.nodeName });
    this.#podStartLatency = new PodStartupLatencyTracker(this.#clock, options.metrics);
    this.#podSource = options.podSource ?? "informer";
    this.#nodeIP = options.nodeIP ?? "10.0.0.2";
    const podCIDR = options.podCIDR ?? "10.244.0.0/24";
    this.#ownsRuntime = options.runtime === undefined;
    this.runtime =
      options.runtime ?? new SimulatedRuntime({ clock: this.#clock, seed: options.nodeName, podCIDR });
    this.filesystem =
      this.runtime instanceof SimulatedRuntime ? this.runtime.filesystem : new NodeFilesystem();
    this.#ownsRecorder = options.recorder === undefined;
    this.#recorder =
      options.recorder ??
      new ClientEventRecorder({
        client: this.#client,
        component: "kubelet",
        host: this.nodeName,
        clock: this.#clock,
        logger: this.#logger,
      });
    this.pleg = new Pleg({
      runtime: this.runtime,
      clock: this.#clock,
      relistPeriodMs: options.plegRelistPeriodMs,
      onEvents: (events) => this.#syncLoop.send({ kind: "pleg", events }),
    });
    this.#workQueue = new BasicWorkQueue({ clock: this.#clock });
    this.statusManager = new StatusManager({
      client: this.#client,
      getPod: (uid) => this.#podManager.apiPodOf(uid),
      isStaticPod: (uid) => this.#podManager.isStaticPod(uid),
      clock: this.#clock,
      logger: this.#logger,
    });
    this.#runtimeManager = new RuntimeManager({
      runtime: this.runtime,
      recorder: this.#recorder,
      clock: this.#clock,
      onBackoffExpired: (uid, at) => this.#syncLoop.syncAt(uid, at),
      mountsFor: (pod, container) => this.volumeManager.mountsFor(pod, container),
      environmentFor: clientEnvironment(this.#client, () => this.nodeStatus.allocatable(), this.#nodeIP),
    });
    this.#probeManager = new ProbeManager({
      runtime: this.runtime,
      recorder: this.#recorder,
      clock: this.#clock,
      getPodStatus: (uid) => this.statusManager.getPodStatus(uid),
      onUpdate: (update) => this.#syncLoop.send({ kind: "probe", update }),
    });
    this.nodeStatus = new NodeStatusManager({
      client: this.#client,
      nodeName: this.nodeName,
      nodeIP: this.#nodeIP,
      resources: { ...defaultNodeResources, ...options.resources },
      labels: options.labels ?? {},
      podCIDR,
      runtime: this.runtime,
      kubeletVersion: options.kubeletVersion ?? kubernetesVersion.gitVersion,
      recorder: this.#recorder,
      clock: this.#clock,
      logger: this.#logger,
      runtimeProblem: () => this.pleg.unhealthy(),
      reportFrequencyMs: options.nodeStatusReportFrequencyMs ?? 300_000,
    });
    this.#admitted = new PodAdmission({
      allocatable: () => this.nodeStatus.allocatable(),
      nodeLabels: () => this.nodeStatus.initialNodeLabels(),
      statuses: this.statusManager,
      recorder: this.#recorder,
    });
    this.volumeManager = new VolumeManager({
      client: this.#client,
      recorder: this.#recorder,
      filesystem: this.filesystem,
      clock: this.#clock,
      logger: this.#logger,
      allocatable: () => this.nodeStatus.allocatable(),
    });
    this.nodeLease = new NodeLease({
      client: this.#client,
      nodeName: this.nodeName,
      leaseDurationSeconds: options.nodeLeaseDurationSeconds,
      clock: this.#clock,
      logger: this.#logger,
    });
    this.podWorkers = newPodWorkers<RuntimePodStatus>({
      podSyncer: this,
      podCache: this.pleg,
      isPodStatusTerminal: isRuntimePodStatusTerminal,
      workQueue: this.#workQueue,
      resyncIntervalMs: options.syncFrequencyMs ?? 60_000,
      recorder: this.#recorder,
      logger: this.#logger,
      clock: this.#clock,
      random: this.#random,
      metrics: options.metrics,
    });
    this.podHandler = podConfigHandler((op, pods) => this.#syncLoop.send({ kind: "config", op, pods }));
    this.#mirrorPods = new MirrorPods({
      client: this.#client,
      nodeName: this.nodeName,
      podManager: this.#podManager,
      logger: this.#logger,
      onCreated: (mirror) => this.#handleMirrorPod(mirror, true),
    });
  }

  /**
   * Runs the kubelet until `signal` aborts: registers the node, renews its
   * lease, watches its pods and syncs them. Resolves once everything has
   * stopped (workers drained, timers cleared, status writes and events flushed).
   */
  async run({ signal }: { signal: AbortSignal }): Promise<void> {
    if (this.#running) throw new Error(`Kubelet ${this.nodeName}: already running`);
    this.#running = true;
    // Every component of the kubelet listens on the signal; many kubelets may share it.
    setMaxListeners(0, signal);
    this.#recorder.event(nodeRef(this.nodeName), "Normal", "Starting", "Starting kubelet.");
    const tasks: Promise<void>[] = [
      this.nodeStatus.run({
        signal,
        periodMs: this.#options.nodeStatusUpdateFrequencyMs ?? 10_000,
        random: this.#random,
      }),
      this.nodeLease.run({ signal, ready: () => this.nodeStatus.registered, random: this.#random }),
      this.statusManager.run({ signal }),
      this.podWorkers.run({ signal }),
    ];
    if (this.#podSource === "informer") {
      const { nodeName } = this;
      const onSynced = () => {
        this.#sourcesReady = true;
      };
      const source = { client: this.#client, nodeName, clock: this.#clock, handler: this.podHandler };
      tasks.push(runApiSource({ ...source, random: this.#random, onSynced, signal }));
    }
    const sources = {
      nodeName: this.nodeName,
      clock: this.#clock,
      logger: this.#logger,
      podManager: this.#podManager,
      send: (op: "ADD" | "REMOVE", pods: readonly DeepReadonly<Pod>[]) =>
        this.#syncLoop.send({ kind: "config", op, pods: [...pods] }),
    };
    tasks.push(...runStaticPodSources(sources, this.#options, signal));
    const stopPleg = this.pleg.start();
    const iterate = (message: LoopMessage) => this.syncLoopIteration(message);
    const relist = () => this.pleg.relist();
    const relistPeriodMs = this.pleg.relistPeriodMs;
    tasks.push(this.#syncLoop.run({ signal, iterate, relist, relistPeriodMs }));
    await Promise.allSettled(tasks);
    stopPleg();
    this.#syncLoop.close();
    this.#probeManager.stopAll();
    if (this.#ownsRuntime && this.runtime instanceof SimulatedRuntime) this.runtime.close();
    if (this.#ownsRecorder) await (this.#recorder as ClientEventRecorder).flush();
  }

  /** Marks the pod source synced (`podSource: external`): housekeeping may run. */
  markSourcesReady(): void {
    this.#sourcesReady = true;
  }

  /** The pods this kubelet holds in config. */
  getPods(): DeepReadonly<Pod>[] {
    return this.#podManager.getPods();
  }

  /** Reads a container's log as the kubelet's `/containerLogs` endpoint answers it. */
  containerLogs(
    namespace: string,
    podName: string,
    container: string,
    options: ContainerLogOptions,
  ): ContainerLogResult {
    const pod = this.#podManager.getPodByName(namespace, podName);
    const status = pod?.metadata?.uid ? this.statusManager.getPodStatus(pod.metadata.uid) : undefined;
    return readContainerLogs(
      this.runtime,
      this.#clock,
      pod,
      status ?? pod?.status,
      podName,
      container,
      options,
    );
  }

  // --- PodSyncer ------------------------------------------------------------

  async syncPod(
    signal: AbortSignal,
    _updateType: SyncPodType,
    pod: ConfigPod,
    _mirrorPod: ConfigPod | undefined,
    podStatus: RuntimePodStatus,
  ): Promise<boolean> {
    const uid = pod.metadata?.uid ?? "";
    if (this.#podManager.isStaticPod(uid)) await this.#mirrorPods.sync(pod);
    const apiStatus = this.#generateStatus(pod, podStatus, false);
    this.statusManager.setPodStatus(pod, apiStatus);
    this.#podStartLatency.observe(pod, apiStatus);
    if (apiStatus.phase === "Succeeded" || apiStatus.phase === "Failed") return true;
    this.#probeManager.addPod(pod);
    try {
      await this.volumeManager.waitForAttachAndMount(pod, signal);
    } catch (error) {
      if (VolumeMountError.isInstance(error))
        this.#recorder.event(
          podRef(pod),
          "Warning",
          "FailedMount",
          `Unable to attach or mount volumes: ${error.message}`,
        );
      throw error;
    }
    const result = await this.#runtimeManager.syncPod(
      pod,
      podStatus,
      this.statusManager.getPodStatus(uid),
      {
        failure: (containerId) => this.#probeManager.failure(uid, containerId),
        startup: (containerId) => this.#probeManager.startup(uid, containerId),
      },
      signal,
    );
    if (result.error !== undefined) throw result.error;
    return false;
  }

  async syncTerminatingPod(
    signal: AbortSignal,
    pod: ConfigPod,
    podStatus: RuntimePodStatus,
    gracePeriod: number | undefined,
    podStatusFn: PodStatusFunc | undefined,
  ): Promise<void> {
    const uid = pod.metadata?.uid ?? "";
    const before = this.#generateStatus(pod, podStatus, false);
    podStatusFn?.(before);
    this.statusManager.setPodStatus(pod, before);
    this.#probeManager.stopLivenessAndStartup(uid);
    const current = this.pleg.inspect(uid, pod.metadata?.name ?? "", pod.metadata?.namespace ?? "");
    await this.#runtimeManager.killPod(pod, current, gracePeriod, signal);
    const stopped = this.pleg.inspect(uid, pod.metadata?.name ?? "", pod.metadata?.namespace ?? "");
    if (stopped.containers.some((c) => c.state === "running"))
      throw new Error("detected running containers after a successful KillPod");
    const final = this.#generateStatus(pod, stopped, true);
    podStatusFn?.(final);
    this.statusManager.setPodStatus(pod, final);
  }

  async syncTerminatingRuntimePod(signal: AbortSignal, runningPod: RunningPod): Promise<void> {
    const status = this.pleg.inspect(runningPod.id, runningPod.name, runningPod.namespace);
    // A pod with no config left is killed at once (grace period 1, as upstream).
    await this.#runtimeManager.killPod(undefined, status, 1, signal);
    const after = this.pleg.inspect(runningPod.id, runningPod.name, runningPod.namespace);
    if (after.containers.some((c) => c.state === "running"))
      throw new Error("detected running containers after a successful KillPod");
  }

  async syncTerminatedPod(_signal: AbortSignal, pod: ConfigPod, podStatus: RuntimePodStatus): Promise<void> {
    const uid = pod.metadata?.uid ?? "";
    const status = this.#generateStatus(pod, podStatus, true);
    this.statusManager.setPodStatus(pod, status);
    this.#probeManager.removePod(uid);
    this.#admitted.release(uid);
    // Containers are gone: tear the volumes down (`WaitForUnmount`), then the pod is finished.
    this.volumeManager.unmountPod(uid);
    this.statusManager.terminatePod(pod, copyJson(status));
  }

  // --- sync loop ------------------------------------------------------------

  /** Handles one message of the loop (`syncLoopIteration`). */
  private syncLoopIteration(message: LoopMessage): void {
    switch (message.kind) {
      case "config":
        switch (message.op) {
          case "ADD":
            this.handlePodAdditions(message.pods);
            break;
          case "UPDATE":
          case "DELETE":
            this.handlePodUpdates(message.pods);
            break;
          case "REMOVE":
            this.handlePodRemoves(message.pods);
            break;
          case "RECONCILE":
            this.handlePodReconcile(message.pods);
            break;
        }
        return;
      case "pleg": {
        const uids = new Set<string>();
        for (const event of message.events) if (event.type !== "ContainerRemoved") uids.add(event.podUid);
        this.handlePodSyncs(this.#podsOf(uids));
        return;
      }
      case "sync":
        this.handlePodSyncs(this.#podsOf(message.uids ?? this.#workQueue.getWork()));
        return;
      case "probe": {
        const { update } = message;
        const pod = this.#podManager.getPodByUID(update.podUid);
        if (pod === undefined) return;
        if (update.type === "readiness")
          this.statusManager.setContainerReadiness(pod, update.containerId, update.success);
        if (update.type === "startup")
          this.statusManager.setContainerStartup(pod, update.containerId, update.success);
        // Liveness: only failures need the pod synced (the container gets killed).
        if (update.type !== "liveness" || !update.success) this.handlePodSyncs([pod]);
        return;
      }
      case "housekeeping":
        if (this.#sourcesReady) this.handlePodCleanups();
        return;
    }
  }

  /** New pods, oldest first: admission, then a `create` for each admitted one (`HandlePodAdditions`). */
  handlePodAdditions(added: readonly DeepReadonly<Pod>[]): void {
    const sorted = [...added].sort((a, b) =>
      (a.metadata?.creationTimestamp ?? "").localeCompare(b.metadata?.creationTimestamp ?? ""),
    );
    for (const pod of sorted) {
      const uid = pod.metadata?.uid;
      if (!uid) continue;
      if (isMirrorPod(pod)) {
        this.#handleMirrorPod(pod, true);
        continue;
      }
      this.#podManager.setPod(pod);
      const admits = !this.podWorkers.isPodTerminationRequested(uid) && !isTerminalPod(pod);
      if (admits && !this.#admitted.admit(pod)) continue;
      this.podWorkers.updatePod({
        updateType: "create",
        pod,
        mirrorPod: this.#podManager.getMirrorPodByFullName(podFullName(pod)),
        startTime: this.#clock.now(),
      });
    }
  }

  /** Changed pods, including ones being deleted gracefully (`HandlePodUpdates`). */
  handlePodUpdates(updated: readonly DeepReadonly<Pod>[]): void {
    for (const pod of updated) {
      const uid = pod.metadata?.uid;
      if (!uid) continue;
      if (isMirrorPod(pod)) {
        this.#handleMirrorPod(pod, false);
        continue;
      }
      this.#podManager.setPod(pod);
      if (this.#admitted.isRejected(uid)) continue;
      this.podWorkers.updatePod({ updateType: "update", pod, startTime: this.#clock.now() });
    }
  }

  /** Pods gone from config: kill them (`HandlePodRemoves`). */
  handlePodRemoves(removed: readonly DeepReadonly<Pod>[]): void {
    for (const pod of removed) {
      const uid = pod.metadata?.uid;
      if (!uid) continue;
      if (isMirrorPod(pod)) {
        // A deleted mirror pod: its static pod is synced, which creates a new one.
        const fullName = podFullName(pod);
        this.#podManager.removeMirrorPod(fullName, uid);
        this.#syncStaticPodOf(fullName);
        continue;
      }
      this.#podManager.removePod(uid);
      this.#admitted.release(uid);
      this.podWorkers.updatePod({ updateType: "kill", pod, startTime: this.#clock.now() });
    }
  }

  /** Status-only changes: keep the newest copy (`HandlePodReconcile`). */
  handlePodReconcile(reconciled: readonly DeepReadonly<Pod>[]): void {
    for (const pod of reconciled) {
      const uid = pod.metadata?.uid;
      if (!uid) continue;
      if (isMirrorPod(pod)) this.#podManager.setMirrorPod(pod);
      else this.#podManager.setPod(pod);
    }
  }

  /** Pods due for a sync (`HandlePodSyncs`). */
  handlePodSyncs(toSync: readonly DeepReadonly<Pod>[]): void {
    for (const pod of toSync) {
      const uid = pod.metadata?.uid;
      if (!uid || this.#admitted.isRejected(uid)) continue;
      this.podWorkers.updatePod({ updateType: "sync", pod, startTime: this.#clock.now() });
    }
  }

  /** Every 2 s (`HandlePodCleanups`): forget finished workers, restart known pods, kill orphans, reap runtime pods. */
  handlePodCleanups(): void {
    const configPods = this.#podManager.getPods();
    const working = this.podWorkers.syncKnownPods(configPods);
    this.#probeManager.cleanupPods((uid) => {
      const state = working.get(uid)?.state;
      return state === "sync" || state === "terminating";
    });
    this.statusManager.removeOrphanedStatuses((uid) => this.#podManager.hasPod(uid) || working.has(uid));
    this.#podStartLatency.forget((uid) => !this.#podManager.hasPod(uid) && !working.has(uid));
    for (const pod of configPods) {
      const uid = pod.metadata?.uid ?? "";
      if (working.has(uid) || this.#admitted.isRejected(uid) || isTerminalPod(pod)) continue;
      // Known to config but not to the workers: a UID reused after its old worker was forgotten.
      this.podWorkers.updatePod({ updateType: "create", pod, startTime: this.#clock.now() });
    }
    const { kill, remove } = runtimePodCleanups({
      sandboxes: this.runtime.listPodSandboxes(),
      known: (uid) => working.has(uid) || this.#podManager.hasPod(uid),
      statusOf: (uid) => this.pleg.get(uid),
      removable: (uid) =>
        this.podWorkers.shouldPodContentBeRemoved(uid) && this.podWorkers.shouldPodRuntimeBeRemoved(uid),
    });
    for (const runningPod of kill) this.podWorkers.updatePod({ updateType: "kill", runningPod });
    for (const uid of remove) {
      this.#runtimeManager.removePod(uid).catch((error: unknown) => {
        this.#logger.error(
          { err: error, node: this.nodeName, podUid: uid },
          "failed to remove the pod's sandboxes",
        );
      });
    }
    this.#admitted.releaseInactive((uid) => {
      const pod = this.#podManager.getPodByUID(uid);
      return pod !== undefined && this.#isActive(pod);
    });
    this.#mirrorPods.deleteOrphaned((fullName) =>
      this.podWorkers.isPodForMirrorPodTerminatingByFullName(fullName),
    );
    this.#runtimeManager.gc();
  }

  /** The config pods of `uids`, in order; UIDs config does not hold are left out. */
  #podsOf(uids: Iterable<string>): DeepReadonly<Pod>[] {
    const found: DeepReadonly<Pod>[] = [];
    for (const uid of uids) {
      const pod = this.#podManager.getPodByUID(uid);
      if (pod !== undefined) found.push(pod);
    }
    return found;
  }

  // --- static and mirror pods ---------------------------------------------

  /** A mirror pod arrived or changed (`handleMirrorPod`): its static pod is synced. */
  #handleMirrorPod(mirror: DeepReadonly<Pod>, added: boolean): void {
    const fullName = podFullName(mirror);
    this.#podManager.setMirrorPod(mirror);
    const staticUid = this.#podManager.staticPodUID(fullName);
    // A new mirror pod starts without the static pod's status: write it again.
    if (added && staticUid !== undefined) this.statusManager.resync(staticUid);
    this.#syncStaticPodOf(fullName);
  }
  #syncStaticPodOf(fullName: string): void {
    const uid = this.#podManager.staticPodUID(fullName);
    const pod = this.#podManager.staticPodByFullName(fullName);
    if (pod === undefined || uid === undefined || this.#admitted.isRejected(uid)) return;
    this.podWorkers.updatePod({
      updateType: "update",
      pod,
      mirrorPod: this.#podManager.getMirrorPodByFullName(fullName),
      startTime: this.#clock.now(),
    });
  }

  // --- helpers --------------------------------------------------------------

  #generateStatus(pod: ConfigPod, runtimeStatus: RuntimePodStatus, podIsTerminal: boolean): PodStatus {
    const uid = pod.metadata?.uid ?? "";
    return generateAPIPodStatus(pod, runtimeStatus, {
      oldStatus: this.statusManager.getPodStatus(uid) ?? pod.status,
      podIsTerminal,
      nodeIPs: [this.#nodeIP],
      runtimeName: this.runtime.runtimeName,
      startFailures: this.#runtimeManager.startFailures(uid),
      probeState: (name, id) => this.#probeManager.containerState(uid, name, id),
      deleting: pod.metadata?.deletionTimestamp !== undefined,
    });
  }

  /** Counts against the node's resources: admitted, not terminal, not known to have stopped. */
  #isActive(pod: DeepReadonly<Pod>): boolean {
    const uid = pod.metadata?.uid ?? "";
    if (this.podWorkers.isPodKnownTerminated(uid)) return false;
    const phase = this.statusManager.getPodStatus(uid)?.phase ?? pod.status?.phase;
    return !(phase === "Succeeded" || phase === "Failed") || this.podWorkers.couldHaveRunningContainers(uid);
  }
}

function isTerminalPod(pod: DeepReadonly<Pod>): boolean {
  return pod.status?.phase === "Succeeded" || pod.status?.phase === "Failed";
}
