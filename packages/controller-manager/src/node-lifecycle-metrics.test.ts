import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { prometheusNodeLifecycleMetrics, prometheusTaintEvictionMetrics } from "./node-lifecycle-metrics.js";

describe("prometheusNodeLifecycleMetrics", () => {
  it("writes the node_collector families under upstream's names, and reuses them for a controller built again", async () => {
    const registry = new Registry();
    prometheusNodeLifecycleMetrics(registry).eviction("z", 0);
    const metrics = prometheusNodeLifecycleMetrics(registry);
    metrics.zoneHealth("z", 4, 1);
    metrics.eviction("z", 1);
    metrics.updateAllNodesHealthDuration(0.02);
    const text = await registry.metrics();
    expect(text).toContain('node_collector_zone_size{zone="z"} 4');
    expect(text).toContain('node_collector_unhealthy_nodes_in_zone{zone="z"} 1');
    expect(text).toContain('node_collector_zone_health{zone="z"} 75');
    expect(text).toContain('node_collector_evictions_total{zone="z"} 1');
    expect(text).toContain('node_collector_update_all_nodes_health_duration_seconds_bucket{le="0.04"} 1');
    metrics.zoneHealth("z", 0, 0);
    expect(await registry.metrics()).toContain('node_collector_zone_health{zone="z"} 100');
  });

  it("counts taint evictions and their latency", async () => {
    const registry = new Registry();
    prometheusTaintEvictionMetrics(registry).podDeleted(0.3);
    prometheusTaintEvictionMetrics(registry).podDeleted(3);
    const text = await registry.metrics();
    expect(text).toContain("taint_eviction_controller_pod_deletions_total 2");
    expect(text).toContain('taint_eviction_controller_pod_deletion_duration_seconds_bucket{le="0.5"} 1');
    expect(text).toContain("taint_eviction_controller_pod_deletion_duration_seconds_count 2");
  });
});
