// The API pod status the kubelet derives from the runtime
// (`generateAPIPodStatus`): container statuses from the runtime's records,
// the phase (`getPhase`), the kubelet-owned conditions, IPs and the QoS
// class. Nothing here writes anywhere; the status manager decides what to
// patch.
import { copyJson, type DeepReadonly, rfc3339 } from "@reconcile/api";
import type {
  Container,
  ContainerState,
  ContainerStatus,
  Pod,
  PodCondition,
  PodStatus,
} from "kubernetes-types/core/v1.js";
import type { RuntimePodStatus } from "./pleg.js";
import type { ContainerRecord } from "./runtime/runtime.js";

/** The five condition types the kubelet owns. */
export const kubeletConditionTypes: readonly string[] = [
  "PodReadyToStartContainers",
  "Initialized",
  "Ready",
  "ContainersReady",
  "PodScheduled",
];

/** A failed start remembered for a container (`ReasonCache`): `CrashLoopBackOff`, `ErrImagePull`, … */
export interface StartFailure {
  reason: string;
  message: string;
}

export interface GenerateStatusOptions {
  /** The pod's previous status: the status manager's, else the API's. */
  oldStatus: DeepReadonly<PodStatus> | undefined;
  /** The pod has stopped for good (terminating finished): the phase is final. */
  podIsTerminal: boolean;
  nodeIPs: readonly string[];
  runtimeName: string;
  /** The last failed start per container name. */
  startFailures: ReadonlyMap<string, StartFailure>;
  /** `started` and `ready` of a running container, from the probe results. */
  probeState(containerName: string, containerId: string): { started: boolean; ready: boolean };
  /** Whether the pod's containers would be (re)started now (`ShouldContainerBeRestarted` applies). */
  deleting: boolean;
}

type ReadonlyPod = DeepReadonly<Pod>;

/** `generateAPIPodStatus`, without the timestamps the status manager owns (startTime, lastTransitionTime). */
export function generateAPIPodStatus(
  pod: ReadonlyPod,
  runtime: RuntimePodStatus,
  options: GenerateStatusOptions,
): PodStatus {
  const spec = pod.spec;
  const hasInit = (spec?.initContainers?.length ?? 0) > 0;
  const initStatuses = convertContainerStatuses(
    pod,
    (spec?.initContainers ?? []) as readonly Container[],
    runtime,
    options,
    hasInit,
    "initContainerStatuses",
  );
  const containerStatuses = convertContainerStatuses(
    pod,
    (spec?.containers ?? []) as readonly Container[],
    runtime,
    options,
    hasInit,
    "containerStatuses",
  ).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

  let phase = getPhase(pod, initStatuses, containerStatuses, options.podIsTerminal);
  const oldPhase = options.oldStatus?.phase;
  // A terminal phase, once reached, is never left.
  if ((oldPhase === "Failed" || oldPhase === "Succeeded") && phase !== "Failed" && phase !== "Succeeded")
    phase = oldPhase;

  const status: PodStatus = { phase };
  if (phase === oldPhase) {
    if (options.oldStatus?.reason !== undefined) status.reason = options.oldStatus.reason;
    if (options.oldStatus?.message !== undefined) status.message = options.oldStatus.message;
  }
  const readyToStart = hasReadySandboxWithIp(runtime, pod);
  status.conditions = [
    condition("PodReadyToStartContainers", readyToStart && !options.podIsTerminal),
    initializedCondition(pod, initStatuses, containerStatuses, phase),
    ...readyConditions(pod, initStatuses, containerStatuses, phase),
    condition("PodScheduled", true),
  ];
  if (options.nodeIPs.length > 0) {
    status.hostIP = options.nodeIPs[0] as string;
    status.hostIPs = options.nodeIPs.map((ip) => ({ ip }));
  }
  const podIPs = spec?.hostNetwork ? options.nodeIPs : runtime.ips;
  if (podIPs.length > 0) {
    status.podIP = podIPs[0] as string;
    status.podIPs = podIPs.map((ip) => ({ ip }));
  } else if (options.oldStatus?.podIP) {
    // The runtime no longer reports the IP of a stopped sandbox; the pod keeps the one it had.
    status.podIP = options.oldStatus.podIP;
    status.podIPs = (options.oldStatus.podIPs ?? []).flatMap((ip) => (ip.ip ? [{ ip: ip.ip }] : []));
  }
  status.qosClass = qosClassOf(pod);
  if (initStatuses.length > 0) status.initContainerStatuses = initStatuses;
  status.containerStatuses = containerStatuses;
  return status;
}

/**
 * `getPhase(pod, statuses, podIsTerminal)`, with v1.29's sidecars: a running
 * sidecar counts as running (pending until started), an exited one not at all.
 */
export function getPhase(
  pod: ReadonlyPod,
  initStatuses: readonly ContainerStatus[],
  statuses: readonly ContainerStatus[],
  podIsTerminal: boolean,
): "Pending" | "Running" | "Succeeded" | "Failed" {
  const restartPolicy = pod.spec?.restartPolicy ?? "Always";
  let pendingInit = 0;
  let failedInit = 0;
  let pendingSidecars = 0;
  let unknown = 0;
  let running = 0;
  for (const container of pod.spec?.initContainers ?? []) {
    const status = initStatuses.find((s) => s.name === container.name);
    if (container.restartPolicy === "Always") {
      if (status === undefined) unknown++;
      else if (status.state?.running) {
        if (!status.started) pendingSidecars++;
        running++;
      } else if (status.state?.terminated) {
        // An exited sidecar does not count.
      } else if (status.state?.waiting) {
        if (!status.lastState?.terminated) pendingSidecars++;
      } else {
        pendingSidecars++;
        unknown++;
      }
      continue;
    }
    if (status === undefined) {
      pendingInit++;
      continue;
    }
    if (status.state?.running) pendingInit++;
    else if (status.state?.terminated) {
      if (status.state.terminated.exitCode !== 0) failedInit++;
    } else if (status.state?.waiting) {
      if (status.lastState?.terminated && status.lastState.terminated.exitCode !== 0) failedInit++;
      else if (!status.lastState?.terminated) pendingInit++;
    } else pendingInit++;
  }
  let waiting = 0;
  let stopped = 0;
  let succeeded = 0;
  for (const container of pod.spec?.containers ?? []) {
    const status = statuses.find((s) => s.name === container.name);
    if (status === undefined) {
      unknown++;
      continue;
    }
    if (status.state?.running) running++;
    else if (status.state?.terminated) {
      stopped++;
      if (status.state.terminated.exitCode === 0) succeeded++;
    } else if (status.state?.waiting) {
      if (status.lastState?.terminated) stopped++;
      else waiting++;
    } else unknown++;
  }
  if (failedInit > 0 && restartPolicy === "Never") return "Failed";
  const anyStarted = statuses.some((s) => s.state?.running || s.state?.terminated || s.lastState?.terminated);
  if (((pendingInit > 0 || pendingSidecars > 0) && !anyStarted) || waiting > 0) return "Pending";
  if (running > 0 && unknown === 0) return "Running";
  if (running === 0 && stopped > 0 && unknown === 0) {
    if (podIsTerminal) return stopped === succeeded ? "Succeeded" : "Failed";
    if (restartPolicy === "Always") return "Running";
    if (stopped === succeeded) return "Succeeded";
    if (restartPolicy === "Never") return "Failed";
    return "Running";
  }
  return "Pending";
}

/** `GetPodQOS` for cpu and memory. */
export function qosClassOf(pod: ReadonlyPod): "Guaranteed" | "Burstable" | "BestEffort" {
  const spec = pod.spec;
  if (spec === undefined) return "BestEffort";
  let qos = qosBySpec.get(spec);
  if (qos === undefined) {
    qos = computeQosClass(pod);
    qosBySpec.set(spec, qos);
  }
  return qos;
}

// Specs from an informer's cache are never mutated, only replaced.
const qosBySpec = new WeakMap<object, "Guaranteed" | "Burstable" | "BestEffort">();

function computeQosClass(pod: ReadonlyPod): "Guaranteed" | "Burstable" | "BestEffort" {
  const containers = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])];
  let anySet = false;
  let guaranteed = containers.length > 0;
  for (const container of containers) {
    const requests = (container.resources?.requests ?? {}) as Readonly<Record<string, string | number>>;
    const limits = (container.resources?.limits ?? {}) as Readonly<Record<string, string | number>>;
    for (const name of ["cpu", "memory"]) {
      const request = requests[name];
      const limit = limits[name];
      if (isNonZero(request) || isNonZero(limit)) anySet = true;
      if (!isNonZero(limit) || (request !== undefined && String(request) !== String(limit)))
        guaranteed = false;
    }
  }
  if (!anySet) return "BestEffort";
  return guaranteed ? "Guaranteed" : "Burstable";
}

function isNonZero(value: string | number | undefined): boolean {
  return value !== undefined && value !== 0 && value !== "0";
}

function convertContainerStatuses(
  pod: ReadonlyPod,
  containers: readonly Container[],
  runtime: RuntimePodStatus,
  options: GenerateStatusOptions,
  hasInit: boolean,
  field: "containerStatuses" | "initContainerStatuses",
): ContainerStatus[] {
  const oldStatuses = (options.oldStatus?.[field] ?? []) as readonly ContainerStatus[];
  const result: ContainerStatus[] = [];
  for (const container of containers) {
    const old = oldStatuses.find((s) => s.name === container.name);
    let status: ContainerStatus = {
      name: container.name,
      image: container.image ?? "",
      imageID: "",
      ready: false,
      restartCount: 0,
      started: false,
      state: { waiting: { reason: hasInit ? "PodInitializing" : "ContainerCreating" } },
    };
    if (old?.state?.terminated) status = copyJson(old) as ContainerStatus;
    else if (old !== undefined) {
      status.restartCount = old.restartCount;
      if (old.lastState !== undefined) status.lastState = copyJson(old.lastState);
    }
    const instances = runtime.containers.filter((c) => c.name === container.name).slice(0, 2);
    const [newest, previous] = instances;
    if (newest !== undefined) {
      status = {
        name: container.name,
        image: newest.image,
        imageID: newest.imageRef,
        containerID: `${options.runtimeName}://${newest.id}`,
        ready: false,
        restartCount: newest.attempt,
        started: false,
        state: apiState(newest, options.runtimeName),
        ...(status.lastState !== undefined ? { lastState: status.lastState } : {}),
      };
      if (previous !== undefined && previous.state === "exited")
        status.lastState = apiState(previous, options.runtimeName);
    }
    const failure = options.startFailures.get(container.name);
    if (failure !== undefined && shouldContainerBeRestarted(pod, container, status, options.deleting)) {
      if (status.state?.terminated) status.lastState = status.state;
      status.state = { waiting: { reason: failure.reason, message: failure.message } };
    }
    if (status.state?.running && status.containerID !== undefined) {
      const probed = options.probeState(container.name, status.containerID);
      status.started = probed.started;
      status.ready = probed.ready;
    } else if (
      field === "initContainerStatuses" &&
      container.restartPolicy !== "Always" &&
      status.state?.terminated?.exitCode === 0
    ) {
      // An init container that finished its job counts as ready (a sidecar that exited does not).
      status.ready = true;
    }
    result.push(status);
  }
  return result;
}

/** `ShouldContainerBeRestarted` for a container and its current API status. */
export function shouldContainerBeRestarted(
  pod: ReadonlyPod,
  container: DeepReadonly<Container>,
  status: DeepReadonly<ContainerStatus> | undefined,
  deleting: boolean,
): boolean {
  if (deleting) return false;
  if (status === undefined) return true;
  if (status.state?.running) return false;
  const terminated =
    status.state?.terminated ?? (status.state?.waiting ? status.lastState?.terminated : undefined);
  if (terminated === undefined) return true;
  const policy = pod.spec?.restartPolicy ?? "Always";
  if (policy === "Never") return false;
  if (policy === "OnFailure" && terminated.exitCode === 0) return false;
  return container !== undefined;
}

function apiState(record: ContainerRecord, runtimeName: string): ContainerState {
  switch (record.state) {
    case "running":
      return { running: { startedAt: seconds(record.startedAt ?? record.createdAt) } };
    case "created":
      return { waiting: {} };
    case "exited":
      return {
        terminated: {
          exitCode: record.exitCode ?? 0,
          ...(record.reason !== undefined ? { reason: record.reason } : {}),
          ...(record.message !== undefined ? { message: record.message } : {}),
          ...(record.startedAt !== undefined ? { startedAt: seconds(record.startedAt) } : {}),
          finishedAt: seconds(record.finishedAt ?? record.createdAt),
          containerID: `${runtimeName}://${record.id}`,
        },
      };
    default:
      return { waiting: {} };
  }
}

function hasReadySandboxWithIp(runtime: RuntimePodStatus, pod: ReadonlyPod): boolean {
  const ready = runtime.sandboxes.filter((s) => s.state === "ready");
  if (ready.length !== 1) return false;
  return pod.spec?.hostNetwork === true || ready[0]?.ip !== undefined;
}

function initializedCondition(
  pod: ReadonlyPod,
  initStatuses: readonly ContainerStatus[],
  statuses: readonly ContainerStatus[],
  phase: string,
): PodCondition {
  const inits = pod.spec?.initContainers ?? [];
  if (inits.length === 0) return condition("Initialized", true);
  if (phase === "Succeeded") return condition("Initialized", true, "PodCompleted");
  if (statuses.some((s) => s.state?.running || s.state?.terminated || s.lastState?.terminated))
    return condition("Initialized", true);
  const unknown: string[] = [];
  const incomplete: string[] = [];
  for (const container of inits) {
    const status = initStatuses.find((s) => s.name === container.name);
    if (status === undefined) unknown.push(container.name);
    // A sidecar has done its part once it has started.
    else if (container.restartPolicy === "Always" ? !status.started : !status.ready)
      incomplete.push(container.name);
  }
  if (unknown.length === 0 && incomplete.length === 0) return condition("Initialized", true);
  const parts: string[] = [];
  if (unknown.length > 0) parts.push(`containers with unknown status: [${unknown.join(" ")}]`);
  if (incomplete.length > 0) parts.push(`containers with incomplete status: [${incomplete.join(" ")}]`);
  return condition("Initialized", false, "ContainersNotInitialized", parts.join(", "));
}

function readyConditions(
  pod: ReadonlyPod,
  initStatuses: readonly ContainerStatus[],
  statuses: readonly ContainerStatus[],
  phase: string,
): [PodCondition, PodCondition] {
  const containersReady = containersReadyCondition(pod, initStatuses, statuses, phase);
  let ready: PodCondition;
  if (containersReady.status !== "True") {
    ready = condition("Ready", false, containersReady.reason, containersReady.message);
  } else {
    ready = readinessGatesCondition(pod) ?? condition("Ready", true);
  }
  return [ready, containersReady];
}

function containersReadyCondition(
  pod: ReadonlyPod,
  initStatuses: readonly ContainerStatus[],
  statuses: readonly ContainerStatus[],
  phase: string,
): PodCondition {
  if (phase === "Failed") return condition("ContainersReady", false, "PodFailed");
  const unknown: string[] = [];
  const unready: string[] = [];
  // Sidecars first, then the regular containers (`GenerateContainersReadyCondition`).
  for (const container of pod.spec?.initContainers ?? []) {
    if (container.restartPolicy !== "Always" || phase === "Succeeded") continue;
    const status = initStatuses.find((s) => s.name === container.name);
    if (status === undefined) unknown.push(container.name);
    else if (!status.ready) unready.push(container.name);
  }
  for (const container of pod.spec?.containers ?? []) {
    const status = statuses.find((s) => s.name === container.name);
    if (status === undefined) unknown.push(container.name);
    else if (!status.ready) unready.push(container.name);
  }
  if (phase === "Succeeded" && unknown.length === 0)
    return condition("ContainersReady", false, "PodCompleted");
  if (unknown.length === 0 && unready.length === 0) return condition("ContainersReady", true);
  const parts: string[] = [];
  if (unknown.length > 0) parts.push(`containers with unknown status: [${unknown.join(" ")}]`);
  if (unready.length > 0) parts.push(`containers with unready status: [${unready.join(" ")}]`);
  return condition("ContainersReady", false, "ContainersNotReady", parts.join(", "));
}

function readinessGatesCondition(pod: ReadonlyPod): PodCondition | undefined {
  const missing: string[] = [];
  for (const gate of pod.spec?.readinessGates ?? []) {
    const found = pod.status?.conditions?.find((c) => c.type === gate.conditionType);
    if (found === undefined)
      missing.push(`corresponding condition of pod readiness gate "${gate.conditionType}" does not exist.`);
    else if (found.status !== "True")
      missing.push(
        `the status of pod readiness gate "${gate.conditionType}" is not "True", but ${found.status}`,
      );
  }
  if (missing.length === 0) return undefined;
  return condition("Ready", false, "ReadinessGatesNotReady", missing.join(", "));
}

function condition(type: string, status: boolean, reason?: string, message?: string): PodCondition {
  const result: PodCondition = { type, status: status ? "True" : "False" };
  if (reason !== undefined) result.reason = reason;
  if (message !== undefined) result.message = message;
  return result;
}

/** RFC 3339 at whole seconds, as the status manager normalises every time. */
export function seconds(ms: number): string {
  const second = Math.floor(ms / 1000);
  // Every status of a sync names the same few seconds: format each once.
  if (second !== lastSecond) {
    lastSecond = second;
    lastSecondText = rfc3339(second * 1000);
  }
  return lastSecondText;
}

let lastSecond = Number.NaN;
let lastSecondText = "";
