import { FakeClock, realClock as sharedRealClock } from "@reconcile/clock";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type Clock, realClock } from "./clock.js";

describe("Clock", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("accepts @reconcile/clock's clocks as they are", () => {
    const clocks: Clock[] = [sharedRealClock, new FakeClock()];
    expect(clocks).toHaveLength(2);
  });

  it("realClock reads Date.now and setTimeout at call time, so fake timers drive it", () => {
    vi.useFakeTimers({ now: 1_000 });
    expect(realClock.now()).toBe(1_000);
    const fired: number[] = [];
    const handle = realClock.setTimeout(() => fired.push(realClock.now()), 50);
    realClock.setTimeout(() => fired.push(-1), 10);
    vi.advanceTimersByTime(60);
    expect(fired).toEqual([-1, 1_050]);
    realClock.clearTimeout(handle);
    const cancelled = realClock.setTimeout(() => fired.push(0), 5);
    realClock.clearTimeout(cancelled);
    vi.advanceTimersByTime(10);
    expect(fired).toEqual([-1, 1_050]);
  });
});
