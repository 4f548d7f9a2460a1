import { type Clock, realClock } from "@reconcile/clock";
import { TokenBucket } from "@reconcile/workqueue";

/** One node waiting in a zone's tainting queue (upstream `TimedValue`). */
export interface TimedValue {
  /** The node's name. */
  value: string;
  /** The node's UID when it was queued. */
  uid: string;
  addedAt: number;
  /** Not handed out before this instant. */
  processAt: number;
}

/**
 * What {@link RateLimitedTimedQueue.try} does with a value: resolve `true`
 * when it is done (the value leaves the queue, but stays in its set, so it is
 * not queued again until removed), or `false` with a delay in ms after which
 * it is tried again.
 */
export type TimedValueAction = (value: TimedValue) => Promise<[done: boolean, retryAfterMs: number]>;

/** The burst of every zone's tainting limiter (upstream `EvictionRateLimiterBurst`). */
export const evictionRateLimiterBurst = 1;

/**
 * A zone's queue of nodes to taint, drained no faster than a token bucket
 * allows (upstream `RateLimitedTimedQueue` of the node lifecycle controller):
 * values are unique, handed out oldest `processAt` first, and a value that was
 * processed stays remembered until {@link remove}d, so a node is tainted once
 * per outage however often it is marked.
 */
export class RateLimitedTimedQueue {
  readonly #clock: Clock;
  /** Values still to process, ordered by processAt then insertion. */
  #queue: TimedValue[] = [];
  /** Every value added and not removed, processed or not. */
  readonly #set = new Set<string>();
  #limiter: TokenBucket | undefined;
  #qps: number;

  /** `qps` ≤ 0 never lets anything through. */
  constructor(options: { qps: number; clock?: Clock | undefined }) {
    this.#clock = options.clock ?? realClock;
    this.#qps = options.qps;
    this.#limiter = newLimiter(options.qps, this.#clock);
  }

  /** The limiter's current rate (tokens per second). */
  get qps(): number {
    return this.#qps;
  }

  /** Values added and not removed, in or out of the queue. */
  get size(): number {
    return this.#set.size;
  }

  /** Queues `value` to be processed now, unless it is already known; true when added. */
  add(value: string, uid: string): boolean {
    if (this.#set.has(value)) return false;
    const now = this.#clock.now();
    this.#set.add(value);
    this.#insert({ value, uid, addedAt: now, processAt: now });
    return true;
  }

  /** Forgets `value`, queued or already processed; true when it was known. */
  remove(value: string): boolean {
    if (!this.#set.delete(value)) return false;
    this.#queue = this.#queue.filter((v) => v.value !== value);
    return true;
  }

  /** Forgets everything. */
  clear(): void {
    this.#queue = [];
    this.#set.clear();
  }

  /** The values still waiting, soonest first (for tests and status pages). */
  pending(): readonly TimedValue[] {
    return this.#queue.map((v) => ({ ...v }));
  }

  /**
   * Processes due values while the limiter allows: each attempt takes a token
   * first — even when the head is not due yet, as upstream's `Try` does — so
   * at most `qps` values per second are handed to `action`. A value whose
   * action says not done is tried again `retryAfterMs` (+1 ms) later.
   */
  async try(action: TimedValueAction): Promise<void> {
    for (;;) {
      const head = this.#queue[0];
      if (head === undefined) return;
      if (this.#limiter === undefined || !this.#limiter.tryTake()) return;
      const now = this.#clock.now();
      if (now < head.processAt) return;
      const [done, retryAfterMs] = await action({ ...head });
      // The action may have removed or re-added the value meanwhile.
      const index = this.#queue.findIndex((v) => v.value === head.value);
      if (index < 0) continue;
      const [current] = this.#queue.splice(index, 1);
      if (!done && current !== undefined) this.#insert({ ...current, processAt: now + retryAfterMs + 1 });
    }
  }

  /**
   * Changes the rate (upstream `SwapLimiter`): ≤ 0 stops processing; with
   * burst 1, a limiter whose token is spent hands a spent one over, so a swap
   * never grants an extra value.
   */
  swapLimiter(qps: number): void {
    if (qps === this.#qps) return;
    const next = newLimiter(qps, this.#clock);
    if (next !== undefined && (this.#limiter === undefined || !this.#limiter.tryTake())) next.tryTake();
    this.#limiter = next;
    this.#qps = qps;
  }

  #insert(value: TimedValue): void {
    let index = this.#queue.length;
    while (index > 0 && (this.#queue[index - 1]?.processAt ?? 0) > value.processAt) index--;
    this.#queue.splice(index, 0, value);
  }
}

function newLimiter(qps: number, clock: Clock): TokenBucket | undefined {
  return qps > 0 ? new TokenBucket({ qps, burst: evictionRateLimiterBurst, clock }) : undefined;
}
