import type { Logger } from "@reconcile/api";
import { type Clock, realClock } from "@reconcile/clock";
import { LeaderElectionError } from "./errors.js";
import type { HealthzAdaptor } from "./healthz-adaptor.js";
import { completeLogger, type LeaderElectionLogger } from "./logger.js";
import type { LeaderMetricsProvider } from "./metrics.js";
import type { ResourceLock } from "./resource-lock.js";

// What a leader election is configured with and how NewLeaderElector checks it (client-go's
// leaderelection.go: LeaderElectionConfig, LeaderCallbacks, the validation of NewLeaderElector).

/** client-go's `JitterFactor`: acquire retries wait retryPeriod × (1 + [0, 1.2)). */
export const jitterFactor = 1.2;

/**
 * What happens around leadership. client-go runs these in goroutines; here
 * `onStartedLeading` is called without being awaited (its promise is watched),
 * `onNewLeader` is called detached, `onStoppedLeading` in line.
 */
export interface LeaderCallbacks {
  /**
   * Called once this participant becomes leader. Start the guarded work here
   * and stop it as soon as `signal` aborts: the signal aborts the moment
   * leadership ends (lost, cancelled), before anyone else can take the lease.
   * If it returns a promise that rejects (or throws), leadership ends as if
   * the run were cancelled and `run` rejects with that error.
   */
  onStartedLeading(signal: AbortSignal): void | Promise<void>;
  /**
   * Called exactly once when `run` ends, whether or not this participant ever
   * led (as client-go does; do not assume `onStartedLeading` ran before). The
   * usual reaction to a lost lease is to exit the process.
   */
  onStoppedLeading(): void;
  /** Called when a different holder than the last reported one is observed (including the first, and "" after a release). A throw or rejection is logged. */
  onNewLeader?(identity: string): void;
}

/** The options of {@link LeaderElector}: client-go's `LeaderElectionConfig`, with durations in milliseconds. */
export interface LeaderElectionConfig {
  /** The lock to compete for, usually a `LeaseLock`. Required. */
  lock: ResourceLock;
  /**
   * How long others wait, after last seeing the record change, before they
   * may take over. A whole number of seconds (the Lease stores seconds).
   * Default 15000.
   */
  leaseDurationMs?: number | undefined;
  /** How long the leader keeps failing to renew before it gives up leadership. Default 10000. */
  renewDeadlineMs?: number | undefined;
  /** How long to wait between attempts (acquire attempts add up to 1.2× jitter). Default 2000. */
  retryPeriodMs?: number | undefined;
  /** Required. */
  callbacks: LeaderCallbacks;
  /** A health check to tie to this elector. Default: none. */
  watchDog?: HealthzAdaptor | undefined;
  /**
   * Give the lease up (holder "", leaseDurationSeconds 1) when the run
   * signal aborts, after the work started by `onStartedLeading` has settled.
   * Default false.
   */
  releaseOnCancel?: boolean | undefined;
  /** The election's name, for metrics, logs and the health check. Default "". */
  name?: string | undefined;
  /** Default `realClock`. */
  clock?: Clock | undefined;
  /** Default: no metrics. */
  metricsProvider?: LeaderMetricsProvider | undefined;
  /** Where the elector reports what it does. Default: `noopLogger` (nothing). */
  logger?: Logger | LeaderElectionLogger | undefined;
  /** Source of the acquire jitter, values in [0, 1). Default `Math.random`. */
  random?: (() => number) | undefined;
}

/** A config with every default filled, as the elector runs it. */
export interface ResolvedConfig {
  lock: ResourceLock;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  /** Each lock call is abandoned after this long, so one hung request cannot eat the renew deadline. */
  requestTimeoutMs: number;
  callbacks: LeaderCallbacks;
  releaseOnCancel: boolean;
  name: string;
  clock: Clock;
  logger: Logger;
  random: () => number;
}

function invalid(message: string): LeaderElectionError {
  return new LeaderElectionError("leader-election.invalid-config", message);
}

function duration(config: LeaderElectionConfig, field: keyof LeaderElectionConfig, fallback: number): number {
  const value = config[field] ?? fallback;
  if (typeof value !== "number" || Number.isNaN(value)) {
    throw invalid(`${field} must be a number of milliseconds, got ${String(value)}`);
  }
  return value;
}

/** client-go's NewLeaderElector checks, in its order and with its messages, after type checks. */
export function validate(config: LeaderElectionConfig): ResolvedConfig {
  if (typeof config !== "object" || config === null) throw invalid("LeaderElector: config must be an object");
  const leaseDurationMs = duration(config, "leaseDurationMs", 15_000);
  const renewDeadlineMs = duration(config, "renewDeadlineMs", 10_000);
  const retryPeriodMs = duration(config, "retryPeriodMs", 2_000);
  if (leaseDurationMs <= renewDeadlineMs) throw invalid("leaseDuration must be greater than renewDeadline");
  if (renewDeadlineMs <= jitterFactor * retryPeriodMs) {
    throw invalid("renewDeadline must be greater than retryPeriod*JitterFactor");
  }
  if (leaseDurationMs <= 0) throw invalid("leaseDuration must be greater than zero");
  if (renewDeadlineMs <= 0) throw invalid("renewDeadline must be greater than zero");
  if (retryPeriodMs <= 0) throw invalid("retryPeriod must be greater than zero");
  if (typeof config.callbacks?.onStartedLeading !== "function") {
    throw invalid("OnStartedLeading callback must not be nil");
  }
  if (typeof config.callbacks.onStoppedLeading !== "function") {
    throw invalid("OnStoppedLeading callback must not be nil");
  }
  if (config.lock === undefined || config.lock === null) throw invalid("Lock must not be nil.");
  if (config.lock.identity() === "") throw invalid("Lock identity is empty");
  // Ours: the Lease stores whole seconds; a truncated duration would let
  // others take over before our renew deadline.
  if (!Number.isInteger(leaseDurationMs / 1000) || !Number.isFinite(leaseDurationMs)) {
    throw invalid(
      `leaseDuration must be a whole number of seconds (the Lease stores leaseDurationSeconds), got ${leaseDurationMs}ms`,
    );
  }
  return {
    lock: config.lock,
    leaseDurationMs,
    renewDeadlineMs,
    retryPeriodMs,
    requestTimeoutMs: renewDeadlineMs / 2,
    callbacks: config.callbacks,
    releaseOnCancel: config.releaseOnCancel ?? false,
    name: config.name ?? "",
    clock: config.clock ?? realClock,
    logger: completeLogger(config.logger),
    random: config.random ?? Math.random,
  };
}
