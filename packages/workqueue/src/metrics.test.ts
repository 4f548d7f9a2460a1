import { FakeClock } from "@reconcile/clock";
import { describe, expect, it } from "vitest";
import type { MetricsProvider } from "./metrics.js";
import { noopMetricsProvider } from "./metrics.js";
import { Queue } from "./queue.js";
import { RateLimitingQueue } from "./rate-limiting-queue.js";

/** A provider that records every metric of one queue, as client-go's testMetricsProvider does. */
function recordingProvider() {
  const gauge = () => ({
    value: 0,
    inc() {
      this.value++;
    },
    dec() {
      this.value--;
    },
  });
  const settable = () => ({
    value: 0,
    sets: 0,
    set(value: number) {
      this.value = value;
      this.sets++;
    },
  });
  const histogram = () => ({
    observations: [] as number[],
    observe(value: number) {
      this.observations.push(value);
    },
  });
  const names: string[] = [];
  const metrics = {
    depth: gauge(),
    adds: gauge(),
    latency: histogram(),
    workDuration: histogram(),
    unfinished: settable(),
    longest: settable(),
    retries: gauge(),
  };
  const provider: MetricsProvider = {
    newDepthMetric: (name) => {
      names.push(name);
      return metrics.depth;
    },
    newAddsMetric: () => metrics.adds,
    newLatencyMetric: () => metrics.latency,
    newWorkDurationMetric: () => metrics.workDuration,
    newUnfinishedWorkSecondsMetric: () => metrics.unfinished,
    newLongestRunningProcessorSecondsMetric: () => metrics.longest,
    newRetriesMetric: () => metrics.retries,
  };
  return { provider, metrics, names };
}

describe("queue metrics", () => {
  it("records depth, adds, queue latency and work duration as client-go does", async () => {
    const clock = new FakeClock();
    const { provider, metrics, names } = recordingProvider();
    const queue = new Queue<string>({ name: "test", clock, metricsProvider: provider });
    expect(names).toEqual(["test"]);

    queue.add("foo");
    expect(metrics.adds.value).toBe(1);
    expect(metrics.depth.value).toBe(1);

    await clock.advance(50);
    const { item } = await queue.get();
    expect(item).toBe("foo");
    expect(metrics.latency.observations).toEqual([0.05]);
    expect(metrics.depth.value).toBe(0);

    // Re-adds while processing: one counted add (the rest collapse), depth back to 1.
    for (let i = 0; i < 5; i++) queue.add("foo");
    expect(metrics.adds.value).toBe(2);
    expect(metrics.depth.value).toBe(1);

    await clock.advance(25);
    queue.done("foo");
    expect(metrics.workDuration.observations).toEqual([0.025]);
    expect(metrics.depth.value).toBe(1);

    await queue.get();
    // Latency runs from the first re-add (at 50 ms) to this get (at 75 ms).
    expect(metrics.latency.observations).toEqual([0.05, 0.025]);

    await clock.advance(1_000);
    queue.done("foo");
    expect(metrics.workDuration.observations).toEqual([0.025, 1]);
    queue.shutDown();
  });

  it("sets unfinished work and the longest running processor every 500 ms", async () => {
    const clock = new FakeClock();
    const { provider, metrics } = recordingProvider();
    const queue = new Queue<string>({ name: "test", clock, metricsProvider: provider });
    queue.add("a");
    queue.add("b");
    await queue.get();
    await clock.advance(200);
    await queue.get();
    await clock.advance(299);
    expect(metrics.unfinished.sets).toBe(0);
    await clock.advance(1);
    // a has run 0.5 s and b 0.3 s.
    expect(metrics.unfinished.value).toBeCloseTo(0.8, 12);
    expect(metrics.longest.value).toBe(0.5);
    queue.done("a");
    await clock.advance(500);
    expect(metrics.unfinished.value).toBe(0.8);
    expect(metrics.longest.value).toBe(0.8);
    expect(metrics.unfinished.sets).toBe(2);
    queue.shutDown();
  });

  it("stops updating after shutdown and leaves no timer behind", async () => {
    const clock = new FakeClock();
    const { provider, metrics } = recordingProvider();
    const queue = new Queue<string>({ name: "test", clock, metricsProvider: provider });
    queue.add("a");
    await queue.get();
    await clock.advance(500);
    expect(metrics.unfinished.sets).toBe(1);
    queue.shutDown();
    expect(clock.pendingTimers()).toEqual([]);
    await clock.advance(5_000);
    expect(metrics.unfinished.sets).toBe(1);
    expect(metrics.longest.sets).toBe(1);
  });

  it("records nothing and arms no timer for an unnamed queue or the no-op provider", async () => {
    const clock = new FakeClock();
    const { provider, metrics, names } = recordingProvider();
    const unnamed = new Queue<string>({ clock, metricsProvider: provider });
    const empty = new Queue<string>({ name: "", clock, metricsProvider: provider });
    const noop = new RateLimitingQueue<string>({ name: "noop", clock, metricsProvider: noopMetricsProvider });
    for (const queue of [unnamed, empty, noop]) {
      queue.add("a");
      await queue.get();
      queue.done("a");
    }
    noop.addAfter("b", 10);
    expect(names).toEqual([]);
    expect(metrics.adds.value).toBe(0);
    expect(clock.pendingTimers()).toEqual([{ at: 10, in: 10 }]);
    noop.shutDown();
  });

  it("counts retries of a named rate-limiting queue", async () => {
    const clock = new FakeClock();
    const { provider, metrics } = recordingProvider();
    const queue = new RateLimitingQueue<string>({ name: "test", clock, metricsProvider: provider });
    queue.addRateLimited("a");
    queue.addRateLimited("a");
    queue.addAfter("b", 0);
    expect(metrics.retries.value).toBe(3);
    queue.shutDown();
  });

  it("does not keep the process alive for its metrics alone (a queue built and never run)", () => {
    const { provider } = recordingProvider();
    const before = process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;
    const queue = new Queue<string>({ name: "idle", metricsProvider: provider });
    expect(process.getActiveResourcesInfo().filter((r) => r === "Timeout").length).toBe(before);
    queue.shutDown();
  });
});
