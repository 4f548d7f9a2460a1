/** kube-controller-manager's node lifecycle flags, as options. */
export interface NodeLifecycleFlags {
  /** `--node-monitor-period`: how often every node's health is checked. Default 5,000 ms. */
  nodeMonitorPeriodMs?: number | undefined;
  /** `--node-monitor-grace-period`: silence after which a node that posted Ready is Unknown. Default 50,000 ms. */
  nodeMonitorGracePeriodMs?: number | undefined;
  /** `--node-startup-grace-period`: the same for a node that never posted Ready. Default 60,000 ms. */
  nodeStartupGracePeriodMs?: number | undefined;
  /** `--node-eviction-rate`: nodes tainted NoExecute per second per healthy zone. Default 0.1. */
  nodeEvictionRate?: number | undefined;
  /** `--secondary-node-eviction-rate`: the same in a partially disrupted large zone. Default 0.01. */
  secondaryNodeEvictionRate?: number | undefined;
  /** `--large-cluster-size-threshold`: above this many nodes a zone is large. Default 50. */
  largeClusterSizeThreshold?: number | undefined;
  /** `--unhealthy-zone-threshold`: share of not-Ready nodes (more than 2) that makes a zone partially disrupted. Default 0.55. */
  unhealthyZoneThreshold?: number | undefined;
  /** How often the zones' tainting queues are polled (upstream `NodeEvictionPeriod`, not a flag). Default 100 ms. */
  nodeEvictionPeriodMs?: number | undefined;
}

/** The flags, defaulted and checked. */
export interface NodeLifecycleSettings {
  monitorPeriodMs: number;
  monitorGracePeriodMs: number;
  startupGracePeriodMs: number;
  evictionQps: number;
  secondaryEvictionQps: number;
  largeClusterThreshold: number;
  unhealthyZoneThreshold: number;
  evictionPeriodMs: number;
}

/** The controller's flags with upstream's defaults, each checked. */
export function nodeLifecycleSettings(options: NodeLifecycleFlags): NodeLifecycleSettings {
  const settings = {
    monitorPeriodMs: positive(options.nodeMonitorPeriodMs ?? 5_000, "nodeMonitorPeriodMs"),
    monitorGracePeriodMs: positive(options.nodeMonitorGracePeriodMs ?? 50_000, "nodeMonitorGracePeriodMs"),
    startupGracePeriodMs: positive(options.nodeStartupGracePeriodMs ?? 60_000, "nodeStartupGracePeriodMs"),
    evictionQps: nonNegative(options.nodeEvictionRate ?? 0.1, "nodeEvictionRate"),
    secondaryEvictionQps: nonNegative(options.secondaryNodeEvictionRate ?? 0.01, "secondaryNodeEvictionRate"),
    largeClusterThreshold: nonNegative(options.largeClusterSizeThreshold ?? 50, "largeClusterSizeThreshold"),
    unhealthyZoneThreshold: nonNegative(options.unhealthyZoneThreshold ?? 0.55, "unhealthyZoneThreshold"),
    evictionPeriodMs: positive(options.nodeEvictionPeriodMs ?? 100, "nodeEvictionPeriodMs"),
  };
  if (settings.monitorGracePeriodMs < settings.monitorPeriodMs) {
    throw new RangeError(
      `NodeLifecycleController: nodeMonitorGracePeriodMs (${settings.monitorGracePeriodMs}) must not be shorter than nodeMonitorPeriodMs (${settings.monitorPeriodMs})`,
    );
  }
  return settings;
}

function positive(value: number, name: string): number {
  if (!(typeof value === "number" && value > 0 && Number.isFinite(value))) {
    throw new RangeError(`NodeLifecycleController: ${name} must be a positive number, got ${String(value)}`);
  }
  return value;
}

function nonNegative(value: number, name: string): number {
  if (!(typeof value === "number" && value >= 0 && Number.isFinite(value))) {
    throw new RangeError(
      `NodeLifecycleController: ${name} must be a non-negative number, got ${String(value)}`,
    );
  }
  return value;
}
