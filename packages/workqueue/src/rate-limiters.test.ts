import { FakeClock } from "@reconcile/clock";
import { describe, expect, it } from "vitest";
import {
  BucketRateLimiter,
  defaultControllerRateLimiter,
  ItemExponentialFailureRateLimiter,
  ItemFastSlowRateLimiter,
  MaxOfRateLimiter,
  type RateLimiter,
  WithMaxWaitRateLimiter,
} from "./rate-limiters.js";

const second = 1_000;
const minute = 60 * second;
const hour = 60 * minute;

/** Calls `when` n times for one item and returns the delays. */
function delays<T>(limiter: RateLimiter<T>, item: T, n: number): number[] {
  return Array.from({ length: n }, () => limiter.when(item));
}

/** A limiter that returns `base` for its first `threshold` calls overall, then `max` (client-go's test StepRateLimiter). */
function stepLimiter(base: number, max: number, threshold: number): RateLimiter<unknown> {
  let count = 0;
  return {
    when: () => (++count <= threshold ? base : max),
    forget: () => {},
    numRequeues: () => 0,
  };
}

describe("ItemExponentialFailureRateLimiter", () => {
  it("doubles the delay per failure of an item, independently per item, and forget starts over", () => {
    const limiter = new ItemExponentialFailureRateLimiter<string>({ baseDelayMs: 1, maxDelayMs: second });
    expect(delays(limiter, "one", 5)).toEqual([1, 2, 4, 8, 16]);
    expect(limiter.numRequeues("one")).toBe(5);
    expect(delays(limiter, "two", 2)).toEqual([1, 2]);
    expect(limiter.numRequeues("two")).toBe(2);
    limiter.forget("one");
    expect(limiter.numRequeues("one")).toBe(0);
    expect(limiter.when("one")).toBe(1);
  });

  it.each([
    { baseDelayMs: 1, maxDelayMs: 1_000 * second, warmup: 5, expected: 32 },
    { baseDelayMs: 1, maxDelayMs: 1_000 * second, warmup: 1_000, expected: 1_000 * second },
    { baseDelayMs: minute, maxDelayMs: 1_000 * hour, warmup: 2, expected: 4 * minute },
    { baseDelayMs: minute, maxDelayMs: 1_000 * hour, warmup: 1_000, expected: 1_000 * hour },
    { baseDelayMs: 5, maxDelayMs: 1_000 * second, warmup: 5_000, expected: 1_000 * second },
    { baseDelayMs: 0, maxDelayMs: 1_000 * second, warmup: 5_000, expected: 0 },
  ])("after $warmup failures from $baseDelayMs ms the next delay is $expected ms (no overflow)", ({
    baseDelayMs,
    maxDelayMs,
    warmup,
    expected,
  }) => {
    const limiter = new ItemExponentialFailureRateLimiter<string>({ baseDelayMs, maxDelayMs });
    delays(limiter, "item", warmup);
    expect(limiter.when("item")).toBe(expected);
  });

  it.each([
    [{ baseDelayMs: -1, maxDelayMs: 10 }, "baseDelayMs must be a finite number of ms >= 0, got -1"],
    [{ baseDelayMs: 1, maxDelayMs: Number.NaN }, "maxDelayMs must be a finite number of ms >= 0, got NaN"],
    [{ baseDelayMs: 1 } as never, "maxDelayMs must be a finite number of ms >= 0, got undefined"],
  ])("rejects %o", (options, message) => {
    expect(() => new ItemExponentialFailureRateLimiter(options)).toThrow(
      `ItemExponentialFailureRateLimiter: ${message}`,
    );
  });
});

describe("ItemFastSlowRateLimiter", () => {
  it("is fast for maxFastAttempts failures, then slow, per item", () => {
    const limiter = new ItemFastSlowRateLimiter<string>({
      fastDelayMs: 5,
      slowDelayMs: 10 * second,
      maxFastAttempts: 3,
    });
    expect(delays(limiter, "one", 5)).toEqual([5, 5, 5, 10 * second, 10 * second]);
    expect(limiter.numRequeues("one")).toBe(5);
    expect(delays(limiter, "two", 2)).toEqual([5, 5]);
    expect(limiter.numRequeues("two")).toBe(2);
    limiter.forget("one");
    expect(limiter.numRequeues("one")).toBe(0);
    expect(limiter.when("one")).toBe(5);
  });

  it("rejects a fractional maxFastAttempts", () => {
    expect(
      () => new ItemFastSlowRateLimiter({ fastDelayMs: 1, slowDelayMs: 2, maxFastAttempts: 1.5 }),
    ).toThrow("ItemFastSlowRateLimiter: maxFastAttempts must be a non-negative integer, got 1.5");
  });
});

describe("the option names before …Ms (deprecated, still read)", () => {
  it("reads baseDelay/maxDelay, fastDelay/slowDelay and maxDelay as the …Ms options", () => {
    const exponential = new ItemExponentialFailureRateLimiter<string>({ baseDelay: 2, maxDelay: 5 });
    expect(delays(exponential, "a", 3)).toEqual([2, 4, 5]);
    const fastSlow = new ItemFastSlowRateLimiter<string>({ fastDelay: 1, slowDelay: 9, maxFastAttempts: 1 });
    expect(delays(fastSlow, "a", 2)).toEqual([1, 9]);
    const capped = new WithMaxWaitRateLimiter<string>({ limiter: exponential, maxDelay: 3 });
    expect(capped.when("b")).toBe(2);
    expect(capped.when("b")).toBe(3);
  });

  it("names the old option in its error, and prefers the new name when both are given", () => {
    expect(() => new ItemExponentialFailureRateLimiter({ baseDelay: -1, maxDelay: 1 })).toThrow(
      "ItemExponentialFailureRateLimiter: baseDelay must be a finite number of ms >= 0, got -1",
    );
    const both = { baseDelayMs: 3, baseDelay: 100, maxDelayMs: 10 } as never;
    expect(new ItemExponentialFailureRateLimiter<string>(both).when("a")).toBe(3);
  });
});

describe("MaxOfRateLimiter", () => {
  it("returns the longest delay, counts the most requeues and forgets in every limiter", () => {
    const limiter = new MaxOfRateLimiter<string>({
      limiters: [
        new ItemFastSlowRateLimiter({ fastDelayMs: 5, slowDelayMs: 3 * second, maxFastAttempts: 3 }),
        new ItemExponentialFailureRateLimiter({ baseDelayMs: 1, maxDelayMs: second }),
      ],
    });
    expect(delays(limiter, "one", 5)).toEqual([5, 5, 5, 3 * second, 3 * second]);
    expect(limiter.numRequeues("one")).toBe(5);
    expect(delays(limiter, "two", 2)).toEqual([5, 5]);
    expect(limiter.numRequeues("two")).toBe(2);
    limiter.forget("one");
    expect(limiter.numRequeues("one")).toBe(0);
    expect(limiter.when("one")).toBe(5);
  });

  it("rejects an empty list and a limiter without when()", () => {
    expect(() => new MaxOfRateLimiter({ limiters: [] })).toThrow(
      "MaxOfRateLimiter: limiters must be a non-empty array of rate limiters",
    );
    expect(() => new MaxOfRateLimiter({ limiters: [{} as never] })).toThrow(
      "MaxOfRateLimiter: limiters[0] must be a RateLimiter (when, forget, numRequeues)",
    );
  });
});

describe("WithMaxWaitRateLimiter", () => {
  it("caps the wrapped limiter's delays", () => {
    const limiter = new WithMaxWaitRateLimiter<unknown>({
      limiter: stepLimiter(5, 1_000 * second, 100),
      maxDelayMs: 500 * second,
    });
    for (let i = 0; i < 100; i++) expect(limiter.when(i)).toBe(5);
    for (let i = 100; i < 200; i++) expect(limiter.when(i)).toBe(500 * second);
  });

  it("forwards forget and numRequeues", () => {
    const inner = new ItemExponentialFailureRateLimiter<string>({ baseDelayMs: 1, maxDelayMs: second });
    const limiter = new WithMaxWaitRateLimiter({ limiter: inner, maxDelayMs: 3 });
    expect(delays(limiter, "a", 4)).toEqual([1, 2, 3, 3]);
    expect(limiter.numRequeues("a")).toBe(4);
    limiter.forget("a");
    expect(inner.numRequeues("a")).toBe(0);
  });
});

describe("BucketRateLimiter", () => {
  it("lets a burst through, then spaces calls 1/qps apart, each call reserving a token", () => {
    const clock = new FakeClock();
    const limiter = new BucketRateLimiter<string>({ qps: 10, burst: 100, clock });
    for (let i = 0; i < 100; i++) expect(limiter.when(`item-${i}`)).toBe(0);
    expect(delays(limiter, "more", 3)).toEqual([100, 200, 300]);
    expect(limiter.numRequeues("more")).toBe(0);
  });

  it("refills at qps tokens per second, up to the burst", async () => {
    const clock = new FakeClock();
    const limiter = new BucketRateLimiter<string>({ qps: 10, burst: 2, clock });
    expect(delays(limiter, "x", 3)).toEqual([0, 0, 100]);
    // 300 ms refill 3 tokens, paying the one owed and leaving 2 (the burst).
    await clock.advance(300);
    expect(delays(limiter, "x", 3)).toEqual([0, 0, 100]);
    // A long pause refills only up to the burst.
    await clock.advance(60 * second);
    expect(delays(limiter, "x", 4)).toEqual([0, 0, 100, 200]);
  });

  it("refills nothing when time runs backwards, and counts on from the earlier time", async () => {
    const clock = new FakeClock(10_000);
    const limiter = new BucketRateLimiter<string>({ qps: 10, burst: 1, clock });
    expect(limiter.when("x")).toBe(0);
    clock.setTime(5_000);
    expect(limiter.when("x")).toBe(100);
    clock.setTime(5_200);
    // 200 ms since the earlier time refill 2 tokens: the one owed, and one to spend.
    expect(limiter.when("x")).toBe(0);
  });

  it("forget is a no-op", () => {
    const limiter = new BucketRateLimiter<string>({ qps: 1, burst: 1, clock: new FakeClock() });
    limiter.when("a");
    limiter.forget("a");
    expect(limiter.when("a")).toBe(1_000);
  });

  it("never delays at an infinite rate", () => {
    const limiter = new BucketRateLimiter<string>({ qps: Number.POSITIVE_INFINITY, burst: 1 });
    expect(delays(limiter, "a", 5)).toEqual([0, 0, 0, 0, 0]);
  });

  it.each([
    [{ qps: 0, burst: 1 }, "qps must be a positive number, got 0"],
    [{ qps: 10, burst: 0 }, "burst must be a positive integer, got 0"],
    [{ qps: 10, burst: 2.5 }, "burst must be a positive integer, got 2.5"],
  ])("rejects %o", (options, message) => {
    expect(() => new BucketRateLimiter(options)).toThrow(`BucketRateLimiter: ${message}`);
  });
});

describe("defaultControllerRateLimiter", () => {
  it("backs an item off from 5 ms, doubling, to 1000 s from the 19th failure on", () => {
    const limiter = defaultControllerRateLimiter<string>({ clock: new FakeClock() });
    expect(delays(limiter, "item", 21)).toEqual([
      5, 10, 20, 40, 80, 160, 320, 640, 1_280, 2_560, 5_120, 10_240, 20_480, 40_960, 81_920, 163_840, 327_680,
      655_360, 1_000_000, 1_000_000, 1_000_000,
    ]);
    expect(limiter.numRequeues("item")).toBe(21);
    limiter.forget("item");
    expect(limiter.numRequeues("item")).toBe(0);
  });

  it("starts the per-item backoff at baseDelayMs (the certificate controllers' 200 ms)", () => {
    const limiter = defaultControllerRateLimiter<string>({ clock: new FakeClock(), baseDelayMs: 200 });
    expect(delays(limiter, "item", 4)).toEqual([200, 400, 800, 1_600]);
  });

  it("delays distinct items by the overall bucket once 100 have gone through", () => {
    const limiter = defaultControllerRateLimiter<string>({ clock: new FakeClock() });
    for (let i = 0; i < 100; i++) expect(limiter.when(`item-${i}`)).toBe(5);
    expect(limiter.when("item-100")).toBe(100);
    expect(limiter.when("item-101")).toBe(200);
  });
});
