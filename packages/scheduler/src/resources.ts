import {
  type Container,
  type DeepReadonly,
  milliValue,
  type Node,
  type Pod,
  quantityValue,
} from "@reconcile/api";

/**
 * An amount of every resource the scheduler accounts for (upstream
 * `framework.Resource`): cpu in millicores, memory and ephemeral storage in
 * bytes, a pod count, and scalar resources (extended `vendor/x`, `hugepages-*`)
 * by name.
 */
export interface Resource {
  milliCPU: number;
  memory: number;
  ephemeralStorage: number;
  allowedPodNumber: number;
  scalar: Map<string, number>;
}

/** The requests substituted for a container that requests no cpu or memory, for scoring (upstream `DefaultMilliCPURequest`, `DefaultMemoryRequest`). */
export const defaultMilliCPURequest = 100;
export const defaultMemoryRequest = 200 * 1024 * 1024;

export function emptyResource(): Resource {
  return { milliCPU: 0, memory: 0, ephemeralStorage: 0, allowedPodNumber: 0, scalar: new Map() };
}

/** Resources a Node offers: `status.allocatable`, else `status.capacity`. */
export function nodeAllocatable(node: DeepReadonly<Node>): Resource {
  const list = node.status?.allocatable ?? node.status?.capacity ?? {};
  const result = emptyResource();
  for (const [name, quantity] of Object.entries(list)) {
    if (name === "pods") result.allowedPodNumber = quantityValue(quantity);
    else addQuantity(result, name, quantity);
  }
  return result;
}

/**
 * What a pod requests (upstream `PodRequests`): the sum of its containers'
 * requests, raised to what any init container needs while it runs (restartable
 * "sidecar" init containers keep running and add up), plus `spec.overhead`.
 * With `nonZero`, a container without a cpu or memory request counts the
 * scoring defaults (100m, 200Mi) instead.
 */
export function podRequests(pod: DeepReadonly<Pod>, options: { nonZero?: boolean } = {}): Resource {
  const nonZero = options.nonZero ?? false;
  const sum = emptyResource();
  for (const container of pod.spec?.containers ?? []) addContainer(sum, container, nonZero);
  const sidecars = emptyResource();
  const initMax = emptyResource();
  for (const container of pod.spec?.initContainers ?? []) {
    const own = emptyResource();
    addContainer(own, container, nonZero);
    if (container.restartPolicy === "Always") {
      addResource(sum, own);
      addResource(sidecars, own);
      maxResource(initMax, sidecars);
    } else {
      addResource(own, sidecars);
      maxResource(initMax, own);
    }
  }
  maxResource(sum, initMax);
  for (const [name, quantity] of Object.entries(pod.spec?.overhead ?? {})) addQuantity(sum, name, quantity);
  return sum;
}

/** `target += other`, resource by resource. */
export function addResource(target: Resource, other: Resource): void {
  target.milliCPU += other.milliCPU;
  target.memory += other.memory;
  target.ephemeralStorage += other.ephemeralStorage;
  target.allowedPodNumber += other.allowedPodNumber;
  for (const [name, amount] of other.scalar) target.scalar.set(name, (target.scalar.get(name) ?? 0) + amount);
}

/** `target -= other`, resource by resource. */
export function subtractResource(target: Resource, other: Resource): void {
  target.milliCPU -= other.milliCPU;
  target.memory -= other.memory;
  target.ephemeralStorage -= other.ephemeralStorage;
  target.allowedPodNumber -= other.allowedPodNumber;
  for (const [name, amount] of other.scalar) target.scalar.set(name, (target.scalar.get(name) ?? 0) - amount);
}

function maxResource(target: Resource, other: Resource): void {
  target.milliCPU = Math.max(target.milliCPU, other.milliCPU);
  target.memory = Math.max(target.memory, other.memory);
  target.ephemeralStorage = Math.max(target.ephemeralStorage, other.ephemeralStorage);
  for (const [name, amount] of other.scalar)
    target.scalar.set(name, Math.max(target.scalar.get(name) ?? 0, amount));
}

function addContainer(target: Resource, container: DeepReadonly<Container>, nonZero: boolean): void {
  const requests = container.resources?.requests ?? {};
  for (const [name, quantity] of Object.entries(requests)) addQuantity(target, name, quantity);
  if (nonZero) {
    if (requests.cpu === undefined) target.milliCPU += defaultMilliCPURequest;
    if (requests.memory === undefined) target.memory += defaultMemoryRequest;
  }
}

function addQuantity(target: Resource, name: string, quantity: string | number): void {
  switch (name) {
    case "cpu":
      target.milliCPU += milliValue(quantity);
      return;
    case "memory":
      target.memory += quantityValue(quantity);
      return;
    case "ephemeral-storage":
      target.ephemeralStorage += quantityValue(quantity);
      return;
    case "pods":
      target.allowedPodNumber += quantityValue(quantity);
      return;
    default:
      if (isScalarResourceName(name))
        target.scalar.set(name, (target.scalar.get(name) ?? 0) + quantityValue(quantity));
  }
}

// Extended (`vendor.com/x`) and prefixed native (`kubernetes.io/x`) resources, hugepages and
// attachable volumes (upstream IsScalarResourceName); quota names (`requests.*`) are not.
function isScalarResourceName(name: string): boolean {
  if (name.startsWith("hugepages-") || name.startsWith("attachable-volumes-")) return true;
  return name.includes("/") && !name.startsWith("requests.");
}
