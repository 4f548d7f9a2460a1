// The kubelet's side of the runtime (`pkg/kubelet/kuberuntime`):
// `computePodActions` decides which sandbox and containers to create, start
// or kill from the pod spec and the runtime's status, and `syncPod` /
// `killPod` carry that out through the CRI-shaped runtime, with image pulls,
// CrashLoopBackOff and the events a real kubelet records.
import { createHash } from "node:crypto";
import type { DeepReadonly } from "@reconcile/api";
import type { Clock } from "@reconcile/clock";
import type { EventRecorder } from "@reconcile/controller";
import type { Container, ContainerStatus, Pod, PodStatus } from "kubernetes-types/core/v1.js";
import { Backoff } from "./backoff.js";
import type { RuntimePodStatus } from "./pleg.js";
import { type StartFailure, shouldContainerBeRestarted } from "./pod-status.js";
import type { ContainerRecord, ContainerRuntime, PodSandboxConfig } from "./runtime/runtime.js";

type ReadonlyPod = DeepReadonly<Pod>;
type ReadonlyContainer = DeepReadonly<Container>;

/** A running container to stop, and why. */
export interface ContainerToKill {
  readonly id: string;
  readonly name: string;
  /** The `Killing` event's message. */
  readonly message: string;
  /** The probe's own grace period, for a probe-triggered kill. */
  readonly gracePeriodSeconds: number | undefined;
}

/** What `computePodActions` decided (`podActions`). */
export interface PodActions {
  killPod: boolean;
  createSandbox: boolean;
  /** The attempt number of the sandbox to create. */
  attempt: number;
  /** Index into `spec.initContainers` to start next, if any. */
  nextInitContainerToStart: number | undefined;
  /** Indexes into `spec.containers` to start. */
  containersToStart: number[];
  containersToKill: ContainerToKill[];
}

/** Probe outcomes `computePodActions` reads. */
export interface ProbeVerdicts {
  /** A liveness or startup failure of this running container, or undefined. */
  failure(
    containerId: string,
  ): { type: "liveness" | "startup"; gracePeriodSeconds: number | undefined } | undefined;
}

export interface RuntimeManagerOptions {
  runtime: ContainerRuntime;
  recorder: EventRecorder;
  clock: Clock;
  /** CrashLoopBackOff's first delay. Default 10,000 ms. */
  initialBackoffMs?: number | undefined;
  /** CrashLoopBackOff's cap (`MaxContainerBackOff`). Default 300,000 ms. */
  maxBackoffMs?: number | undefined;
  /** Called when a container's backoff ends, so the pod can be synced right then. */
  onBackoffExpired?: ((podUid: string, atMs: number) => void) | undefined;
}

/** The outcome of one `syncPod`: an error fails the sync (the workers retry it). */
export interface SyncResult {
  error: Error | undefined;
}

/** See the file comment. */
export class RuntimeManager {
  readonly runtime: ContainerRuntime;
  readonly #recorder: EventRecorder;
  readonly #clock: Clock;
  readonly #containerBackoff: Backoff;
  readonly #imageBackoff: Backoff;
  readonly #onBackoffExpired: RuntimeManagerOptions["onBackoffExpired"];
  /** The last failed start per pod UID and container name (`ReasonCache`). */
  readonly #startFailures = new Map<string, Map<string, StartFailure>>();

  constructor(options: RuntimeManagerOptions) {
    this.runtime = options.runtime;
    this.#recorder = options.recorder;
    this.#clock = options.clock;
    this.#containerBackoff = new Backoff(
      options.clock,
      options.initialBackoffMs ?? 10_000,
      options.maxBackoffMs ?? 300_000,
    );
    this.#imageBackoff = new Backoff(options.clock, 10_000, 300_000);
    this.#onBackoffExpired = options.onBackoffExpired;
  }

  /** The pod's remembered start failures, for its status. */
  startFailures(podUid: string): ReadonlyMap<string, StartFailure> {
    return this.#startFailures.get(podUid) ?? emptyFailures;
  }

  /** Forgets a pod's start failures (its worker is gone). */
  forgetPod(podUid: string): void {
    this.#startFailures.delete(podUid);
  }

  /** Forgets backoff entries untouched for 10 minutes. */
  gc(): void {
    this.#containerBackoff.gc();
    this.#imageBackoff.gc();
  }

  /** Brings the runtime in line with the pod spec (`SyncPod`). */
  async syncPod(
    pod: ReadonlyPod,
    runtimeStatus: RuntimePodStatus,
    apiStatus: DeepReadonly<PodStatus> | undefined,
    probes: ProbeVerdicts,
    signal: AbortSignal,
  ): Promise<SyncResult> {
    const actions = computePodActions(pod, runtimeStatus, probes);
    const errors: Error[] = [];
    if (actions.createSandbox && runtimeStatus.sandboxes.length > 0 && actions.attempt > 0) {
      this.#recorder.event(
        podRef(pod),
        "Normal",
        "SandboxChanged",
        "Pod sandbox changed, it will be killed and re-created.",
      );
    }
    if (actions.killPod) {
      await this.killPod(pod, runtimeStatus, undefined);
      if (!actions.createSandbox) return { error: undefined };
    } else {
      await Promise.all(
        actions.containersToKill.map((kill) =>
          this.#killContainer(pod, kill.id, kill.name, kill.message, kill.gracePeriodSeconds),
        ),
      );
    }
    if (signal.aborted) return { error: signal.reason as Error };

    let sandboxId = runtimeStatus.sandboxes.find((s) => s.state === "ready")?.id;
    const sandboxConfig = sandboxConfigOf(pod, actions.attempt);
    if (actions.createSandbox) {
      try {
        sandboxId = await this.runtime.runPodSandbox(sandboxConfig);
      } catch (error) {
        this.#recorder.event(
          podRef(pod),
          "Warning",
          "FailedCreatePodSandBox",
          `Failed to create pod sandbox: ${messageOf(error)}`,
        );
        return { error: asError(error) };
      }
    }
    if (sandboxId === undefined) return { error: new Error("no ready sandbox for the pod") };
    // A new sandbox starts from scratch: no instance of any container exists in it.
    const status = actions.createSandbox
      ? { ...runtimeStatus, containers: [] as ContainerRecord[] }
      : runtimeStatus;
    const previous = actions.createSandbox ? runtimeStatus : status;

    if (actions.nextInitContainerToStart !== undefined) {
      const container = pod.spec?.initContainers?.[actions.nextInitContainerToStart];
      if (container !== undefined) {
        const error = await this.#startContainer(
          pod,
          container,
          "initContainers",
          sandboxId,
          sandboxConfig,
          previous,
          apiStatus,
          signal,
        );
        // A failed init container start ends this sync: nothing else may run yet.
        if (error !== undefined) return { error };
      }
    }
    for (const index of actions.containersToStart) {
      const container = pod.spec?.containers?.[index];
      if (container === undefined) continue;
      const error = await this.#startContainer(
        pod,
        container,
        "containers",
        sandboxId,
        sandboxConfig,
        previous,
        apiStatus,
        signal,
      );
      if (error !== undefined) errors.push(error);
    }
    this.#pruneDeadContainers(pod, status);
    return { error: errors[0] };
  }

  /**
   * Stops every container of the pod (each within its grace period, at least
   * 2 s), then its sandboxes (`KillPod`). `gracePeriodOverride` comes from the
   * pod workers' effective grace period.
   */
  async killPod(
    pod: ReadonlyPod | undefined,
    runtimeStatus: RuntimePodStatus,
    gracePeriodOverride: number | undefined,
  ): Promise<void> {
    const running = runtimeStatus.containers.filter((c) => c.state === "running" || c.state === "created");
    await Promise.all(
      running.map((container) =>
        pod === undefined
          ? this.runtime.stopContainer(container.id, gracePeriodOverride ?? 2)
          : this.#killContainer(
              pod,
              container.id,
              container.name,
              `Stopping container ${container.name}`,
              gracePeriodOverride,
            ),
      ),
    );
    for (const sandbox of runtimeStatus.sandboxes) {
      if (sandbox.state === "ready") await this.runtime.stopPodSandbox(sandbox.id);
    }
  }

  /** Removes a pod's sandboxes and containers from the runtime (container GC for a finished pod). */
  async removePod(podUid: string): Promise<void> {
    for (const sandbox of this.runtime.listPodSandboxes({ podUid }))
      await this.runtime.removePodSandbox(sandbox.id);
    this.forgetPod(podUid);
  }

  async #killContainer(
    pod: ReadonlyPod,
    containerId: string,
    name: string,
    message: string,
    gracePeriodOverride: number | undefined,
  ): Promise<void> {
    const fieldPath = fieldPathOf(pod, name);
    this.#recorder.event(podRef(pod, fieldPath), "Normal", "Killing", message);
    // killContainer: the pod's deletion grace, else an override (probe or kill), else the spec's; at least 2 s.
    let grace =
      pod.metadata?.deletionGracePeriodSeconds ??
      gracePeriodOverride ??
      pod.spec?.terminationGracePeriodSeconds ??
      2;
    if (gracePeriodOverride !== undefined) grace = Math.min(grace, gracePeriodOverride);
    await this.runtime.stopContainer(containerId, Math.max(grace, 2));
  }

  async #startContainer(
    pod: ReadonlyPod,
    container: ReadonlyContainer,
    list: "containers" | "initContainers",
    sandboxId: string,
    sandboxConfig: PodSandboxConfig,
    runtimeStatus: RuntimePodStatus,
    apiStatus: DeepReadonly<PodStatus> | undefined,
    signal: AbortSignal,
  ): Promise<Error | undefined> {
    const uid = pod.metadata?.uid ?? "";
    const ref = podRef(pod, `spec.${list}{${container.name}}`);
    const fullName = `${pod.metadata?.name}_${pod.metadata?.namespace}(${uid})`;
    const failures = this.#failuresOf(uid);
    const hash = containerHash(container);

    // CrashLoopBackOff (doBackOff): wait out the delay since the last instance exited.
    const exited = runtimeStatus.containers.find((c) => c.name === container.name && c.state === "exited");
    if (exited?.finishedAt !== undefined) {
      const key = `${pod.metadata?.name}_${pod.metadata?.namespace}_${uid}_${container.name}_${hash}`;
      if (this.#containerBackoff.isInBackOffSince(key, exited.finishedAt)) {
        const delay = this.#containerBackoff.get(key);
        this.#recorder.event(
          ref,
          "Warning",
          "BackOff",
          `Back-off restarting failed container ${container.name} in pod ${fullName}`,
        );
        const failure = {
          reason: "CrashLoopBackOff",
          message: `back-off ${goDuration(delay)} restarting failed container=${container.name} pod=${fullName}`,
        };
        failures.set(container.name, failure);
        this.#onBackoffExpired?.(uid, this.#containerBackoff.expiresAt(key, exited.finishedAt));
        return new Error(failure.message);
      }
      this.#containerBackoff.next(key, exited.finishedAt);
    }

    const image = container.image ?? "";
    const imageError = await this.#ensureImage(pod, container, ref, sandboxConfig);
    if (imageError !== undefined) {
      failures.set(container.name, imageError);
      return new Error(imageError.message);
    }
    if (signal.aborted) return signal.reason as Error;

    const newest = runtimeStatus.containers.find((c) => c.name === container.name);
    const apiRestarts = [
      ...(apiStatus?.containerStatuses ?? []),
      ...(apiStatus?.initContainerStatuses ?? []),
    ].find((s) => s.name === container.name);
    const attempt =
      newest !== undefined
        ? newest.attempt + 1
        : apiRestarts?.state?.terminated || apiRestarts?.lastState?.terminated
          ? apiRestarts.restartCount + 1
          : 0;
    let containerId: string;
    try {
      containerId = await this.runtime.createContainer(sandboxId, {
        name: container.name,
        image,
        attempt,
        specHash: hash,
        command: container.command,
        args: container.args,
      });
    } catch (error) {
      this.#recorder.event(ref, "Warning", "Failed", `Error: ${messageOf(error)}`);
      failures.set(container.name, { reason: "CreateContainerError", message: messageOf(error) });
      return asError(error);
    }
    this.#recorder.event(ref, "Normal", "Created", `Created container ${container.name}`);
    try {
      await this.runtime.startContainer(containerId);
    } catch (error) {
      this.#recorder.event(ref, "Warning", "Failed", `Error: ${messageOf(error)}`);
      failures.set(container.name, { reason: "RunContainerError", message: messageOf(error) });
      return asError(error);
    }
    this.#recorder.event(ref, "Normal", "Started", `Started container ${container.name}`);
    failures.delete(container.name);
    return undefined;
  }

  /** `EnsureImageExists`: pull per the pull policy, with its events and its own backoff. */
  async #ensureImage(
    pod: ReadonlyPod,
    container: ReadonlyContainer,
    ref: PodRef,
    sandboxConfig: PodSandboxConfig,
  ): Promise<StartFailure | undefined> {
    const image = container.image ?? "";
    const policy = container.imagePullPolicy ?? "IfNotPresent";
    const present = this.runtime.imageStatus(image) !== undefined;
    if (present && policy !== "Always") {
      this.#recorder.event(ref, "Normal", "Pulled", `Container image "${image}" already present on machine`);
      return undefined;
    }
    if (!present && policy === "Never") {
      const message = `Container image "${image}" is not present with pull policy of Never`;
      this.#recorder.event(ref, "Warning", "ErrImageNeverPull", message);
      this.#recorder.event(ref, "Warning", "Failed", "Error: ErrImageNeverPull");
      return { reason: "ErrImageNeverPull", message };
    }
    const backoffKey = `${pod.metadata?.uid}_${image}`;
    if (this.#imageBackoff.isInBackOffSinceUpdate(backoffKey)) {
      const message = `Back-off pulling image "${image}"`;
      this.#recorder.event(ref, "Normal", "BackOff", message);
      this.#recorder.event(ref, "Warning", "Failed", "Error: ImagePullBackOff");
      return { reason: "ImagePullBackOff", message };
    }
    this.#recorder.event(ref, "Normal", "Pulling", `Pulling image "${image}"`);
    const started = this.#clock.now();
    try {
      const pulled = await this.runtime.pullImage(image, sandboxConfig);
      const took = goDuration(this.#clock.now() - started);
      this.#recorder.event(
        ref,
        "Normal",
        "Pulled",
        `Successfully pulled image "${image}" in ${took} (${took} including waiting). Image size: ${pulled.size} bytes.`,
      );
      return undefined;
    } catch (error) {
      this.#imageBackoff.next(backoffKey, this.#clock.now());
      const message = messageOf(error);
      this.#recorder.event(ref, "Warning", "Failed", `Failed to pull image "${image}": ${message}`);
      this.#recorder.event(ref, "Warning", "Failed", "Error: ErrImagePull");
      return { reason: "ErrImagePull", message };
    }
  }

  /** Keeps the current and the previous instance of each container; older dead ones go. */
  #pruneDeadContainers(pod: ReadonlyPod, status: RuntimePodStatus): void {
    const seen = new Map<string, number>();
    for (const container of status.containers) {
      const count = (seen.get(container.name) ?? 0) + 1;
      seen.set(container.name, count);
      if (count > 2 && container.state === "exited") {
        // Best effort, as upstream's container GC: a removal that fails is retried at the next sync.
        this.runtime.removeContainer(container.id).catch(() => {});
      }
    }
    void pod;
  }

  #failuresOf(uid: string): Map<string, StartFailure> {
    let failures = this.#startFailures.get(uid);
    if (failures === undefined) {
      failures = new Map();
      this.#startFailures.set(uid, failures);
    }
    return failures;
  }
}

/** `computePodActions`: what to create, start and kill to bring the runtime to the spec. */
export function computePodActions(
  pod: ReadonlyPod,
  status: RuntimePodStatus,
  probes: ProbeVerdicts,
): PodActions {
  const spec = pod.spec;
  const policy = spec?.restartPolicy ?? "Always";
  const deleting = pod.metadata?.deletionTimestamp !== undefined;
  const readySandboxes = status.sandboxes.filter((s) => s.state === "ready");
  const newest = status.sandboxes[0];
  const sandboxChanged =
    newest === undefined ||
    readySandboxes.length !== 1 ||
    newest.state !== "ready" ||
    (newest.ip === undefined && spec?.hostNetwork !== true);
  const attempt = newest === undefined ? 0 : newest.attempt + 1;
  const actions: PodActions = {
    killPod: sandboxChanged,
    createSandbox: sandboxChanged,
    attempt,
    nextInitContainerToStart: undefined,
    containersToStart: [],
    containersToKill: [],
  };
  const containers = spec?.containers ?? [];
  const inits = spec?.initContainers ?? [];

  if (sandboxChanged) {
    if (policy === "Never" && attempt > 0 && status.containers.length > 0) {
      actions.createSandbox = false;
      return actions;
    }
    containers.forEach((container, index) => {
      if (policy === "OnFailure") {
        const last = status.containers.find((c) => c.name === container.name);
        if (last?.state === "exited" && last.exitCode === 0) return;
      }
      actions.containersToStart.push(index);
    });
    const anyRegularCreated = status.containers.some((c) => containers.some((s) => s.name === c.name));
    if (anyRegularCreated && actions.containersToStart.length === 0) {
      actions.createSandbox = false;
      return actions;
    }
    if (inits.length > 0) {
      actions.nextInitContainerToStart = 0;
      actions.containersToStart = [];
    }
    return actions;
  }

  // Existing sandbox: initialization first (walked from the last init container back).
  const initialized = initializationDone(pod, status, actions);
  if (actions.killPod) return actions;
  if (!initialized) return actions;

  let keep = 0;
  containers.forEach((container, index) => {
    const current = status.containers.find((c) => c.name === container.name);
    if (current === undefined || current.state !== "running") {
      if (shouldContainerBeRestarted(pod, container, statusOfRecord(current), deleting)) {
        if (current?.state === "unknown") {
          actions.containersToKill.push({
            id: current.id,
            name: container.name,
            message: `Container is in "unknown" state, try killing it before restart`,
            gracePeriodSeconds: undefined,
          });
        }
        actions.containersToStart.push(index);
      }
      return;
    }
    const hash = containerHash(container);
    let reason: string | undefined;
    let restart = policy !== "Never";
    let probeGrace: number | undefined;
    if (current.specHash !== hash) {
      reason = `Container ${container.name} definition changed`;
      restart = true;
    } else {
      const failure = probes.failure(current.id);
      if (failure !== undefined) {
        reason = `Container ${container.name} failed ${failure.type} probe`;
        probeGrace = failure.gracePeriodSeconds;
      }
    }
    if (reason === undefined) {
      keep++;
      return;
    }
    if (restart) {
      reason += ", will be restarted";
      actions.containersToStart.push(index);
    }
    actions.containersToKill.push({
      id: current.id,
      name: container.name,
      message: reason,
      gracePeriodSeconds: probeGrace,
    });
  });
  if (keep === 0 && actions.containersToStart.length === 0) {
    actions.killPod = true;
    actions.containersToKill = [];
  }
  return actions;
}

/** The init-container part of `computePodActions`; true once every init container succeeded. */
function initializationDone(pod: ReadonlyPod, status: RuntimePodStatus, actions: PodActions): boolean {
  const inits = pod.spec?.initContainers ?? [];
  if (inits.length === 0) return true;
  const containers = pod.spec?.containers ?? [];
  if (status.containers.some((c) => containers.some((s) => s.name === c.name))) return true;
  const policy = pod.spec?.restartPolicy ?? "Always";
  for (let i = inits.length - 1; i >= 0; i--) {
    const init = inits[i] as ReadonlyContainer;
    const current = status.containers.find((c) => c.name === init.name);
    if (current === undefined) continue;
    if (current.state === "running" || current.state === "created") return false;
    if (current.state === "exited" && current.exitCode === 0) {
      if (i === inits.length - 1) return true;
      actions.nextInitContainerToStart = i + 1;
      return false;
    }
    // Failed (or unknown): restart it, unless the pod never restarts anything.
    if (policy === "Never") {
      actions.killPod = true;
      return false;
    }
    if (current.state === "unknown") {
      actions.containersToKill.push({
        id: current.id,
        name: init.name,
        message: `Init container is in "unknown" state, try killing it before restart`,
        gracePeriodSeconds: undefined,
      });
    }
    actions.nextInitContainerToStart = i;
    return false;
  }
  actions.nextInitContainerToStart = 0;
  return false;
}

function statusOfRecord(record: ContainerRecord | undefined): ContainerStatus | undefined {
  if (record === undefined) return undefined;
  if (record.state === "exited")
    return {
      name: record.name,
      image: record.image,
      imageID: record.imageRef,
      ready: false,
      restartCount: record.attempt,
      state: { terminated: { exitCode: record.exitCode ?? 0 } },
    };
  return {
    name: record.name,
    image: record.image,
    imageID: record.imageRef,
    ready: false,
    restartCount: record.attempt,
    state: { waiting: {} },
  };
}

/** `HashContainer`: any change of the container's spec gives a new hash. */
export function containerHash(container: ReadonlyContainer): string {
  // Cached per object: pods from an informer's cache are never mutated, only replaced.
  let hash = hashes.get(container);
  if (hash === undefined) {
    hash = createHash("sha256").update(JSON.stringify(container)).digest("hex").slice(0, 8);
    hashes.set(container, hash);
  }
  return hash;
}

const hashes = new WeakMap<object, string>();

function sandboxConfigOf(pod: ReadonlyPod, attempt: number): PodSandboxConfig {
  return {
    podUid: pod.metadata?.uid ?? "",
    name: pod.metadata?.name ?? "",
    namespace: pod.metadata?.namespace ?? "",
    attempt,
    hostNetwork: pod.spec?.hostNetwork === true,
    labels: pod.metadata?.labels ?? {},
    annotations: pod.metadata?.annotations ?? {},
  };
}

export interface PodRef {
  kind: "Pod";
  apiVersion: "v1";
  namespace: string;
  name: string;
  uid: string;
  resourceVersion?: string;
  fieldPath?: string;
}

/** The involved object of a pod's events; `fieldPath` names one container (`spec.containers{web}`). */
export function podRef(pod: ReadonlyPod, fieldPath?: string): PodRef {
  const ref: PodRef = {
    kind: "Pod",
    apiVersion: "v1",
    namespace: pod.metadata?.namespace ?? "",
    name: pod.metadata?.name ?? "",
    uid: pod.metadata?.uid ?? "",
  };
  if (pod.metadata?.resourceVersion) ref.resourceVersion = pod.metadata.resourceVersion;
  if (fieldPath !== undefined) ref.fieldPath = fieldPath;
  return ref;
}

function fieldPathOf(pod: ReadonlyPod, name: string): string {
  if (pod.spec?.initContainers?.some((c) => c.name === name)) return `spec.initContainers{${name}}`;
  return `spec.containers{${name}}`;
}

/** Go's `time.Duration.String()` at millisecond precision: `812ms`, `1.512s`, `40s`, `1m20s`, `5m0s`. */
export function goDuration(ms: number): string {
  if (ms === 0) return "0s";
  if (ms < 1000) return `${ms}ms`;
  const hours = Math.floor(ms / 3_600_000);
  const minutes = Math.floor((ms % 3_600_000) / 60_000);
  const secondsPart = (ms % 60_000) / 1000;
  const secondsText = `${Number.isInteger(secondsPart) ? secondsPart : secondsPart.toFixed(3).replace(/0+$/, "")}s`;
  if (hours > 0) return `${hours}h${minutes}m${secondsText}`;
  if (minutes > 0) return `${minutes}m${secondsText}`;
  return secondsText;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

const emptyFailures: ReadonlyMap<string, StartFailure> = new Map();
