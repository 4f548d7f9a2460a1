import { FakeClock } from "@reconcile/clock";
import { describe, expect, it } from "vitest";
import { waitForCacheSync } from "./wait-for-cache-sync.js";

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

  it("polls every 100ms until every function reports synced", async () => {
    const clock = new FakeClock();
    let synced = false;
    let checks = 0;
    const result = waitForCacheSync({ signal: new AbortController().signal, clock }, () => {
      checks++;
      return synced;
    });
    await clock.advance(250);
    expect(checks).toBe(3);
    synced = true;
    await clock.advance(50);
    expect(await result).toBe(true);
    expect(checks).toBe(4);
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

  it("polls plain functions once the informers have synced", async () => {
    const clock = new FakeClock();
    const informer = fakeInformer();
    let functionSynced = false;
    const result = waitForCacheSync(
      { signal: new AbortController().signal, clock },
      informer,
      () => functionSynced,
    );
    informer.sync();
    await clock.flush();
    expect(clock.pendingTimers().map((timer) => timer.in)).toEqual([100]);
    functionSynced = true;
    await clock.advance(100);
    expect(await result).toBe(true);
  });
});
