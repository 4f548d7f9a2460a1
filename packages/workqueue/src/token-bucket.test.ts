import { FakeClock } from "@reconcile/clock";
import { describe, expect, it } from "vitest";
import { TokenBucket } from "./token-bucket.js";

describe("TokenBucket", () => {
  it("starts full, then reserves into debt: each further token waits one more refill interval", () => {
    const clock = new FakeClock();
    const bucket = new TokenBucket({ qps: 10, burst: 2, clock });
    expect([bucket.reserve(), bucket.reserve()]).toEqual([0, 0]);
    expect(bucket.reserve()).toBeCloseTo(100, 9);
    expect(bucket.reserve()).toBeCloseTo(200, 9);
    clock.setTime(clock.now() + 300); // pays the debt of two and refills one
    expect(bucket.reserve()).toBe(0);
    expect(bucket.reserve()).toBeCloseTo(100, 9);
  });

  it("refills at qps up to burst, and never past it", () => {
    const clock = new FakeClock();
    const bucket = new TokenBucket({ qps: 2, burst: 3, clock });
    for (let i = 0; i < 3; i++) expect(bucket.tryTake()).toBe(true);
    expect(bucket.tryTake()).toBe(false);
    clock.setTime(clock.now() + 499);
    expect(bucket.tryTake()).toBe(false);
    clock.setTime(clock.now() + 1);
    expect(bucket.tryTake()).toBe(true);
    clock.setTime(clock.now() + 60_000);
    for (let i = 0; i < 3; i++) expect(bucket.tryTake()).toBe(true);
    expect(bucket.tryTake()).toBe(false);
  });

  it("tryTake never goes into debt, and a slow refill counts whole tokens despite float rounding", () => {
    const clock = new FakeClock();
    const bucket = new TokenBucket({ qps: 1 / 300, burst: 1, clock });
    expect(bucket.tryTake()).toBe(true);
    expect(bucket.tryTake()).toBe(false);
    expect(bucket.tryTake()).toBe(false);
    for (let i = 0; i < 3; i++) clock.setTime(clock.now() + 100_000);
    expect(bucket.tryTake()).toBe(true);
  });

  it("cancel gives a reservation back", () => {
    const clock = new FakeClock();
    const bucket = new TokenBucket({ qps: 1, burst: 1, clock });
    expect(bucket.reserve()).toBe(0);
    expect(bucket.reserve()).toBe(1000);
    bucket.cancel();
    expect(bucket.reserve()).toBe(1000);
  });

  it("with qps Infinity never limits", () => {
    const bucket = new TokenBucket({ qps: Number.POSITIVE_INFINITY, burst: 1, clock: new FakeClock() });
    for (let i = 0; i < 100; i++) expect(bucket.reserve()).toBe(0);
    expect(bucket.tryTake()).toBe(true);
  });

  it("time running backwards refills nothing", () => {
    const clock = new FakeClock(10_000);
    const bucket = new TokenBucket({ qps: 1, burst: 1, clock });
    expect(bucket.reserve()).toBe(0);
    clock.setTime(5_000);
    expect(bucket.reserve()).toBe(1000);
  });

  it("rejects a qps or burst it cannot use, naming it", () => {
    expect(() => new TokenBucket({ qps: 0, burst: 1 })).toThrow(
      "TokenBucket: qps must be a positive number (Infinity never limits), got 0",
    );
    expect(() => new TokenBucket({ qps: 1, burst: 0.5 })).toThrow(
      "TokenBucket: burst must be a finite number of at least 1, got 0.5",
    );
    expect(() => new TokenBucket({ qps: 1, burst: Number.POSITIVE_INFINITY })).toThrow(RangeError);
  });
});
