import { ReconcileError } from "@reconcile/api";

/**
 * The kinds of {@link LeaderElectionError}:
 * - `leader-election.invalid-config`: the elector's or the lock's options are unusable;
 * - `leader-election.lock-not-initialized`: `update` was called before `get` or `create`;
 * - `leader-election.already-running`: `run` was called while a run was still in progress;
 * - `leader-election.renew-overdue`: the health check found a leader that stopped renewing;
 * - `leader-election.stopped`: the reason a leading signal was aborted.
 *
 * Each was `leaderelection.…` before; that code is on `legacyCode` for a release.
 */
export type LeaderElectionErrorCode =
  | "leader-election.invalid-config"
  | "leader-election.lock-not-initialized"
  | "leader-election.already-running"
  | "leader-election.renew-overdue"
  | "leader-election.stopped";

const marker = Symbol.for("reconcile.leader-election-error");

/** An error raised by the leader-election package itself (API errors stay `StatusError`s). */
export class LeaderElectionError extends ReconcileError {
  readonly [marker] = true;
  declare readonly code: LeaderElectionErrorCode;

  constructor(code: LeaderElectionErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, {
      cause: options?.cause,
      legacyCode: code.replace(/^leader-election\./, "leaderelection."),
    });
    this.name = "LeaderElectionError";
  }

  static override isInstance(error: unknown): error is LeaderElectionError {
    return ReconcileError.hasMarker(error, marker);
  }
}
