import { type Clock, sleepOn, type TimerHandle } from "./clock.js";

interface FakeTimer {
  readonly id: number;
  readonly at: number;
  readonly callback: () => void;
}

/** A timer that has not fired yet, as reported by {@link FakeClock.pendingTimers}. */
export interface PendingTimer {
  /** When it fires, in the fake clock's milliseconds. */
  readonly at: number;
  /** Milliseconds from the fake clock's now until it fires. */
  readonly in: number;
}

/**
 * A clock that moves only when told to. `advance(ms)` fires every timer that
 * falls due, in time order (ties in the order they were set), and lets pending
 * promise reactions settle between timers, so async code that awaits and
 * re-arms timers behaves as it would on the real clock.
 */
export class FakeClock implements Clock {
  #now: number;
  #nextId = 1;
  readonly #timers = new Map<number, FakeTimer>();

  /** @param start the initial time in ms since the epoch (default 0). */
  constructor(start = 0) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(callback: () => void, ms: number): TimerHandle {
    const id = this.#nextId++;
    this.#timers.set(id, { id, at: this.#now + Math.max(0, ms), callback });
    return id;
  }

  clearTimeout(handle: TimerHandle): void {
    if (typeof handle === "number") this.#timers.delete(handle);
  }

  sleep(ms: number, options?: { signal?: AbortSignal | undefined }): Promise<void> {
    return sleepOn(this, ms, options?.signal);
  }

  /** Timers not yet fired, soonest first. */
  pendingTimers(): PendingTimer[] {
    return [...this.#timers.values()]
      .sort(compareTimers)
      .map((timer) => ({ at: timer.at, in: timer.at - this.#now }));
  }

  /**
   * Moves time forward by `ms`, firing due timers in time order. Between
   * timers (and at the end) pending promise reactions are allowed to run, so
   * timers armed by those reactions fire too if they fall within the window.
   */
  async advance(ms: number): Promise<void> {
    if (!(ms >= 0)) throw new RangeError(`FakeClock.advance: ms must be a non-negative number, got ${ms}`);
    const target = this.#now + ms;
    await settle();
    for (;;) {
      const next = this.#nextDue(target);
      if (next === undefined) break;
      this.#timers.delete(next.id);
      this.#now = next.at;
      next.callback();
      await settle();
    }
    this.#now = target;
    await settle();
  }

  /** Sets the time without firing anything (like client-go's fake `SetTime` going backwards or forwards). */
  setTime(now: number): void {
    this.#now = now;
  }

  /** Runs pending promise reactions without moving time. */
  async flush(): Promise<void> {
    await settle();
  }

  #nextDue(target: number): FakeTimer | undefined {
    let best: FakeTimer | undefined;
    for (const timer of this.#timers.values()) {
      if (timer.at > target) continue;
      if (best === undefined || compareTimers(timer, best) < 0) best = timer;
    }
    return best;
  }
}

function compareTimers(a: FakeTimer, b: FakeTimer): number {
  return a.at - b.at || a.id - b.id;
}

/**
 * Lets queued promise reactions run. A macrotask hop (setImmediate) drains the
 * whole microtask queue, including chains that are many `await`s deep.
 */
function settle(): Promise<void> {
  return new Promise((resolve) => realSetImmediate(resolve));
}

// Captured at load so that installing fake timers (vi.useFakeTimers) later cannot stall advance().
const realSetImmediate = globalThis.setImmediate;
