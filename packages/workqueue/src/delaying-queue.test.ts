import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { FakeClock } from "@reconcile/clock";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DelayingQueue } from "./delaying-queue.js";
import type { CounterMetric, MetricsProvider } from "./metrics.js";
import { noopMetricsProvider } from "./metrics.js";

async function takeAll<T>(queue: DelayingQueue<T>): Promise<T[]> {
  const items: T[] = [];
  while (queue.len() > 0) {
    const result = await queue.get();
    if (result.shutdown) break;
    items.push(result.item);
    queue.done(result.item);
  }
  return items;
}

function collectGarbage(): void {
  setFlagsFromString("--expose-gc");
  (runInNewContext("gc") as () => void)();
}

/** Lets every pending promise reaction run (a macrotask hop); WeakRef targets are kept until then. */
const settle = () => new FakeClock().flush();

describe("DelayingQueue", () => {
  it("adds an item once its delay has passed, and not before", async () => {
    const clock = new FakeClock();
    const queue = new DelayingQueue<string>({ clock });
    queue.addAfter("foo", 50);
    expect(queue.len()).toBe(0);
    await clock.advance(49);
    expect(queue.len()).toBe(0);
    await clock.advance(1);
    expect(queue.len()).toBe(1);
    expect(await takeAll(queue)).toEqual(["foo"]);
    await clock.advance(10_000);
    expect(queue.len()).toBe(0);
  });

  it.each([0, -5])("adds at once when the delay is %i ms", (ms) => {
    const clock = new FakeClock();
    const queue = new DelayingQueue<string>({ clock });
    queue.addAfter("foo", ms);
    expect(queue.len()).toBe(1);
    expect(clock.pendingTimers()).toEqual([]);
  });

  it("keeps the earlier ready time when a waiting item is added again", async () => {
    const clock = new FakeClock();
    const queue = new DelayingQueue<string>({ clock });
    queue.addAfter("foo", 50);
    queue.addAfter("foo", 70);
    await clock.advance(60);
    expect(await takeAll(queue)).toEqual(["foo"]);
    await clock.advance(20);
    expect(queue.len()).toBe(0);

    queue.addAfter("foo", 50);
    queue.addAfter("foo", 30);
    await clock.advance(30);
    expect(await takeAll(queue)).toEqual(["foo"]);
    await clock.advance(30);
    expect(queue.len()).toBe(0);
  });

  it("fires items in order of ready time, not of addAfter calls", async () => {
    const clock = new FakeClock();
    const queue = new DelayingQueue<string>({ clock });
    queue.addAfter("first", 1_000);
    queue.addAfter("second", 500);
    queue.addAfter("third", 250);
    await clock.advance(2_000);
    expect(await takeAll(queue)).toEqual(["third", "second", "first"]);
  });

  it("adds each item once, at the earliest time asked, in ready-time order, for any addAfter sequence", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 9 }), fc.integer({ min: 1, max: 40 })), {
          maxLength: 60,
        }),
        async (calls) => {
          const clock = new FakeClock();
          const queue = new DelayingQueue<string>({ clock });
          // The model: each item's earliest ready time, and the call that set it (ties fire in call order).
          const earliest = new Map<string, { readyAt: number; order: number }>();
          calls.forEach(([key, ms], order) => {
            const item = `item-${key}`;
            queue.addAfter(item, ms);
            const known = earliest.get(item);
            if (known === undefined || ms < known.readyAt) earliest.set(item, { readyAt: ms, order });
          });
          const fired: [string, number][] = [];
          for (let t = 1; t <= 40; t++) {
            await clock.advance(1);
            for (const item of await takeAll(queue)) fired.push([item, t]);
          }
          const expected = [...earliest]
            .sort(([, a], [, b]) => a.readyAt - b.readyAt || a.order - b.order)
            .map(([item, { readyAt }]): [string, number] => [item, readyAt]);
          expect(fired).toEqual(expected);
          expect(clock.pendingTimers()).toEqual([]);
        },
      ),
      { numRuns: 50 },
    );
  });

  it("an item waiting while it is processing is added when due and handed out after done", async () => {
    const clock = new FakeClock();
    const queue = new DelayingQueue<string>({ clock });
    queue.add("foo");
    await queue.get();
    queue.addAfter("foo", 10);
    queue.done("foo");
    expect(queue.len()).toBe(0);
    await clock.advance(10);
    expect(await takeAll(queue)).toEqual(["foo"]);
    await clock.advance(100);
    expect(queue.len()).toBe(0);
  });

  it("an item queued and waiting at once is handed out once now and once when due", async () => {
    const clock = new FakeClock();
    const queue = new DelayingQueue<string>({ clock });
    queue.addAfter("foo", 10);
    queue.add("foo");
    expect(await takeAll(queue)).toEqual(["foo"]);
    await clock.advance(10);
    expect(await takeAll(queue)).toEqual(["foo"]);
  });

  it("dropping waiting items at shutdown leaves an item's newer record alone", async () => {
    const clock = new FakeClock();
    const queue = new DelayingQueue<string>({ clock });
    queue.addAfter("x", 10);
    queue.addAfter("x", 5); // the node at 10 is now stale
    queue.addAfter("y", 7);
    await clock.advance(5);
    expect(await takeAll(queue)).toEqual(["x"]);
    // x is done and forgotten; it comes back and is processing, and changes again meanwhile.
    queue.add("x");
    expect(await queue.get()).toEqual({ item: "x", shutdown: false });
    queue.add("x");
    const drained = queue.shutDownWithDrain();
    queue.done("x");
    expect(await queue.get()).toEqual({ item: "x", shutdown: false });
    queue.done("x");
    await drained;
    expect(await queue.get()).toEqual({ item: undefined, shutdown: true });
  });

  it("fires items with equal ready times in the order they were added", async () => {
    const clock = new FakeClock();
    const queue = new DelayingQueue<string>({ clock });
    for (const key of ["c", "a", "d", "b"]) queue.addAfter(key, 10);
    await clock.advance(10);
    expect(await takeAll(queue)).toEqual(["c", "a", "d", "b"]);
  });

  it("fires the early item first and the later ones when their time comes", async () => {
    const clock = new FakeClock();
    const queue = new DelayingQueue<string>({ clock });
    queue.addAfter("foo", 1_000);
    queue.addAfter("bar", 50);
    await clock.advance(60);
    expect(await takeAll(queue)).toEqual(["bar"]);
    queue.addAfter("baz", 2_000);
    await clock.advance(1_000);
    expect(await takeAll(queue)).toEqual(["foo"]);
    await clock.advance(2_000);
    expect(await takeAll(queue)).toEqual(["baz"]);
  });

  it("keeps exactly one timer, armed for the earliest waiting item", async () => {
    const clock = new FakeClock();
    const queue = new DelayingQueue<string>({ clock });
    for (let i = 0; i < 100; i++) queue.addAfter(`ns/name-${i}`, 1_000 - i);
    expect(clock.pendingTimers()).toEqual([{ at: 901, in: 901 }]);
    queue.addAfter("ns/late", 5_000);
    expect(clock.pendingTimers()).toEqual([{ at: 901, in: 901 }]);
    await clock.advance(950);
    expect(queue.len()).toBe(50);
    expect(clock.pendingTimers()).toEqual([{ at: 951, in: 1 }]);
  });

  it("a fired item dedups against the same item already queued", async () => {
    const clock = new FakeClock();
    const queue = new DelayingQueue<string>({ clock });
    queue.add("foo");
    queue.addAfter("foo", 10);
    await clock.advance(10);
    expect(queue.len()).toBe(1);
  });

  it("a fired item that is processing is handed out again after done", async () => {
    const clock = new FakeClock();
    const queue = new DelayingQueue<string>({ clock });
    queue.add("foo");
    await queue.get();
    queue.addAfter("foo", 10);
    await clock.advance(10);
    expect(queue.len()).toBe(0);
    queue.done("foo");
    expect(await takeAll(queue)).toEqual(["foo"]);
  });

  it("wakes a blocked consumer when a delayed item becomes ready", async () => {
    const clock = new FakeClock();
    const queue = new DelayingQueue<string>({ clock });
    let got: string | undefined;
    const consumer = queue.get().then((result) => {
      got = result.item;
    });
    queue.addAfter("foo", 100);
    await clock.advance(99);
    expect(got).toBeUndefined();
    await clock.advance(1);
    await consumer;
    expect(got).toBe("foo");
  });

  it("arms very long delays in steps that the runtime's timers can hold", async () => {
    const clock = new FakeClock();
    const queue = new DelayingQueue<string>({ clock });
    const long = 3_000_000_000;
    queue.addAfter("foo", long);
    expect(clock.pendingTimers()).toEqual([{ at: 2_147_483_647, in: 2_147_483_647 }]);
    await clock.advance(2_147_483_647);
    expect(queue.len()).toBe(0);
    expect(clock.pendingTimers()).toEqual([{ at: long, in: long - 2_147_483_647 }]);
    await clock.advance(long - 2_147_483_647);
    expect(queue.len()).toBe(1);
  });

  it.each([
    Number.NaN,
    Number.POSITIVE_INFINITY,
    "10" as unknown as number,
  ])("rejects a delay of %s with an error naming it", (ms) => {
    const queue = new DelayingQueue<string>({ clock: new FakeClock() });
    expect(() => queue.addAfter("foo", ms)).toThrow(
      `DelayingQueue.addAfter: ms must be a finite number, got ${String(ms)}`,
    );
  });

  describe.each(["shutDown", "shutDownWithDrain"] as const)("%s", (shutDown) => {
    it("drops waiting items and clears the timer", async () => {
      const clock = new FakeClock();
      const queue = new DelayingQueue<string>({ clock });
      queue.addAfter("foo", 10);
      await queue[shutDown]();
      expect(clock.pendingTimers()).toEqual([]);
      await clock.advance(100);
      expect(queue.len()).toBe(0);
      expect(await queue.get()).toEqual({ item: undefined, shutdown: true });
    });

    it("ignores addAfter afterwards", async () => {
      const clock = new FakeClock();
      const queue = new DelayingQueue<string>({ clock });
      await queue[shutDown]();
      queue.addAfter("foo", 10);
      queue.addAfter("bar", 0);
      expect(clock.pendingTimers()).toEqual([]);
      expect(queue.len()).toBe(0);
    });
  });

  it("keeps no reference to an item once it has fired and is done, or was dropped at shutdown", async () => {
    const clock = new FakeClock();
    const queue = new DelayingQueue<object>({ clock });
    const waitFire = (ms: number) => {
      const item = { payload: new Array(1000).fill(0) };
      queue.addAfter(item, ms);
      queue.addAfter(item, ms / 2);
      return new WeakRef(item);
    };
    const fired = waitFire(10);
    const dropped = waitFire(1_000);
    await clock.advance(10);
    expect(await takeAll(queue)).toHaveLength(1);
    queue.shutDown();
    await settle();
    collectGarbage();
    expect(fired.deref()).toBeUndefined();
    expect(dropped.deref()).toBeUndefined();
  });

  it("counts every accepted addAfter as a retry on a named queue", async () => {
    const retries = { count: 0 };
    const counter: CounterMetric = { inc: () => retries.count++ };
    const provider: MetricsProvider = { ...noopMetricsProvider, newRetriesMetric: () => counter };
    const clock = new FakeClock();
    const queue = new DelayingQueue<string>({ name: "test", clock, metricsProvider: provider });
    queue.addAfter("a", 10);
    queue.addAfter("a", 5);
    queue.addAfter("b", 0);
    expect(retries.count).toBe(3);
    queue.shutDown();
    queue.addAfter("c", 10);
    expect(retries.count).toBe(3);

    const unnamed = new DelayingQueue<string>({ clock, metricsProvider: provider });
    unnamed.addAfter("a", 10);
    expect(retries.count).toBe(3);
    unnamed.shutDown();
  });
});
