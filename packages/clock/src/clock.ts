import { listenAbort } from "./abort-listeners.js";

/** An opaque handle returned by {@link Clock.setTimeout}. */
export type TimerHandle = unknown;

/**
 * The source of time for every time-dependent part of reconcile: delays, rate
 * limits, resyncs, expectation TTLs, lease renewals. Inject a {@link FakeClock}
 * in tests instead of sleeping.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Calls `callback` once, `ms` milliseconds from now. */
  setTimeout(callback: () => void, ms: number): TimerHandle;
  /** Cancels a timer; unknown or already-fired handles are ignored. */
  clearTimeout(handle: TimerHandle): void;
  /**
   * Resolves after `ms` milliseconds. Rejects with the signal's reason if the
   * signal aborts first (the timer is cleared).
   */
  sleep(ms: number, options?: { signal?: AbortSignal | undefined }): Promise<void>;
}

/**
 * The real clock. It looks up `Date.now` and `setTimeout` on every call rather
 * than capturing them, so vitest's or sinon's fake timers drive it too.
 */
export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) =>
    ms > maxTimerMs ? new LongTimer(callback, ms) : globalThis.setTimeout(callback, Math.max(0, ms)),
  clearTimeout: (handle) => {
    if (handle instanceof LongTimer) handle.clear();
    else globalThis.clearTimeout(handle as ReturnType<typeof globalThis.setTimeout>);
  },
  sleep: (ms, options) => sleepOn(realClock, ms, options?.signal),
};

/** The longest delay a host timer takes; Node fires a longer one at once (with a warning). */
const maxTimerMs = 2 ** 31 - 1;

/** A timer longer than the host allows, armed in steps of at most {@link maxTimerMs}. */
class LongTimer {
  #timer: ReturnType<typeof globalThis.setTimeout> | undefined;

  constructor(callback: () => void, ms: number) {
    this.#arm(callback, ms);
  }

  clear(): void {
    globalThis.clearTimeout(this.#timer);
  }

  #arm(callback: () => void, remaining: number): void {
    const step = Math.min(remaining, maxTimerMs);
    this.#timer = globalThis.setTimeout(() => {
      if (remaining > step) this.#arm(callback, remaining - step);
      else callback();
    }, step);
  }
}

/** `sleep` for any clock, built from its `setTimeout`/`clearTimeout`. */
export function sleepOn(
  clock: Pick<Clock, "setTimeout" | "clearTimeout">,
  ms: number,
  signal?: AbortSignal,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    // One listener per signal however many sleep on it (listenAbort): with a
    // listener each, every add and remove walks all of them, so a thousand
    // simulated nodes sleeping on one cluster signal made each sleep O(nodes).
    const off = listenAbort(signal, () => {
      clock.clearTimeout(handle);
      reject(signal?.reason);
    });
    const handle = clock.setTimeout(() => {
      off();
      resolve();
    }, ms);
  });
}

/**
 * Sleeps `ms` on `clock` and resolves true, or resolves false (never
 * rejects) if `signal` aborts first or has already aborted: the wait of a
 * retry loop that ends when its component stops.
 */
export async function sleepUnlessAborted(
  clock: Pick<Clock, "sleep">,
  ms: number,
  signal: AbortSignal,
): Promise<boolean> {
  if (signal.aborted) return false;
  try {
    await clock.sleep(ms, { signal });
    return true;
  } catch {
    return false;
  }
}
