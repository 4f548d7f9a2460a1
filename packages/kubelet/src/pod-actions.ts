import { createHash } from "node:crypto";
import type { DeepReadonly } from "@reconcile/api";
import type { Container, ContainerStatus, Pod } from "kubernetes-types/core/v1.js";
import type { RuntimePodStatus } from "./pleg.js";
import { shouldContainerBeRestarted } from "./pod-status.js";
import type { ContainerRecord } from "./runtime/runtime.js";

// What the runtime manager does to a pod, decided from its spec and its runtime state
// (upstream kuberuntime_manager.go's computePodActions and its init-container half).

type ReadonlyPod = DeepReadonly<Pod>;
type ReadonlyContainer = DeepReadonly<Container>;

/** A running container to stop, and why. */
export interface ContainerToKill {
  readonly id: string;
  readonly name: string;
  /** The `Killing` event's message. */
  readonly message: string;
  /** Why, when a probe failed: its own `terminationGracePeriodSeconds` then applies. */
  readonly reason: KillReason;
}

/** `containerKillReason`: which probe's grace period applies to a kill. */
export type KillReason = "startupProbe" | "livenessProbe" | "postStartHook" | undefined;

/** What `computePodActions` decided (`podActions`). */
export interface PodActions {
  killPod: boolean;
  createSandbox: boolean;
  /** The attempt number of the sandbox to create. */
  attempt: number;
  /** Indexes into `spec.initContainers` to start, in order: the next init container and sidecars to restart. */
  initContainersToStart: number[];
  /** Indexes into `spec.containers` to start. */
  containersToStart: number[];
  containersToKill: ContainerToKill[];
}

/** Probe outcomes `computePodActions` reads. */
export interface ProbeVerdicts {
  /** A liveness or startup failure of this running container, or undefined. */
  failure(containerId: string): { type: "liveness" | "startup" } | undefined;
  /** The startup probe's result for a running container; undefined while it has not run. */
  startup?(containerId: string): "success" | "failure" | undefined;
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
    initContainersToStart: [],
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
      actions.initContainersToStart = [0];
      actions.containersToStart = [];
    }
    return actions;
  }

  // Existing sandbox: initialization first, sidecars kept running.
  const initialized = computeInitContainerActions(pod, status, probes, actions);
  if (actions.killPod || !initialized) return actions;

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
            reason: undefined,
          });
        }
        actions.containersToStart.push(index);
      }
      return;
    }
    const hash = containerHash(container);
    let message: string | undefined;
    let restart = policy !== "Never";
    let reason: KillReason;
    if (current.specHash !== hash) {
      message = `Container ${container.name} definition changed`;
      restart = true;
    } else {
      const failure = probes.failure(current.id);
      if (failure !== undefined) {
        message = `Container ${container.name} failed ${failure.type} probe`;
        reason = failure.type === "liveness" ? "livenessProbe" : "startupProbe";
      }
    }
    if (message === undefined) {
      keep++;
      return;
    }
    if (restart) {
      message += ", will be restarted";
      actions.containersToStart.push(index);
    }
    actions.containersToKill.push({ id: current.id, name: container.name, message, reason });
  });
  if (keep === 0 && actions.containersToStart.length === 0) {
    actions.killPod = true;
    actions.containersToKill = [];
    // Sidecars must not keep a pod alive whose main containers are done.
    actions.initContainersToStart = [];
  }
  return actions;
}

/**
 * The init-container part of `computePodActions` (`computeInitContainerActions`,
 * sidecar-aware since v1.29): walking the init containers from the last one
 * back, start the next one not yet run, restart failed ones (unless the pod
 * never restarts), and keep sidecars (`restartPolicy: Always`) running —
 * restarted when they exit, killed when their startup or liveness probe
 * fails. The next init container starts only after a sidecar has started
 * (its startup probe, if any, succeeded). True once the pod is initialized.
 */
function computeInitContainerActions(
  pod: ReadonlyPod,
  status: RuntimePodStatus,
  probes: ProbeVerdicts,
  actions: PodActions,
): boolean {
  const inits = pod.spec?.initContainers ?? [];
  if (inits.length === 0) return true;
  const containers = pod.spec?.containers ?? [];
  let podHasInitialized = status.containers.some(
    (c) => (c.state === "created" || c.state === "running") && containers.some((s) => s.name === c.name),
  );
  let previouslyInitialized = podHasInitialized;
  const restartOnFailure = (pod.spec?.restartPolicy ?? "Always") !== "Never";
  const toStart: number[] = [];
  for (let i = inits.length - 1; i >= 0; i--) {
    const init = inits[i] as ReadonlyContainer;
    const sidecar = init.restartPolicy === "Always";
    const current = status.containers.find((c) => c.name === init.name);
    if (current === undefined) {
      if (previouslyInitialized && sidecar) toStart.push(i);
      continue;
    }
    if (previouslyInitialized && !sidecar) continue;
    switch (current.state) {
      case "created":
        toStart.push(i);
        break;
      case "running": {
        if (!sidecar) break;
        if (init.startupProbe !== undefined) {
          const startup = probes.startup?.(current.id);
          if (startup === undefined) break;
          if (startup === "failure") {
            actions.containersToKill.push({
              id: current.id,
              name: init.name,
              message: `Init container ${init.name} failed startup probe`,
              reason: "startupProbe",
            });
            toStart.push(i);
            break;
          }
        }
        if (i === inits.length - 1) podHasInitialized = true;
        else if (!previouslyInitialized) toStart.push(i + 1);
        if (current.specHash !== containerHash(init)) {
          actions.containersToKill.push({
            id: current.id,
            name: init.name,
            message: `Init container ${init.name} definition changed`,
            reason: undefined,
          });
          toStart.push(i);
          break;
        }
        if (init.livenessProbe !== undefined && probes.failure(current.id)?.type === "liveness") {
          actions.containersToKill.push({
            id: current.id,
            name: init.name,
            message: `Init container ${init.name} failed liveness probe`,
            reason: "livenessProbe",
          });
          toStart.push(i);
        }
        break;
      }
      case "exited":
        if (sidecar) {
          toStart.push(i);
          break;
        }
        if (current.exitCode !== 0) {
          if (!restartOnFailure) {
            actions.killPod = true;
            actions.initContainersToStart = [];
            return false;
          }
          toStart.push(i);
          break;
        }
        if (i === inits.length - 1) podHasInitialized = true;
        else toStart.push(i + 1);
        break;
      default:
        if (!sidecar && !restartOnFailure) {
          actions.killPod = true;
          actions.initContainersToStart = [];
          return false;
        }
        actions.containersToKill.push({
          id: current.id,
          name: init.name,
          message: `Init container is in "${current.state}" state, try killing it before restart`,
          reason: undefined,
        });
        toStart.push(i);
    }
    if (!previouslyInitialized) previouslyInitialized = true;
  }
  if (!previouslyInitialized) toStart.push(0);
  actions.initContainersToStart = toStart.reverse();
  return podHasInitialized;
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
