import { afterEach, describe, expect, it, vi } from "vitest";
import { realClock, sleepUnlessAborted } from "./clock.js";
import { FakeClock } from "./fake-clock.js";

describe("realClock", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("reads Date.now and setTimeout at call time, so vitest fake timers drive it", async () => {
    vi.useFakeTimers({ now: 5_000 });
    expect(realClock.now()).toBe(5_000);
    const fired: number[] = [];
    realClock.setTimeout(() => fired.push(realClock.now()), 100);
    const slept = realClock.sleep(200).then(() => fired.push(realClock.now()));
    await vi.advanceTimersByTimeAsync(200);
    await slept;
    expect(fired).toEqual([5_100, 5_200]);
  });

  it("clearTimeout cancels a pending timer", async () => {
    vi.useFakeTimers();
    let fired = false;
    const handle = realClock.setTimeout(() => {
      fired = true;
    }, 10);
    realClock.clearTimeout(handle);
    await vi.advanceTimersByTimeAsync(20);
    expect(fired).toBe(false);
  });

  it("a delay longer than the host's 2^31-1 ms timer limit waits its full time and can be cleared", async () => {
    vi.useFakeTimers({ now: 0 });
    const long = 2 ** 31 + 5_000;
    const fired: number[] = [];
    realClock.setTimeout(() => fired.push(realClock.now()), long);
    const cleared = realClock.setTimeout(() => fired.push(-1), long);
    await vi.advanceTimersByTimeAsync(2 ** 31 - 1);
    realClock.clearTimeout(cleared);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(fired).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(fired).toEqual([long]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("sleep rejects when its signal aborts", async () => {
    vi.useFakeTimers();
    const controller = new AbortController();
    const slept = realClock.sleep(1_000, { signal: controller.signal });
    controller.abort(new Error("cancelled"));
    await expect(slept).rejects.toThrow("cancelled");
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe("sleepUnlessAborted", () => {
  it("resolves true after the sleep, false at once when aborted before or during it, and never rejects", async () => {
    const clock = new FakeClock();
    const slept = sleepUnlessAborted(clock, 100, new AbortController().signal);
    await clock.advance(100);
    expect(await slept).toBe(true);
    const aborted = new AbortController();
    aborted.abort(new Error("stop"));
    expect(await sleepUnlessAborted(clock, 100, aborted.signal)).toBe(false);
    const during = new AbortController();
    const waiting = sleepUnlessAborted(clock, 100, during.signal);
    during.abort();
    expect(await waiting).toBe(false);
    expect(clock.pendingTimers()).toEqual([]);
  });
});
