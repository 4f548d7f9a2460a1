import { errorMessage, ReconcileError } from "@reconcile/api";
import type { Delivery } from "@reconcile/informer";

/**
 * What a sync may return (controller-runtime's `reconcile.Result`): nothing
 * for done, or `{ requeueAfterMs }` to look at the key again after that long
 * (a deadline to check, a pod becoming available) without counting it as a
 * failure: the key's backoff is reset and it is added after the delay.
 */
// biome-ignore lint/suspicious/noConfusingVoidType: a sync that returns nothing is the common case
export type SyncResult = void | undefined | { requeueAfterMs?: number | undefined };

const terminalMarker = Symbol.for("reconcile.controller.terminal-error");

/**
 * A sync failure that retrying cannot fix (controller-runtime's
 * `reconcile.TerminalError`): a bad selector, an object the controller cannot
 * act on until someone edits it. The worker loop logs and counts it, forgets
 * the key's backoff and does not requeue it; the next event for the key
 * syncs it again. `cause` keeps the underlying error.
 */
export class TerminalError extends ReconcileError {
  readonly [terminalMarker] = true;

  constructor(message: string, options?: { cause?: unknown }) {
    super("controller.terminal", message, options);
    this.name = "TerminalError";
  }

  /** Wraps `error` (kept as `cause`, its message reused) unless it already is terminal. */
  static wrap(error: unknown): TerminalError {
    if (TerminalError.isTerminal(error)) return error;
    return new TerminalError(errorMessage(error), { cause: error });
  }

  /** True for a TerminalError, also one from another copy of this package. */
  static isTerminal(error: unknown): error is TerminalError {
    return ReconcileError.hasMarker(error, terminalMarker);
  }

  /** The same check as {@link TerminalError.isTerminal}, under the name every reconcile error has. */
  static override isInstance(error: unknown): error is TerminalError {
    return ReconcileError.hasMarker(error, terminalMarker);
  }
}

/** How a sync ended, as controller-runtime's `controller_runtime_reconcile_total{result}` labels it, plus terminal errors. */
export type SyncOutcome = "success" | "requeue_after" | "error" | "terminal_error";

/**
 * Per-controller sync metrics (no-op by default). An adapter maps them to
 * controller-runtime's names: `controller_runtime_reconcile_total{controller,result}`
 * (a terminal error counts as `error` there and in
 * `controller_runtime_reconcile_errors_total`, and also in
 * `controller_runtime_terminal_reconcile_errors_total`) and
 * `controller_runtime_reconcile_time_seconds`.
 */
export interface SyncMetrics {
  /** One call per finished sync. */
  observeSync(controller: string, outcome: SyncOutcome, durationSeconds: number): void;
}

/** One finished sync, as a {@link ReconcileObserver} sees it. */
export interface ReconcileRecord {
  /** The queue's name (the controller's, for its main queue). */
  readonly controller: string;
  /** The key synced (`namespace/name` for most controllers). */
  readonly key: unknown;
  /** Why it was queued, when the queue was fed with a reason. */
  readonly reason: string | undefined;
  /**
   * The informer delivery whose handler queued it (the object's key and
   * resourceVersion): the write this reconcile answers. Absent for a
   * requeue, a retry, or a key queued outside a handler.
   */
  readonly trigger?: Delivery | undefined;
  readonly reconcileID: string;
  readonly outcome: SyncOutcome;
  /** The sync's error, for `error` and `terminal_error`. */
  readonly error?: unknown;
  /** The delay the sync asked for, for `requeue_after`. */
  readonly requeueAfterMs?: number | undefined;
  /** When the sync started and ended, in the clock's milliseconds. */
  readonly startedAt: number;
  readonly endedAt: number;
}

/**
 * Called once per finished sync, after the key is requeued or forgotten:
 * what a trace of the controller's decisions records (`@reconcile/sim`).
 * A throwing observer is ignored.
 */
export type ReconcileObserver = (record: ReconcileRecord) => void;

export const noopSyncMetrics: SyncMetrics = {
  observeSync() {},
};
