import { type DeepReadonly, milliValue, type Pod, type PodMetrics } from "@reconcile/api";

// How many replicas a resource metric asks for (upstream
// `pkg/controller/podautoscaler/replica_calculator.go` and the resource half
// of its metrics client): usage from the resource metrics API against the
// pods' requests, with pending, unready, missing and deleted pods handled as
// upstream does, and a tolerance around the target.

/** One pod's usage of a resource, in milli-units, and when it was measured. */
export interface PodMetric {
  value: number;
  timestamp: number;
  windowMs: number;
}

/** Usage by pod name. */
export type PodMetricsInfo = Map<string, PodMetric>;

/** The replica calculator's settings (kube-controller-manager flags). */
export interface ReplicaCalculatorSettings {
  /** `--horizontal-pod-autoscaler-tolerance`. Default 0.1. */
  tolerance: number;
  /** `--horizontal-pod-autoscaler-cpu-initialization-period`. Default 5 min. */
  cpuInitializationPeriodMs: number;
  /** `--horizontal-pod-autoscaler-initial-readiness-delay`. Default 30 s. */
  delayOfInitialReadinessStatusMs: number;
}

export const defaultReplicaCalculatorSettings: Readonly<ReplicaCalculatorSettings> = Object.freeze({
  tolerance: 0.1,
  cpuInitializationPeriodMs: 5 * 60_000,
  delayOfInitialReadinessStatusMs: 30_000,
});

/**
 * Each pod's usage of `resource` in milli-units, summed over its containers
 * (or one container): a pod missing a container's value is left out
 * (upstream `getPodMetrics` / `getContainerMetrics`).
 */
export function podMetricsInfo(
  items: readonly DeepReadonly<PodMetrics>[],
  resource: string,
  container: string | undefined,
): PodMetricsInfo {
  const result: PodMetricsInfo = new Map();
  for (const item of items) {
    const timestamp = Date.parse(item.timestamp);
    const windowMs = parseGoDuration(item.window);
    let sum = 0;
    let missing = item.containers.length === 0;
    let found = container === undefined;
    for (const c of item.containers) {
      if (container !== undefined && c.name !== container) continue;
      found = true;
      const value = c.usage[resource];
      if (value === undefined) {
        missing = true;
        break;
      }
      sum += milliValue(value);
    }
    if (!missing && found) result.set(item.metadata?.name ?? "", { value: sum, timestamp, windowMs });
  }
  return result;
}

/** A Go duration's milliseconds (`20s`, `10.5s`, `1m0s`); 0 if it does not parse. */
function parseGoDuration(text: string): number {
  const units: Record<string, number> = {
    ns: 1e-6,
    us: 1e-3,
    µs: 1e-3,
    ms: 1,
    s: 1000,
    m: 60_000,
    h: 3_600_000,
  };
  let total = 0;
  for (const match of text.matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g))
    total += Number(match[1]) * units[match[2]!]!;
  return total;
}

interface PodGroups {
  readyPodCount: number;
  unready: Set<string>;
  missing: Set<string>;
  ignored: Set<string>;
}

/**
 * Sorts pods as upstream's `groupPods`: deleted and failed pods are ignored,
 * pending ones unready, pods without a metric missing; for CPU, a pod still
 * in its initialization period counts as unready until it has been ready for
 * a whole metrics window, and after it only if it was never ready.
 */
export function groupPods(
  pods: readonly DeepReadonly<Pod>[],
  metrics: PodMetricsInfo,
  resource: string,
  settings: Readonly<ReplicaCalculatorSettings>,
  now: number,
): PodGroups {
  const groups: PodGroups = { readyPodCount: 0, unready: new Set(), missing: new Set(), ignored: new Set() };
  for (const pod of pods) {
    const name = pod.metadata?.name ?? "";
    if (pod.metadata?.deletionTimestamp != null || pod.status?.phase === "Failed") {
      groups.ignored.add(name);
      continue;
    }
    if (pod.status?.phase === "Pending") {
      groups.unready.add(name);
      continue;
    }
    const metric = metrics.get(name);
    if (metric === undefined) {
      groups.missing.add(name);
      continue;
    }
    if (resource === "cpu") {
      const ready = pod.status?.conditions?.find((c) => c.type === "Ready");
      const started = pod.status?.startTime === undefined ? Number.NaN : Date.parse(pod.status.startTime);
      let unready: boolean;
      if (ready === undefined || Number.isNaN(started)) {
        unready = true;
      } else {
        const transition = Date.parse(ready.lastTransitionTime ?? "") || 0;
        if (started + settings.cpuInitializationPeriodMs > now) {
          unready = ready.status === "False" || metric.timestamp < transition + metric.windowMs;
        } else {
          unready =
            ready.status === "False" && started + settings.delayOfInitialReadinessStatusMs > transition;
        }
      }
      if (unready) {
        groups.unready.add(name);
        continue;
      }
    }
    groups.readyPodCount++;
  }
  return groups;
}

/**
 * Each pod's request of `resource` in milli-units, summed over its
 * containers (or one container); a container without a request is an error
 * (upstream `calculatePodRequests`).
 */
export function calculatePodRequests(
  pods: readonly DeepReadonly<Pod>[],
  container: string | undefined,
  resource: string,
): Map<string, number> {
  const requests = new Map<string, number>();
  for (const pod of pods) {
    let request = 0;
    for (const c of pod.spec?.containers ?? []) {
      if (container !== undefined && container !== c.name) continue;
      const value = c.resources?.requests?.[resource];
      if (value === undefined)
        throw new Error(
          `missing request for ${resource} in container ${c.name} of Pod ${pod.metadata?.name}`,
        );
      request += milliValue(value);
    }
    requests.set(pod.metadata?.name ?? "", request);
  }
  return requests;
}

/**
 * Usage against requests (upstream `GetResourceUtilizationRatio`): the
 * ratio to the target, the utilization in whole percent, and the average raw usage.
 */
export function resourceUtilizationRatio(
  metrics: PodMetricsInfo,
  requests: ReadonlyMap<string, number>,
  targetUtilization: number,
): { ratio: number; utilization: number; rawAverage: number } {
  let metricsTotal = 0;
  let requestsTotal = 0;
  let entries = 0;
  for (const [name, metric] of metrics) {
    const request = requests.get(name);
    if (request === undefined) continue;
    metricsTotal += metric.value;
    requestsTotal += request;
    entries++;
  }
  if (requestsTotal === 0) throw new Error("no metrics returned matched known pods");
  const utilization = Math.trunc((metricsTotal * 100) / requestsTotal);
  return {
    ratio: utilization / targetUtilization,
    utilization,
    rawAverage: Math.trunc(metricsTotal / entries),
  };
}

/** Average usage against a target value (upstream `GetMetricUsageRatio`). */
export function metricUsageRatio(
  metrics: PodMetricsInfo,
  targetUsage: number,
): { ratio: number; usage: number } {
  let total = 0;
  for (const metric of metrics.values()) total += metric.value;
  const usage = Math.trunc(total / metrics.size);
  return { ratio: usage / targetUsage, usage };
}

/**
 * The replicas a ratio asks for once unready and missing pods are taken
 * into account (the shared tail of upstream's `GetResourceReplicas` and
 * `calcPlainMetricReplicas`): on a scale-up they count as using nothing, on
 * a scale-down missing ones as using `fallback`; no change within the
 * tolerance, and none that the adjustment would turn around.
 */
function adjustedReplicas(
  currentReplicas: number,
  ratio: number,
  groups: PodGroups,
  metrics: PodMetricsInfo,
  fallback: (name: string) => number,
  recompute: (metrics: PodMetricsInfo) => number,
  tolerance: number,
): number {
  const scaleUpWithUnready = groups.unready.size > 0 && ratio > 1;
  if (!scaleUpWithUnready && groups.missing.size === 0) {
    if (Math.abs(1 - ratio) <= tolerance) return currentReplicas;
    return Math.ceil(ratio * groups.readyPodCount);
  }
  const filled: PodMetricsInfo = new Map(metrics);
  const zero = { value: 0, timestamp: 0, windowMs: 0 };
  if (ratio !== 1)
    for (const name of groups.missing)
      filled.set(name, ratio < 1 ? { ...zero, value: fallback(name) } : zero);
  if (scaleUpWithUnready) for (const name of groups.unready) filled.set(name, zero);
  const newRatio = recompute(filled);
  if (Math.abs(1 - newRatio) <= tolerance || (ratio < 1 && newRatio > 1) || (ratio > 1 && newRatio < 1))
    return currentReplicas;
  const replicas = Math.ceil(newRatio * filled.size);
  if ((newRatio < 1 && replicas > currentReplicas) || (newRatio > 1 && replicas < currentReplicas))
    return currentReplicas;
  return replicas;
}

/** The outcome of one resource metric: the replicas it asks for, and what it measured. */
export interface ResourceReplicas {
  replicas: number;
  /** Utilization in percent of the request (utilization targets only). */
  utilization?: number;
  /** The average usage in milli-units. */
  rawAverage: number;
  timestamp: number;
}

/**
 * The replicas a utilization target asks for (upstream `GetResourceReplicas`).
 * `metrics` are the pods' usage, `pods` those the scale's selector picks.
 */
export function resourceReplicas(
  currentReplicas: number,
  targetUtilization: number,
  resource: string,
  container: string | undefined,
  metrics: PodMetricsInfo,
  pods: readonly DeepReadonly<Pod>[],
  settings: Readonly<ReplicaCalculatorSettings>,
  now: number,
): ResourceReplicas {
  if (pods.length === 0) throw new Error("no pods returned by selector while calculating replica count");
  const timestamp = [...metrics.values()][0]?.timestamp ?? now;
  const groups = groupPods(pods, metrics, resource, settings, now);
  const usable: PodMetricsInfo = new Map(metrics);
  for (const name of [...groups.ignored, ...groups.unready]) usable.delete(name);
  if (usable.size === 0) throw new Error("did not receive metrics for targeted pods (pods might be unready)");
  const requests = calculatePodRequests(pods, container, resource);
  const { ratio, utilization, rawAverage } = resourceUtilizationRatio(usable, requests, targetUtilization);
  const fallbackUtilization = Math.max(100, targetUtilization);
  const replicas = adjustedReplicas(
    currentReplicas,
    ratio,
    groups,
    usable,
    (name) => Math.trunc(((requests.get(name) ?? 0) * fallbackUtilization) / 100),
    (filled) => resourceUtilizationRatio(filled, requests, targetUtilization).ratio,
    settings.tolerance,
  );
  return { replicas, utilization, rawAverage, timestamp };
}

/** The replicas an average-value target asks for (upstream `GetRawResourceReplicas` / `calcPlainMetricReplicas`). */
export function rawResourceReplicas(
  currentReplicas: number,
  targetUsage: number,
  resource: string,
  metrics: PodMetricsInfo,
  pods: readonly DeepReadonly<Pod>[],
  settings: Readonly<ReplicaCalculatorSettings>,
  now: number,
): ResourceReplicas {
  if (pods.length === 0) throw new Error("no pods returned by selector while calculating replica count");
  const timestamp = [...metrics.values()][0]?.timestamp ?? now;
  const groups = groupPods(pods, metrics, resource, settings, now);
  const usable: PodMetricsInfo = new Map(metrics);
  for (const name of [...groups.ignored, ...groups.unready]) usable.delete(name);
  if (usable.size === 0) throw new Error("did not receive metrics for targeted pods (pods might be unready)");
  const { ratio, usage } = metricUsageRatio(usable, targetUsage);
  const replicas = adjustedReplicas(
    currentReplicas,
    ratio,
    groups,
    usable,
    () => targetUsage,
    (filled) => metricUsageRatio(filled, targetUsage).ratio,
    settings.tolerance,
  );
  return { replicas, rawAverage: usage, timestamp };
}
