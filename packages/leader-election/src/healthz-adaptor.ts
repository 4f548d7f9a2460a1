import type { LeaderElectionError } from "./errors.js";

/** What the adaptor needs of an elector. */
interface Checkable {
  check(maxTolerableExpiredLeaseMs: number): LeaderElectionError | undefined;
}

export interface HealthzAdaptorOptions {
  /**
   * How long past the lease's expiry a leader that has not renewed still
   * counts as healthy. Default 20000 (what kube-controller-manager uses).
   */
  timeoutMs?: number | undefined;
}

/**
 * A health check for a leader that failed to renew but did not stop (e.g. a
 * stuck process): client-go's `HealthzAdaptor`. Create it before the elector,
 * wire `check()` into the health endpoint, and pass it as the elector's
 * `watchDog`. Until then, and whenever this process is not the leader, it
 * reports healthy.
 */
export class HealthzAdaptor {
  /** The check's name on a health endpoint. */
  readonly name = "leaderElection";
  readonly #timeoutMs: number;
  #elector: Checkable | undefined;

  constructor(options: HealthzAdaptorOptions = {}) {
    const timeoutMs = options.timeoutMs ?? 20_000;
    if (typeof timeoutMs !== "number" || !(timeoutMs >= 0)) {
      throw new RangeError(
        `HealthzAdaptor: timeoutMs must be a non-negative number, got ${String(timeoutMs)}`,
      );
    }
    this.#timeoutMs = timeoutMs;
  }

  /** Ties the adaptor to an elector (the elector's constructor does this for its `watchDog`). */
  setLeaderElection(elector: Checkable): void {
    this.#elector = elector;
  }

  /** Undefined when healthy, else the error to report. */
  check(): LeaderElectionError | undefined {
    return this.#elector?.check(this.#timeoutMs);
  }
}
