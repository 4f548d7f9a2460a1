import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { FakeClock } from "@reconcile/clock";
import { describe, expect, it } from "vitest";
import { type GetResult, Queue } from "./queue.js";

/** Lets every pending promise reaction run (a macrotask hop). */
const settle = () => new FakeClock().flush();

/** Starts a get and records when it settles. */
function track<T>(promise: Promise<GetResult<T>>) {
  const tracked: { result: GetResult<T> | undefined } = { result: undefined };
  void promise.then((result) => {
    tracked.result = result;
  });
  return tracked;
}

/** Adds a fresh object, gets it and marks it done; returns a weak reference to it. */
async function addGetDone(queue: Queue<object>): Promise<WeakRef<object>> {
  const item = { payload: new Array(1000).fill(0) };
  queue.add(item);
  const result = await queue.get();
  queue.done(result.item!);
  return new WeakRef(item);
}

function collectGarbage(): void {
  setFlagsFromString("--expose-gc");
  (runInNewContext("gc") as () => void)();
}

async function drainItems<T>(queue: Queue<T>): Promise<T[]> {
  const items: T[] = [];
  while (queue.len() > 0) {
    const result = await queue.get();
    if (result.shutdown) break;
    items.push(result.item);
    queue.done(result.item);
  }
  return items;
}

describe("Queue", () => {
  it("hands items out in the order they were first added", async () => {
    const queue = new Queue<string>();
    for (const key of ["ns/c", "ns/a", "ns/b", "ns/a", "ns/c"]) queue.add(key);
    expect(await drainItems(queue)).toEqual(["ns/c", "ns/a", "ns/b"]);
  });

  it("collapses adds of a waiting item into one", async () => {
    const queue = new Queue<string>();
    queue.add("foo");
    expect(queue.len()).toBe(1);
    queue.add("bar");
    expect(queue.len()).toBe(2);
    queue.add("foo");
    expect(queue.len()).toBe(2);
    expect(await drainItems(queue)).toEqual(["foo", "bar"]);
    expect(queue.len()).toBe(0);
  });

  it("re-adding a key while it is processing hands it out again after done", async () => {
    const queue = new Queue<string>();
    queue.add("foo");
    expect(await queue.get()).toEqual({ item: "foo", shutdown: false });
    queue.add("foo");
    // Not handed out while processing: never two workers on one item.
    expect(queue.len()).toBe(0);
    const second = track(queue.get());
    await settle();
    expect(second.result).toBeUndefined();
    queue.done("foo");
    await settle();
    expect(second.result).toEqual({ item: "foo", shutdown: false });
    queue.done("foo");
    expect(queue.len()).toBe(0);
  });

  it("re-adds while processing collapse into one more hand-out", async () => {
    const queue = new Queue<string>();
    queue.add("foo");
    await queue.get();
    queue.add("foo");
    queue.add("foo");
    queue.add("foo");
    queue.done("foo");
    expect(queue.len()).toBe(1);
    expect(await queue.get()).toEqual({ item: "foo", shutdown: false });
    queue.done("foo");
    expect(queue.len()).toBe(0);
  });

  it("an item re-queued by done goes behind the items added meanwhile", async () => {
    const queue = new Queue<string>();
    queue.add("a");
    await queue.get();
    queue.add("a");
    queue.add("b");
    queue.done("a");
    expect(await drainItems(queue)).toEqual(["b", "a"]);
  });

  it("len counts waiting items only, not the ones processing", async () => {
    const queue = new Queue<string>();
    queue.add("a");
    queue.add("b");
    await queue.get();
    expect(queue.len()).toBe(1);
  });

  it("get blocks until an item is added", async () => {
    const queue = new Queue<string>();
    const pending = track(queue.get());
    await settle();
    expect(pending.result).toBeUndefined();
    queue.add("foo");
    await settle();
    expect(pending.result).toEqual({ item: "foo", shutdown: false });
    expect(queue.len()).toBe(0);
  });

  it("wakes blocked consumers one item each, in the order they asked", async () => {
    const queue = new Queue<string>();
    const first = track(queue.get());
    const second = track(queue.get());
    const third = track(queue.get());
    queue.add("a");
    queue.add("b");
    await settle();
    expect(first.result).toEqual({ item: "a", shutdown: false });
    expect(second.result).toEqual({ item: "b", shutdown: false });
    expect(third.result).toBeUndefined();
    // "a" is processing, so adding it again does not wake the third consumer.
    queue.add("a");
    await settle();
    expect(third.result).toBeUndefined();
    queue.done("a");
    await settle();
    expect(third.result).toEqual({ item: "a", shutdown: false });
  });

  it("ignores done for an item that is not processing", async () => {
    const queue = new Queue<string>();
    queue.done("never-added");
    queue.add("foo");
    // Upstream would push a duplicate here; we ignore it.
    queue.done("foo");
    expect(queue.len()).toBe(1);
    expect(await drainItems(queue)).toEqual(["foo"]);
    queue.done("foo");
    expect(queue.len()).toBe(0);
  });

  it("compares items as Map keys do", async () => {
    const queue = new Queue<unknown>();
    const object = { name: "a" };
    queue.add(object);
    queue.add({ name: "a" });
    queue.add(object);
    queue.add(1);
    queue.add(1);
    expect(queue.len()).toBe(3);
  });

  it("rejects options that are not an object, naming the class", () => {
    expect(() => new Queue(null as never)).toThrow("Queue: options must be an object, got null");
    expect(() => new Queue({ name: 5 as never })).toThrow("Queue: name must be a string, got number");
    expect(() => new Queue({ name: "q", metricsProvider: {} as never })).toThrow(
      "Queue: metricsProvider has no newDepthMetric() method",
    );
  });

  describe("shutDown", () => {
    it("still hands out the items already queued, then shutdown forever", async () => {
      const queue = new Queue<string>();
      queue.add("a");
      queue.add("b");
      queue.shutDown();
      expect(queue.shuttingDown()).toBe(true);
      expect(await queue.get()).toEqual({ item: "a", shutdown: false });
      expect(await queue.get()).toEqual({ item: "b", shutdown: false });
      expect(await queue.get()).toEqual({ item: undefined, shutdown: true });
      expect(await queue.get()).toEqual({ item: undefined, shutdown: true });
    });

    it("drops items added after shutdown", async () => {
      const queue = new Queue<string>();
      queue.shutDown();
      queue.add("added after shutdown");
      expect(queue.len()).toBe(0);
      expect(await queue.get()).toEqual({ item: undefined, shutdown: true });
    });

    it("releases every blocked consumer with shutdown", async () => {
      const queue = new Queue<string>();
      const consumers = [track(queue.get()), track(queue.get()), track(queue.get())];
      queue.shutDown();
      await settle();
      for (const consumer of consumers) expect(consumer.result).toEqual({ item: undefined, shutdown: true });
    });

    it("does not wait for items being processed", async () => {
      const queue = new Queue<string>();
      queue.add("foo");
      queue.add("bar");
      await queue.get();
      await queue.get();
      queue.shutDown();
      expect(await queue.get()).toEqual({ item: undefined, shutdown: true });
    });

    it("still re-queues an item that was added while processing before the shutdown", async () => {
      const queue = new Queue<string>();
      queue.add("foo");
      await queue.get();
      queue.add("foo");
      queue.shutDown();
      queue.done("foo");
      expect(await queue.get()).toEqual({ item: "foo", shutdown: false });
      queue.done("foo");
      expect(await queue.get()).toEqual({ item: undefined, shutdown: true });
    });

    it("is not shutting down before shutDown is called", () => {
      expect(new Queue<string>().shuttingDown()).toBe(false);
    });
  });

  describe("shutDownWithDrain", () => {
    it("resolves at once when nothing is queued or processing", async () => {
      const queue = new Queue<string>();
      await queue.shutDownWithDrain();
      expect(queue.shuttingDown()).toBe(true);
    });

    it("waits until every item handed out is done", async () => {
      const queue = new Queue<string>();
      queue.add("foo");
      queue.add("bar");
      const first = (await queue.get()).item!;
      const second = (await queue.get()).item!;
      let drained = false;
      const drain = queue.shutDownWithDrain().then(() => {
        drained = true;
      });
      expect(await queue.get()).toEqual({ item: undefined, shutdown: true });
      queue.done(first);
      await settle();
      expect(drained).toBe(false);
      queue.done(second);
      await drain;
      expect(drained).toBe(true);
    });

    it("waits for an item that was dirty while processing to be handed out again and done", async () => {
      const queue = new Queue<string>();
      queue.add("foo");
      const gotten = (await queue.get()).item!;
      queue.add("foo");
      let drained = false;
      const drain = queue.shutDownWithDrain().then(() => {
        drained = true;
      });
      queue.done(gotten);
      await settle();
      expect(drained).toBe(false);
      // done put it back, so the next get hands it out rather than reporting shutdown.
      const again = await queue.get();
      expect(again).toEqual({ item: "foo", shutdown: false });
      queue.done("foo");
      expect(await queue.get()).toEqual({ item: undefined, shutdown: true });
      await drain;
      expect(drained).toBe(true);
    });

    it("waits for queued items to be handed out and done", async () => {
      const queue = new Queue<string>();
      queue.add("foo");
      let drained = false;
      const drain = queue.shutDownWithDrain().then(() => {
        drained = true;
      });
      await settle();
      expect(drained).toBe(false);
      const { item } = await queue.get();
      queue.done(item!);
      await drain;
      expect(drained).toBe(true);
    });

    it("is released by a later shutDown even though items are still processing", async () => {
      const queue = new Queue<string>();
      queue.add("foo");
      queue.add("bar");
      await queue.get();
      await queue.get();
      let drained = false;
      const drain = queue.shutDownWithDrain().then(() => {
        drained = true;
      });
      expect(await queue.get()).toEqual({ item: undefined, shutdown: true });
      await settle();
      expect(drained).toBe(false);
      queue.shutDown();
      await drain;
      expect(drained).toBe(true);
    });

    it("releases every pending drain when the work finishes", async () => {
      const queue = new Queue<string>();
      queue.add("foo");
      await queue.get();
      const drains = [queue.shutDownWithDrain(), queue.shutDownWithDrain()];
      queue.done("foo");
      await expect(Promise.all(drains)).resolves.toEqual([undefined, undefined]);
    });
  });

  it("does not keep an item reachable once it is done", async () => {
    const queue = new Queue<object>();
    const ref = await addGetDone(queue);
    // WeakRef targets are kept for the rest of the current job, so collect on a later one.
    await settle();
    collectGarbage();
    expect(ref.deref()).toBeUndefined();
    expect(queue.len()).toBe(0);
  });
});
