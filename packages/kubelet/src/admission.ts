// Admission of a new pod on the node (`canAdmitPod` with the predicate
// admit handler): the pod must fit the node's allocatable resources next to
// the pods already admitted (pods, cpu, memory, in that order), and its
// nodeSelector must match the node's labels. A rejected pod is failed with
// the reason upstream gives (`OutOfcpu`, `OutOfmemory`, `OutOfpods`, `NodeAffinity`).
import type { Container, DeepReadonly, Pod } from "@reconcile/api";
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
  if (others.length + 1 > allocatable.pods) return insufficient("pods", 1, others.length, allocatable.pods);
  const request = podRequests(pod);
  if (request.milliCpu > 0 || request.memory > 0) {
    let usedCpu = 0;
    let usedMemory = 0;
    for (const other of others) {
      const used = podRequests(other);
      usedCpu += used.milliCpu;
      usedMemory += used.memory;
    }
    if (request.milliCpu > 0 && usedCpu + request.milliCpu > allocatable.milliCpu)
      return insufficient("cpu", request.milliCpu, usedCpu, allocatable.milliCpu);
    if (request.memory > 0 && usedMemory + request.memory > allocatable.memory)
      return insufficient("memory", request.memory, usedMemory, allocatable.memory);
  }
  for (const [key, value] of Object.entries(pod.spec?.nodeSelector ?? {})) {
    if (nodeLabels[key] !== value)
      return {
        reason: "NodeAffinity",
        message: "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector",
      };
  }
  return undefined;
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
