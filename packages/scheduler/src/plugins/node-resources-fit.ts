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
  const check = (resourceName: string, requested: number, allocatable: number, used: number) => {
    if (requested > 0 && requested > allocatable - used) {
      insufficient.push({
        resourceName,
        reason: `Insufficient ${resourceName}`,
        requested,
        used,
        capacity: allocatable,
      });
    }
  };
  const { allocatable, requested } = nodeInfo;
  check("cpu", requests.milliCPU, allocatable.milliCPU, requested.milliCPU);
  check("memory", requests.memory, allocatable.memory, requested.memory);
  check(
    "ephemeral-storage",
    requests.ephemeralStorage,
    allocatable.ephemeralStorage,
    requested.ephemeralStorage,
  );
  for (const [name, amount] of requests.scalar) {
    check(name, amount, allocatable.scalar.get(name) ?? 0, requested.scalar.get(name) ?? 0);
  }
  return insufficient;
}

/** The pod's requests for this cycle, computed in PreFilter (or now, if PreFilter did not run). */
export function fitState(state: CycleState, pod: DeepReadonly<Pod>): FitState {
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
  let total = 0;
  let weights = 0;
  const resources: [number, number][] = [
    [nodeInfo.nonZeroRequested.milliCPU + nonZeroPodRequests.milliCPU, nodeInfo.allocatable.milliCPU],
    [nodeInfo.nonZeroRequested.memory + nonZeroPodRequests.memory, nodeInfo.allocatable.memory],
  ];
  for (const [requested, capacity] of resources) {
    if (capacity === 0) continue;
    total += requested > capacity ? 0 : Math.trunc(((capacity - requested) * maxNodeScore) / capacity);
    weights++;
  }
  return weights === 0 ? 0 : Math.trunc(total / weights);
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
    const insufficient = fitsRequest(fitState(state, pod).requests, nodeInfo);
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
  const fractions: number[] = [];
  const pairs: [number, number][] = [
    [nodeInfo.requested.milliCPU + podRequests.milliCPU, nodeInfo.allocatable.milliCPU],
    [nodeInfo.requested.memory + podRequests.memory, nodeInfo.allocatable.memory],
  ];
  for (const [requested, capacity] of pairs) {
    if (capacity === 0) continue;
    fractions.push(Math.min(1, requested / capacity));
  }
  let std = 0;
  if (fractions.length === 2) std = Math.abs(fractions[0]! - fractions[1]!) / 2;
  return Math.trunc((1 - std) * maxNodeScore);
}
