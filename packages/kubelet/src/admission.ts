// Admission of a new pod on the node (`canAdmitPod` with the predicate
// admit handler): the pod must fit the node's allocatable resources next to
// the pods already admitted (pods, cpu, memory, in that order), and its
// nodeSelector must match the node's labels. A rejected pod is failed with
// the reason upstream gives (`OutOfcpu`, `OutOfmemory`, `OutOfpods`, `NodeAffinity`).
import type { Container, DeepReadonly, Pod } from "@reconcile/api";
import type { EventRecorder } from "@reconcile/controller";
import type { PodStatus } from "kubernetes-types/core/v1.js";
import { podRef } from "./pod-ref.js";
import { milliCpu, wholeUnits } from "./quantity.js";

export interface Allocatable {
  milliCpu: number;
  /** Bytes. */
  memory: number;
  pods: number;
}

export interface AdmissionFailure {
  reason: string;
  message: string;
}

/** Undefined when `pod` may run next to `others`, else why not. */
export function admitPod(
  pod: DeepReadonly<Pod>,
  others: readonly DeepReadonly<Pod>[],
  allocatable: Allocatable,
  nodeLabels: Readonly<Record<string, string>>,
): AdmissionFailure | undefined {
  const used = { milliCpu: 0, memory: 0 };
  for (const other of others) {
    const requests = podRequests(other);
    used.milliCpu += requests.milliCpu;
    used.memory += requests.memory;
  }
  return admitPodWithUsage(pod, podRequests(pod), { pods: others.length, ...used }, allocatable, nodeLabels);
}

/** {@link admitPod} with the other pods already summed up: their count and their requests. */
export function admitPodWithUsage(
  pod: DeepReadonly<Pod>,
  request: { milliCpu: number; memory: number },
  used: { pods: number; milliCpu: number; memory: number },
  allocatable: Allocatable,
  nodeLabels: Readonly<Record<string, string>>,
): AdmissionFailure | undefined {
  if (used.pods + 1 > allocatable.pods) return insufficient("pods", 1, used.pods, allocatable.pods);
  if (request.milliCpu > 0 && used.milliCpu + request.milliCpu > allocatable.milliCpu)
    return insufficient("cpu", request.milliCpu, used.milliCpu, allocatable.milliCpu);
  if (request.memory > 0 && used.memory + request.memory > allocatable.memory)
    return insufficient("memory", request.memory, used.memory, allocatable.memory);
  for (const [key, value] of Object.entries(pod.spec?.nodeSelector ?? {})) {
    if (nodeLabels[key] !== value)
      return {
        reason: "NodeAffinity",
        message: "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector",
      };
  }
  return undefined;
}

/** Where a rejected pod's status goes, and where a rejection is read back. */
export interface RejectionStatuses {
  getPodStatus(uid: string): DeepReadonly<PodStatus> | undefined;
  setPodStatus(pod: DeepReadonly<Pod>, status: PodStatus): void;
}

export interface PodAdmissionOptions {
  /** The node's allocatable resources. */
  allocatable: () => Allocatable;
  /** The node's labels, for the pod's nodeSelector. */
  nodeLabels: () => Readonly<Record<string, string>>;
  statuses: RejectionStatuses;
  recorder: EventRecorder;
}

/**
 * Admission as the kubelet runs it (`canAdmitPod` and `rejectPod`): the pods
 * admitted to the node and the sum of their requests, kept as pods come and
 * go (upstream re-adds the active pods for every admission); a pod that does
 * not fit is failed with upstream's reason, an event and the message "Pod was
 * rejected: …", and is never synced.
 */
export class PodAdmission {
  readonly #requests = new Map<string, { milliCpu: number; memory: number }>();
  readonly #usage = { pods: 0, milliCpu: 0, memory: 0 };
  readonly #o: PodAdmissionOptions;

  constructor(options: PodAdmissionOptions) {
    this.#o = options;
  }

  /** Admits the pod (its requests now count as used) or rejects it; true when admitted. */
  admit(pod: DeepReadonly<Pod>): boolean {
    const uid = pod.metadata?.uid ?? "";
    const requests = podRequests(pod);
    const { allocatable, nodeLabels } = this.#o;
    const verdict = admitPodWithUsage(pod, requests, this.#usage, allocatable(), nodeLabels());
    if (verdict !== undefined) {
      this.#o.recorder.event(podRef(pod), "Warning", verdict.reason, verdict.message);
      this.#o.statuses.setPodStatus(pod, {
        phase: "Failed",
        reason: verdict.reason,
        message: `Pod was rejected: ${verdict.message}`,
      });
      return false;
    }
    this.release(uid);
    this.#requests.set(uid, requests);
    this.#usage.pods++;
    this.#usage.milliCpu += requests.milliCpu;
    this.#usage.memory += requests.memory;
    return true;
  }

  /** The pod no longer uses the node's resources (stopped for good, or gone). */
  release(uid: string): void {
    const requests = this.#requests.get(uid);
    if (requests === undefined) return;
    this.#requests.delete(uid);
    this.#usage.pods--;
    this.#usage.milliCpu -= requests.milliCpu;
    this.#usage.memory -= requests.memory;
  }

  /** Releases every admitted pod that `active` says no longer counts (housekeeping). */
  releaseInactive(active: (uid: string) => boolean): void {
    for (const uid of [...this.#requests.keys()]) if (!active(uid)) this.release(uid);
  }

  /** The pod was rejected at admission (and never admitted since). */
  isRejected(uid: string): boolean {
    if (this.#requests.has(uid)) return false;
    const status = this.#o.statuses.getPodStatus(uid);
    return status?.phase === "Failed" && status.message?.startsWith("Pod was rejected: ") === true;
  }
}

/** A pod's requests: the larger of its containers' sum and its largest init container, plus overhead. */
export function podRequests(pod: DeepReadonly<Pod>): { milliCpu: number; memory: number } {
  let cpu = 0;
  let memory = 0;
  for (const container of pod.spec?.containers ?? []) {
    cpu += milliCpu(request(container, "cpu"));
    memory += wholeUnits(request(container, "memory"));
  }
  for (const container of pod.spec?.initContainers ?? []) {
    cpu = Math.max(cpu, milliCpu(request(container, "cpu")));
    memory = Math.max(memory, wholeUnits(request(container, "memory")));
  }
  cpu += milliCpu(pod.spec?.overhead?.cpu);
  memory += wholeUnits(pod.spec?.overhead?.memory);
  return { milliCpu: cpu, memory };
}

/** A container's request, defaulting to its limit as the API server's defaulting does. */
function request(container: DeepReadonly<Container>, resource: string): string | number | undefined {
  const requests = container.resources?.requests as Readonly<Record<string, string | number>> | undefined;
  const limits = container.resources?.limits as Readonly<Record<string, string | number>> | undefined;
  return requests?.[resource] ?? limits?.[resource];
}

function insufficient(resource: string, requested: number, used: number, capacity: number): AdmissionFailure {
  return {
    reason: `OutOf${resource}`,
    message: `Node didn't have enough resource: ${resource}, requested: ${requested}, used: ${used}, capacity: ${capacity}`,
  };
}
