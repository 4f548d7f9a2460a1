import { FakeClock } from "@reconcile/clock";
import { describe, expect, it } from "vitest";
import { TimedWorkerQueue } from "./timed-workers.js";

function setup() {
  const clock = new FakeClock(0);
  const fired: string[] = [];
  const queue = new TimedWorkerQueue({
    clock,
    work: async (key) => {
      fired.push(`${key}@${clock.now()}`);
    },
  });
  return { clock, fired, queue };
}

describe("TimedWorkerQueue (upstream timed_workers_test)", () => {
  it("runs work due now at once (TestExecute)", async () => {
    const { clock, fired, queue } = setup();
    for (const key of ["1", "2", "3", "4", "5"]) queue.addWork(key, 0, 0);
    // A second add of a taken key is ignored.
    queue.addWork("1", 0, 0);
    await clock.flush();
    expect(fired).toEqual(["1@0", "2@0", "3@0", "4@0", "5@0"]);
  });

  it("runs delayed work when it is due (TestExecuteDelayed)", async () => {
    const { clock, fired, queue } = setup();
    for (const key of ["1", "2", "3"]) queue.addWork(key, 0, 10_000);
    await clock.advance(9_999);
    expect(fired).toEqual([]);
    expect(queue.scheduledKeys()).toEqual(["1", "2", "3"]);
    await clock.advance(1);
    expect(fired).toEqual(["1@10000", "2@10000", "3@10000"]);
    expect(queue.scheduledKeys()).toEqual([]);
    // Done work keeps its key taken.
    expect(queue.getWorker("1")).toBeNull();
    queue.addWork("1", 10_000, 10_000);
    await clock.flush();
    expect(fired).toHaveLength(3);
  });

  it("cancelled work does not run (TestCancel)", async () => {
    const { clock, fired, queue } = setup();
    for (const key of ["1", "2", "3", "4", "5"]) queue.addWork(key, 0, 10_000);
    expect(queue.cancelWork("2")).toBe(true);
    expect(queue.cancelWork("4")).toBe(true);
    expect(queue.cancelWork("4")).toBe(false);
    await clock.advance(10_000);
    expect(fired).toEqual(["1@10000", "3@10000", "5@10000"]);
    // Cancelling work that already ran reports false, and frees the key.
    expect(queue.cancelWork("1")).toBe(false);
    expect(queue.getWorker("1")).toBeUndefined();
  });

  it("cancelled then re-added work runs at its new time (TestCancelAndReadd)", async () => {
    const { clock, fired, queue } = setup();
    queue.addWork("1", 0, 10_000);
    queue.cancelWork("1");
    queue.addWork("1", 0, 20_000);
    await clock.advance(20_000);
    expect(fired).toEqual(["1@20000"]);
  });

  it("failed work frees its key so it can be scheduled again", async () => {
    const clock = new FakeClock(0);
    let fail = true;
    const queue = new TimedWorkerQueue({
      clock,
      work: async () => {
        if (fail) throw new Error("boom");
      },
    });
    queue.addWork("1", 0, 0);
    await clock.flush();
    expect(queue.getWorker("1")).toBeUndefined();
    fail = false;
    queue.addWork("1", 0, 0);
    await clock.flush();
    expect(queue.getWorker("1")).toBeNull();
  });

  it("stop cancels pending work and leaves no timer", async () => {
    const { clock, fired, queue } = setup();
    queue.addWork("1", 0, 5_000);
    await queue.stop();
    expect(clock.pendingTimers()).toEqual([]);
    await clock.advance(5_000);
    expect(fired).toEqual([]);
  });
});
