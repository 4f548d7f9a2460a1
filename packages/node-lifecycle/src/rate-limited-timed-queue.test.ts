import { FakeClock } from "@reconcile/clock";
import { describe, expect, it } from "vitest";
import { RateLimitedTimedQueue, type TimedValue } from "./rate-limited-timed-queue.js";

const always = Number.POSITIVE_INFINITY;
const values = (queue: RateLimitedTimedQueue) => queue.pending().map((v) => v.value);

describe("RateLimitedTimedQueue (upstream rate_limited_queue_test)", () => {
  it("adds values in order, each once (TestAddNode)", () => {
    const queue = new RateLimitedTimedQueue({ qps: always, clock: new FakeClock(1_000) });
    expect(queue.add("first", "11111")).toBe(true);
    expect(queue.add("second", "22222")).toBe(true);
    expect(queue.add("third", "33333")).toBe(true);
    expect(queue.add("first", "11111")).toBe(false);
    expect(values(queue)).toEqual(["first", "second", "third"]);
    expect(queue.size).toBe(3);
    expect(queue.pending()[0]).toEqual({ value: "first", uid: "11111", addedAt: 1_000, processAt: 1_000 });
  });

  it("removes values from the queue and the set (TestDelNode)", () => {
    const queue = new RateLimitedTimedQueue({ qps: always, clock: new FakeClock() });
    for (const v of ["first", "second", "third"]) queue.add(v, v);
    expect(queue.remove("first")).toBe(true);
    expect(values(queue)).toEqual(["second", "third"]);
    expect(queue.remove("second")).toBe(true);
    expect(values(queue)).toEqual(["third"]);
    expect(queue.remove("second")).toBe(false);
    expect(queue.size).toBe(1);
  });

  it("tries every due value (TestTry)", async () => {
    const queue = new RateLimitedTimedQueue({ qps: always, clock: new FakeClock() });
    for (const v of ["first", "second", "third"]) queue.add(v, v);
    queue.remove("second");
    const tried: string[] = [];
    await queue.try(async (value) => {
      tried.push(value.value);
      return [true, 0];
    });
    expect(tried).toEqual(["first", "third"]);
    expect(values(queue)).toEqual([]);
    // Processed values stay known: adding them again is refused until they are removed.
    expect(queue.add("first", "x")).toBe(false);
    expect(queue.remove("first")).toBe(true);
    expect(queue.add("first", "x")).toBe(true);
  });

  it("retries a value that is not done after its delay, behind the others (TestTryOrdering)", async () => {
    const clock = new FakeClock(0);
    const queue = new RateLimitedTimedQueue({ qps: always, clock });
    for (const v of ["first", "second", "third"]) queue.add(v, v);
    const order: string[] = [];
    let count = 0;
    let queued = false;
    const action = async (value: TimedValue): Promise<[boolean, number]> => {
      count++;
      if (!queued && value.value === "second") {
        queued = true;
        return [false, 1];
      }
      order.push(value.value);
      return [true, 0];
    };
    await queue.try(action);
    expect(order).toEqual(["first", "third"]);
    expect(count).toBe(3);
    expect(queue.pending()).toEqual([{ value: "second", uid: "second", addedAt: 0, processAt: 2 }]);
    await clock.advance(1);
    await queue.try(action);
    expect(order).toEqual(["first", "third"]);
    await clock.advance(1);
    await queue.try(action);
    expect(order).toEqual(["first", "third", "second"]);
  });

  it("copes with values removed while it tries (TestTryRemovingWhileTry)", async () => {
    const queue = new RateLimitedTimedQueue({ qps: always, clock: new FakeClock() });
    for (const v of ["first", "second", "third"]) queue.add(v, v);
    const tried: string[] = [];
    await queue.try(async (value) => {
      tried.push(value.value);
      if (value.value === "first") queue.remove("second");
      return [true, 0];
    });
    expect(tried).toEqual(["first", "third"]);
  });

  it("forgets everything on clear (TestClear)", () => {
    const queue = new RateLimitedTimedQueue({ qps: always, clock: new FakeClock() });
    for (const v of ["first", "second", "third"]) queue.add(v, v);
    queue.clear();
    expect(queue.size).toBe(0);
    expect(values(queue)).toEqual([]);
  });

  it("swaps its limiter only when the rate changes (TestSwapLimiter)", () => {
    const queue = new RateLimitedTimedQueue({ qps: always, clock: new FakeClock() });
    expect(queue.qps).toBe(always);
    queue.swapLimiter(0);
    expect(queue.qps).toBe(0);
    queue.swapLimiter(5.5);
    expect(queue.qps).toBe(5.5);
  });

  it("hands out one value per 1/qps seconds, burst 1", async () => {
    const clock = new FakeClock(0);
    const queue = new RateLimitedTimedQueue({ qps: 0.1, clock });
    for (const v of ["a", "b", "c"]) queue.add(v, v);
    const done: string[] = [];
    const action = async (value: TimedValue): Promise<[boolean, number]> => {
      done.push(`${value.value}@${clock.now()}`);
      return [true, 0];
    };
    await queue.try(action);
    expect(done).toEqual(["a@0"]);
    await clock.advance(9_999);
    await queue.try(action);
    expect(done).toEqual(["a@0"]);
    await clock.advance(1);
    await queue.try(action);
    expect(done).toEqual(["a@0", "b@10000"]);
    await clock.advance(10_000);
    await queue.try(action);
    expect(done).toEqual(["a@0", "b@10000", "c@20000"]);
  });

  it("a rate of 0 stops it; a new rate after a spent token does not grant an extra one", async () => {
    const clock = new FakeClock(0);
    const queue = new RateLimitedTimedQueue({ qps: 0.1, clock });
    const done: string[] = [];
    const action = async (value: TimedValue): Promise<[boolean, number]> => {
      done.push(value.value);
      return [true, 0];
    };
    queue.add("a", "a");
    await queue.try(action);
    queue.add("b", "b");
    queue.swapLimiter(0);
    await clock.advance(60_000);
    await queue.try(action);
    expect(done).toEqual(["a"]);
    queue.swapLimiter(0.01);
    await queue.try(action);
    expect(done).toEqual(["a"]);
    await clock.advance(100_000);
    await queue.try(action);
    expect(done).toEqual(["a", "b"]);
  });
});
