import { type Clock, realClock } from "@reconcile/clock";
import { TokenBucket } from "@reconcile/workqueue";

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
 * reserves a token of `@reconcile/workqueue`'s `TokenBucket` at once and
 * sleeps until it is due, so waiters are served in order; an aborted wait
 * gives its reservation back.
 */
export class TokenBucketRateLimiter {
  readonly qps: number;
  readonly burst: number;
  private readonly clock: Clock;
  private readonly bucket: TokenBucket;

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
    this.bucket = new TokenBucket({ qps, burst, clock: this.clock });
  }

  /** Takes a token if one is available now; never waits. */
  tryAccept(): boolean {
    return this.bucket.tryTake();
  }

  /** Resolves when the caller may go; rejects with the signal's reason if it aborts first. */
  async wait(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) throw signal.reason;
    const delay = this.bucket.reserve();
    if (delay === 0) return;
    try {
      await this.clock.sleep(delay, { signal });
    } catch (error) {
      this.bucket.cancel();
      throw error;
    }
  }
}
