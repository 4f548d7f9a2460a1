import { type Clock, realClock } from "./clock.js";

/** Options of {@link TokenBucket}. */
export interface TokenBucketOptions {
  /** Tokens added per second. `Infinity` never limits. Required; must be positive. */
  qps: number;
  /** Bucket size: how many tokens may be taken at once after a quiet spell; the bucket starts full. Required; at least 1. */
  burst: number;
  /** Source of time for the refill. Default: `realClock`. */
  clock?: Clock | undefined;
}

/**
 * The one token bucket of reconcile (golang.org/x/time/rate's `Limiter`, as
 * client-go's `BucketRateLimiter`, its `flowcontrol` QPS limiter and the
 * event spam filter use it). It starts full with `burst` tokens and refills
 * at `qps` per second. `reserve` always takes a token, going into debt when
 * the bucket is empty, and says how long the caller must wait for it, so
 * waiters are served in order; `tryTake` takes one only if it is there now.
 */
export class TokenBucket {
  readonly qps: number;
  readonly burst: number;
  readonly #clock: Clock;
  #tokens: number;
  #last: number;

  constructor(options: TokenBucketOptions) {
    const { qps, burst, clock = realClock } = options;
    if (typeof qps !== "number" || !(qps > 0)) {
      throw new RangeError(
        `TokenBucket: qps must be a positive number (Infinity never limits), got ${String(qps)}`,
      );
    }
    if (typeof burst !== "number" || !Number.isFinite(burst) || burst < 1) {
      throw new RangeError(`TokenBucket: burst must be a finite number of at least 1, got ${String(burst)}`);
    }
    this.qps = qps;
    this.burst = burst;
    this.#clock = clock;
    this.#tokens = burst;
    this.#last = clock.now();
  }

  /** Takes a token and returns how long to wait for it in ms: 0 if one was there (x/time/rate's `Reserve`). */
  reserve(): number {
    if (this.qps === Number.POSITIVE_INFINITY) return 0;
    const tokens = this.#refill() - 1;
    this.#tokens = tokens;
    return tokens < 0 ? (-tokens * 1000) / this.qps : 0;
  }

  /** Takes a token if one is there now; never goes into debt (x/time/rate's `Allow`). */
  tryTake(): boolean {
    if (this.qps === Number.POSITIVE_INFINITY) return true;
    const tokens = this.#refill();
    // A slow refill (say 1/300 qps) sums to 0.9999999… where exact arithmetic has 1.
    if (tokens < 1 - 1e-9) return false;
    this.#tokens = Math.max(0, tokens - 1);
    return true;
  }

  /** Gives back a reserved token whose caller stopped waiting (x/time/rate's `Reservation.Cancel`). */
  cancel(): void {
    if (this.qps === Number.POSITIVE_INFINITY) return;
    this.#tokens = Math.min(this.burst, this.#tokens + 1);
  }

  // The tokens there are now. Time running backwards refills nothing and restarts the count
  // from the earlier time, as x/time/rate does.
  #refill(): number {
    const now = this.#clock.now();
    const elapsed = now > this.#last ? now - this.#last : 0;
    this.#last = now;
    this.#tokens = Math.min(this.burst, this.#tokens + (elapsed * this.qps) / 1000);
    return this.#tokens;
  }
}
