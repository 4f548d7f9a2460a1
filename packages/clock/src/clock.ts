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
    let unsubscribe: (() => void) | undefined;
    let fired = false;
    const handle = clock.setTimeout(() => {
      fired = true;
      unsubscribe?.();
      resolve();
    }, ms);
    if (signal !== undefined && !fired)
      unsubscribe = whenAborted(signal, () => {
        clock.clearTimeout(handle);
        reject(signal.reason);
      });
  });
}

/**
 * The sleepers waiting on each signal. Node's `addEventListener` and
 * `removeEventListener` walk every listener the signal has, so with one
 * listener per sleep, a thousand components sleeping on one signal (a
 * cluster's simulated nodes) made each sleep cost a thousand steps. Sleeps
 * share one listener per signal instead, and join and leave a set.
 */
const sleepers = new WeakMap<AbortSignal, Set<() => void>>();

/** Calls `callback` once `signal` aborts, unless the returned function is called first. */
function whenAborted(signal: AbortSignal, callback: () => void): () => void {
  let waiting = sleepers.get(signal);
  if (waiting === undefined) {
    const set = new Set<() => void>();
    waiting = set;
    sleepers.set(signal, set);
    signal.addEventListener(
      "abort",
      () => {
        sleepers.delete(signal);
        for (const wake of set) wake();
        set.clear();
      },
      { once: true },
    );
  }
  const set = waiting;
  set.add(callback);
  return () => set.delete(callback);
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
