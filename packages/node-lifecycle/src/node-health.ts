import { type DeepReadonly, type Lease, type Logger, type Node, rfc3339 } from "@reconcile/api";
import type { NodeCondition, NodeStatus } from "kubernetes-types/core/v1.js";

/** What the controller remembers about a node between passes (upstream `nodeHealthData`). */
export interface NodeHealth {
  /** The status last seen; cached objects are never mutated, so it is kept without a copy. */
  status: DeepReadonly<NodeStatus>;
  /** When the controller last saw the kubelet alive: a new Ready heartbeat or a renewed Lease. */
  probeTimestamp: number;
  readyTransitionTimestamp: number;
  lease: DeepReadonly<Lease> | undefined;
}

/** A node's Ready condition as a health pass observed it, and as it is after the pass (Unknown if it went silent). */
export interface HealthResult {
  observedReady: DeepReadonly<NodeCondition>;
  currentReady: DeepReadonly<NodeCondition> | undefined;
}

/** The grace periods of a silent node: one that never posted Ready, and one that did. */
export interface GracePeriods {
  startupGracePeriodMs: number;
  monitorGracePeriodMs: number;
}

/** What one look at a node's heartbeat found (the bookkeeping half of upstream `tryUpdateNodeHealth`). */
export interface ObservedHealth {
  /** What to remember about the node from now on. */
  health: NodeHealth;
  /** The Ready condition as the node reports it (a stand-in Unknown one if it never posted). */
  observedReady: DeepReadonly<NodeCondition>;
  /** The Ready condition as the node reports it, or undefined if it never posted. */
  currentReady: DeepReadonly<NodeCondition> | undefined;
  /** Silence longer than this after `health.probeTimestamp` makes the node Unknown. */
  gracePeriodMs: number;
}

/** Node conditions that become Unknown when the kubelet goes quiet; NetworkUnavailable is the network's, left alone. */
const conditionsSetUnknown = ["Ready", "MemoryPressure", "DiskPressure", "PIDPressure"] as const;

/**
 * Refreshes what is known of a node's heartbeat (upstream
 * `tryUpdateNodeHealth`, up to the grace-period check): a new Ready
 * heartbeat or a renewed Lease moves the probe time to `now`; a changed
 * Ready transition moves the transition time too. `saved` is what was known
 * before, `lease` the node's Lease in `kube-node-lease` if cached.
 */
export function observeNodeHealth(
  node: DeepReadonly<Node>,
  saved: NodeHealth | undefined,
  lease: DeepReadonly<Lease> | undefined,
  now: number,
  grace: GracePeriods,
  logger: Logger,
): ObservedHealth {
  const name = node.metadata?.name ?? "";
  const status: DeepReadonly<NodeStatus> = node.status ?? {};
  const currentReady = getNodeCondition(node.status, "Ready");
  let health = saved;
  let observedReady: DeepReadonly<NodeCondition>;
  let gracePeriodMs: number;
  if (currentReady === undefined) {
    // Never posted: a stand-in Unknown condition dated at the node's creation.
    const at = node.metadata?.creationTimestamp;
    const created = parseTime(at) ?? now;
    observedReady = {
      type: "Ready",
      status: "Unknown",
      ...(at === undefined ? {} : { lastHeartbeatTime: at, lastTransitionTime: at }),
    };
    gracePeriodMs = grace.startupGracePeriodMs;
    if (health !== undefined) health = { ...health, status };
    else health = { status, probeTimestamp: created, readyTransitionTimestamp: created, lease: undefined };
  } else {
    observedReady = currentReady;
    gracePeriodMs = grace.monitorGracePeriodMs;
  }

  const savedReady = health === undefined ? undefined : getNodeCondition(health.status, "Ready");
  const savedLease = health?.lease;
  if (health === undefined) {
    logger.info({ node: name }, "Missing timestamp for Node. Assuming now as a timestamp");
    health = { status, probeTimestamp: now, readyTransitionTimestamp: now, lease: undefined };
  } else if (savedReady === undefined && currentReady !== undefined) {
    health = { status, probeTimestamp: now, readyTransitionTimestamp: now, lease: savedLease };
  } else if (savedReady !== undefined && currentReady === undefined) {
    logger.error({ node: name }, "ReadyCondition was removed from Status of Node");
    health = { status, probeTimestamp: now, readyTransitionTimestamp: now, lease: savedLease };
  } else if (
    savedReady !== undefined &&
    currentReady !== undefined &&
    savedReady.lastHeartbeatTime !== currentReady.lastHeartbeatTime
  ) {
    const transitioned = savedReady.lastTransitionTime !== currentReady.lastTransitionTime;
    health = {
      status,
      probeTimestamp: now,
      readyTransitionTimestamp: transitioned ? now : health.readyTransitionTimestamp,
      lease: savedLease,
    };
  }
  // A renewed Lease counts as a heartbeat too (a kubelet that never posted status but renews is left alone).
  if (lease !== undefined && (savedLease === undefined || renewedSince(savedLease, lease))) {
    health = { ...health, lease, probeTimestamp: now };
  }
  return { health, observedReady, currentReady, gracePeriodMs };
}

/**
 * The node with every condition a silent kubelet leaves stale set Unknown
 * (the write half of upstream `tryUpdateNodeHealth`): an existing one
 * `NodeStatusUnknown`, "Kubelet stopped posting node status."; a missing
 * one `NodeStatusNeverUpdated`, "Kubelet never posted node status.".
 */
export function nodeWithStatusUnknown(node: DeepReadonly<Node>, now: number): Node {
  const nowTimestamp = rfc3339(now);
  const status = structuredClone((node.status ?? {}) as NodeStatus);
  const conditions = (status.conditions ??= []);
  for (const type of conditionsSetUnknown) {
    const condition = conditions.find((c) => c.type === type);
    if (condition === undefined) {
      conditions.push({
        type,
        status: "Unknown",
        reason: "NodeStatusNeverUpdated",
        message: "Kubelet never posted node status.",
        ...(node.metadata?.creationTimestamp === undefined
          ? {}
          : { lastHeartbeatTime: node.metadata.creationTimestamp }),
        lastTransitionTime: nowTimestamp,
      });
    } else if (condition.status !== "Unknown") {
      condition.status = "Unknown";
      condition.reason = "NodeStatusUnknown";
      condition.message = "Kubelet stopped posting node status.";
      condition.lastTransitionTime = nowTimestamp;
    }
  }
  return { ...(node as Node), status };
}

/** The condition of `type` in a node status (upstream `GetNodeCondition`). */
export function getNodeCondition(
  status: DeepReadonly<NodeStatus> | NodeStatus | undefined,
  type: string,
): DeepReadonly<NodeCondition> | undefined {
  return status?.conditions?.find((c) => c.type === type);
}

function renewedSince(saved: DeepReadonly<Lease>, observed: DeepReadonly<Lease>): boolean {
  const before = parseTime(saved.spec?.renewTime);
  const after = parseTime(observed.spec?.renewTime);
  return before !== undefined && after !== undefined && before < after;
}

function parseTime(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}
