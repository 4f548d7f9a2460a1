import { type Clock, realClock, type TimerHandle } from "@reconcile/clock";
import { Fifo } from "./fifo.js";
import {
  checkMetricsProvider,
  type MetricsProvider,
  noopMetricsProvider,
  QueueMetrics,
  unfinishedWorkUpdatePeriodMs,
} from "./metrics.js";

/** What {@link Queue.get} resolves to: the next item, or the news that the queue has shut down. */
export type GetResult<T> = { item: T; shutdown: false } | { item: undefined; shutdown: true };

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

/** Waiting to be handed out: in the FIFO, or (with PROCESSING) to go back in after `done`. */
const DIRTY = 1;
/** Handed out by `get`, not yet `done`. */
const PROCESSING = 2;

/**
 * What the queue knows about one item it holds. It doubles as the
 * `{ item, shutdown: false }` that `get` resolves with, so handing an item out
 * allocates no result object; its flags are private and invisible to callers.
 */
class ItemState<T> {
  readonly shutdown = false;
  /** DIRTY and/or PROCESSING. */
  #flags = DIRTY;

  constructor(readonly item: T) {}

  get flags(): number {
    return this.#flags;
  }

  set flags(flags: number) {
    this.#flags = flags;
  }
}

const shutdownResult: GetResult<never> = Object.freeze({ item: undefined, shutdown: true });
const shutdownPromise: Promise<GetResult<never>> = Promise.resolve(shutdownResult);

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
export class Queue<T> {
  /**
   * Every item that is dirty or processing (client-go's two sets in one map):
   * `add` and `done` cost one lookup each, and `get` none, as the FIFO holds the states.
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
  #metricsTimer: TimerHandle | undefined;
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
    const state = this.#states.get(item);
    if (state === undefined) {
      this.#metrics?.add(item);
      const added = new ItemState(item);
      this.#states.set(item, added);
      if (this.#waiters.length > 0) {
        // A blocked consumer means the FIFO is empty: handing the item over directly keeps FIFO order.
        this.#handOut(added);
      } else {
        this.#queue.push(added);
      }
    } else if (state.flags === PROCESSING) {
      // Added while processing: handed out again after done (client-go's dirty-while-processing rule).
      this.#metrics?.add(item);
      state.flags = PROCESSING | DIRTY;
    }
    // Otherwise it is already DIRTY: the adds collapse into one.
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
      state.flags = PROCESSING;
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
    if (state.flags === PROCESSING) {
      this.#states.delete(item);
      if (this.#processingCount === 0 && this.#drainWaiters.length > 0 && this.#queue.length === 0) {
        this.#releaseDrainWaiters();
      }
    } else if (this.#waiters.length > 0) {
      this.#handOut(state);
    } else {
      state.flags = DIRTY;
      this.#queue.push(state);
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

  #handOut(state: ItemState<T>): void {
    state.flags = PROCESSING;
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
  }
}
