import type { Clock } from "@reconcile/clock";

export interface BackoffOptions {
  /** The first delay. Default: 800 ms. */
  initialMs?: number | undefined;
  /** The delay stops doubling here (before jitter). Default: 30 s. */
  maxMs?: number | undefined;
  /** After this long without a delay being asked for, start again from `initialMs`. Default: 2 min. */
  resetAfterMs?: number | undefined;
}

/**
 * Exponential backoff with full jitter and a reset after a quiet period
 * (client-go's reflector backoff: 800 ms doubling to 30 s, jitter 1.0, so
 * each delay is in [d, 2d); reset after 2 minutes without backoff).
 */
export class Backoff {
  readonly #initialMs: number;
  readonly #maxMs: number;
  readonly #resetAfterMs: number;
  readonly #clock: Clock;
  readonly #random: () => number;
  #currentMs: number;
  #lastAt: number | undefined;

  constructor(options: BackoffOptions, clock: Clock, random: () => number) {
    this.#initialMs = options.initialMs ?? 800;
    this.#maxMs = options.maxMs ?? 30_000;
    this.#resetAfterMs = options.resetAfterMs ?? 120_000;
    for (const [name, value] of [
      ["initialMs", this.#initialMs],
      ["maxMs", this.#maxMs],
      ["resetAfterMs", this.#resetAfterMs],
    ] as const) {
      if (!(value >= 0)) throw new RangeError(`backoff.${name} must be a non-negative number, got ${value}`);
    }
    this.#clock = clock;
    this.#random = random;
    this.#currentMs = this.#initialMs;
  }

  /** The next delay in milliseconds. */
  next(): number {
    const now = this.#clock.now();
    if (this.#lastAt !== undefined && now - this.#lastAt > this.#resetAfterMs)
      this.#currentMs = this.#initialMs;
    this.#lastAt = now;
    const base = this.#currentMs;
    this.#currentMs = Math.min(this.#maxMs, this.#currentMs * 2);
    return base + this.#random() * base;
  }
}
