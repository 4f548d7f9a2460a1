import type { Clock } from "@reconcile/clock";

export interface EventuallyOptions {
  /**
   * The clock the code under test runs on. A clock with `advance(ms)` (a
   * `FakeClock`) is moved forward `stepMs` between checks, so timers and
   * requeues fire without waiting; otherwise each check waits `stepMs` of real time.
   */
  clock?: (Clock & { advance?(ms: number): Promise<void> }) | undefined;
  /** Give up after this much (fake or real) time: reject naming it. Default 10000. */
  timeoutMs?: number | undefined;
  /** Default 10. */
  stepMs?: number | undefined;
}

/**
 * Resolves once `check` resolves true (Gomega's `Eventually`), checking again
 * after each step of time; a `check` that throws counts as false until the
 * last attempt, whose error is the rejection's cause.
 */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  options: EventuallyOptions = {},
): Promise<void> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const stepMs = options.stepMs ?? 10;
  const advance = options.clock?.advance?.bind(options.clock);
  let lastError: unknown;
  for (let elapsed = 0; ; elapsed += stepMs) {
    try {
      if (await check()) return;
      lastError = undefined;
    } catch (error) {
      lastError = error;
    }
    if (elapsed >= timeoutMs) break;
    if (advance !== undefined) {
      await advance(stepMs);
      // Let the I/O and promise callbacks the step released run before the next check.
      await new Promise<void>((resolve) => setImmediate(resolve));
    } else {
      await new Promise<void>((resolve) => setTimeout(resolve, stepMs));
    }
  }
  throw new Error(`condition not met within ${timeoutMs} ms${advance ? " of fake time" : ""}`, {
    cause: lastError,
  });
}
