import { FakeClock } from "@reconcile/clock";
import { CacheSyncTimeoutError } from "@reconcile/informer";
import { describe, expect, it, vi } from "vitest";
import { waitForInformersSynced } from "./cache-sync.js";

/** An informer whose sync the test triggers; `signal: false` leaves out `whenSynced` (a fake that must be polled). */
function informer(options: { signal?: boolean; lastError?: unknown } = {}) {
  let synced = false;
  let markSynced!: () => void;
  const done = new Promise<void>((resolve) => {
    markSynced = resolve;
  });
  return {
    hasSynced: () => synced,
    ...(options.signal === false ? {} : { whenSynced: () => done }),
    lastWatchError: () => options.lastError,
    sync() {
      synced = true;
      markSynced();
    },
  };
}

describe("waitForInformersSynced", () => {
  it("resolves true at once when every informer has synced", async () => {
    const a = informer();
    a.sync();
    const clock = new FakeClock();
    expect(
      await waitForInformersSynced({ informers: { a }, signal: new AbortController().signal, clock }),
    ).toBe(true);
    expect(clock.pendingTimers()).toEqual([]);
  });

  it("waits on the informers' synced signal with no timer, so a FakeClock nobody advances does not hang it", async () => {
    const clock = new FakeClock();
    const pods = informer();
    const sets = informer();
    const waiting = waitForInformersSynced({
      informers: { pods, sets },
      signal: new AbortController().signal,
      clock,
    });
    await Promise.resolve();
    expect(clock.pendingTimers()).toEqual([]);
    pods.sync();
    sets.sync();
    expect(await waiting).toBe(true);
  });

  it("arms only the timeout, and clears it once synced", async () => {
    const clock = new FakeClock();
    const pods = informer();
    const waiting = waitForInformersSynced({
      informers: { pods },
      signal: new AbortController().signal,
      clock,
      timeoutMs: 30_000,
    });
    await Promise.resolve();
    expect(clock.pendingTimers().map((timer) => timer.in)).toEqual([30_000]);
    pods.sync();
    expect(await waiting).toBe(true);
    expect(clock.pendingTimers()).toEqual([]);
  });

  it("rejects with a CacheSyncTimeoutError naming the informers not synced and their last error", async () => {
    const clock = new FakeClock();
    const pods = informer();
    const sets = informer({ lastError: new Error("replicasets.apps is forbidden") });
    pods.sync();
    const waiting = waitForInformersSynced({
      informers: { pods, "replicasets.apps": sets },
      signal: new AbortController().signal,
      clock,
      timeoutMs: 5000,
    }).catch((error: unknown) => error);
    await clock.advance(4999);
    await clock.advance(1);
    const error = await waiting;
    expect(error).toBeInstanceOf(CacheSyncTimeoutError);
    expect((error as Error).message).toBe(
      "caches did not sync within 5000ms: replicasets.apps (last error: replicasets.apps is forbidden)",
    );
    expect(clock.pendingTimers()).toEqual([]);
  });

  it("resolves false when the signal aborts, leaving no timer", async () => {
    const clock = new FakeClock();
    const abort = new AbortController();
    const waiting = waitForInformersSynced({
      informers: { pods: informer(), fake: informer({ signal: false }) },
      signal: abort.signal,
      clock,
      timeoutMs: 1000,
    });
    await clock.advance(300);
    abort.abort();
    expect(await waiting).toBe(false);
    expect(clock.pendingTimers()).toEqual([]);
    expect(
      await waitForInformersSynced({ informers: { pods: informer() }, signal: abort.signal, clock }),
    ).toBe(false);
  });

  it("polls an informer without whenSynced every pollIntervalMs on the real timers, so a FakeClock nobody advances does not hang it", async () => {
    vi.useFakeTimers();
    try {
      const clock = new FakeClock();
      const fake = informer({ signal: false });
      let settled = false;
      const waiting = waitForInformersSynced({
        informers: { fake },
        signal: new AbortController().signal,
        clock,
        pollIntervalMs: 50,
      }).then((result) => {
        settled = true;
        return result;
      });
      await vi.advanceTimersByTimeAsync(50);
      expect(settled).toBe(false);
      fake.sync();
      await vi.advanceTimersByTimeAsync(49);
      expect(settled).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(await waiting).toBe(true);
      expect(clock.pendingTimers()).toEqual([]);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it("rejects bad options with a message naming them", async () => {
    const signal = new AbortController().signal;
    await expect(waitForInformersSynced({ informers: {}, signal, timeoutMs: -1 })).rejects.toThrow(
      "waitForCacheSync: timeoutMs must be a finite non-negative number, got -1",
    );
    await expect(waitForInformersSynced({ informers: {}, signal, pollIntervalMs: 0 })).rejects.toThrow(
      "waitForCacheSync: pollIntervalMs must be a positive number, got 0",
    );
  });
});
