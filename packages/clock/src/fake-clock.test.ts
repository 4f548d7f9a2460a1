import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { FakeClock } from "./fake-clock.js";

describe("FakeClock", () => {
  it("starts at the given time and moves only on advance", async () => {
    const clock = new FakeClock(1_000);
    expect(clock.now()).toBe(1_000);
    await clock.advance(250);
    expect(clock.now()).toBe(1_250);
  });

  it("fires due timers in time order, ties in the order they were set, each at its own time", async () => {
    const clock = new FakeClock();
    const fired: Array<[string, number]> = [];
    clock.setTimeout(() => fired.push(["c", clock.now()]), 30);
    clock.setTimeout(() => fired.push(["a", clock.now()]), 10);
    clock.setTimeout(() => fired.push(["b", clock.now()]), 10);
    clock.setTimeout(() => fired.push(["late", clock.now()]), 31);
    await clock.advance(30);
    expect(fired).toEqual([
      ["a", 10],
      ["b", 10],
      ["c", 30],
    ]);
    expect(clock.pendingTimers()).toEqual([{ at: 31, in: 1 }]);
  });

  it("lets promises settle between timers so re-armed timers inside the window fire", async () => {
    const clock = new FakeClock();
    const ticks: number[] = [];
    const loop = async () => {
      for (let i = 0; i < 3; i++) {
        await clock.sleep(100);
        ticks.push(clock.now());
      }
    };
    const done = loop();
    await clock.advance(300);
    await done;
    expect(ticks).toEqual([100, 200, 300]);
  });

  it("clearTimeout cancels a timer and ignores unknown handles", async () => {
    const clock = new FakeClock();
    let fired = false;
    const handle = clock.setTimeout(() => {
      fired = true;
    }, 5);
    clock.clearTimeout(handle);
    clock.clearTimeout("nope");
    await clock.advance(10);
    expect(fired).toBe(false);
    expect(clock.pendingTimers()).toEqual([]);
  });

  it("sleep rejects with the abort reason and clears its timer", async () => {
    const clock = new FakeClock();
    const controller = new AbortController();
    const sleeping = clock.sleep(1_000, { signal: controller.signal });
    expect(clock.pendingTimers()).toHaveLength(1);
    controller.abort(new Error("stop"));
    await expect(sleeping).rejects.toThrow("stop");
    expect(clock.pendingTimers()).toEqual([]);
  });

  it("sleeps on one signal share one abort listener: those still waiting reject on abort, those done stay done", async () => {
    const clock = new FakeClock();
    const controller = new AbortController();
    const outcomes: string[] = [];
    const sleeps = Array.from({ length: 50 }, (_, i) =>
      clock.sleep(i < 10 ? 100 : 1_000, { signal: controller.signal }).then(
        () => outcomes.push(`woke ${i}`),
        (error: Error) => outcomes.push(`${error.message} ${i}`),
      ),
    );
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(1);
    await clock.advance(100);
    expect(outcomes).toEqual(Array.from({ length: 10 }, (_, i) => `woke ${i}`));
    controller.abort(new Error("stop"));
    await Promise.all(sleeps);
    expect(outcomes.slice(10)).toEqual(Array.from({ length: 40 }, (_, i) => `stop ${i + 10}`));
    expect(clock.pendingTimers()).toEqual([]);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("sleep on an already-aborted signal rejects without arming a timer", async () => {
    const clock = new FakeClock();
    await expect(clock.sleep(10, { signal: AbortSignal.abort(new Error("gone")) })).rejects.toThrow("gone");
    expect(clock.pendingTimers()).toEqual([]);
  });

  it("rejects a negative advance", async () => {
    await expect(new FakeClock().advance(-1)).rejects.toThrow(/non-negative/);
  });
});
