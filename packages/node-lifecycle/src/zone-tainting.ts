import { type DeepReadonly, isNotFound, type Logger, type Node } from "@reconcile/api";
import type { Client } from "@reconcile/client";
import type { Clock } from "@reconcile/clock";
import type { ControllerIndexer } from "@reconcile/controller";
import type { NodeCondition, Taint } from "kubernetes-types/core/v1.js";
import type { NodeLifecycleMetrics } from "./metrics.js";
import { getNodeCondition } from "./node-health.js";
import { RateLimitedTimedQueue } from "./rate-limited-timed-queue.js";
import { notReadyTaintTemplate, swapNodeTaints, taintExists, unreachableTaintTemplate } from "./taints.js";
import { zoneKeyOf } from "./zones.js";

/** A zone's health as the controller sees it (upstream `ZoneState`). */
export type ZoneState = "Initial" | "Normal" | "FullDisruption" | "PartialDisruption";

export interface ZoneTaintersOptions {
  /** Writes the taints. */
  client: Client;
  /** The node cache. */
  nodes: ControllerIndexer<Node>;
  clock: Clock;
  logger: Logger;
  metrics: NodeLifecycleMetrics;
  /** `--node-eviction-rate`: nodes tainted per second in a healthy zone. */
  evictionQps: number;
  /** `--secondary-node-eviction-rate`: the same in a partially disrupted large zone. */
  secondaryEvictionQps: number;
  /** `--large-cluster-size-threshold`. */
  largeClusterThreshold: number;
  /** `--unhealthy-zone-threshold`. */
  unhealthyZoneThreshold: number;
}

/** What the controller does when every zone goes dark, and when one comes back. */
export interface DisruptionHooks {
  /** Every zone is fully disrupted: untaint every node (the control plane's network is the likelier culprit). */
  enterMasterDisruption(): Promise<void>;
  /** Some node is Ready again after a full disruption: count every node's heartbeat from now. */
  exitMasterDisruption(): void;
}

/**
 * The eviction side of the node lifecycle controller: one rate-limited
 * NoExecute tainting queue per zone (upstream `zoneNoExecuteTainter`), what
 * a node's Ready condition does to its NoExecute taints
 * (`processTaintBaseEviction`, `markNodeAsReachable`), the tainting pass,
 * each zone's state and the rates those states call for
 * (`handleDisruption`, `setLimiterInZone`). The health side decides what
 * Ready is; this side turns it into taints.
 */
export class ZoneTainters {
  /** Each zone's state after the last health pass. */
  readonly states = new Map<string, ZoneState>();
  readonly #tainters = new Map<string, RateLimitedTimedQueue>();
  readonly #evictions = new Map<string, number>();
  readonly #options: ZoneTaintersOptions;

  constructor(options: ZoneTaintersOptions) {
    this.#options = options;
  }

  /** Upstream `addPodEvictorForNewZone`: a tainting queue and the Initial state for a zone seen first. */
  addZoneOf(node: DeepReadonly<Node>): void {
    const zone = zoneKeyOf(node);
    if (this.states.has(zone)) return;
    this.states.set(zone, "Initial");
    this.#tainters.set(
      zone,
      new RateLimitedTimedQueue({ qps: this.#options.evictionQps, clock: this.#options.clock }),
    );
    if (!this.#evictions.has(zone)) {
      this.#evictions.set(zone, 0);
      this.#options.metrics.eviction(zone, 0);
    }
  }

  /** The tainting queue of the node's zone (made if the zone is new). */
  tainterOf(node: DeepReadonly<Node>): RateLimitedTimedQueue {
    const zone = zoneKeyOf(node);
    let tainter = this.#tainters.get(zone);
    if (tainter === undefined) {
      this.addZoneOf(node);
      tainter = this.#tainters.get(zone) as RateLimitedTimedQueue;
    }
    return tainter;
  }

  /**
   * Adds the queued NoExecute taints, zone by zone, as fast as each zone's
   * limiter allows (upstream `doNoExecuteTaintingPass`): `unreachable` for a
   * node whose Ready is Unknown, `not-ready` for False, each replacing the
   * other; a node Ready again leaves the queue untainted.
   */
  async doNoExecuteTaintingPass(signal?: AbortSignal): Promise<void> {
    // A snapshot: a zone seen during the pass waits for the next one.
    for (const [zone, tainter] of [...this.#tainters]) {
      await tainter.try(async (value) => {
        const node = this.#options.nodes.getByKey(value.value);
        if (node === undefined) {
          this.#options.logger.info({ node: value.value }, "Node no longer present in nodeLister");
          return [true, 0];
        }
        const ready = getNodeCondition(node.status, "Ready");
        if (ready === undefined) return [false, 50];
        let taintToAdd: Taint;
        let oppositeTaint: Taint;
        if (ready.status === "False") {
          taintToAdd = { ...notReadyTaintTemplate };
          oppositeTaint = { ...unreachableTaintTemplate };
        } else if (ready.status === "Unknown") {
          taintToAdd = { ...unreachableTaintTemplate };
          oppositeTaint = { ...notReadyTaintTemplate };
        } else {
          return [true, 0];
        }
        const swapped = await this.#swapTaints(node, [taintToAdd], [oppositeTaint], signal);
        if (swapped) this.#countEviction(zone);
        return [swapped, 0];
      });
    }
  }

  /** Upstream `processTaintBaseEviction`: reacts to the Ready condition as the pass found it. */
  async processTaintBaseEviction(
    node: DeepReadonly<Node>,
    observedReady: DeepReadonly<NodeCondition>,
    signal?: AbortSignal,
  ): Promise<void> {
    const name = node.metadata?.name ?? "";
    const { logger } = this.#options;
    if (observedReady.status === "True") {
      if (await this.markNodeAsReachable(node, signal)) {
        logger.info({ node: name }, "Node is healthy again, removed all taints");
      }
      return;
    }
    const status = observedReady.status;
    if (status !== "False" && status !== "Unknown") return;
    const reaction = notReadyReactions[status];
    if (taintExists(node.spec?.taints, reaction.opposite)) {
      // Already tainted the other way: swap at once, no rate limit.
      if (!(await this.#swapTaints(node, [{ ...reaction.taint }], [reaction.opposite], signal))) {
        logger.error({ node: name }, reaction.swapFailed);
      }
    } else if (this.#markNodeForTainting(node, reaction.taint)) {
      logger.info({ node: name }, reaction.queued);
    }
  }

  /** Upstream `markNodeForTainting`: queues the node in its zone (anew if its NoExecute taint is missing). */
  #markNodeForTainting(node: DeepReadonly<Node>, template: Taint): boolean {
    const name = node.metadata?.name ?? "";
    const tainter = this.tainterOf(node);
    if (!taintExists(node.spec?.taints, template)) tainter.remove(name);
    return tainter.add(name, node.metadata?.uid ?? "");
  }

  /** Upstream `markNodeAsReachable`: both NoExecute taints off, and out of the zone queue. */
  async markNodeAsReachable(node: DeepReadonly<Node>, signal?: AbortSignal): Promise<boolean> {
    const taints = node.spec?.taints;
    if (taintExists(taints, unreachableTaintTemplate) || taintExists(taints, notReadyTaintTemplate)) {
      try {
        await swapNodeTaints(
          this.#options.client,
          this.#options.clock,
          node,
          [],
          [unreachableTaintTemplate, notReadyTaintTemplate],
          signal,
        );
      } catch (error) {
        if (!isNotFound(error)) {
          this.#options.logger.error(
            { node: node.metadata?.name, err: error },
            "Failed to remove taints from node",
          );
          return false;
        }
      }
    }
    return this.tainterOf(node).remove(node.metadata?.name ?? "");
  }

  /** `SwapNodeControllerTaint`: false (logged) when the write failed. */
  async #swapTaints(
    node: DeepReadonly<Node>,
    toAdd: readonly Taint[],
    toRemove: readonly Taint[],
    signal?: AbortSignal,
  ): Promise<boolean> {
    try {
      return await swapNodeTaints(this.#options.client, this.#options.clock, node, toAdd, toRemove, signal);
    } catch (error) {
      if (isNotFound(error)) return true;
      this.#options.logger.error({ node: node.metadata?.name, err: error }, "Failed to swap node taints");
      return false;
    }
  }

  /** NoExecute taints applied per zone since start. */
  evictions(): ReadonlyMap<string, number> {
    return new Map(this.#evictions);
  }

  /**
   * Upstream `handleDisruption`: zone states from the pass's Ready
   * conditions (nodes excluded from disruption left out), and the tainting
   * rates they call for. Every zone fully disrupted stops all tainting;
   * leaving that state restarts it at each zone's rate.
   */
  async handleDisruption(
    zoneConditions: ReadonlyMap<string, (DeepReadonly<NodeCondition> | undefined)[]>,
    hooks: DisruptionHooks,
  ): Promise<void> {
    const { logger, metrics, unhealthyZoneThreshold } = this.#options;
    const newZoneStates = new Map<string, ZoneState>();
    let allAreFullyDisrupted = true;
    for (const [zone, conditions] of zoneConditions) {
      const { notReady, state } = computeZoneState(conditions, unhealthyZoneThreshold);
      metrics.zoneHealth(zone, conditions.length, notReady);
      if (state !== "FullDisruption") allAreFullyDisrupted = false;
      newZoneStates.set(zone, state);
      if (!this.states.has(zone)) this.states.set(zone, "Initial");
    }
    let allWasFullyDisrupted = true;
    for (const [zone, state] of [...this.states]) {
      if (!zoneConditions.has(zone)) {
        metrics.zoneHealth(zone, 0, 0);
        this.states.delete(zone);
        continue;
      }
      if (state !== "FullDisruption") {
        allWasFullyDisrupted = false;
        break;
      }
    }
    if (allAreFullyDisrupted && allWasFullyDisrupted) return;
    if (allAreFullyDisrupted) {
      // Every zone dark at once is more likely the control plane's network than every node: stop tainting.
      logger.info({}, "Controller detected that all Nodes are not-Ready. Entering master disruption mode");
      await hooks.enterMasterDisruption();
      for (const zone of this.states.keys()) this.#tainters.get(zone)?.swapLimiter(0);
      for (const zone of this.states.keys()) this.states.set(zone, "FullDisruption");
      return;
    }
    if (allWasFullyDisrupted) {
      logger.info({}, "Controller detected that some Nodes are Ready. Exiting master disruption mode");
      hooks.exitMasterDisruption();
      for (const zone of this.states.keys()) {
        const state = newZoneStates.get(zone) ?? "Normal";
        this.#setLimiterInZone(zone, zoneConditions.get(zone)?.length ?? 0, state);
        this.states.set(zone, state);
      }
      return;
    }
    for (const [zone, state] of [...this.states]) {
      const newState = newZoneStates.get(zone);
      if (newState === undefined || newState === state) continue;
      logger.info({ zone, newState }, "Controller detected that zone is now in new state");
      this.#setLimiterInZone(zone, zoneConditions.get(zone)?.length ?? 0, newState);
      this.states.set(zone, newState);
    }
  }

  /** Upstream `setLimiterInZone`: the normal rate, or in a partly disrupted zone the secondary rate when large, else none. */
  /** Counts one NoExecute taint applied in `zone` (upstream `node_collector_evictions_total`). */
  #countEviction(zone: string): void {
    this.#evictions.set(zone, (this.#evictions.get(zone) ?? 0) + 1);
    this.#options.metrics.eviction(zone, 1);
  }

  #setLimiterInZone(zone: string, zoneSize: number, state: ZoneState): void {
    const tainter = this.#tainters.get(zone);
    if (tainter === undefined) return;
    const { evictionQps, secondaryEvictionQps, largeClusterThreshold } = this.#options;
    switch (state) {
      case "Normal":
      case "FullDisruption":
        tainter.swapLimiter(evictionQps);
        break;
      case "PartialDisruption":
        tainter.swapLimiter(zoneSize > largeClusterThreshold ? secondaryEvictionQps : 0);
        break;
      default:
        break;
    }
  }
}

/** What a Ready of False or Unknown does (upstream `processTaintBaseEviction`'s two cases). */
const notReadyReactions: Record<
  "False" | "Unknown",
  { taint: Taint; opposite: Taint; swapFailed: string; queued: string }
> = {
  False: {
    taint: notReadyTaintTemplate,
    opposite: unreachableTaintTemplate,
    swapFailed: "Failed to instantly swap UnreachableTaint to NotReadyTaint",
    queued: "Node is NotReady. Adding it to the Taint queue",
  },
  Unknown: {
    taint: unreachableTaintTemplate,
    opposite: notReadyTaintTemplate,
    swapFailed: "Failed to instantly swap NotReadyTaint to UnreachableTaint",
    queued: "Node is unresponsive. Adding it to the Taint queue",
  },
};

/**
 * A zone's state from its nodes' Ready conditions (upstream
 * `ComputeZoneState`): no Ready node → FullDisruption; more than 2 not Ready
 * making at least `unhealthyThreshold` of the zone → PartialDisruption; else
 * Normal. Also returns how many are not Ready.
 */
export function computeZoneState(
  readyConditions: readonly (DeepReadonly<NodeCondition> | undefined)[],
  unhealthyThreshold: number,
): { notReady: number; state: ZoneState } {
  let ready = 0;
  let notReady = 0;
  for (const condition of readyConditions) {
    if (condition?.status === "True") ready++;
    else notReady++;
  }
  if (ready === 0 && notReady > 0) return { notReady, state: "FullDisruption" };
  if (notReady > 2 && notReady / (notReady + ready) >= unhealthyThreshold) {
    return { notReady, state: "PartialDisruption" };
  }
  return { notReady, state: "Normal" };
}
