import {
  type DeepReadonly,
  getControllerOf,
  milliValue,
  type NodeMetrics,
  type Pod,
  type PodMetrics,
  quantityValue,
  rfc3339,
} from "@reconcile/api";
import type { Clock } from "@reconcile/clock";
import type { Kubelet } from "./kubelet.js";
import { simulationAnnotationPrefix } from "./runtime/container-behaviour.js";

// What simulated nodes and their containers use, as metrics-server reports it
// from the kubelets' resource metrics. A container uses what its pod's
// `sim.reconcile.dev/cpu-usage` and `memory-usage` annotations say (per pod,
// or `.<container>` for one), else a small idle amount; a pod's
// `sim.reconcile.dev/cpu-load` is a load its workload shares: the pods of one
// controller with the same load split it evenly, so more replicas each use less.

/** What an idle container uses, and what a node uses beside its pods. */
export interface ResourceUsageDefaults {
  /** Millicores. Default 1. */
  containerCpuMillis: number;
  /** Bytes. Default 4 MiB. */
  containerMemoryBytes: number;
  /** Millicores the node's own processes use. Default 50. */
  nodeCpuMillis: number;
  /** Bytes the node's own processes use. Default 256 MiB. */
  nodeMemoryBytes: number;
  /** The window the usage is averaged over, as metrics-server reports it. Default 20 s. */
  windowSeconds: number;
}

export const defaultResourceUsage: Readonly<ResourceUsageDefaults> = Object.freeze({
  containerCpuMillis: 1,
  containerMemoryBytes: 4 * 1024 * 1024,
  nodeCpuMillis: 50,
  nodeMemoryBytes: 256 * 1024 * 1024,
  windowSeconds: 20,
});

interface ContainerUsage {
  name: string;
  cpuMillis: number;
  memoryBytes: number;
}

interface RunningPod {
  pod: DeepReadonly<Pod>;
  containers: ContainerUsage[];
}

/**
 * The NodeMetrics and PodMetrics of `kubelets` at `now`: every node, and
 * every pod with a running container (only running containers count).
 */
export function collectResourceMetrics(
  kubelets: readonly Kubelet[],
  now: number,
  defaults: Readonly<ResourceUsageDefaults> = defaultResourceUsage,
): { nodes: NodeMetrics[]; pods: PodMetrics[] } {
  const byNode = kubelets.map((kubelet) => ({ kubelet, pods: runningPods(kubelet, defaults) }));
  shareLoads(byNode.flatMap((entry) => entry.pods));
  const timestamp = rfc3339(now);
  const window = `${defaults.windowSeconds}s`;
  const nodes: NodeMetrics[] = [];
  const pods: PodMetrics[] = [];
  for (const { kubelet, pods: running } of byNode) {
    let cpu = defaults.nodeCpuMillis;
    let memory = defaults.nodeMemoryBytes;
    for (const { pod, containers } of running) {
      for (const c of containers) {
        cpu += c.cpuMillis;
        memory += c.memoryBytes;
      }
      pods.push({
        apiVersion: "metrics.k8s.io/v1beta1",
        kind: "PodMetrics",
        metadata: {
          name: pod.metadata?.name ?? "",
          namespace: pod.metadata?.namespace ?? "",
          creationTimestamp: timestamp,
          ...(pod.metadata?.labels !== undefined ? { labels: { ...pod.metadata.labels } } : {}),
        },
        timestamp,
        window,
        containers: containers.map((c) => ({ name: c.name, usage: usage(c.cpuMillis, c.memoryBytes) })),
      });
    }
    nodes.push({
      apiVersion: "metrics.k8s.io/v1beta1",
      kind: "NodeMetrics",
      metadata: {
        name: kubelet.nodeName,
        creationTimestamp: timestamp,
        labels: { ...kubelet.nodeStatus.initialNodeLabels() },
      },
      timestamp,
      window,
      usage: usage(cpu, memory),
    });
  }
  pods.sort((a, b) => key(a).localeCompare(key(b)));
  return { nodes, pods };
}

/**
 * A resource metrics provider over `kubelets` (the shape of
 * `@reconcile/apiserver`'s `ResourceMetricsProvider`, as metrics-server
 * scrapes kubelets): usage collected afresh on each call.
 */
export function resourceMetricsProvider(
  kubelets: readonly Kubelet[],
  clock: Clock,
  defaults?: Partial<ResourceUsageDefaults>,
): { nodeMetrics(): NodeMetrics[]; podMetrics(namespace: string | undefined): PodMetrics[] } {
  const settings = { ...defaultResourceUsage, ...defaults };
  const collect = () => collectResourceMetrics(kubelets, clock.now(), settings);
  return {
    nodeMetrics: () => collect().nodes,
    podMetrics: (namespace) =>
      collect().pods.filter((pod) => namespace === undefined || pod.metadata?.namespace === namespace),
  };
}

const key = (p: PodMetrics) => `${p.metadata?.namespace}/${p.metadata?.name}`;

/** As metrics-server writes usage: CPU in nanocores, memory in KiB, each canonical. */
function usage(cpuMillis: number, memoryBytes: number): Record<string, string> {
  const nanocores = Math.round(cpuMillis * 1_000_000);
  return { cpu: canonicalNanos(nanocores), memory: `${Math.round(memoryBytes / 1024)}Ki` };
}

function canonicalNanos(nanocores: number): string {
  if (nanocores === 0) return "0";
  if (nanocores % 1_000_000_000 === 0) return String(nanocores / 1_000_000_000);
  if (nanocores % 1_000_000 === 0) return `${nanocores / 1_000_000}m`;
  if (nanocores % 1_000 === 0) return `${nanocores / 1_000}u`;
  return `${nanocores}n`;
}

function runningPods(kubelet: Kubelet, defaults: Readonly<ResourceUsageDefaults>): RunningPod[] {
  const running = new Map<string, string[]>();
  for (const container of kubelet.runtime.listContainers()) {
    if (container.state !== "running") continue;
    const names = running.get(container.podUid);
    if (names === undefined) running.set(container.podUid, [container.name]);
    else names.push(container.name);
  }
  const result: RunningPod[] = [];
  for (const pod of kubelet.getPods()) {
    const names = running.get(pod.metadata?.uid ?? "");
    if (names === undefined) continue;
    const annotations = pod.metadata?.annotations ?? {};
    // Spec order, as the kubelet reports containers.
    const order = (pod.spec?.containers ?? []).map((c) => c.name);
    names.sort((a, b) => order.indexOf(a) - order.indexOf(b));
    result.push({
      pod,
      containers: names.map((name) => ({
        name,
        cpuMillis: read(annotations, "cpu-usage", name, milliValue) ?? defaults.containerCpuMillis,
        memoryBytes: read(annotations, "memory-usage", name, quantityValue) ?? defaults.containerMemoryBytes,
      })),
    });
  }
  return result;
}

/** A quantity annotation of the container, or of the pod; undefined when absent or not a quantity. */
function read(
  annotations: Readonly<Record<string, string>>,
  key: string,
  container: string | undefined,
  parse: (text: string) => number,
): number | undefined {
  const text =
    (container !== undefined ? annotations[`${simulationAnnotationPrefix}${key}.${container}`] : undefined) ??
    annotations[`${simulationAnnotationPrefix}${key}`];
  if (text === undefined) return undefined;
  try {
    const value = parse(text);
    return Number.isFinite(value) && value >= 0 ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Adds each pod's share of its workload's `cpu-load` to its first running container. */
function shareLoads(pods: readonly RunningPod[]): void {
  const groups = new Map<string, RunningPod[]>();
  for (const running of pods) {
    const load = running.pod.metadata?.annotations?.[`${simulationAnnotationPrefix}cpu-load`];
    if (load === undefined) continue;
    const owner = getControllerOf(running.pod)?.uid ?? running.pod.metadata?.uid ?? "";
    const group = `${owner}/${load}`;
    const members = groups.get(group);
    if (members === undefined) groups.set(group, [running]);
    else members.push(running);
  }
  for (const members of groups.values()) {
    const total = read(members[0]!.pod.metadata?.annotations ?? {}, "cpu-load", undefined, milliValue);
    if (total === undefined) continue;
    const share = total / members.length;
    for (const { containers } of members) if (containers[0] !== undefined) containers[0].cpuMillis += share;
  }
}
