import { type Clock, realClock } from "./clock.js";
import { Fifo } from "./fifo.js";
import type { GetResult, QueueInterface } from "./interfaces.js";
import { DIRTY, ItemState, PROCESSING, WAITING } from "./item-state.js";
import {
  checkMetricsProvider,
  type MetricsProvider,
  noopMetricsProvider,
  QueueMetrics,
  unfinishedWorkUpdatePeriodMs,
} from "./metrics.js";

// `get`'s result type is declared with the interfaces; exported here too, where it always was.
export type { GetResult };

/** Options of {@link Queue}. */
export interface QueueOptions {
  /**
   * The queue's name, used as the metrics label. Metrics are recorded only for
   * a named queue with a `metricsProvider`. Default: none (no metrics).
   */
  name?: string | undefined;
  /** Source of time for metrics (and delays, in subclasses). Default: `realClock`. */
  clock?: Clock | undefined;
  /** Creates the queue's metrics. Default: {@link noopMetricsProvider} (no metrics). */
  metricsProvider?: MetricsProvider | undefined;
}

const shutdownResult: GetResult<never> = Object.freeze({ item: undefined, shutdown: true });
const shutdownPromise: Promise<GetResult<never>> = Promise.resolve(shutdownResult);

/** What {@link Queue.inspect} returns: a point-in-time view of a queue. */
export interface QueueSnapshot<T> {
  /** Items waiting to be handed out (`len()`). */
  depth: number;
  /** Items handed out and not yet done (at most the limit). */
  processing: T[];
  /** How many items are being processed. */
  processingCount: number;
  /** Items being processed that were added again meanwhile (handed out again after `done`). */
  dirtyWhileProcessing: number;
  /** Items waiting until a time, the earliest due first (at most the limit); `readyAt` in the clock's ms. */
  waiting: { item: T; readyAt: number }[];
  /** How many items wait for a time. */
  waitingCount: number;
  shuttingDown: boolean;
}

/**
 * client-go's work queue: fair (items are handed out in the order they were
 * first added), stingy (an item added several times before it is handed out
 * is handed out once, and never to two workers at once: an item added while
 * it is processing is handed out again after `done`), for any number of
 * producers and async consumers.
 *
 * Items are compared as `Map` keys are (by value for strings and numbers, by
 * reference for objects), so use string keys such as `namespace/name`.
 */
export class Queue<T> implements QueueInterface<T> {
  /**
   * Every item that is dirty, processing or waiting (client-go's two sets and
   * the delaying queue's map in one): `add` and `done` cost one lookup each,
   * and `get` none, as the FIFO holds the records.
   */
  readonly #states = new Map<T, ItemState<T>>();
  /** Items waiting to be handed out, oldest first. Every one is DIRTY and not PROCESSING. */
  readonly #queue = new Fifo<ItemState<T>>();
  /** Consumers blocked in `get`. Only ever non-empty while the FIFO is empty. */
  readonly #waiters = new Fifo<(result: GetResult<T>) => void>();
  #processingCount = 0;
  #shuttingDown = false;
  /** Resolvers of pending `shutDownWithDrain` calls. */
  #drainWaiters: (() => void)[] = [];
  readonly #metrics: QueueMetrics<T> | undefined;
  #metricsTimer: unknown;
  readonly #clock: Clock;

  constructor(options: QueueOptions = {}) {
    const where = new.target.name;
    if (typeof options !== "object" || options === null) {
      throw new TypeError(`${where}: options must be an object, got ${String(options)}`);
    }
    const { name, clock = realClock, metricsProvider = noopMetricsProvider } = options;
    if (name !== undefined && typeof name !== "string") {
      throw new TypeError(`${where}: name must be a string, got ${typeof name}`);
    }
    this.#clock = clock;
    const provider = checkMetricsProvider(metricsProvider, where);
    if (name && provider !== noopMetricsProvider) {
      this.#metrics = new QueueMetrics(name, provider, clock);
      this.#armMetricsTimer();
    }
  }

  /** Marks `item` as needing processing. Ignored after shutdown, and while the item already waits. */
  add(item: T): void {
    if (this.#shuttingDown) return;
    let state = this.#states.get(item);
    if (state === undefined) {
      state = new ItemState(item);
      this.#states.set(item, state);
    }
    this.#markDirty(state);
  }

  /** Number of items waiting to be handed out (not those being processed). */
  len(): number {
    return this.#queue.length;
  }

  /**
   * Resolves with the next item as soon as there is one, marking it as
   * processing until {@link done}. After {@link shutDown} it keeps handing out
   * the items already queued, then resolves with `shutdown: true`.
   */
  get(): Promise<GetResult<T>> {
    const queue = this.#queue;
    if (queue.length > 0) {
      const state = queue.shift();
      state.flags = (state.flags & ~DIRTY) | PROCESSING;
      this.#processingCount++;
      this.#metrics?.get(state.item);
      return Promise.resolve(state);
    }
    if (this.#shuttingDown) return shutdownPromise;
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /**
   * Marks the processing of `item` finished. If it was added again meanwhile,
   * it goes back in the queue. Ignored for an item that is not processing.
   */
  done(item: T): void {
    const state = this.#states.get(item);
    if (state === undefined || (state.flags & PROCESSING) === 0) return;
    this.#metrics?.done(item);
    this.#processingCount--;
    const flags = state.flags & ~PROCESSING;
    if (flags & DIRTY) {
      if (this.#waiters.length > 0) {
        this.#handOut(state);
      } else {
        state.flags = flags;
        this.#queue.push(state);
      }
      return;
    }
    state.flags = flags;
    // A record still WAITING stays: the delaying queue will add the item when it is due.
    if (flags === 0) this.#states.delete(item);
    if (this.#processingCount === 0 && this.#drainWaiters.length > 0 && this.#queue.length === 0) {
      this.#releaseDrainWaiters();
    }
  }

  /**
   * Stops accepting new items. Consumers still receive the items already
   * queued, then `shutdown: true`. A pending {@link shutDownWithDrain} is released.
   */
  shutDown(): void {
    this.#stop();
    this.#releaseDrainWaiters();
  }

  /**
   * Like {@link shutDown}, then resolves once every queued item has been
   * handed out and every handed-out item is done. A later {@link shutDown}
   * resolves it at once (for a second interrupt). Consumers that never call
   * `done` keep it pending.
   */
  shutDownWithDrain(): Promise<void> {
    this.#stop();
    if (this.#processingCount === 0 && this.#queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.#drainWaiters.push(resolve));
  }

  /** Whether {@link shutDown} or {@link shutDownWithDrain} has been called. */
  shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  /**
   * What the queue holds now, for a debugging view: its depth, the items
   * being processed and the items waiting for a later time (at most `limit`
   * of each, the earliest due first). It walks every item the queue knows,
   * so it is for occasional reads, not for a hot path.
   */
  inspect(limit = 50): QueueSnapshot<T> {
    const processing: T[] = [];
    const waiting: { item: T; readyAt: number }[] = [];
    let processingCount = 0;
    let waitingCount = 0;
    let requeued = 0;
    for (const state of this.#states.values()) {
      const flags = state.flags;
      if (flags & PROCESSING) {
        processingCount++;
        if (flags & DIRTY) requeued++;
        if (processing.length < limit) processing.push(state.item);
      }
      if (flags & WAITING) {
        waitingCount++;
        waiting.push({ item: state.item, readyAt: state.readyAt });
      }
    }
    waiting.sort((a, b) => a.readyAt - b.readyAt);
    if (waiting.length > limit) waiting.length = limit;
    return {
      depth: this.#queue.length,
      processing,
      processingCount,
      dirtyWhileProcessing: requeued,
      waiting,
      waitingCount,
      shuttingDown: this.#shuttingDown,
    };
  }

  /**
   * Records that `item` should wait until `readyAt` (for the delaying queue).
   * Returns its record if that moved its ready time, or undefined when the
   * item already waits for an earlier (or the same) time, which it keeps, as
   * client-go's delaying queue does.
   */
  protected waitUntil(item: T, readyAt: number): ItemState<T> | undefined {
    let state = this.#states.get(item);
    if (state === undefined) {
      state = new ItemState(item);
      this.#states.set(item, state);
    } else if ((state.flags & WAITING) !== 0 && state.readyAt <= readyAt) {
      return undefined;
    }
    state.flags |= WAITING;
    state.readyAt = readyAt;
    return state;
  }

  /** Ends the wait of a record that {@link waitUntil} returned and adds its item. */
  protected waitEnded(state: ItemState<T>): void {
    state.flags &= ~WAITING;
    if (this.#shuttingDown) {
      if (state.flags === 0) this.#states.delete(state.item);
      return;
    }
    this.#markDirty(state);
  }

  /** Drops the wait of a record (at shutdown) without adding its item. */
  protected waitDropped(state: ItemState<T>): void {
    // Only a WAITING record is sure to be the item's current one: a stale node may point to an
    // older record whose item has a new record by now.
    if ((state.flags & WAITING) === 0) return;
    state.flags &= ~WAITING;
    if (state.flags === 0) this.#states.delete(state.item);
  }

  /** The add rule on an item's record: collapse if dirty, re-dirty if processing, else queue or hand out. */
  #markDirty(state: ItemState<T>): void {
    const flags = state.flags;
    if (flags & DIRTY) return;
    this.#metrics?.add(state.item);
    if (flags & PROCESSING) {
      // Added while processing: handed out again after done (client-go's dirty-while-processing rule).
      state.flags = flags | DIRTY;
    } else if (this.#waiters.length > 0) {
      // A blocked consumer means the FIFO is empty: handing the item over directly keeps FIFO order.
      this.#handOut(state);
    } else {
      state.flags = flags | DIRTY;
      this.#queue.push(state);
    }
  }

  #handOut(state: ItemState<T>): void {
    state.flags = (state.flags & ~DIRTY) | PROCESSING;
    this.#processingCount++;
    this.#metrics?.get(state.item);
    this.#waiters.shift()(state);
  }

  #stop(): void {
    if (this.#shuttingDown) return;
    this.#shuttingDown = true;
    if (this.#metricsTimer !== undefined) {
      this.#clock.clearTimeout(this.#metricsTimer);
      this.#metricsTimer = undefined;
    }
    // Waiters exist only while the FIFO is empty, so they all learn of the shutdown now.
    const waiters = this.#waiters;
    while (waiters.length > 0) waiters.shift()(shutdownResult);
  }

  #releaseDrainWaiters(): void {
    const drainWaiters = this.#drainWaiters;
    this.#drainWaiters = [];
    for (const resolve of drainWaiters) resolve();
  }

  #armMetricsTimer(): void {
    this.#metricsTimer = this.#clock.setTimeout(() => {
      if (this.#shuttingDown) return;
      this.#metrics?.updateUnfinishedWork();
      this.#armMetricsTimer();
    }, unfinishedWorkUpdatePeriodMs);
    // Metrics alone never keep the process alive (a queue built and never run, a program that is done).
    (this.#metricsTimer as { unref?: () => void } | undefined)?.unref?.();
  }
}
