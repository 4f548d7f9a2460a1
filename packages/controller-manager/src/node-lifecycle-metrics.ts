import type { NodeLifecycleMetrics, TaintEvictionMetrics } from "@reconcile/node-lifecycle";
import { Counter, Gauge, Histogram, type Registry } from "prom-client";

/**
 * The node lifecycle controller's families on prom-client, with
 * kube-controller-manager's names: `node_collector_zone_health`,
 * `node_collector_zone_size`, `node_collector_unhealthy_nodes_in_zone` (gauges
 * by `zone`), `node_collector_evictions_total{zone}`,
 * `node_collector_update_node_health_duration_seconds` (1 ms × 4^k, 8
 * buckets) and `node_collector_update_all_nodes_health_duration_seconds`
 * (10 ms × 4^k, 8 buckets). Registered once per registry; a controller built
 * again (a new leader term) reuses them.
 */
export function prometheusNodeLifecycleMetrics(registry: Registry): NodeLifecycleMetrics {
  const zoneHealth = once(
    registry,
    "node_collector_zone_health",
    (registers) =>
      new Gauge({
        name: "node_collector_zone_health",
        help: "Gauge measuring percentage of healthy nodes per zone.",
        labelNames: ["zone"] as const,
        registers,
      }),
  );
  const zoneSize = once(
    registry,
    "node_collector_zone_size",
    (registers) =>
      new Gauge({
        name: "node_collector_zone_size",
        help: "Gauge measuring number of registered Nodes per zones.",
        labelNames: ["zone"] as const,
        registers,
      }),
  );
  const unhealthy = once(
    registry,
    "node_collector_unhealthy_nodes_in_zone",
    (registers) =>
      new Gauge({
        name: "node_collector_unhealthy_nodes_in_zone",
        help: "Gauge measuring number of not Ready Nodes per zones.",
        labelNames: ["zone"] as const,
        registers,
      }),
  );
  const evictions = once(
    registry,
    "node_collector_evictions_total",
    (registers) =>
      new Counter({
        name: "node_collector_evictions_total",
        help: "Number of Node evictions that happened since current instance of NodeController started.",
        labelNames: ["zone"] as const,
        registers,
      }),
  );
  const nodeDuration = once(
    registry,
    "node_collector_update_node_health_duration_seconds",
    (registers) =>
      new Histogram({
        name: "node_collector_update_node_health_duration_seconds",
        help: "Duration in seconds for NodeController to update the health of a single node.",
        buckets: Array.from({ length: 8 }, (_, k) => 0.001 * 4 ** k),
        registers,
      }),
  );
  const allDuration = once(
    registry,
    "node_collector_update_all_nodes_health_duration_seconds",
    (registers) =>
      new Histogram({
        name: "node_collector_update_all_nodes_health_duration_seconds",
        help: "Duration in seconds for NodeController to update the health of all nodes.",
        buckets: Array.from({ length: 8 }, (_, k) => 0.01 * 4 ** k),
        registers,
      }),
  );
  return {
    zoneHealth(zone, size, notReady) {
      zoneSize.labels(zone).set(size);
      unhealthy.labels(zone).set(notReady);
      zoneHealth.labels(zone).set(size === 0 ? 100 : (100 * (size - notReady)) / size);
    },
    eviction(zone, count) {
      evictions.labels(zone).inc(count);
    },
    updateNodeHealthDuration(seconds) {
      nodeDuration.observe(seconds);
    },
    updateAllNodesHealthDuration(seconds) {
      allDuration.observe(seconds);
    },
  };
}

/**
 * The taint eviction controller's families: `taint_eviction_controller_pod_deletions_total`
 * and `taint_eviction_controller_pod_deletion_duration_seconds` (0.005 s to 240 s).
 */
export function prometheusTaintEvictionMetrics(registry: Registry): TaintEvictionMetrics {
  const deletions = once(
    registry,
    "taint_eviction_controller_pod_deletions_total",
    (registers) =>
      new Counter({
        name: "taint_eviction_controller_pod_deletions_total",
        help: "Total number of Pods deleted by TaintEvictionController since its start.",
        registers,
      }),
  );
  const latency = once(
    registry,
    "taint_eviction_controller_pod_deletion_duration_seconds",
    (registers) =>
      new Histogram({
        name: "taint_eviction_controller_pod_deletion_duration_seconds",
        help: "Latency, in seconds, between the time when a taint effect has been activated for the Pod and its deletion via TaintEvictionController.",
        buckets: [0.005, 0.025, 0.1, 0.5, 1, 2.5, 10, 30, 60, 120, 180, 240],
        registers,
      }),
  );
  return {
    podDeleted(seconds) {
      deletions.inc();
      latency.observe(seconds);
    },
  };
}

/** The family `name` of `registry`, created by `create` the first time. */
function once<T>(registry: Registry, name: string, create: (registers: Registry[]) => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? create([registry]);
}
