import { DelayingQueue } from "./delaying-queue.js";
import type { RateLimitingInterface } from "./interfaces.js";
import type { QueueOptions, QueueSnapshot } from "./queue.js";
import { checkLimiter, defaultControllerRateLimiter, type RateLimiter } from "./rate-limiters.js";

/** Options of {@link RateLimitingQueue}. */
export interface RateLimitingQueueOptions<T> extends QueueOptions {
  /**
   * Decides the delay of {@link RateLimitingQueue.addRateLimited}.
   * Default: {@link defaultControllerRateLimiter} on the queue's clock.
   */
  rateLimiter?: RateLimiter<T> | undefined;
}

/**
 * A {@link DelayingQueue} that retries items after the delay its rate limiter
 * decides (client-go's rate-limiting queue). The usual worker loop:
 * on success `forget(key)`; on failure `addRateLimited(key)`; `done(key)` either way.
 */
export class RateLimitingQueue<T> extends DelayingQueue<T> implements RateLimitingInterface<T> {
  readonly #rateLimiter: RateLimiter<T>;

  constructor(options: RateLimitingQueueOptions<T> = {}) {
    super(options);
    this.#rateLimiter =
      options.rateLimiter === undefined
        ? defaultControllerRateLimiter<T>({ clock: options.clock })
        : checkLimiter(options.rateLimiter, "RateLimitingQueue: rateLimiter");
  }

  /** Adds `item` after the delay the rate limiter returns for it (which records a failure). */
  addRateLimited(item: T): void {
    this.addAfter(item, this.#rateLimiter.when(item));
  }

  /** Clears the item's failures in the rate limiter. It does not replace `done`. */
  forget(item: T): void {
    this.#rateLimiter.forget(item);
  }

  /** The item's failures as the rate limiter counts them. */
  numRequeues(item: T): number {
    return this.#rateLimiter.numRequeues(item);
  }

  /** {@link Queue.inspect}, with each listed item's failures as the rate limiter counts them. */
  override inspect(limit = 50): QueueSnapshot<T> & { requeues: { item: T; requeues: number }[] } {
    const snapshot = super.inspect(limit);
    const requeues: { item: T; requeues: number }[] = [];
    for (const item of [...snapshot.processing, ...snapshot.waiting.map((w) => w.item)]) {
      const count = this.#rateLimiter.numRequeues(item);
      if (count > 0) requeues.push({ item, requeues: count });
    }
    return { ...snapshot, requeues };
  }
}
