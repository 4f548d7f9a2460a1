import { isConflict, isNotFound, newTimeout, type RunOptions, rfc3339Micro, runSignal } from "@reconcile/api";
import { sleepUnlessAborted } from "@reconcile/clock";
import {
  jitterFactor,
  type LeaderCallbacks,
  type LeaderElectionConfig,
  type ResolvedConfig,
  validate,
} from "./config.js";
import { LeaderElectionError } from "./errors.js";
import { type LeaderMetric, noopLeaderMetricsProvider } from "./metrics.js";
import type { LeaderElectionRecord } from "./record.js";
import type { LockRecord } from "./resource-lock.js";

export { jitterFactor, type LeaderCallbacks, type LeaderElectionConfig } from "./config.js";

/** How often `release` retries after a 409 Conflict (an in-flight renew landing) before giving up. */
const maxReleaseConflicts = 5;

type StopReason = "cancelled" | "lost" | "work-failed";

const neverAborted = new AbortController().signal;

/**
 * A participant in a leader election: client-go's `LeaderElector`.
 *
 * It relies only on time measured on its own clock: a candidate takes the
 * lease over only after `leaseDurationSeconds` (from the record) have passed
 * since it last saw the record change, so clock offsets between participants
 * do not matter (differences in clock *rate* do). There is no fencing: guarded
 * work must stop when the leading signal aborts.
 */
export class LeaderElector {
  readonly #config: ResolvedConfig;
  readonly #metric: LeaderMetric;
  #observedRecord: LeaderElectionRecord = {
    holderIdentity: "",
    leaseDurationSeconds: 0,
    leaderTransitions: 0,
  };
  #observedRawRecord: string | undefined;
  /** When (on our clock) the record last changed or we last wrote it. */
  #observedTime = Number.NEGATIVE_INFINITY;
  /** When the last successful tryAcquireOrRenew began (our clock); the renew deadline counts from here. */
  #lastSuccessfulAttemptAt = Number.NEGATIVE_INFINITY;
  #reportedLeader = "";
  #running = false;

  constructor(config: LeaderElectionConfig) {
    this.#config = validate(config);
    this.#metric = (config.metricsProvider ?? noopLeaderMetricsProvider).newLeaderMetric();
    this.#metric.off(this.#config.name);
    config.watchDog?.setLeaderElection(this);
  }

  /**
   * Competes for the lease until `signal` aborts or leadership is lost.
   * Settles after everything has stopped: loops and timers ended, the lease
   * released (if `releaseOnCancel`), `onStoppedLeading` called, and the
   * promise returned by `onStartedLeading` settled. Rejects with the error of
   * `onStartedLeading` or `onStoppedLeading` if one failed.
   */
  run(options: RunOptions): Promise<void>;
  /** @deprecated Pass `{ signal }`, the one lifecycle shape; a bare signal (or none) is read until the next minor release. */
  run(signal?: AbortSignal): Promise<void>;
  async run(options: RunOptions | AbortSignal = neverAborted): Promise<void> {
    const signal = runSignal(options);
    if (this.#running) {
      throw new LeaderElectionError(
        "leader-election.already-running",
        "LeaderElector.run is already running",
      );
    }
    this.#running = true;
    try {
      let work: Promise<WorkOutcome> = Promise.resolve({ failed: false });
      let stoppedOutcome: WorkOutcome = { failed: false };
      try {
        const acquiredAt = await this.#acquire(signal);
        if (acquiredAt !== undefined) ({ work } = await this.#lead(signal, acquiredAt));
      } finally {
        try {
          this.#config.callbacks.onStoppedLeading();
        } catch (error) {
          stoppedOutcome = { failed: true, error };
        }
      }
      const workOutcome = await work;
      if (workOutcome.failed) throw workOutcome.error;
      if (stoppedOutcome.failed) throw stoppedOutcome.error;
    } finally {
      this.#running = false;
    }
  }

  /** The identity of the last observed holder, "" if none was observed yet (informational). */
  getLeader(): string {
    return this.#observedRecord.holderIdentity;
  }

  /**
   * Whether the last observed holder is this participant. This stays true for
   * a leader that lost contact with the API server (as in client-go); the
   * leading signal is what says whether to act.
   */
  isLeader(): boolean {
    return this.#observedRecord.holderIdentity === this.#config.lock.identity();
  }

  /**
   * The health check: undefined unless this participant is leader and has
   * not renewed for longer than leaseDuration + `maxTolerableExpiredLeaseMs`
   * (a leader that should have stopped but did not, e.g. a stuck process).
   */
  check(maxTolerableExpiredLeaseMs: number): LeaderElectionError | undefined {
    if (!this.isLeader()) return undefined;
    const sinceObserved = this.#config.clock.now() - this.#observedTime;
    if (sinceObserved > this.#config.leaseDurationMs + maxTolerableExpiredLeaseMs) {
      return new LeaderElectionError(
        "leader-election.renew-overdue",
        `failed election to renew leadership on lease ${this.#config.name}`,
      );
    }
    return undefined;
  }

  /**
   * One attempt to acquire the lease, or to renew it if held: resolves true
   * on success. `run` calls it; it is public for tests and custom loops.
   *
   * 1. Fast path: a leader whose lease is still valid writes its renewal
   *    on the lock's cached object, falling through on any failure.
   * 2. Get the record (create it if there is none).
   * 3. A changed record resets observedTime; a record held by someone else
   *    whose lease has not run out on our clock is left alone.
   * 4. Write ourselves in: a renewal keeps acquireTime and leaderTransitions,
   *    a takeover bumps leaderTransitions. A conflict means someone else won.
   */
  async tryAcquireOrRenew(options?: { signal?: AbortSignal | undefined }): Promise<boolean> {
    const signal = options?.signal ?? neverAborted;
    const { lock, clock, logger } = this.#config;
    const now = clock.now();
    const nowTime = rfc3339Micro(now);
    const desired: LeaderElectionRecord = {
      holderIdentity: lock.identity(),
      leaseDurationSeconds: this.#config.leaseDurationMs / 1000,
      acquireTime: nowTime,
      renewTime: nowTime,
      leaderTransitions: 0,
    };

    // 1. Fast path: assume the record we saw last is still current.
    if (this.isLeader() && this.#isLeaseValid(now)) {
      const renewed = keepAcquisition(desired, this.#observedRecord);
      try {
        await this.#call(signal, (s) => lock.update(renewed, { signal: s }));
        return this.#succeeded(renewed, now);
      } catch (error) {
        logger.debug(
          { lock: lock.describe(), err: error },
          "Failed to update lease optimistically, falling back to slow path",
        );
      }
    }

    // 2. Get or create the record.
    let current: LockRecord;
    try {
      current = await this.#call(signal, (s) => lock.get({ signal: s }));
    } catch (error) {
      if (!isNotFound(error)) {
        this.#logFailure(signal, error, "Error retrieving lease lock");
        return false;
      }
      try {
        await this.#call(signal, (s) => lock.create(desired, { signal: s }));
      } catch (createError) {
        this.#logFailure(signal, createError, "Error initially creating lease lock");
        return false;
      }
      return this.#succeeded(desired, now);
    }

    // 3. Has it changed since we last looked? Is it someone else's, still valid?
    if (current.raw !== this.#observedRawRecord) {
      this.#setObservedRecord(current.record);
      this.#observedRawRecord = current.raw;
    }
    if (current.record.holderIdentity !== "" && this.#isLeaseValid(now) && !this.isLeader()) {
      logger.debug(
        { lock: lock.describe(), holder: current.record.holderIdentity },
        "Lease is held and has not yet expired",
      );
      return false;
    }

    // 4. Renew (slow path) or take over.
    let next: LeaderElectionRecord;
    if (this.isLeader()) {
      next = keepAcquisition(desired, current.record);
      this.#metric.slowpathExercised(this.#config.name);
    } else {
      next = { ...desired, leaderTransitions: current.record.leaderTransitions + 1 };
    }
    try {
      await this.#call(signal, (s) => lock.update(next, { signal: s }));
    } catch (error) {
      this.#logFailure(signal, error, "Failed to update lease");
      return false;
    }
    return this.#succeeded(next, now);
  }

  /** Tries until the lease is ours (resolves when that attempt began) or `signal` aborts (undefined). */
  async #acquire(signal: AbortSignal): Promise<number | undefined> {
    const { lock, clock, logger, retryPeriodMs, random } = this.#config;
    logger.info({ lock: lock.describe() }, "Attempting to acquire leader lease...");
    for (;;) {
      if (signal.aborted) return undefined;
      const succeeded = await this.tryAcquireOrRenew({ signal });
      this.#maybeReportTransition();
      if (succeeded) {
        this.#recordEvent("became leader");
        this.#metric.on(this.#config.name);
        logger.info({ lock: lock.describe() }, "Successfully acquired lease");
        return this.#lastSuccessfulAttemptAt;
      }
      // wait.JitterUntil with sliding: the wait starts after the attempt ends.
      const wait = retryPeriodMs * (1 + random() * jitterFactor);
      if (!(await sleepUnlessAborted(clock, wait, signal))) return undefined;
    }
  }

  /**
   * Leads: starts the work, renews every retryPeriod, and stops leading when
   * `signal` aborts, the work fails, or renewDeadline has passed since the
   * last successful attempt began. Resolves once leadership is over (lease
   * released if asked), with the work's outcome still to come.
   */
  async #lead(signal: AbortSignal, acquiredAt: number): Promise<{ work: Promise<WorkOutcome> }> {
    const { lock, clock, logger, retryPeriodMs, renewDeadlineMs, callbacks } = this.#config;
    const leading = new AbortController();
    let stopReason: StopReason | undefined;
    const stop = (reason: StopReason) => {
      if (leading.signal.aborted) return;
      stopReason = reason;
      leading.abort(new LeaderElectionError("leader-election.stopped", `stopped leading (${reason})`));
    };
    const onCancel = () => stop("cancelled");
    signal.addEventListener("abort", onCancel, { once: true });
    if (signal.aborted) stop("cancelled");

    // The deadline counts from the start of the last successful attempt: that
    // write landed no earlier, so others cannot take over before
    // leaseDuration (> renewDeadline) has passed since then.
    let deadline = clock.setTimeout(() => stop("lost"), acquiredAt + renewDeadlineMs - clock.now());

    const work: Promise<WorkOutcome> = leading.signal.aborted
      ? Promise.resolve({ failed: false })
      : startWork(callbacks, leading.signal).then((outcome) => {
          if (outcome.failed) stop("work-failed");
          return outcome;
        });

    try {
      renewing: for (;;) {
        if (!(await sleepUnlessAborted(clock, retryPeriodMs, leading.signal))) break;
        for (;;) {
          const renewed = await this.tryAcquireOrRenew({ signal: leading.signal });
          this.#maybeReportTransition();
          if (leading.signal.aborted) break renewing;
          if (renewed) {
            clock.clearTimeout(deadline);
            deadline = clock.setTimeout(
              () => stop("lost"),
              this.#lastSuccessfulAttemptAt + renewDeadlineMs - clock.now(),
            );
            logger.debug({ lock: lock.describe() }, "Successfully renewed lease");
            break;
          }
          if (!this.isLeader()) {
            // The record names someone else: we are no longer the holder.
            stop("lost");
            break renewing;
          }
          if (!(await sleepUnlessAborted(clock, retryPeriodMs, leading.signal))) break renewing;
        }
      }
    } catch (error) {
      // Nothing renews the lease any more (a throwing logger or metrics provider):
      // the guarded work must stop before `run` rejects.
      stop("lost");
      await work;
      throw error;
    } finally {
      clock.clearTimeout(deadline);
      signal.removeEventListener("abort", onCancel);
    }

    this.#metric.off(this.#config.name);
    if (stopReason === "lost") logger.info({ lock: lock.describe() }, "Failed to renew lease");
    this.#recordEvent("stopped leading");
    if (this.#config.releaseOnCancel && stopReason !== "lost") {
      // Never release while the guarded work may still be acting.
      await work;
      await this.#release();
    }
    return { work };
  }

  /**
   * Gives the lease up: writes holder "" with leaseDurationSeconds 1 (0 is
   * invalid for a Lease), retrying on conflict, all within renewDeadline.
   */
  async #release(): Promise<boolean> {
    const { lock, clock, logger, renewDeadlineMs } = this.#config;
    const timeout = new AbortController();
    const timer = clock.setTimeout(
      () =>
        timeout.abort(newTimeout(`releasing lease ${lock.describe()} took longer than ${renewDeadlineMs}ms`)),
      renewDeadlineMs,
    );
    try {
      for (let conflicts = 0; ; conflicts++) {
        let current: LockRecord;
        try {
          current = await this.#call(timeout.signal, (s) => lock.get({ signal: s }));
        } catch (error) {
          logger.error({ lock: lock.describe(), err: error }, "error retrieving resource lock");
          return false;
        }
        if (current.raw !== this.#observedRawRecord) {
          this.#setObservedRecord(current.record);
          this.#observedRawRecord = current.raw;
        }
        // Only what we hold is ours to release.
        if (!this.isLeader()) return true;
        const now = rfc3339Micro(clock.now());
        const released: LeaderElectionRecord = {
          holderIdentity: "",
          leaseDurationSeconds: 1,
          acquireTime: now,
          renewTime: now,
          leaderTransitions: current.record.leaderTransitions,
        };
        try {
          await this.#call(timeout.signal, (s) => lock.update(released, { signal: s }));
        } catch (error) {
          if (isConflict(error) && conflicts < maxReleaseConflicts) {
            logger.debug({ lock: lock.describe() }, "Conflict when releasing lease, retrying");
            continue;
          }
          logger.error({ lock: lock.describe(), err: error }, "Failed to release lease");
          return false;
        }
        this.#setObservedRecord(released);
        this.#maybeReportTransition();
        return true;
      }
    } finally {
      clock.clearTimeout(timer);
    }
  }

  /** Records an event on the lock; a failing event recorder must not disturb the election. */
  #recordEvent(message: string): void {
    try {
      this.#config.lock.recordEvent(message);
    } catch (error) {
      this.#config.logger.error({ lock: this.#config.lock.describe(), err: error }, "Failed to record event");
    }
  }

  /** Logs a failed lock call, unless it failed only because we were stopping. */
  #logFailure(signal: AbortSignal, error: unknown, msg: string): void {
    if (signal.aborted) return;
    this.#config.logger.error({ lock: this.#config.lock.describe(), err: error }, msg);
  }

  #succeeded(record: LeaderElectionRecord, attemptStartedAt: number): true {
    this.#setObservedRecord(record);
    this.#lastSuccessfulAttemptAt = attemptStartedAt;
    return true;
  }

  #setObservedRecord(record: LeaderElectionRecord): void {
    this.#observedRecord = record;
    this.#observedTime = this.#config.clock.now();
  }

  #isLeaseValid(now: number): boolean {
    return this.#observedTime + this.#observedRecord.leaseDurationSeconds * 1000 > now;
  }

  #maybeReportTransition(): void {
    const holder = this.#observedRecord.holderIdentity;
    if (holder === this.#reportedLeader) return;
    this.#reportedLeader = holder;
    const onNewLeader = this.#config.callbacks.onNewLeader;
    if (onNewLeader === undefined) return;
    // Detached, like client-go's goroutine: a slow callback cannot hold up renewals.
    // Its failure is logged; thrown from a microtask it would crash the process.
    const fail = (error: unknown) =>
      this.#config.logger.error({ lock: this.#config.lock.describe(), err: error }, "onNewLeader failed");
    queueMicrotask(() => {
      try {
        const result: unknown = onNewLeader.call(this.#config.callbacks, holder);
        if (result instanceof Promise) result.catch(fail);
      } catch (error) {
        fail(error);
      }
    });
  }

  /**
   * Runs one lock call with its own signal, aborted when `signal` aborts or
   * after requestTimeoutMs. It settles at that moment even if the call
   * ignores its signal.
   */
  async #call<T>(signal: AbortSignal, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const { clock, requestTimeoutMs, lock } = this.#config;
    signal.throwIfAborted();
    const controller = new AbortController();
    const onAbort = () => controller.abort(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    const timer = clock.setTimeout(
      () =>
        controller.abort(
          newTimeout(`request to lock ${lock.describe()} took longer than ${requestTimeoutMs}ms`),
        ),
      requestTimeoutMs,
    );
    const aborted = new Promise<never>((_, reject) => {
      controller.signal.addEventListener("abort", () => reject(controller.signal.reason), { once: true });
    });
    try {
      return await Promise.race([fn(controller.signal), aborted]);
    } finally {
      clock.clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
    }
  }
}

/**
 * Builds an elector and runs it (client-go's `RunOrDie`): rejects at once if
 * the config is invalid, else settles as {@link LeaderElector.run}.
 */
export function runLeaderElection(config: LeaderElectionConfig, options: RunOptions): Promise<void>;
/** @deprecated Pass `{ signal }`, the one lifecycle shape; a bare signal (or none) is read until the next minor release. */
export function runLeaderElection(config: LeaderElectionConfig, signal?: AbortSignal): Promise<void>;
export async function runLeaderElection(
  config: LeaderElectionConfig,
  options: RunOptions | AbortSignal = neverAborted,
): Promise<void> {
  const elector = new LeaderElector(config);
  await elector.run({ signal: runSignal(options) });
}

type WorkOutcome = { failed: false } | { failed: true; error: unknown };

async function startWork(callbacks: LeaderCallbacks, signal: AbortSignal): Promise<WorkOutcome> {
  try {
    await callbacks.onStartedLeading(signal);
    return { failed: false };
  } catch (error) {
    return { failed: true, error };
  }
}

/** A renewal: the holder's acquireTime and the transition count stay as they were. */
function keepAcquisition(desired: LeaderElectionRecord, held: LeaderElectionRecord): LeaderElectionRecord {
  const { acquireTime: _, ...rest } = desired;
  return {
    ...rest,
    ...(held.acquireTime === undefined ? {} : { acquireTime: held.acquireTime }),
    leaderTransitions: held.leaderTransitions,
  };
}
