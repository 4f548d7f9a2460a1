import { type DeepReadonly, errorMessage } from "@reconcile/api";
import type { Clock } from "@reconcile/clock";
import { Backoff, type EventRecorder } from "@reconcile/controller";
import type { Container, Pod, PodStatus } from "kubernetes-types/core/v1.js";
import { ContainerConfigError, type ContainerEnvironment, podHostname } from "./container-env.js";
import { runLifecycleHandler } from "./lifecycle.js";
import type { RuntimePodStatus } from "./pleg.js";
import { computePodActions, containerHash, type KillReason, type ProbeVerdicts } from "./pod-actions.js";

import { type PodRef, podRef } from "./pod-ref.js";
import type { StartFailure } from "./pod-status.js";
import type { ContainerRecord, ContainerRuntime, Mount, PodSandboxConfig } from "./runtime/runtime.js";
import {
  minimumGracePeriodSeconds,
  TerminationOrdering,
  terminationGracePeriod,
} from "./termination-order.js";

type ReadonlyPod = DeepReadonly<Pod>;
type ReadonlyContainer = DeepReadonly<Container>;

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
  /** The bind mounts of a container, from its pod's mounted volumes. Default: none. */
  mountsFor?: ((pod: ReadonlyPod, container: ReadonlyContainer) => Mount[]) | undefined;
  /**
   * A container's environment and its expanded command and args; a
   * `ContainerConfigError` is the container's CreateContainerConfigError.
   * Default: its `env` values and command as written.
   */
  environmentFor?:
    | ((
        pod: ReadonlyPod,
        container: ReadonlyContainer,
        podIP: () => string | undefined,
      ) => Promise<ContainerEnvironment>)
    | undefined;
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
  readonly #mountsFor: RuntimeManagerOptions["mountsFor"];
  readonly #environmentFor: RuntimeManagerOptions["environmentFor"];
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
    this.#mountsFor = options.mountsFor;
    this.#environmentFor = options.environmentFor;
  }

  /** The container's environment, command and args, or why they cannot be made. */
  async #environment(
    pod: ReadonlyPod,
    container: ReadonlyContainer,
    sandboxId: string,
  ): Promise<ContainerEnvironment | ContainerConfigError> {
    const uid = pod.metadata?.uid ?? "";
    // Read only when a downward field asks for it: most containers have no such variable.
    const podIP = () => this.runtime.listPodSandboxes({ podUid: uid }).find((s) => s.id === sandboxId)?.ip;
    try {
      return (
        (await this.#environmentFor?.(pod, container, podIP)) ?? {
          envs: (container.env ?? []).map((e) => ({ name: e.name, value: e.value ?? "" })),
          command: container.command?.slice(),
          args: container.args?.slice(),
        }
      );
    } catch (error) {
      if (error instanceof ContainerConfigError) return error;
      throw error;
    }
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
      await this.killPod(pod, runtimeStatus, undefined, signal);
      if (!actions.createSandbox) return { error: undefined };
    } else {
      await Promise.all(
        actions.containersToKill.map((kill) =>
          this.#killContainer(
            pod,
            kill.id,
            kill.name,
            kill.message,
            kill.reason,
            undefined,
            undefined,
            signal,
          ),
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
          `Failed to create pod sandbox: ${errorMessage(error)}`,
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

    for (const index of actions.initContainersToStart) {
      const container = pod.spec?.initContainers?.[index];
      if (container === undefined) continue;
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
      if (error === undefined) continue;
      // A sidecar that fails to start is retried later; a failed init container ends this sync.
      if (container.restartPolicy === "Always") errors.push(error);
      else return { error };
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
   * 2 s, after its preStop hook), then its sandboxes (`KillPod`).
   * `gracePeriodOverride` comes from the pod workers' effective grace period.
   * Sidecars stop after the main containers, the last one first. Once
   * `signal` aborts the kill is no longer awaited (it goes on in the runtime).
   */
  async killPod(
    pod: ReadonlyPod | undefined,
    runtimeStatus: RuntimePodStatus,
    gracePeriodOverride: number | undefined,
    signal?: AbortSignal,
  ): Promise<void> {
    const running = runtimeStatus.containers.filter((c) => c.state === "running" || c.state === "created");
    const ordering =
      pod?.spec?.initContainers?.some((c) => c.restartPolicy === "Always") === true
        ? new TerminationOrdering(
            pod,
            running.map((c) => c.name),
            this.#clock,
          )
        : undefined;
    await Promise.all(
      running.map((container) =>
        pod === undefined
          ? unlessAborted(this.runtime.stopContainer(container.id, gracePeriodOverride ?? 2), signal)
          : this.#killContainer(
              pod,
              container.id,
              container.name,
              "",
              undefined,
              gracePeriodOverride,
              ordering,
              signal,
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

  /**
   * `killContainer`: the Killing event, the preStop hook (its time counted
   * against the grace period), the wait for the container's turn (sidecars),
   * then a stop with what is left of the grace period, at least 2 s.
   */
  async #killContainer(
    pod: ReadonlyPod,
    containerId: string,
    name: string,
    message: string,
    reason: KillReason,
    gracePeriodOverride: number | undefined,
    ordering: TerminationOrdering | undefined,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const fieldPath = fieldPathOf(pod, name);
    const spec = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].find(
      (c) => c.name === name,
    );
    let grace = terminationGracePeriod(pod, spec, reason);
    this.#recorder.event(
      podRef(pod, fieldPath),
      "Normal",
      "Killing",
      message || `Stopping container ${name}`,
    );
    if (gracePeriodOverride !== undefined) grace = gracePeriodOverride;
    const preStop = spec?.lifecycle?.preStop;
    if (spec !== undefined && preStop !== undefined && grace > 0) {
      const started = this.#clock.now();
      const hook = runLifecycleHandler(
        { runtime: this.runtime, clock: this.#clock, pod, container: spec, containerId },
        preStop,
      ).then((failure) => {
        // The failure's text stays out of the event, so that secrets do not leak through it.
        if (failure !== undefined)
          this.#recorder.event(podRef(pod, fieldPath), "Warning", "FailedPreStopHook", "PreStopHook failed");
      });
      await unlessAborted(this.#within(hook, grace * 1000), signal);
      grace -= Math.floor((this.#clock.now() - started) / 1000);
    }
    if (ordering !== undefined && grace > 0)
      grace -= await unlessAborted(ordering.waitForTurn(name, grace), signal);
    await unlessAborted(
      this.runtime.stopContainer(containerId, Math.max(grace, minimumGracePeriodSeconds)),
      signal,
    );
    ordering?.containerTerminated(name);
  }

  /** Waits for `work`, at most `ms` on the clock. */
  async #within(work: Promise<unknown>, ms: number): Promise<void> {
    const stop = new AbortController();
    const timeout = this.#clock.sleep(ms, { signal: stop.signal }).catch(() => {});
    try {
      await Promise.race([work, timeout]);
    } finally {
      stop.abort();
    }
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
    const imageError = await this.#ensureImage(pod, container, ref, sandboxConfig, signal);
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
    const environment = await this.#environment(pod, container, sandboxId);
    if (environment instanceof ContainerConfigError) {
      this.#recorder.event(ref, "Warning", "Failed", `Error: ${environment.message}`);
      failures.set(container.name, { reason: "CreateContainerConfigError", message: environment.message });
      return environment;
    }
    if (signal.aborted) return signal.reason as Error;
    let containerId: string;
    try {
      containerId = await this.runtime.createContainer(sandboxId, {
        name: container.name,
        image,
        attempt,
        specHash: hash,
        ...environment,
        hostname: podHostname(pod),
        ...streamsOf(container),
        mounts: this.#mountsFor?.(pod, container) ?? [],
      });
    } catch (error) {
      this.#recorder.event(ref, "Warning", "Failed", `Error: ${errorMessage(error)}`);
      failures.set(container.name, { reason: "CreateContainerError", message: errorMessage(error) });
      return asError(error);
    }
    this.#recorder.event(ref, "Normal", "Created", `Created container ${container.name}`);
    try {
      await unlessAborted(this.runtime.startContainer(containerId), signal);
    } catch (error) {
      this.#recorder.event(ref, "Warning", "Failed", `Error: ${errorMessage(error)}`);
      failures.set(container.name, { reason: "RunContainerError", message: errorMessage(error) });
      return asError(error);
    }
    this.#recorder.event(ref, "Normal", "Started", `Started container ${container.name}`);
    // postStart: the sync (so the container's Running status) waits for it; a failure kills the container.
    const postStart = container.lifecycle?.postStart;
    if (postStart !== undefined) {
      const failure = await runLifecycleHandler(
        { runtime: this.runtime, clock: this.#clock, pod, container, containerId },
        postStart,
        signal,
      );
      if (failure !== undefined) {
        this.#recorder.event(ref, "Warning", "FailedPostStartHook", "PostStartHook failed");
        await this.#killContainer(
          pod,
          containerId,
          container.name,
          "FailedPostStartHook",
          "postStartHook",
          undefined,
          undefined,
          signal,
        );
        failures.set(container.name, { reason: "PostStartHookError", message: failure });
        return new Error(failure);
      }
    }
    failures.delete(container.name);
    return undefined;
  }

  /** `EnsureImageExists`: pull per the pull policy, with its events and its own backoff. */
  async #ensureImage(
    pod: ReadonlyPod,
    container: ReadonlyContainer,
    ref: PodRef,
    sandboxConfig: PodSandboxConfig,
    signal: AbortSignal,
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
      const pulled = await unlessAborted(this.runtime.pullImage(image, sandboxConfig), signal);
      const took = goDuration(this.#clock.now() - started);
      this.#recorder.event(
        ref,
        "Normal",
        "Pulled",
        `Successfully pulled image "${image}" in ${took} (${took} including waiting). Image size: ${pulled.size} bytes.`,
      );
      return undefined;
    } catch (error) {
      if (signal.aborted) throw error;
      this.#imageBackoff.next(backoffKey, this.#clock.now());
      const message = errorMessage(error);
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

/**
 * `work`, or a rejection with the signal's reason once it aborts; the work
 * itself goes on unawaited, as a CRI call whose context was canceled.
 */
function unlessAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return work;
  return Promise.race([work, abortionOf(signal)]);
}

/** One promise per signal that rejects when it aborts: one listener per sync, not one per call. */
function abortionOf(signal: AbortSignal): Promise<never> {
  let abortion = abortions.get(signal);
  if (abortion === undefined) {
    abortion = new Promise<never>((_, reject) => {
      if (signal.aborted) reject(signal.reason);
      else signal.addEventListener("abort", () => reject(signal.reason), { once: true });
    });
    abortion.catch(() => {});
    abortions.set(signal, abortion);
  }
  return abortion;
}

const abortions = new WeakMap<AbortSignal, Promise<never>>();

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

const emptyFailures: ReadonlyMap<string, StartFailure> = new Map();

/** A container's standard streams as the runtime keeps them: `stdin`, `stdinOnce`, `tty`. */
function streamsOf(container: DeepReadonly<Container>): { stdin: boolean; stdinOnce: boolean; tty: boolean } {
  return {
    stdin: container.stdin === true,
    stdinOnce: container.stdinOnce === true,
    tty: container.tty === true,
  };
}
