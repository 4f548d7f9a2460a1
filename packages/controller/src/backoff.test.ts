import { FakeClock } from "@reconcile/clock";
import { describe, expect, it } from "vitest";
import { Backoff } from "./backoff.js";

describe("Backoff (flowcontrol.Backoff as the kubelet uses it)", () => {
  it("starts at the initial delay, doubles up to the maximum, and resets after twice the maximum untouched", async () => {
    const clock = new FakeClock(0);
    const backoff = new Backoff(clock, 10_000, 300_000);
    const ladder: number[] = [];
    for (let i = 0; i < 8; i++) {
      backoff.next("k", clock.now());
      ladder.push(backoff.get("k"));
      await clock.advance(1000);
    }
    expect(ladder).toEqual([10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000, 300_000]);
    await clock.advance(600_001);
    backoff.next("k", clock.now());
    expect(backoff.get("k")).toBe(10_000);
  });

  it("is in backoff since an event until its delay has passed", async () => {
    const clock = new FakeClock(0);
    const backoff = new Backoff(clock, 10_000, 300_000);
    expect(backoff.isInBackOffSince("k", 0)).toBe(false);
    backoff.next("k", 0);
    await clock.advance(9_999);
    expect(backoff.isInBackOffSince("k", 0)).toBe(true);
    await clock.advance(1);
    expect(backoff.isInBackOffSince("k", 0)).toBe(false);
  });
});
