import { type Clock, sleepOn, type TimerHandle } from "@reconcile/clock";

/**
 * A view of another clock that reads `offsetMs` ahead (or behind, if
 * negative) but runs at the same rate and shares its timers: how tests give
 * each participant of a simulation its own, disagreeing wall clock on one
 * `FakeClock`.
 */
export class SkewedClock implements Clock {
  readonly #base: Clock;
  readonly #offsetMs: number;

  constructor(base: Clock, offsetMs: number) {
    this.#base = base;
    this.#offsetMs = offsetMs;
  }

  now(): number {
    return this.#base.now() + this.#offsetMs;
  }

  setTimeout(callback: () => void, ms: number): TimerHandle {
    return this.#base.setTimeout(callback, ms);
  }

  clearTimeout(handle: TimerHandle): void {
    this.#base.clearTimeout(handle);
  }

  sleep(ms: number, options?: { signal?: AbortSignal | undefined }): Promise<void> {
    return sleepOn(this, ms, options?.signal);
  }
}
