import type { DeepReadonly, Pod } from "@reconcile/api";
import { RecentRing } from "@reconcile/controller";
import type { Diagnosis } from "./fit-error.js";
import { FitError } from "./fit-error.js";
import type { NodeInfo } from "./node-info.js";

// Why a pod went where it went: the scheduler's last decisions, each with
// every node's filter verdict and the feasible nodes' total scores, for a
// debugging view (`Scheduler.inspect`). Kept only when asked for.

/** One scheduling cycle's outcome for a pod. */
export interface SchedulingDecision {
  /** `namespace/name`. */
  pod: string;
  uid: string;
  /** When the cycle ran, in the scheduler clock's ms. */
  at: number;
  cycle: number;
  /** `Scheduled` (a node was picked; the bind follows), `Unschedulable`, or `Error`. */
  result: "Scheduled" | "Unschedulable" | "Error";
  /** The node picked. */
  node?: string | undefined;
  /** The FailedScheduling text, or the error's. */
  message?: string | undefined;
  /** Nodes whose filters ran, and how many of them passed. */
  evaluatedNodes: number;
  feasibleNodes: number;
  /** The nodes a filter turned down, by name, with the plugin and its reasons (at most {@link maxNodesPerDecision}). */
  rejected: { node: string; plugin: string; reasons: string[] }[];
  /** The feasible nodes' summed scores, highest first (at most {@link maxNodesPerDecision}). Empty when one node was feasible (upstream skips scoring). */
  scores: { node: string; score: number }[];
}

/** Nodes listed per decision: enough for a view, bounded for a large cluster. */
export const maxNodesPerDecision = 500;

/** The last `capacity` decisions, oldest first. */
export class DecisionLog {
  readonly #ring: RecentRing<SchedulingDecision>;

  constructor(readonly capacity: number) {
    this.#ring = new RecentRing(capacity);
  }

  /** A pod that got a node: `scored` holds the scored nodes (absent when scoring was skipped). */
  scheduled(
    pod: DeepReadonly<Pod>,
    cycle: number,
    at: number,
    result: {
      nodeName: string;
      evaluatedNodes: number;
      feasibleNodes: number;
      diagnosis?: Diagnosis | undefined;
      scored?: { feasible: readonly NodeInfo[]; totals: readonly number[] } | undefined;
    },
  ): void {
    const scored = result.scored;
    const scores: SchedulingDecision["scores"] = [];
    if (scored !== undefined) {
      scored.feasible.forEach((info, i) => {
        scores.push({ node: info.name, score: scored.totals[i] ?? 0 });
      });
      scores.sort((a, b) => b.score - a.score || (a.node < b.node ? -1 : 1));
      if (scores.length > maxNodesPerDecision) scores.length = maxNodesPerDecision;
    }
    this.#ring.push({
      ...identity(pod, cycle, at),
      result: "Scheduled",
      node: result.nodeName,
      evaluatedNodes: result.evaluatedNodes,
      feasibleNodes: result.feasibleNodes,
      rejected: rejectedNodes(result.diagnosis),
      scores,
    });
  }

  /** A pod that got no node: a FitError carries each node's verdict. */
  failed(pod: DeepReadonly<Pod>, cycle: number, at: number, error: unknown): void {
    const fit = FitError.isInstance(error) ? error : undefined;
    this.#ring.push({
      ...identity(pod, cycle, at),
      result: fit === undefined ? "Error" : "Unschedulable",
      message: error instanceof Error ? error.message : String(error),
      evaluatedNodes: fit?.numAllNodes ?? 0,
      feasibleNodes: 0,
      rejected: rejectedNodes(fit?.diagnosis),
      scores: [],
    });
  }

  /** Every remembered decision, oldest first. */
  list(): SchedulingDecision[] {
    return this.#ring.list();
  }
}

function identity(pod: DeepReadonly<Pod>, cycle: number, at: number) {
  const meta = pod.metadata;
  return { pod: `${meta?.namespace ?? ""}/${meta?.name ?? ""}`, uid: meta?.uid ?? "", at, cycle };
}

function rejectedNodes(diagnosis: Diagnosis | undefined): SchedulingDecision["rejected"] {
  const out: SchedulingDecision["rejected"] = [];
  if (diagnosis === undefined) return out;
  for (const [node, status] of diagnosis.nodeToStatus) {
    if (out.length >= maxNodesPerDecision) break;
    out.push({ node, plugin: status.plugin ?? "", reasons: [...status.reasons] });
  }
  out.sort((a, b) => (a.node < b.node ? -1 : a.node > b.node ? 1 : 0));
  return out;
}
