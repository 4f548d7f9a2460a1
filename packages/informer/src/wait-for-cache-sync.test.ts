import { FakeClock } from "@reconcile/clock";
import { describe, expect, it, vi } from "vitest";
import { CacheSyncTimeoutError, waitForCacheSync, waitForNamedCacheSync } from "./wait-for-cache-sync.js";

describe("waitForCacheSync", () => {
  it("resolves true at once when everything has synced", async () => {
    expect(
      await waitForCacheSync(
        new AbortController().signal,
        () => true,
        () => true,
      ),
    ).toBe(true);
  });

  it("polls every 100ms on the real timers until every function reports synced, whatever the clock", async () => {
    vi.useFakeTimers();
    try {
      const clock = new FakeClock();
      let synced = false;
      let checks = 0;
      const result = waitForCacheSync({ signal: new AbortController().signal, clock }, () => {
        checks++;
        return synced;
      });
      await vi.advanceTimersByTimeAsync(250);
      expect(checks).toBe(4); // twice at once (all synced already? then the poll's first check), then at 100 and 200
      synced = true;
      await vi.advanceTimersByTimeAsync(50);
      expect(await result).toBe(true);
      expect(checks).toBe(5);
      expect(clock.pendingTimers()).toEqual([]);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it("does not hang on a FakeClock nobody advances (the function turns true on a real tick)", async () => {
    const clock = new FakeClock();
    let synced = false;
    setTimeout(() => {
      synced = true;
    }, 5);
    expect(
      await waitForCacheSync(
        { signal: new AbortController().signal, clock, pollIntervalMs: 10 },
        () => synced,
      ),
    ).toBe(true);
    expect(clock.pendingTimers()).toEqual([]);
  });

  it("resolves false when the signal aborts", async () => {
    const clock = new FakeClock();
    const controller = new AbortController();
    const result = waitForCacheSync({ signal: controller.signal, clock }, () => false);
    await clock.advance(1000);
    controller.abort();
    expect(await result).toBe(false);
    expect(clock.pendingTimers()).toEqual([]);
  });

  it("resolves false after the timeout", async () => {
    const clock = new FakeClock();
    let settled: boolean | undefined;
    void waitForCacheSync({ signal: new AbortController().signal, clock, timeoutMs: 1000 }, () => false).then(
      (value) => (settled = value),
    );
    await clock.advance(999);
    expect(settled).toBeUndefined();
    await clock.advance(1);
    expect(settled).toBe(false);
  });
});

describe("waitForCacheSync on informers", () => {
  function fakeInformer() {
    let synced = false;
    let markSynced!: () => void;
    const whenSynced = new Promise<void>((resolve) => {
      markSynced = resolve;
    });
    return {
      hasSynced: () => synced,
      whenSynced: () => whenSynced,
      sync() {
        synced = true;
        markSynced();
      },
    };
  }

  it("waits on whenSynced without a timer, so a clock nobody advances does not hold it up", async () => {
    const clock = new FakeClock();
    const informer = fakeInformer();
    const result = waitForCacheSync({ signal: new AbortController().signal, clock }, informer);
    await Promise.resolve();
    expect(clock.pendingTimers()).toEqual([]);
    informer.sync();
    expect(await result).toBe(true);
  });

  it("arms only the deadline, and clears it once the informers sync", async () => {
    const clock = new FakeClock();
    const informer = fakeInformer();
    const result = waitForCacheSync(
      { signal: new AbortController().signal, clock, timeoutMs: 5000 },
      informer,
    );
    await Promise.resolve();
    expect(clock.pendingTimers().map((timer) => timer.in)).toEqual([5000]);
    informer.sync();
    expect(await result).toBe(true);
    expect(clock.pendingTimers()).toEqual([]);
  });

  it("resolves false at the deadline or on abort while an informer has not synced", async () => {
    const clock = new FakeClock();
    const late = waitForCacheSync(
      { signal: new AbortController().signal, clock, timeoutMs: 1000 },
      fakeInformer(),
    );
    await clock.advance(1000);
    expect(await late).toBe(false);
    const controller = new AbortController();
    const aborted = waitForCacheSync({ signal: controller.signal, clock }, fakeInformer());
    controller.abort();
    expect(await aborted).toBe(false);
    expect(clock.pendingTimers()).toEqual([]);
  });

  it("waits for informers and plain functions together", async () => {
    vi.useFakeTimers();
    try {
      const clock = new FakeClock();
      const informer = fakeInformer();
      let functionSynced = false;
      let settled = false;
      const result = waitForCacheSync(
        { signal: new AbortController().signal, clock },
        informer,
        () => functionSynced,
      ).then((value) => {
        settled = true;
        return value;
      });
      functionSynced = true;
      await vi.advanceTimersByTimeAsync(100);
      expect(settled).toBe(false);
      informer.sync();
      expect(await result).toBe(true);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("waitForNamedCacheSync", () => {
  it("rejects with a CacheSyncTimeoutError naming what did not sync and its last watch error", async () => {
    const clock = new FakeClock();
    const pods = { hasSynced: () => true };
    const nodes = {
      hasSynced: () => false,
      whenSynced: () => new Promise<void>(() => {}),
      lastWatchError: () => new Error("nodes is forbidden"),
    };
    const waiting = waitForNamedCacheSync({
      informers: { pods, nodes, leases: () => false },
      signal: new AbortController().signal,
      clock,
      timeoutMs: 2000,
    }).catch((error: unknown) => error);
    await clock.advance(2000);
    const error = await waiting;
    expect(CacheSyncTimeoutError.isInstance(error)).toBe(true);
    expect((error as CacheSyncTimeoutError).code).toBe("informer.cache-sync-timeout");
    expect((error as Error).message).toBe(
      "caches did not sync within 2000ms: nodes (last error: nodes is forbidden), leases",
    );
    expect(clock.pendingTimers()).toEqual([]);
  });

  it("rejects options it cannot use, naming them", async () => {
    const signal = new AbortController().signal;
    await expect(waitForNamedCacheSync({ informers: {}, signal, timeoutMs: Number.NaN })).rejects.toThrow(
      "waitForCacheSync: timeoutMs must be a finite non-negative number, got NaN",
    );
    await expect(waitForCacheSync({ signal, pollIntervalMs: -5 })).rejects.toThrow(
      "waitForCacheSync: pollIntervalMs must be a positive number, got -5",
    );
  });
});
