import { FakeClock } from "@reconcile/clock";
import { describe, expect, it } from "vitest";
import { TokenBucketRateLimiter } from "./token-bucket.js";

describe("TokenBucketRateLimiter", () => {
  it("lets a burst through at once, then one call per 1/qps seconds", async () => {
    const clock = new FakeClock();
    const limiter = new TokenBucketRateLimiter({ qps: 5, burst: 2, clock });
    const passed: number[] = [];
    const calls = [0, 1, 2, 3].map((i) => limiter.wait().then(() => passed.push(i)));
    await clock.advance(0);
    expect(passed).toEqual([0, 1]);
    await clock.advance(199);
    expect(passed).toEqual([0, 1]);
    await clock.advance(1);
    expect(passed).toEqual([0, 1, 2]);
    await clock.advance(200);
    expect(passed).toEqual([0, 1, 2, 3]);
    await Promise.all(calls);
  });

  it("refills while idle but never beyond the burst", async () => {
    const clock = new FakeClock();
    const limiter = new TokenBucketRateLimiter({ qps: 10, burst: 3, clock });
    expect([limiter.tryAccept(), limiter.tryAccept(), limiter.tryAccept(), limiter.tryAccept()]).toEqual([
      true,
      true,
      true,
      false,
    ]);
    await clock.advance(10_000);
    expect([limiter.tryAccept(), limiter.tryAccept(), limiter.tryAccept(), limiter.tryAccept()]).toEqual([
      true,
      true,
      true,
      false,
    ]);
    await clock.advance(100);
    expect(limiter.tryAccept()).toBe(true);
  });

  it("an aborted wait rejects with the signal's reason and gives its token back", async () => {
    const clock = new FakeClock();
    const limiter = new TokenBucketRateLimiter({ qps: 1, burst: 1, clock });
    await limiter.wait();
    const controller = new AbortController();
    const waiting = limiter.wait(controller.signal);
    controller.abort(new Error("stop"));
    await expect(waiting).rejects.toThrow("stop");
    expect(clock.pendingTimers()).toEqual([]);
    await clock.advance(1000);
    expect(limiter.tryAccept()).toBe(true);
  });

  it("defaults to client-go's 5 QPS and burst 10; Infinity switches limiting off", () => {
    const limiter = new TokenBucketRateLimiter({ clock: new FakeClock() });
    expect([limiter.qps, limiter.burst]).toEqual([5, 10]);
    const unlimited = new TokenBucketRateLimiter({ qps: Number.POSITIVE_INFINITY, clock: new FakeClock() });
    for (let i = 0; i < 100; i++) expect(unlimited.tryAccept()).toBe(true);
  });

  it("rejects a non-positive qps or a burst below 1 by name", () => {
    expect(() => new TokenBucketRateLimiter({ qps: 0 })).toThrow("qps must be greater than 0");
    expect(() => new TokenBucketRateLimiter({ burst: 0 })).toThrow(
      "burst must be a finite number of at least 1",
    );
  });
});
