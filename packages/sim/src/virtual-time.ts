import type { FakeClock } from "@reconcile/clock";
import { settle } from "./run-loop.js";

export interface AdvanceUntilOptions {
  /** Give up after this much virtual time, in ms. Default 600 000 (10 min). */
  timeoutMs?: number | undefined;
  /** Names the condition in the timeout's error. Default "the condition". */
  description?: string | undefined;
}

/**
 * Drives a `FakeClock` the way a simulation does, for tests of your own (an
 * envtest environment started with `{ clock }`, a Manager on that clock):
 * runs every piece of ready work, checks `condition`, and moves time to the
 * next timer only when nothing else can happen, until the condition holds.
 * A controller's 10-minute requeue then costs no wall time, and no test
 * sleeps or polls. Resolves with the virtual ms it took; rejects when the
 * condition still fails after `timeoutMs` of virtual time, or when no timer
 * is left to wait for.
 */
export async function advanceUntil(
  clock: FakeClock,
  condition: () => boolean | Promise<boolean>,
  options: AdvanceUntilOptions = {},
): Promise<number> {
  const start = clock.now();
  const deadline = start + (options.timeoutMs ?? 600_000);
  const what = options.description ?? "the condition";
  for (;;) {
    if (!(await settle())) throw new Error(`advanceUntil: work kept running without waiting for time`);
    if (await condition()) return clock.now() - start;
    const next = clock.pendingTimers()[0];
    if (next === undefined) {
      throw new Error(
        `advanceUntil: ${what} does not hold and no timer is left (after ${clock.now() - start} ms)`,
      );
    }
    if (next.at > deadline) {
      await clock.advance(deadline - clock.now());
      await settle();
      if (await condition()) return clock.now() - start;
      throw new Error(
        `advanceUntil: ${what} still does not hold after ${options.timeoutMs ?? 600_000} ms of virtual time`,
      );
    }
    await clock.advance(next.in);
  }
}
