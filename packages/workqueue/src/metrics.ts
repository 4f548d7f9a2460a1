import type { Clock } from "./clock.js";

/** A gauge that moves by one (client-go's `GaugeMetric`). */
export interface GaugeMetric {
  inc(): void;
  dec(): void;
}

/** A gauge set to a value (client-go's `SettableGaugeMetric`). */
export interface SettableGaugeMetric {
  set(value: number): void;
}

/** A monotonically increasing counter (client-go's `CounterMetric`). */
export interface CounterMetric {
  inc(): void;
}

/** A summary of observed values (client-go's `SummaryMetric`). */
export interface SummaryMetric {
  observe(value: number): void;
}

/** A histogram of observed values, in seconds for durations (client-go's `HistogramMetric`). */
export interface HistogramMetric {
  observe(value: number): void;
}

/**
 * Creates the metrics of one named queue (client-go's `MetricsProvider`).
 * Each method is called once per queue, with the queue's name; an adapter maps
 * them to `workqueue_depth`, `workqueue_adds_total`,
 * `workqueue_queue_duration_seconds`, `workqueue_work_duration_seconds`,
 * `workqueue_unfinished_work_seconds`,
 * `workqueue_longest_running_processor_seconds` and `workqueue_retries_total`.
 */
export interface MetricsProvider {
  /** Items waiting in the queue: +1 per non-duplicate add, −1 per get. */
  newDepthMetric(name: string): GaugeMetric;
  /** Non-duplicate adds. */
  newAddsMetric(name: string): CounterMetric;
  /** Seconds from an item's first add to the get that hands it out. */
  newLatencyMetric(name: string): HistogramMetric;
  /** Seconds from get to done. */
  newWorkDurationMetric(name: string): HistogramMetric;
  /** Sum of the ages of the items being processed, in seconds, set every 500 ms. */
  newUnfinishedWorkSecondsMetric(name: string): SettableGaugeMetric;
  /** Age of the oldest item being processed, in seconds, set every 500 ms. */
  newLongestRunningProcessorSecondsMetric(name: string): SettableGaugeMetric;
  /** Accepted `addAfter` calls (delaying and rate-limiting queues). */
  newRetriesMetric(name: string): CounterMetric;
}

const noopMetric: GaugeMetric & SettableGaugeMetric & CounterMetric & HistogramMetric = {
  inc() {},
  dec() {},
  set() {},
  observe() {},
};

/** The default provider. A queue given it records nothing and pays nothing. */
export const noopMetricsProvider: MetricsProvider = Object.freeze({
  newDepthMetric: () => noopMetric,
  newAddsMetric: () => noopMetric,
  newLatencyMetric: () => noopMetric,
  newWorkDurationMetric: () => noopMetric,
  newUnfinishedWorkSecondsMetric: () => noopMetric,
  newLongestRunningProcessorSecondsMetric: () => noopMetric,
  newRetriesMetric: () => noopMetric,
});

/** How often the unfinished-work gauges are refreshed, as client-go does. */
export const unfinishedWorkUpdatePeriodMs = 500;

/**
 * The metrics of one named queue, with client-go's `defaultQueueMetrics`
 * semantics. Queues without a name, or with the no-op provider, have none
 * and skip every call.
 */
export class QueueMetrics<T> {
  readonly #clock: Clock;
  readonly #depth: GaugeMetric;
  readonly #adds: CounterMetric;
  readonly #latency: HistogramMetric;
  readonly #workDuration: HistogramMetric;
  readonly #unfinishedWorkSeconds: SettableGaugeMetric;
  readonly #longestRunningProcessor: SettableGaugeMetric;
  /** Time of the first add since the item was last handed out. */
  readonly #addTimes = new Map<T, number>();
  readonly #processingStartTimes = new Map<T, number>();

  constructor(name: string, provider: MetricsProvider, clock: Clock) {
    this.#clock = clock;
    this.#depth = provider.newDepthMetric(name);
    this.#adds = provider.newAddsMetric(name);
    this.#latency = provider.newLatencyMetric(name);
    this.#workDuration = provider.newWorkDurationMetric(name);
    this.#unfinishedWorkSeconds = provider.newUnfinishedWorkSecondsMetric(name);
    this.#longestRunningProcessor = provider.newLongestRunningProcessorSecondsMetric(name);
  }

  add(item: T): void {
    this.#adds.inc();
    this.#depth.inc();
    if (!this.#addTimes.has(item)) this.#addTimes.set(item, this.#clock.now());
  }

  get(item: T): void {
    const now = this.#clock.now();
    this.#depth.dec();
    this.#processingStartTimes.set(item, now);
    const addedAt = this.#addTimes.get(item);
    if (addedAt !== undefined) {
      this.#latency.observe(secondsBetween(addedAt, now));
      this.#addTimes.delete(item);
    }
  }

  done(item: T): void {
    const startedAt = this.#processingStartTimes.get(item);
    if (startedAt !== undefined) {
      this.#workDuration.observe(secondsBetween(startedAt, this.#clock.now()));
      this.#processingStartTimes.delete(item);
    }
  }

  updateUnfinishedWork(): void {
    const now = this.#clock.now();
    let total = 0;
    let oldest = 0;
    for (const startedAt of this.#processingStartTimes.values()) {
      const age = secondsBetween(startedAt, now);
      total += age;
      if (age > oldest) oldest = age;
    }
    this.#unfinishedWorkSeconds.set(total);
    this.#longestRunningProcessor.set(oldest);
  }
}

function secondsBetween(startMs: number, endMs: number): number {
  return (endMs - startMs) / 1000;
}

/** Validates a provider given in options, so a wrong object fails at construction, not on first add. */
export function checkMetricsProvider(provider: unknown, where: string): MetricsProvider {
  if (typeof provider !== "object" || provider === null) {
    throw new TypeError(
      `${where}: metricsProvider must be a MetricsProvider object, got ${String(provider)}`,
    );
  }
  for (const method of Object.keys(noopMetricsProvider)) {
    if (typeof (provider as Record<string, unknown>)[method] !== "function") {
      throw new TypeError(`${where}: metricsProvider has no ${method}() method`);
    }
  }
  return provider as MetricsProvider;
}
