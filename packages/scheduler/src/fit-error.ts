import type { DeepReadonly, Pod } from "@reconcile/api";
import { ReconcileError } from "@reconcile/api";
import type { Status } from "./framework.js";

/** Why no node fit (upstream `FitError`): per-node filter statuses, or one PreFilter message. */
export interface Diagnosis {
  /** The first rejecting filter's status, for each node that got one. */
  nodeToStatus: Map<string, Status>;
  /** Set when a PreFilter rejected the pod; the histogram is then left out. */
  preFilterMsg?: string | undefined;
  /** The PostFilter (preemption) text appended after the histogram. */
  postFilterMsg?: string | undefined;
  /** Plugins that rejected the pod: what the queue waits on before retrying it. */
  unschedulablePlugins: Set<string>;
  /**
   * The status of every node a PreFilter ruled out by name (upstream
   * `SetAbsentNodesStatus`), and how many there were.
   */
  absentNodes?: { count: number; status: Status } | undefined;
}

/** A node where preemption would help, and whom it would evict (upstream `Candidate`). */
export interface PreemptionCandidate {
  nodeName: string;
  /** Most important first. */
  victims: DeepReadonly<Pod>[];
  /** Victims whose eviction a PodDisruptionBudget does not allow. */
  numPDBViolations: number;
}

/**
 * What DefaultPreemption concluded: a candidate to evict for (its message is
 * empty), or why preemption cannot help, with `clearNomination` when the
 * pod's nominated node should be cleared (no node could be made to fit).
 */
export type PreemptionOutcome =
  | { candidate: PreemptionCandidate; message?: undefined }
  | { candidate?: undefined; message: string; clearNomination: boolean };

/**
 * `0/<N> nodes are available: <histogram>.` as upstream's `FitError.Error()`
 * writes it: each reason with the number of nodes that gave it, sorted as
 * strings ("10 Insufficient memory" before "2 node(s) had …"), or the
 * PreFilter message instead; then the PostFilter text.
 */
export function fitErrorMessage(numAllNodes: number, diagnosis: Diagnosis): string {
  let message = `0/${numAllNodes} nodes are available:`;
  if (diagnosis.preFilterMsg) {
    message += ` ${diagnosis.preFilterMsg}.`;
  } else {
    const histogram = new Map<string, number>();
    for (const status of diagnosis.nodeToStatus.values()) {
      for (const reason of status.reasons) histogram.set(reason, (histogram.get(reason) ?? 0) + 1);
    }
    const absent = diagnosis.absentNodes;
    if (absent !== undefined && absent.count > 0) {
      for (const reason of absent.status.reasons)
        histogram.set(reason, (histogram.get(reason) ?? 0) + absent.count);
    }
    const items = [...histogram].map(([reason, count]) => `${count} ${reason}`).sort(compareStrings);
    if (items.length > 0) message += ` ${items.join(", ")}.`;
  }
  if (diagnosis.postFilterMsg) message += ` ${diagnosis.postFilterMsg}`;
  return message;
}

/** An Event note at most 1024 characters long: longer ones keep 1020 and end in " ..." (upstream `truncateMessage`). */
export function truncateMessage(message: string): string {
  const limit = 1024;
  if (message.length <= limit) return message;
  return `${message.slice(0, limit - 4)} ...`;
}

// Go's sort.Strings: byte order, not locale order.
function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

const fitErrorMarker = Symbol.for("reconcile.fit-error");
const noNodesAvailableMarker = Symbol.for("reconcile.no-nodes-available-error");

/** A cycle that found no node (upstream `FitError`). `code` is `"scheduler.fit"`. */
export class FitError extends ReconcileError {
  readonly [fitErrorMarker] = true;

  constructor(
    readonly numAllNodes: number,
    readonly diagnosis: Diagnosis,
    /** What DefaultPreemption concluded: whom to evict, or why no one. */
    readonly preemption?: PreemptionOutcome,
  ) {
    super("scheduler.fit", fitErrorMessage(numAllNodes, diagnosis));
    this.name = "FitError";
  }

  static override isInstance(error: unknown): error is FitError {
    return ReconcileError.hasMarker(error, fitErrorMarker);
  }
}

/**
 * No node exists at all (upstream `ErrNoNodesAvailable`): the pod is
 * Unschedulable with this message, and backs off like after an error, since
 * no plugin rejected it.
 */
export class NoNodesAvailableError extends ReconcileError {
  readonly [noNodesAvailableMarker] = true;

  constructor() {
    super("scheduler.no-nodes-available", "no nodes available to schedule pods");
    this.name = "NoNodesAvailableError";
  }

  static override isInstance(error: unknown): error is NoNodesAvailableError {
    return ReconcileError.hasMarker(error, noNodesAvailableMarker);
  }
}
