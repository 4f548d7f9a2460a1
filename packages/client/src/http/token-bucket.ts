import { type Clock, realClock } from "@reconcile/clock";

export interface TokenBucketOptions {
  /** Tokens added per second. Default 5 (client-go's default QPS). `Infinity` switches limiting off. */
  qps?: number | undefined;
  /** Bucket size: how many calls may go at once after a quiet spell. Default 10 (client-go's default burst). */
  burst?: number | undefined;
  /** Default `realClock`. */
  clock?: Clock | undefined;
}

/**
 * A token bucket like client-go's `flowcontrol.NewTokenBucketRateLimiter`: it
 * starts full with `burst` tokens and refills at `qps` per second. `wait`
 * reserves a token at once and sleeps until it is due, so waiters are served
 * in order; an aborted wait gives its reservation back.
 */
export class TokenBucketRateLimiter {
  readonly qps: number;
  readonly burst: number;
  private readonly clock: Clock;
  private tokens: number;
  private last: number;

  constructor(options: TokenBucketOptions = {}) {
    const qps = options.qps ?? 5;
    const burst = options.burst ?? 10;
    if (!(qps > 0))
      throw new RangeError(`qps must be greater than 0 (Infinity disables limiting), not ${qps}`);
    if (!Number.isFinite(burst) || burst < 1)
      throw new RangeError(`burst must be a finite number of at least 1, not ${burst}`);
    this.qps = qps;
    this.burst = burst;
    this.clock = options.clock ?? realClock;
    this.tokens = burst;
    this.last = this.clock.now();
  }

  /** Takes a token if one is available now; never waits. */
  tryAccept(): boolean {
    if (this.qps === Number.POSITIVE_INFINITY) return true;
    this.refill();
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Resolves when the caller may go; rejects with the signal's reason if it aborts first. */
  async wait(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) throw signal.reason;
    if (this.qps === Number.POSITIVE_INFINITY) return;
    this.refill();
    this.tokens -= 1;
    if (this.tokens >= 0) return;
    const delay = (-this.tokens / this.qps) * 1000;
    try {
      await this.clock.sleep(delay, { signal });
    } catch (error) {
      this.tokens += 1;
      throw error;
    }
  }

  private refill(): void {
    const now = this.clock.now();
    const elapsed = Math.max(0, now - this.last);
    this.last = now;
    this.tokens = Math.min(this.burst, this.tokens + (elapsed / 1000) * this.qps);
  }
}
