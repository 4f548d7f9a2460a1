/**
 * What the node lifecycle controller reports (kube-controller-manager's
 * `node_collector_*` families, by their upstream names in the comments). The
 * default records nothing; `@reconcile/controller-manager` has a prom-client
 * implementation.
 */
export interface NodeLifecycleMetrics {
  /**
   * After each health pass, per zone: `node_collector_zone_size` = `size`,
   * `node_collector_unhealthy_nodes_in_zone` = `unhealthy`,
   * `node_collector_zone_health` = the percentage of healthy nodes. A zone
   * gone reports size 0, unhealthy 0 (health 100).
   */
  zoneHealth(zone: string, size: number, unhealthy: number): void;
  /** `node_collector_evictions_total{zone}`: a NoExecute taint applied (`count` 0 when the zone first appears). */
  eviction(zone: string, count: number): void;
  /** `node_collector_update_node_health_duration_seconds`: one node's health check. */
  updateNodeHealthDuration(seconds: number): void;
  /** `node_collector_update_all_nodes_health_duration_seconds`: a whole pass. */
  updateAllNodesHealthDuration(seconds: number): void;
}

/** What the taint eviction controller reports. */
export interface TaintEvictionMetrics {
  /**
   * `taint_eviction_controller_pod_deletions_total` and
   * `taint_eviction_controller_pod_deletion_duration_seconds`: a pod deleted,
   * `seconds` after its deletion was due.
   */
  podDeleted(seconds: number): void;
}

export const noopNodeLifecycleMetrics: NodeLifecycleMetrics = {
  zoneHealth() {},
  eviction() {},
  updateNodeHealthDuration() {},
  updateAllNodesHealthDuration() {},
};

export const noopTaintEvictionMetrics: TaintEvictionMetrics = { podDeleted() {} };
