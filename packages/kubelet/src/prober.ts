// The kubelet's probe manager (`pkg/kubelet/prober`): one worker per
// container and probe type (startup, liveness, readiness), probing on the
// probe's period through the runtime, counting consecutive results against
// successThreshold / failureThreshold, and reporting changes. A recorded
// liveness or startup failure puts the worker on hold until the container
// is replaced.
import type { DeepReadonly } from "@reconcile/api";
import type { Clock } from "@reconcile/clock";
import type { EventRecorder } from "@reconcile/controller";
import type { Container, Pod, PodStatus, Probe } from "kubernetes-types/core/v1.js";
import { podRef } from "./pod-ref.js";
import type { ContainerRuntime, ProbeAnswer, ProbeType } from "./runtime/runtime.js";

type ReadonlyPod = DeepReadonly<Pod>;

/** A probe result change, delivered to the sync loop. */
export interface ProbeUpdate {
  readonly type: ProbeType;
  readonly podUid: string;
  /** `<runtime>://<id>`, as in the container's status. */
  readonly containerId: string;
  readonly success: boolean;
}

export interface ProbeManagerOptions {
  runtime: ContainerRuntime;
  recorder: EventRecorder;
  clock: Clock;
  /** The status the kubelet last generated for a pod (the status manager's cache). */
  getPodStatus: (uid: string) => DeepReadonly<PodStatus> | undefined;
  onUpdate: (update: ProbeUpdate) => void;
}

type Result = "success" | "failure" | "unknown";

const typeNames: Record<ProbeType, string> = {
  startup: "Startup",
  liveness: "Liveness",
  readiness: "Readiness",
};

class Worker {
  containerId: string | undefined;
  result: Result;
  lastResult: Result = "unknown";
  runLength = 0;
  onHold = false;
  stopped = false;
  /** A probe is in flight: the timer waits for it. */
  probing = false;
  timer: unknown;

  constructor(
    readonly manager: ProbeManager,
    readonly pod: ReadonlyPod,
    readonly container: DeepReadonly<Container>,
    readonly type: ProbeType,
    readonly probe: DeepReadonly<Probe>,
  ) {
    this.result = initialResult(type);
  }
}

/** See the file comment. */
export class ProbeManager {
  readonly #options: ProbeManagerOptions;
  /** podUid → workers of that pod. */
  readonly #workers = new Map<string, Worker[]>();

  constructor(options: ProbeManagerOptions) {
    this.#options = options;
  }

  /** Starts workers for every probe of the pod's containers (`AddPod`); idempotent. */
  addPod(pod: ReadonlyPod): void {
    const uid = pod.metadata?.uid;
    if (!uid || this.#workers.has(uid)) return;
    const workers: Worker[] = [];
    // Sidecars (restartable init containers) are probed like regular containers.
    const sidecars = (pod.spec?.initContainers ?? []).filter((c) => c.restartPolicy === "Always");
    for (const container of [...sidecars, ...(pod.spec?.containers ?? [])]) {
      for (const type of ["startup", "liveness", "readiness"] as const) {
        const probe = container[`${type}Probe`];
        if (probe === undefined) continue;
        const worker = new Worker(this, pod, container, type, probe);
        workers.push(worker);
        this.#schedule(worker, 0);
      }
    }
    this.#workers.set(uid, workers);
  }

  /** Stops the liveness and startup workers of a terminating pod; readiness goes on. */
  stopLivenessAndStartup(uid: string): void {
    for (const worker of this.#workers.get(uid) ?? []) {
      if (worker.type !== "readiness") this.#stop(worker);
    }
  }

  /** Stops every worker of the pod (`RemovePod`). */
  removePod(uid: string): void {
    for (const worker of this.#workers.get(uid) ?? []) this.#stop(worker);
    this.#workers.delete(uid);
  }

  /** Stops the workers of pods for which `keep` answers false (`CleanupPods`). */
  cleanupPods(keep: (uid: string) => boolean): void {
    for (const uid of [...this.#workers.keys()]) if (!keep(uid)) this.removePod(uid);
  }

  stopAll(): void {
    for (const uid of [...this.#workers.keys()]) this.removePod(uid);
  }

  /**
   * `started` and `ready` of a running container (`UpdatePodStatus`): started
   * once its startup probe succeeded (or it has none), ready once started and
   * its readiness probe succeeded (or it has none). A readiness worker with
   * no success yet is run at once, so readiness is known right after start.
   */
  containerState(
    podUid: string,
    containerName: string,
    containerId: string,
  ): { started: boolean; ready: boolean } {
    const workers = this.#workers.get(podUid)?.filter((w) => w.container.name === containerName) ?? [];
    const startup = workers.find((w) => w.type === "startup");
    const readiness = workers.find((w) => w.type === "readiness");
    const started =
      startup === undefined || (startup.containerId === containerId && startup.result === "success");
    let ready = started;
    if (readiness !== undefined) {
      ready = started && readiness.containerId === containerId && readiness.result === "success";
      if (!ready && started && !readiness.stopped) this.#schedule(readiness, 0);
    }
    return { started, ready };
  }

  /** A liveness or startup failure recorded for a running container, for `computePodActions`. */
  failure(podUid: string, containerId: string): { type: "liveness" | "startup" } | undefined {
    for (const worker of this.#workers.get(podUid) ?? []) {
      if (worker.type === "readiness" || worker.containerId === undefined) continue;
      if (worker.containerId.endsWith(`://${containerId}`) && worker.result === "failure")
        return { type: worker.type };
    }
    return undefined;
  }

  /** The startup probe's verdict on a running container, undefined until it has one. */
  startup(podUid: string, containerId: string): "success" | "failure" | undefined {
    for (const worker of this.#workers.get(podUid) ?? []) {
      if (worker.type !== "startup" || worker.containerId === undefined) continue;
      if (worker.containerId.endsWith(`://${containerId}`) && worker.result !== "unknown")
        return worker.result;
    }
    return undefined;
  }

  #schedule(worker: Worker, delayMs: number): void {
    if (worker.stopped) return;
    const { clock } = this.#options;
    if (worker.timer !== undefined) clock.clearTimeout(worker.timer);
    worker.timer = clock.setTimeout(() => {
      worker.timer = undefined;
      if (worker.stopped || worker.probing) return;
      const startedAt = clock.now();
      worker.probing = true;
      void this.#doProbe(worker).then(
        (keepGoing) => {
          worker.probing = false;
          // The period runs from the last probe's start, as upstream's ticker does.
          const periodMs = (worker.probe.periodSeconds ?? 10) * 1000;
          if (keepGoing) this.#schedule(worker, Math.max(0, startedAt + periodMs - clock.now()));
          else this.#stop(worker);
        },
        () => {
          worker.probing = false;
          this.#schedule(worker, (worker.probe.periodSeconds ?? 10) * 1000);
        },
      );
    }, delayMs);
  }

  #stop(worker: Worker): void {
    worker.stopped = true;
    if (worker.timer !== undefined) this.#options.clock.clearTimeout(worker.timer);
    worker.timer = undefined;
  }

  /** One probe run (`doProbe`); false stops the worker. */
  async #doProbe(worker: Worker): Promise<boolean> {
    const { pod, container, type, probe } = worker;
    const uid = pod.metadata?.uid ?? "";
    const status = this.#options.getPodStatus(uid);
    if (status === undefined) return true;
    if (status.phase === "Failed" || status.phase === "Succeeded") return false;
    const sidecar = isSidecar(pod, container.name);
    const containerStatus = (sidecar ? status.initContainerStatuses : status.containerStatuses)?.find(
      (c) => c.name === container.name,
    );
    if (containerStatus?.containerID === undefined) return true;
    if (worker.containerId !== containerStatus.containerID) {
      if (worker.containerId !== undefined) {
        worker.result = initialResult(type);
        worker.lastResult = "unknown";
        worker.runLength = 0;
      }
      worker.containerId = containerStatus.containerID;
      worker.onHold = false;
    }
    if (worker.onHold) return true;
    if (containerStatus.state?.running === undefined) {
      this.#set(worker, "failure");
      // A container that will never run again needs no prober; a sidecar always runs again.
      return !(
        containerStatus.state?.terminated !== undefined &&
        !sidecar &&
        pod.spec?.restartPolicy === "Never"
      );
    }
    if (pod.metadata?.deletionTimestamp !== undefined && type !== "readiness") {
      this.#set(worker, "success");
      return false;
    }
    const startedAt = Date.parse(containerStatus.state.running.startedAt ?? "");
    const ranSeconds = Math.floor((this.#options.clock.now() - startedAt) / 1000);
    if (ranSeconds < (probe.initialDelaySeconds ?? 0)) return true;
    if (type === "startup" && containerStatus.started) return true;
    if (type !== "startup" && !containerStatus.started && this.#hasStartupProbe(worker)) return true;

    const id = containerStatus.containerID.slice(containerStatus.containerID.indexOf("://") + 3);
    const answer = await this.#runProbe(worker, id, status.podIP ?? "");
    if (worker.stopped || worker.containerId !== containerStatus.containerID) return !worker.stopped;
    const result: Result = answer.success ? "success" : "failure";
    if (!answer.success) {
      this.#options.recorder.event(
        podRef(pod, `spec.${sidecar ? "initContainers" : "containers"}{${container.name}}`),
        "Warning",
        "Unhealthy",
        `${typeNames[type]} probe failed: ${answer.output}`,
      );
    }
    if (worker.lastResult === result) worker.runLength++;
    else {
      worker.lastResult = result;
      worker.runLength = 1;
    }
    const threshold = result === "success" ? (probe.successThreshold ?? 1) : (probe.failureThreshold ?? 3);
    if (worker.runLength < threshold) return true;
    this.#set(worker, result);
    if (result === "failure" && type !== "readiness") {
      // The container will be restarted; probe again only once it has been.
      worker.onHold = true;
      worker.runLength = 0;
    }
    return true;
  }

  /**
   * Asks the runtime, failing the probe at `timeoutSeconds` (default 1) with
   * the text upstream's exec, HTTP, TCP and gRPC probers give a timeout.
   */
  async #runProbe(worker: Worker, containerId: string, podIP: string): Promise<ProbeAnswer> {
    const { runtime, clock } = this.#options;
    const answer = runtime.probe?.(containerId, worker.type) ?? { success: true, output: "" };
    if (!(answer instanceof Promise)) return answer;
    const timeoutSeconds = worker.probe.timeoutSeconds ?? 1;
    const stop = new AbortController();
    const timedOut = clock.sleep(timeoutSeconds * 1000, { signal: stop.signal }).then(
      () => ({ success: false, output: timeoutMessage(worker, podIP, timeoutSeconds) }),
      () => new Promise<never>(() => {}),
    );
    try {
      return await Promise.race([answer, timedOut]);
    } finally {
      stop.abort();
    }
  }

  #hasStartupProbe(worker: Worker): boolean {
    return worker.container.startupProbe !== undefined;
  }

  #set(worker: Worker, result: Result): void {
    if (worker.result === result) return;
    worker.result = result;
    if (worker.containerId === undefined) return;
    this.#options.onUpdate({
      type: worker.type,
      podUid: worker.pod.metadata?.uid ?? "",
      containerId: worker.containerId,
      success: result === "success",
    });
  }
}

/** Whether the named container is a sidecar: an init container with `restartPolicy: Always`. */
export function isSidecar(pod: ReadonlyPod, name: string): boolean {
  return pod.spec?.initContainers?.some((c) => c.name === name && c.restartPolicy === "Always") === true;
}

/** What upstream's probers report when a handler outlives `timeoutSeconds`. */
function timeoutMessage(worker: Worker, podIP: string, timeoutSeconds: number): string {
  const { probe, container } = worker;
  const port = (value: number | string | undefined): string => {
    if (typeof value === "string" && !/^\d+$/.test(value))
      return String(container.ports?.find((p) => p.name === value)?.containerPort ?? value);
    return String(value ?? "");
  };
  if (probe.exec !== undefined)
    return `command ${JSON.stringify((probe.exec.command ?? []).join(" "))} timed out`;
  if (probe.httpGet !== undefined) {
    const host = probe.httpGet.host || podIP;
    const path = probe.httpGet.path ?? "";
    const url = `${(probe.httpGet.scheme ?? "HTTP").toLowerCase()}://${host}:${port(probe.httpGet.port)}${path && !path.startsWith("/") ? "/" : ""}${path}`;
    return `Get "${url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`;
  }
  if (probe.tcpSocket !== undefined)
    return `dial tcp ${probe.tcpSocket.host || podIP}:${port(probe.tcpSocket.port)}: i/o timeout`;
  if (probe.grpc !== undefined)
    return `timeout: failed to connect service "${podIP}:${probe.grpc.port}" within ${timeoutSeconds}s`;
  return "probe timed out";
}

/** A worker's result when it first binds to a container: not ready, alive, not started. */
function initialResult(type: ProbeType): Result {
  if (type === "readiness") return "failure";
  if (type === "liveness") return "success";
  return "unknown";
}
