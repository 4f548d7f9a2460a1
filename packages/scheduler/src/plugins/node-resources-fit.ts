import type { DeepReadonly, Pod } from "@reconcile/api";
import {
  type CycleState,
  maxNodeScore,
  type Plugin,
  type Status,
  skipStatus,
  successStatus,
  unschedulable,
} from "../framework.js";
import type { NodeInfo } from "../node-info.js";
import { podRequests, type Resource } from "../resources.js";

const stateKey = "PreFilterNodeResourcesFit";

interface FitState {
  requests: Resource;
  nonZeroRequests: Resource;
}

/** One resource that does not fit (upstream `InsufficientResource`). */
export interface InsufficientResource {
  resourceName: string;
  reason: string;
  requested: number;
  used: number;
  capacity: number;
}

/**
 * What keeps `requests` off the node (upstream `fitsRequest`): too many pods,
 * then every resource the pod requests more of than is left, all reported.
 */
export function fitsRequest(requests: Resource, nodeInfo: NodeInfo): InsufficientResource[] {
  const insufficient: InsufficientResource[] = [];
  const allowedPods = nodeInfo.allocatable.allowedPodNumber;
  if (nodeInfo.pods.size + 1 > allowedPods) {
    insufficient.push({
      resourceName: "pods",
      reason: "Too many pods",
      requested: 1,
      used: nodeInfo.pods.size,
      capacity: allowedPods,
    });
  }
  if (
    requests.milliCPU === 0 &&
    requests.memory === 0 &&
    requests.ephemeralStorage === 0 &&
    requests.scalar.size === 0
  ) {
    return insufficient;
  }
  const { allocatable, requested } = nodeInfo;
  checkResource(insufficient, "cpu", requests.milliCPU, allocatable.milliCPU, requested.milliCPU);
  checkResource(insufficient, "memory", requests.memory, allocatable.memory, requested.memory);
  checkResource(
    insufficient,
    "ephemeral-storage",
    requests.ephemeralStorage,
    allocatable.ephemeralStorage,
    requested.ephemeralStorage,
  );
  for (const [name, amount] of requests.scalar) {
    checkResource(
      insufficient,
      name,
      amount,
      allocatable.scalar.get(name) ?? 0,
      requested.scalar.get(name) ?? 0,
    );
  }
  return insufficient;
}

// The common case without allocating: room for one more pod, and for every resource requested.
function fitsQuickly(requests: Resource, nodeInfo: NodeInfo): boolean {
  const { allocatable, requested } = nodeInfo;
  if (nodeInfo.pods.size + 1 > allocatable.allowedPodNumber) return false;
  if (requests.milliCPU > 0 && requests.milliCPU > allocatable.milliCPU - requested.milliCPU) return false;
  if (requests.memory > 0 && requests.memory > allocatable.memory - requested.memory) return false;
  if (
    requests.ephemeralStorage > 0 &&
    requests.ephemeralStorage > allocatable.ephemeralStorage - requested.ephemeralStorage
  ) {
    return false;
  }
  return requests.scalar.size === 0;
}

function checkResource(
  insufficient: InsufficientResource[],
  resourceName: string,
  requested: number,
  allocatable: number,
  used: number,
): void {
  if (requested > 0 && requested > allocatable - used) {
    insufficient.push({
      resourceName,
      reason: `Insufficient ${resourceName}`,
      requested,
      used,
      capacity: allocatable,
    });
  }
}

/** The pod's requests for this cycle, computed in PreFilter (or now, if PreFilter did not run). */
function fitState(state: CycleState, pod: DeepReadonly<Pod>): FitState {
  let fit = state.get(stateKey) as FitState | undefined;
  if (fit === undefined) {
    fit = { requests: podRequests(pod), nonZeroRequests: podRequests(pod, { nonZero: true }) };
    state.set(stateKey, fit);
  }
  return fit;
}

/**
 * Least-allocated score for cpu and memory, weight 1 each (upstream
 * `leastResourceScorer`): per resource `(allocatable − requested)·100 /
 * allocatable` with the scoring defaults for containers without requests,
 * 0 when over; the weighted mean, in integers.
 */
export function leastAllocatedScore(nonZeroPodRequests: Resource, nodeInfo: NodeInfo): number {
  const { allocatable, nonZeroRequested } = nodeInfo;
  let total = 0;
  let weights = 0;
  if (allocatable.milliCPU > 0) {
    total += leastRequested(nonZeroRequested.milliCPU + nonZeroPodRequests.milliCPU, allocatable.milliCPU);
    weights++;
  }
  if (allocatable.memory > 0) {
    total += leastRequested(nonZeroRequested.memory + nonZeroPodRequests.memory, allocatable.memory);
    weights++;
  }
  return weights === 0 ? 0 : Math.trunc(total / weights);
}

function leastRequested(requested: number, capacity: number): number {
  return requested > capacity ? 0 : Math.trunc(((capacity - requested) * maxNodeScore) / capacity);
}

/**
 * NodeResourcesFit: Filter on requests against allocatable minus what the
 * node's pods (assumed ones included) request; Score with the default
 * LeastAllocated strategy.
 */
export const nodeResourcesFit: Plugin = {
  name: "NodeResourcesFit",
  weight: 1,
  events: ["NodeAdd", "NodeAllocatableChange", "AssignedPodDelete"],
  preFilter(state, pod) {
    fitState(state, pod);
    return successStatus;
  },
  filter(state, pod, nodeInfo): Status {
    const { requests } = fitState(state, pod);
    if (fitsQuickly(requests, nodeInfo)) return successStatus;
    const insufficient = fitsRequest(requests, nodeInfo);
    if (insufficient.length === 0) return successStatus;
    return unschedulable(...insufficient.map((resource) => resource.reason));
  },
  preScore() {
    return successStatus;
  },
  score(state, pod, nodeInfo) {
    return leastAllocatedScore(fitState(state, pod).nonZeroRequests, nodeInfo);
  },
};

/**
 * NodeResourcesBalancedAllocation: favours nodes whose cpu and memory
 * fractions, with the pod, are close (upstream `balancedResourceScorer`):
 * `(1 − |f_cpu − f_memory| / 2)·100`, truncated; fractions capped at 1. Pods
 * that request neither are skipped, as upstream does since 1.33.
 */
export const nodeResourcesBalancedAllocation: Plugin = {
  name: "NodeResourcesBalancedAllocation",
  weight: 1,
  preScore(state, pod) {
    const { requests } = fitState(state, pod);
    return requests.milliCPU === 0 && requests.memory === 0 ? skipStatus : successStatus;
  },
  score(state, pod, nodeInfo) {
    return balancedAllocationScore(fitState(state, pod).requests, nodeInfo);
  },
};

export function balancedAllocationScore(podRequests: Resource, nodeInfo: NodeInfo): number {
  const { allocatable, requested } = nodeInfo;
  // With fewer than two resources there is no spread: the standard deviation is 0.
  if (allocatable.milliCPU <= 0 || allocatable.memory <= 0) return maxNodeScore;
  const cpu = Math.min(1, (requested.milliCPU + podRequests.milliCPU) / allocatable.milliCPU);
  const memory = Math.min(1, (requested.memory + podRequests.memory) / allocatable.memory);
  return Math.trunc((1 - Math.abs(cpu - memory) / 2) * maxNodeScore);
}
