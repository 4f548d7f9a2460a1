import { FakeClock, realClock as sharedRealClock } from "@reconcile/clock";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type Clock, realClock } from "./clock.js";
import { DelayingQueue } from "./delaying-queue.js";

describe("Clock", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("accepts @reconcile/clock's clocks as they are: a FakeClock drives a delaying queue", async () => {
    const shared: Clock = sharedRealClock;
    expect(typeof shared.now()).toBe("number");
    const clock = new FakeClock();
    const queue = new DelayingQueue<string>({ clock });
    queue.addAfter("ns/a", 100);
    await clock.advance(99);
    expect(queue.len()).toBe(0);
    await clock.advance(1);
    expect(queue.len()).toBe(1);
    queue.shutDown();
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
