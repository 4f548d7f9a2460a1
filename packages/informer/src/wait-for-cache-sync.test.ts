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
