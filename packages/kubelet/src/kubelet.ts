// The kubelet (`pkg/kubelet/kubelet.go`) around the pod workers: the pod
// source (an informer on pods bound to this node, or a shared one fed by a
// NodeSimulator), `syncLoop` / `syncLoopIteration` over config changes, PLEG
// events, the 1 s sync tick, probe results and the 2 s housekeeping tick,
// admission against the node's allocatable resources, and the PodSyncer the
// workers call: syncPod, syncTerminatingPod, syncTerminatingRuntimePod and
// syncTerminatedPod. Around them: the node's registration and status, its
// Lease, the status manager, the probe manager and container logs.
import { setMaxListeners } from "node:events";
import {
  type DeepReadonly,
  type DeletedFinalStateUnknown,
  isAlreadyExists,
  isConflict,
  isDeletedFinalStateUnknown,
  isNotFound,
  nodes,
  type Pod,
  pods,
} from "@reconcile/api";
import { type Client, listerWatcher } from "@reconcile/client";
import { type Clock, realClock } from "@reconcile/clock";
import { ClientEventRecorder, type EventRecorder, type Logger, noopLogger } from "@reconcile/controller";
import { type ResourceEventHandler, SharedIndexInformer } from "@reconcile/informer";
import type { PodStatus } from "kubernetes-types/core/v1.js";
import { admitPodWithUsage, podRequests } from "./admission.js";
import { runFileSource, runURLSource } from "./config/static-pod-sources.js";
import { type ContainerLogOptions, type ContainerLogResult, readContainerLogs } from "./logs.js";
import { NodeFilesystem } from "./node-filesystem.js";
import { NodeLease } from "./node-lease.js";
import { defaultNodeResources, type NodeResources, NodeStatusManager, nodeRef } from "./node-status.js";
import { isRuntimePodStatusTerminal, Pleg, type PodLifecycleEvent, type RuntimePodStatus } from "./pleg.js";
import { PodManager } from "./pod-manager.js";
import { podRef } from "./pod-ref.js";
import { generateAPIPodStatus } from "./pod-status.js";
import {
  BasicWorkQueue,
  type ConfigPod,
  newPodWorkers,
  type PodStatusFunc,
  type PodSyncer,
  type PodWorkersMetrics,
  type RunnablePodWorkers,
  type RunningPod,
  type SyncPodType,
} from "./pod-workers/index.js";
import { ProbeManager, type ProbeUpdate } from "./prober.js";
import type { ContainerRuntime } from "./runtime/runtime.js";
import { SimulatedRuntime } from "./runtime/simulated-runtime.js";
import { RuntimeManager } from "./runtime-manager.js";
import { isMirrorPod, isMirrorPodOf, mirrorPodOf, podFullName } from "./static-pods.js";
import { StatusManager } from "./status-manager.js";
import { VolumeManager, VolumeMountError } from "./volume-manager.js";

export interface KubeletOptions {
  /** The node's name (`--hostname-override`). Required. */
  nodeName: string;
  /** Where the kubelet reads pods and writes nodes, leases, statuses and events. Required. */
  client: Client;
  /** The container runtime. Default: a {@link SimulatedRuntime} for this node. */
  runtime?: ContainerRuntime | undefined;
  /** The node's pod CIDR: pods' IPs come from it. Default "10.244.0.0/24". */
  podCIDR?: string | undefined;
  /** The node's InternalIP. Default "10.0.0.2". */
  nodeIP?: string | undefined;
  /** Capacity reported (allocatable memory is 100Mi less, as the default hard eviction threshold leaves). Default 4 cpu, 16Gi, 110 pods, 100Gi. */
  resources?: Partial<NodeResources> | undefined;
  /** `--node-labels`, over the kubelet's own labels. Default: none. */
  labels?: Readonly<Record<string, string>> | undefined;
  /**
   * `informer` watches pods with `spec.nodeName=<node>` itself; `external`
   * leaves feeding pods to the caller, through {@link Kubelet.podHandler}
   * (a NodeSimulator shares one informer among many kubelets). Default `informer`.
   */
  podSource?: "informer" | "external" | undefined;
  /** `kubeletVersion` in nodeInfo. Default "v1.31.0". */
  kubeletVersion?: string | undefined;
  /** Resync period of a healthy pod (`syncFrequency`). Default 60,000 ms. */
  syncFrequencyMs?: number | undefined;
  /** PLEG relist period. Default 1,000 ms. */
  plegRelistPeriodMs?: number | undefined;
  /** `nodeStatusUpdateFrequency`. Default 10,000 ms. */
  nodeStatusUpdateFrequencyMs?: number | undefined;
  /** `nodeStatusReportFrequency`. Default 300,000 ms. */
  nodeStatusReportFrequencyMs?: number | undefined;
  /** `nodeLeaseDurationSeconds`. Default 40. */
  nodeLeaseDurationSeconds?: number | undefined;
  /** Where events go. Default: core/v1 Events through `client`, as component `kubelet`. */
  recorder?: EventRecorder | undefined;
  logger?: Logger | undefined;
  /** Default `realClock`. */
  clock?: Clock | undefined;
  /** Jitter source in [0, 1). Default `Math.random`. */
  random?: (() => number) | undefined;
  /** Where the kubelet's metrics go (see {@link KubeletMetrics}). Default: recorded nowhere. */
  metrics?: KubeletMetrics | undefined;
  /**
   * A directory of static pod manifests (`staticPodPath`): YAML or JSON pods the
   * kubelet runs on its own and mirrors to the API server. Default: none.
   */
  staticPodPath?: string | undefined;
  /** How often the manifest directory is read (`fileCheckFrequency`). Default 20,000 ms. */
  staticPodCheckFrequencyMs?: number | undefined;
  /**
   * A URL to read static pods from (`staticPodURL`, `--manifest-url`): one pod
   * or a PodList, YAML or JSON, run as the directory's pods are. Default: none.
   */
  staticPodURL?: string | undefined;
  /** Headers sent with each read of `staticPodURL` (`staticPodURLHeader`). */
  staticPodURLHeader?: Readonly<Record<string, readonly string[]>> | undefined;
  /** How often `staticPodURL` is read (`httpCheckFrequency`). Default 20,000 ms. */
  httpCheckFrequencyMs?: number | undefined;
}

/**
 * The kubelet's metrics seam, with upstream's names for an adapter to use:
 * the pod workers' `kubelet_pod_worker_duration_seconds{operation_type}` and
 * `kubelet_pod_start_sli_duration_seconds`.
 */
export interface KubeletMetrics extends PodWorkersMetrics {
  /**
   * Seconds from a pod's `creationTimestamp` until the kubelet first saw all
   * of its containers running (upstream's pod startup latency tracker), once per pod.
   */
  observePodStartSLIDuration?(seconds: number): void;
}

type ConfigOp = "ADD" | "UPDATE" | "DELETE" | "REMOVE" | "RECONCILE";

/** One message of the sync loop, as one arm of upstream's `select`. */
type LoopMessage =
  | { kind: "config"; op: ConfigOp; pods: DeepReadonly<Pod>[] }
  | { kind: "pleg"; events: readonly PodLifecycleEvent[] }
  | { kind: "sync"; uids?: readonly string[] }
  | { kind: "probe"; update: ProbeUpdate }
  | { kind: "housekeeping" };

const syncTickMs = 1000;
const housekeepingPeriodMs = 2000;

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
  readonly #metrics: KubeletMetrics | undefined;
  /** Pods whose start has been reported to `metrics`. */
  readonly #startObserved = new Set<string>();
  readonly #recorder: EventRecorder;
  readonly #ownsRecorder: boolean;
  readonly #ownsRuntime: boolean;
  readonly #podSource: "informer" | "external";
  readonly #nodeIP: string;
  readonly #pleg: Pleg;
  readonly #workQueue: BasicWorkQueue;
  readonly #runtimeManager: RuntimeManager;
  readonly #probeManager: ProbeManager;
  readonly #options: KubeletOptions;
  /** Pods from config, mirror pods, and which pods are static. */
  readonly #podManager = new PodManager();
  /** Admitted pods and their requests: what admission counts as used, and their sum. */
  readonly #admitted = new Map<string, { milliCpu: number; memory: number }>();
  readonly #usage = { pods: 0, milliCpu: 0, memory: 0 };
  readonly #loop: LoopMessage[] = [];
  #wakeLoop: (() => void) | undefined;
  readonly #timers = new Set<unknown>();
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
    this.#metrics = options.metrics;
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
    this.#pleg = new Pleg({
      runtime: this.runtime,
      clock: this.#clock,
      relistPeriodMs: options.plegRelistPeriodMs,
      onEvents: (events) => this.#send({ kind: "pleg", events }),
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
      onBackoffExpired: (uid, at) => this.#syncAt(uid, at),
      mountsFor: (pod, container) => this.volumeManager.mountsFor(pod, container),
    });
    this.#probeManager = new ProbeManager({
      runtime: this.runtime,
      recorder: this.#recorder,
      clock: this.#clock,
      getPodStatus: (uid) => this.statusManager.getPodStatus(uid),
      onUpdate: (update) => this.#send({ kind: "probe", update }),
    });
    this.nodeStatus = new NodeStatusManager({
      client: this.#client,
      nodeName: this.nodeName,
      nodeIP: this.#nodeIP,
      resources: { ...defaultNodeResources, ...options.resources },
      labels: options.labels ?? {},
      podCIDR,
      runtime: this.runtime,
      kubeletVersion: options.kubeletVersion ?? "v1.31.0",
      recorder: this.#recorder,
      clock: this.#clock,
      logger: this.#logger,
      runtimeProblem: () => this.#runtimeProblem(),
      reportFrequencyMs: options.nodeStatusReportFrequencyMs ?? 300_000,
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
      podCache: this.#pleg,
      isPodStatusTerminal: isRuntimePodStatusTerminal,
      workQueue: this.#workQueue,
      resyncIntervalMs: options.syncFrequencyMs ?? 60_000,
      recorder: this.#recorder,
      logger: this.#logger,
      clock: this.#clock,
      random: this.#random,
      metrics: options.metrics,
    });
    this.podHandler = {
      onAdd: (pod) => this.#send({ kind: "config", op: "ADD", pods: [pod] }),
      onUpdate: (old, pod) => {
        const op = classifyUpdate(old, pod);
        if (op !== undefined) this.#send({ kind: "config", op, pods: [pod] });
      },
      onDelete: (pod) => this.#send({ kind: "config", op: "REMOVE", pods: [podOf(pod)] }),
    };
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
      this.#nodeStatusLoop(signal),
      this.#leaseLoop(signal),
      this.statusManager.run({ signal }),
      this.podWorkers.run({ signal }),
    ];
    if (this.#podSource === "informer") tasks.push(this.#runInformer(signal));
    const { staticPodPath, staticPodURL } = this.#options;
    const sources = {
      nodeName: this.nodeName,
      clock: this.#clock,
      logger: this.#logger,
      podManager: this.#podManager,
      send: (op: "ADD" | "REMOVE", pods: readonly DeepReadonly<Pod>[]) =>
        this.#send({ kind: "config", op, pods: [...pods] }),
    };
    if (staticPodPath !== undefined) {
      const periodMs = this.#options.staticPodCheckFrequencyMs ?? 20_000;
      tasks.push(runFileSource(sources, { directory: staticPodPath, periodMs, signal }));
    }
    if (staticPodURL !== undefined) {
      const periodMs = this.#options.httpCheckFrequencyMs ?? 20_000;
      const headers = this.#options.staticPodURLHeader;
      tasks.push(runURLSource(sources, { url: staticPodURL, headers, periodMs, signal }));
    }
    const stopPleg = this.#pleg.start();
    this.#heartbeat(signal);
    tasks.push(this.#syncLoop(signal));
    await Promise.allSettled(tasks);
    stopPleg();
    for (const timer of this.#timers) this.#clock.clearTimeout(timer);
    this.#timers.clear();
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
    if (this.#podManager.isStaticPod(uid)) await this.#syncMirrorPod(pod);
    const apiStatus = this.#generateStatus(pod, podStatus, false);
    this.statusManager.setPodStatus(pod, apiStatus);
    this.#observePodStart(pod, apiStatus);
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

  /** Reports the pod's start once every container of it is running. */
  #observePodStart(pod: ConfigPod, status: PodStatus): void {
    const observe = this.#metrics?.observePodStartSLIDuration;
    const uid = pod.metadata?.uid ?? "";
    if (observe === undefined || this.#startObserved.has(uid)) return;
    const containers = status.containerStatuses ?? [];
    const created = Date.parse(pod.metadata?.creationTimestamp ?? "");
    if (containers.length === 0 || Number.isNaN(created)) return;
    if (!containers.every((container) => container.state?.running !== undefined)) return;
    this.#startObserved.add(uid);
    observe.call(this.#metrics, Math.max(0, (this.#clock.now() - created) / 1000));
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
    const current = this.#pleg.inspect(uid, pod.metadata?.name ?? "", pod.metadata?.namespace ?? "");
    await this.#runtimeManager.killPod(pod, current, gracePeriod, signal);
    const stopped = this.#pleg.inspect(uid, pod.metadata?.name ?? "", pod.metadata?.namespace ?? "");
    if (stopped.containers.some((c) => c.state === "running"))
      throw new Error("detected running containers after a successful KillPod");
    const final = this.#generateStatus(pod, stopped, true);
    podStatusFn?.(final);
    this.statusManager.setPodStatus(pod, final);
  }

  async syncTerminatingRuntimePod(signal: AbortSignal, runningPod: RunningPod): Promise<void> {
    const status = this.#pleg.inspect(runningPod.id, runningPod.name, runningPod.namespace);
    // A pod with no config left is killed at once (grace period 1, as upstream).
    await this.#runtimeManager.killPod(undefined, status, 1, signal);
    const after = this.#pleg.inspect(runningPod.id, runningPod.name, runningPod.namespace);
    if (after.containers.some((c) => c.state === "running"))
      throw new Error("detected running containers after a successful KillPod");
  }

  async syncTerminatedPod(_signal: AbortSignal, pod: ConfigPod, podStatus: RuntimePodStatus): Promise<void> {
    const uid = pod.metadata?.uid ?? "";
    const status = this.#generateStatus(pod, podStatus, true);
    this.statusManager.setPodStatus(pod, status);
    this.#probeManager.removePod(uid);
    this.#release(uid);
    // Containers are gone: tear the volumes down (`WaitForUnmount`), then the pod is finished.
    this.volumeManager.unmountPod(uid);
    this.statusManager.terminatePod(pod, structuredClone(status));
  }

  // --- sync loop ------------------------------------------------------------

  #send(message: LoopMessage): void {
    this.#loop.push(message);
    const wake = this.#wakeLoop;
    this.#wakeLoop = undefined;
    wake?.();
  }

  async #syncLoop(signal: AbortSignal): Promise<void> {
    const onAbort = () => this.#wakeLoop?.();
    signal.addEventListener("abort", onAbort, { once: true });
    let next = 0;
    while (!signal.aborted) {
      if (next >= this.#loop.length) {
        this.#loop.length = 0;
        next = 0;
        await new Promise<void>((resolve) => {
          this.#wakeLoop = resolve;
        });
        continue;
      }
      const message = this.#loop[next++] as LoopMessage;
      try {
        this.syncLoopIteration(message);
      } catch (error) {
        this.#logger.error({ err: error, node: this.nodeName }, "sync loop iteration failed");
      }
    }
    signal.removeEventListener("abort", onAbort);
  }

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
        const seen = new Set<string>();
        const toSync: DeepReadonly<Pod>[] = [];
        for (const event of message.events) {
          if (event.type === "ContainerRemoved" || seen.has(event.podUid)) continue;
          seen.add(event.podUid);
          const pod = this.#podManager.getPodByUID(event.podUid);
          if (pod !== undefined) toSync.push(pod);
        }
        this.handlePodSyncs(toSync);
        return;
      }
      case "sync": {
        const uids = message.uids ?? this.#workQueue.getWork();
        const toSync: DeepReadonly<Pod>[] = [];
        for (const uid of uids) {
          const pod = this.#podManager.getPodByUID(uid);
          if (pod !== undefined) toSync.push(pod);
        }
        this.handlePodSyncs(toSync);
        return;
      }
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
      if (!this.podWorkers.isPodTerminationRequested(uid) && !isTerminalPod(pod)) {
        // The admitted pods' sum, kept as they come and go; upstream re-adds the active pods each time.
        const used = this.#usage;
        const requests = podRequests(pod);
        const verdict = admitPodWithUsage(
          pod,
          requests,
          used,
          this.nodeStatus.allocatable(),
          this.nodeStatus.initialNodeLabels(),
        );
        if (verdict !== undefined) {
          this.#rejectPod(pod, verdict.reason, verdict.message);
          continue;
        }
        this.#admit(uid, requests);
      }
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
      if (this.#isRejected(uid)) continue;
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
      this.#release(uid);
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
      if (!uid || this.#isRejected(uid)) continue;
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
    for (const uid of this.#startObserved) {
      if (!this.#podManager.hasPod(uid) && !working.has(uid)) this.#startObserved.delete(uid);
    }
    for (const pod of configPods) {
      const uid = pod.metadata?.uid ?? "";
      if (working.has(uid) || this.#isRejected(uid) || isTerminalPod(pod)) continue;
      // Known to config but not to the workers: a UID reused after its old worker was forgotten.
      this.podWorkers.updatePod({ updateType: "create", pod, startTime: this.#clock.now() });
    }
    const runtimePods = new Map<string, RunningPod>();
    for (const sandbox of this.runtime.listPodSandboxes()) {
      runtimePods.set(sandbox.podUid, {
        id: sandbox.podUid,
        name: sandbox.name,
        namespace: sandbox.namespace,
      });
    }
    for (const [uid, runningPod] of runtimePods) {
      if (!working.has(uid) && !this.#podManager.hasPod(uid)) {
        const status = this.#pleg.get(uid);
        const anyRunning =
          status === undefined
            ? true
            : status.containers.some((c) => c.state === "running") ||
              status.sandboxes.some((s) => s.state === "ready");
        if (anyRunning) {
          this.podWorkers.updatePod({ updateType: "kill", runningPod });
          continue;
        }
      }
      if (this.podWorkers.shouldPodContentBeRemoved(uid) && this.podWorkers.shouldPodRuntimeBeRemoved(uid)) {
        this.#runtimeManager.removePod(uid).catch((error: unknown) => {
          this.#logger.error(
            { err: error, node: this.nodeName, podUid: uid },
            "failed to remove the pod's sandboxes",
          );
        });
      }
    }
    for (const uid of this.#admitted.keys()) {
      if (!this.#podManager.hasPod(uid) || !this.#isActive(this.#podManager.getPodByUID(uid)!))
        this.#release(uid);
    }
    this.#deleteOrphanedMirrorPods();
    this.#runtimeManager.gc();
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
    if (pod === undefined || uid === undefined || this.#isRejected(uid)) return;
    this.podWorkers.updatePod({
      updateType: "update",
      pod,
      mirrorPod: this.#podManager.getMirrorPodByFullName(fullName),
      startTime: this.#clock.now(),
    });
  }

  /**
   * The mirror pod part of `syncPod`: one that is being deleted or belongs
   * to an older version of the static pod is deleted, and a missing one is
   * created (once the Node exists, owned by it).
   */
  async #syncMirrorPod(pod: ConfigPod): Promise<void> {
    const fullName = podFullName(pod);
    const mirror = this.#podManager.getMirrorPodByFullName(fullName);
    const resource = this.#client.resource(pods, pod.metadata?.namespace ?? "");
    try {
      let deleted = false;
      if (
        mirror !== undefined &&
        (mirror.metadata?.deletionTimestamp !== undefined || !isMirrorPodOf(mirror, pod))
      ) {
        await resource
          .delete(mirror.metadata?.name ?? "", {
            gracePeriodSeconds: 0,
            preconditions: { uid: mirror.metadata?.uid ?? "" },
          })
          .catch((error: unknown) => {
            if (!isNotFound(error) && !isConflict(error)) throw error;
          });
        this.#podManager.removeMirrorPod(fullName);
        deleted = true;
      }
      if (mirror !== undefined && !deleted) return;
      const node = await this.#client.resource(nodes).get(this.nodeName);
      if (node.metadata?.deletionTimestamp !== undefined) return;
      const created = await resource
        .create(mirrorPodOf(pod, this.nodeName, node.metadata?.uid ?? ""))
        .catch((error: unknown) => {
          if (isAlreadyExists(error)) return undefined;
          throw error;
        });
      if (created !== undefined) this.#handleMirrorPod(created, true);
    } catch (error) {
      this.#logger.error({ err: error, node: this.nodeName, pod: fullName }, "failed to sync the mirror pod");
    }
  }

  /** Housekeeping (`deleteOrphanedMirrorPods`): mirror pods whose static pod is gone and stopped. */
  #deleteOrphanedMirrorPods(): void {
    for (const [fullName, mirror] of this.#podManager.mirrorPods()) {
      if (this.#podManager.staticPodByFullName(fullName) !== undefined) continue;
      if (this.podWorkers.isPodForMirrorPodTerminatingByFullName(fullName)) continue;
      this.#podManager.removeMirrorPod(fullName);
      this.#client
        .resource(pods, mirror.metadata?.namespace ?? "")
        .delete(mirror.metadata?.name ?? "", {
          gracePeriodSeconds: 0,
          preconditions: { uid: mirror.metadata?.uid ?? "" },
        })
        .catch((error: unknown) => {
          if (!isNotFound(error) && !isConflict(error))
            this.#logger.error(
              { err: error, node: this.nodeName, pod: fullName },
              "failed to delete an orphaned mirror pod",
            );
        });
    }
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

  #admit(uid: string, requests: { milliCpu: number; memory: number }): void {
    this.#release(uid);
    this.#admitted.set(uid, requests);
    this.#usage.pods++;
    this.#usage.milliCpu += requests.milliCpu;
    this.#usage.memory += requests.memory;
  }

  /** The pod no longer uses the node's resources (stopped for good, or gone). */
  #release(uid: string): void {
    const requests = this.#admitted.get(uid);
    if (requests === undefined) return;
    this.#admitted.delete(uid);
    this.#usage.pods--;
    this.#usage.milliCpu -= requests.milliCpu;
    this.#usage.memory -= requests.memory;
  }

  #rejectPod(pod: DeepReadonly<Pod>, reason: string, message: string): void {
    this.#recorder.event(podRef(pod), "Warning", reason, message);
    this.statusManager.setPodStatus(pod, {
      phase: "Failed",
      reason,
      message: `Pod was rejected: ${message}`,
    });
  }

  #isRejected(uid: string): boolean {
    if (this.#admitted.has(uid)) return false;
    const status = this.statusManager.getPodStatus(uid);
    return status?.phase === "Failed" && status.message?.startsWith("Pod was rejected: ") === true;
  }

  /** Counts against the node's resources: admitted, not terminal, not known to have stopped. */
  #isActive(pod: DeepReadonly<Pod>): boolean {
    const uid = pod.metadata?.uid ?? "";
    if (this.podWorkers.isPodKnownTerminated(uid)) return false;
    const phase = this.statusManager.getPodStatus(uid)?.phase ?? pod.status?.phase;
    return !(phase === "Succeeded" || phase === "Failed") || this.podWorkers.couldHaveRunningContainers(uid);
  }

  #runtimeProblem(): string | undefined {
    const last = this.#pleg.lastRelistTime();
    if (!Number.isFinite(last)) return undefined;
    const since = this.#clock.now() - last;
    return since > 180_000
      ? `PLEG is not healthy: pleg was last seen active ${Math.round(since / 1000)}s ago; threshold is 3m0s`
      : undefined;
  }

  #syncAt(uid: string, atMs: number): void {
    const timer = this.#clock.setTimeout(
      () => {
        this.#timers.delete(timer);
        this.#send({ kind: "sync", uids: [uid] });
      },
      Math.max(0, atMs - this.#clock.now()),
    );
    this.#timers.add(timer);
  }

  /**
   * One timer drives the PLEG relist, the 1 s sync tick and the 2 s
   * housekeeping tick (upstream's three tickers, at their periods): an idle
   * node wakes once a second, not three times.
   */
  #heartbeat(signal: AbortSignal): void {
    const relistMs = this.#pleg.relistPeriodMs;
    const periodMs = Math.min(syncTickMs, relistMs);
    let lastRelist = Number.NEGATIVE_INFINITY;
    let lastSync = this.#clock.now();
    let lastHousekeeping = this.#clock.now();
    const beat = () => {
      if (signal.aborted) return;
      const now = this.#clock.now();
      if (now - lastRelist >= relistMs) {
        lastRelist = now;
        this.#pleg.relist();
      }
      if (now - lastSync >= syncTickMs) {
        lastSync = now;
        this.#send({ kind: "sync" });
      }
      if (now - lastHousekeeping >= housekeepingPeriodMs) {
        lastHousekeeping = now;
        this.#send({ kind: "housekeeping" });
      }
      const timer = this.#clock.setTimeout(() => {
        this.#timers.delete(timer);
        beat();
      }, periodMs);
      this.#timers.add(timer);
    };
    beat();
  }

  async #nodeStatusLoop(signal: AbortSignal): Promise<void> {
    const periodMs = this.#options.nodeStatusUpdateFrequencyMs ?? 10_000;
    while (!signal.aborted) {
      try {
        await this.nodeStatus.syncNodeStatus(signal);
      } catch (error) {
        if (!signal.aborted)
          this.#logger.error({ err: error, node: this.nodeName }, "unable to update node status");
      }
      try {
        await this.#clock.sleep(jitter(periodMs, 0.04, this.#random), { signal });
      } catch {
        return;
      }
    }
  }

  async #leaseLoop(signal: AbortSignal): Promise<void> {
    let retryMs = 200;
    while (!signal.aborted) {
      let waitMs = jitter(this.nodeLease.renewIntervalMs, 0.04, this.#random);
      if (this.nodeStatus.registered) {
        try {
          await this.nodeLease.sync(signal);
          retryMs = 200;
        } catch (error) {
          if (signal.aborted) return;
          this.#logger.error({ err: error, node: this.nodeName }, "failed to renew the node lease");
          waitMs = retryMs;
          retryMs = Math.min(retryMs * 2, 7000);
        }
      } else {
        waitMs = 100;
      }
      try {
        await this.#clock.sleep(waitMs, { signal });
      } catch {
        return;
      }
    }
  }

  async #runInformer(signal: AbortSignal): Promise<void> {
    const informer = new SharedIndexInformer<Pod>({
      listerWatcher: listerWatcher(this.#client, pods),
      resource: pods,
      fieldSelector: `spec.nodeName=${this.nodeName}`,
      clock: this.#clock,
    });
    informer.addEventHandler(this.podHandler);
    const run = informer.run({ signal });
    while (!signal.aborted && !informer.hasSynced()) {
      try {
        await this.#clock.sleep(10, { signal });
      } catch {
        break;
      }
    }
    if (informer.hasSynced()) this.#sourcesReady = true;
    await run;
  }
}

/** What the config source calls a change (`kubetypes` ops): DELETE for a new deletionTimestamp, RECONCILE for status only. */
function classifyUpdate(old: DeepReadonly<Pod>, pod: DeepReadonly<Pod>): ConfigOp | undefined {
  if (
    old.metadata?.resourceVersion === pod.metadata?.resourceVersion &&
    old.metadata?.resourceVersion !== undefined
  )
    return undefined;
  if (pod.metadata?.deletionTimestamp !== undefined && old.metadata?.deletionTimestamp === undefined)
    return "DELETE";
  if (
    specText(old) === specText(pod) &&
    JSON.stringify(old.metadata?.labels) === JSON.stringify(pod.metadata?.labels) &&
    JSON.stringify(old.metadata?.annotations) === JSON.stringify(pod.metadata?.annotations) &&
    old.metadata?.deletionGracePeriodSeconds === pod.metadata?.deletionGracePeriodSeconds
  )
    return "RECONCILE";
  return "UPDATE";
}

/** The pod's spec as JSON, once per cached object: each object is compared as the new and then as the old one. */
function specText(pod: DeepReadonly<Pod>): string {
  let text = specTexts.get(pod);
  if (text === undefined) {
    text = JSON.stringify(pod.spec);
    specTexts.set(pod, text);
  }
  return text;
}

const specTexts = new WeakMap<object, string>();

function isTerminalPod(pod: DeepReadonly<Pod>): boolean {
  return pod.status?.phase === "Succeeded" || pod.status?.phase === "Failed";
}

function podOf(obj: DeepReadonly<Pod> | DeletedFinalStateUnknown<DeepReadonly<Pod>>): DeepReadonly<Pod> {
  return isDeletedFinalStateUnknown(obj) ? obj.obj : obj;
}

function jitter(ms: number, factor: number, random: () => number): number {
  return ms + random() * factor * ms;
}
