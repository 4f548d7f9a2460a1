import { type Clock, realClock } from "./clock.js";
import type { DelayingInterface } from "./interfaces.js";
import { type ItemState, WAITING } from "./item-state.js";
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
export class DelayingQueue<T> extends Queue<T> implements DelayingInterface<T> {
  readonly #clock: Clock;
  readonly #waiting = new ReadyHeap<ItemState<T>>();
  #timer: unknown;
  /** When the armed timer fires; Infinity when none is armed. Never later than the earliest ready time. */
  #timerAt = Number.POSITIVE_INFINITY;
  readonly #retries: CounterMetric | undefined;
  readonly #onTimer = () => this.#fire();
  readonly #dropWait = (state: ItemState<T>) => this.waitDropped(state);

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
    const state = this.waitUntil(item, readyAt);
    if (state === undefined) return;
    // An earlier time leaves the item's previous node behind, stale; #fire skips it.
    this.#waiting.push(state, readyAt);
    // The timer is never armed later than the earliest ready time, so an earlier one makes this the head.
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
    while (waiting.length > 0) {
      const state = waiting.peek();
      const readyAt = waiting.peekTime();
      if ((state.flags & WAITING) === 0 || state.readyAt !== readyAt) {
        // Stale: the item moved to an earlier time, or that earlier node has fired already.
        waiting.pop();
        continue;
      }
      if (readyAt > now) {
        this.#arm(readyAt, now);
        return;
      }
      waiting.pop();
      this.waitEnded(state);
    }
  }

  #dropWaiting(): void {
    if (this.#timer !== undefined) {
      this.#clock.clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    this.#timerAt = Number.POSITIVE_INFINITY;
    this.#waiting.clear(this.#dropWait);
  }
}
