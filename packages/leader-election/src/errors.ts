import { ReconcileError } from "@reconcile/api";

/**
 * The kinds of {@link LeaderElectionError}:
 * - `leaderelection.invalid-config`: the elector's or the lock's options are unusable;
 * - `leaderelection.lock-not-initialized`: `update` was called before `get` or `create`;
 * - `leaderelection.already-running`: `run` was called while a run was still in progress;
 * - `leaderelection.renew-overdue`: the health check found a leader that stopped renewing;
 * - `leaderelection.stopped`: the reason a leading signal was aborted.
 */
export type LeaderElectionErrorCode =
  | "leaderelection.invalid-config"
  | "leaderelection.lock-not-initialized"
  | "leaderelection.already-running"
  | "leaderelection.renew-overdue"
  | "leaderelection.stopped";

/** An error raised by the leader-election package itself (API errors stay `StatusError`s). */
export class LeaderElectionError extends ReconcileError {
  declare readonly code: LeaderElectionErrorCode;

  constructor(code: LeaderElectionErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = "LeaderElectionError";
  }
}
