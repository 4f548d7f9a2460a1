import { type Clock, realClock, type TimerHandle } from "@reconcile/clock";
import type { CounterMetric } from "./metrics.js";
import { noopMetricsProvider } from "./metrics.js";
import { Queue, type QueueOptions } from "./queue.js";
import { ReadyHeap } from "./ready-heap.js";

/** Node's timers overflow above 2^31 − 1 ms; longer waits are armed in steps. */
const maxTimerMs = 2_147_483_647;

/**
 * A {@link Queue} that can also add an item after a delay (client-go's
 * delaying queue). Waiting items sit in a heap ordered by ready time, with a
 * single timer armed for the earliest one; a waiting item added again keeps
 * its earlier ready time. Waiting items are dropped at shutdown.
 */
export class DelayingQueue<T> extends Queue<T> {
  readonly #clock: Clock;
  readonly #waiting = new ReadyHeap<T>();
  #timer: TimerHandle | undefined;
  /** When the armed timer fires; Infinity when none is armed. Never later than the heap's head. */
  #timerAt = Number.POSITIVE_INFINITY;
  readonly #retries: CounterMetric | undefined;
  readonly #onTimer = () => this.#fire();

  constructor(options: QueueOptions = {}) {
    super(options);
    this.#clock = options.clock ?? realClock;
    const { name, metricsProvider = noopMetricsProvider } = options;
    if (name && metricsProvider !== noopMetricsProvider)
      this.#retries = metricsProvider.newRetriesMetric(name);
  }

  /**
   * Adds `item` once `ms` milliseconds have passed; at once if `ms <= 0`.
   * Ignored after shutdown.
   */
  addAfter(item: T, ms: number): void {
    if (this.shuttingDown()) return;
    if (typeof ms !== "number" || Number.isNaN(ms) || ms === Number.POSITIVE_INFINITY) {
      throw new RangeError(
        `${this.constructor.name}.addAfter: ms must be a finite number, got ${String(ms)}`,
      );
    }
    this.#retries?.inc();
    if (ms <= 0) {
      this.add(item);
      return;
    }
    const now = this.#clock.now();
    const readyAt = now + ms;
    this.#waiting.insert(item, readyAt);
    // The timer is never armed later than the head, so an earlier time makes this item the new head.
    if (readyAt < this.#timerAt) this.#arm(readyAt, now);
  }

  override shutDown(): void {
    super.shutDown();
    this.#dropWaiting();
  }

  override shutDownWithDrain(): Promise<void> {
    const drained = super.shutDownWithDrain();
    this.#dropWaiting();
    return drained;
  }

  #arm(readyAt: number, now: number): void {
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    const delay = Math.min(readyAt - now, maxTimerMs);
    this.#timerAt = now + delay;
    this.#timer = this.#clock.setTimeout(this.#onTimer, delay);
  }

  /** Adds every item whose time has come (ready time <= now), then re-arms for the next. */
  #fire(): void {
    this.#timer = undefined;
    this.#timerAt = Number.POSITIVE_INFINITY;
    const waiting = this.#waiting;
    const now = this.#clock.now();
    for (;;) {
      const readyAt = waiting.nextReadyAt();
      if (readyAt === undefined) return;
      if (readyAt > now) {
        this.#arm(readyAt, now);
        return;
      }
      this.add(waiting.pop());
    }
  }

  #dropWaiting(): void {
    if (this.#timer !== undefined) {
      this.#clock.clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    this.#timerAt = Number.POSITIVE_INFINITY;
    this.#waiting.clear();
  }
}
