import { FakeClock } from "@reconcile/clock";
import { describe, expect, it } from "vitest";
import { ItemExponentialFailureRateLimiter } from "./rate-limiters.js";
import { RateLimitingQueue } from "./rate-limiting-queue.js";

describe("RateLimitingQueue", () => {
  it("adds an item after the limiter's delay, which grows with each failure until forget", async () => {
    const clock = new FakeClock();
    const queue = new RateLimitingQueue<string>({
      clock,
      rateLimiter: new ItemExponentialFailureRateLimiter({ baseDelayMs: 1, maxDelayMs: 1_000 }),
    });

    queue.addRateLimited("one");
    expect(queue.len()).toBe(0);
    expect(queue.numRequeues("one")).toBe(1);
    await clock.advance(1);
    expect(queue.len()).toBe(1);

    queue.addRateLimited("one");
    expect(queue.numRequeues("one")).toBe(2);
    // Still waiting in the queue: the delayed add collapses into it when it fires.
    await clock.advance(2);
    expect(queue.len()).toBe(1);

    queue.addRateLimited("two");
    await clock.advance(1);
    expect(queue.len()).toBe(2);

    queue.forget("one");
    expect(queue.numRequeues("one")).toBe(0);
    queue.addRateLimited("one");
    expect(queue.numRequeues("one")).toBe(1);
    queue.shutDown();
  });

  it("forget clears the limiter only: the item still needs done", async () => {
    const clock = new FakeClock();
    const queue = new RateLimitingQueue<string>({ clock });
    queue.add("foo");
    await queue.get();
    queue.forget("foo");
    queue.add("foo");
    expect(queue.len()).toBe(0);
    queue.done("foo");
    expect(queue.len()).toBe(1);
  });

  it("uses the default controller limiter on the queue's clock when none is given", async () => {
    const clock = new FakeClock();
    const queue = new RateLimitingQueue<string>({ clock });
    queue.addRateLimited("foo");
    expect(clock.pendingTimers()).toEqual([{ at: 5, in: 5 }]);
    queue.addRateLimited("foo");
    expect(queue.numRequeues("foo")).toBe(2);
    await clock.advance(5);
    expect(queue.len()).toBe(1);
    expect(clock.pendingTimers()).toEqual([]);
  });

  it("runs client-go's canonical worker loop: retries with backoff, then gives up", async () => {
    const clock = new FakeClock();
    const queue = new RateLimitingQueue<string>({
      clock,
      rateLimiter: new ItemExponentialFailureRateLimiter({ baseDelayMs: 10, maxDelayMs: 1_000 }),
    });
    const attempts: number[] = [];
    const maxRetries = 3;
    const worker = (async () => {
      for (;;) {
        const { item, shutdown } = await queue.get();
        if (shutdown) return;
        attempts.push(clock.now());
        // The sync always fails.
        if (queue.numRequeues(item) < maxRetries) queue.addRateLimited(item);
        else queue.forget(item);
        queue.done(item);
      }
    })();
    queue.add("ns/broken");
    await clock.advance(1_000);
    await queue.shutDownWithDrain();
    await worker;
    expect(attempts).toEqual([0, 10, 30, 70]);
    expect(queue.numRequeues("ns/broken")).toBe(0);
  });

  it("rejects a rate limiter that is not one", () => {
    expect(() => new RateLimitingQueue({ rateLimiter: { when: () => 0 } as never })).toThrow(
      "RateLimitingQueue: rateLimiter must be a RateLimiter (when, forget, numRequeues)",
    );
  });

  it("inspect lists the depth, the items in flight and the waiting items with their failures", async () => {
    const clock = new FakeClock();
    const queue = new RateLimitingQueue<string>({
      clock,
      rateLimiter: new ItemExponentialFailureRateLimiter({ baseDelayMs: 10, maxDelayMs: 1_000 }),
    });
    queue.add("a");
    queue.add("b");
    queue.add("c");
    const first = await queue.get();
    expect(first.item).toBe("a");
    queue.add("a"); // added again while processing
    queue.addRateLimited("d");
    queue.addRateLimited("d");
    queue.addRateLimited("e");
    queue.addAfter("f", 5);

    const snapshot = queue.inspect();
    expect(snapshot).toEqual({
      depth: 2,
      processing: ["a"],
      processingCount: 1,
      dirtyWhileProcessing: 1,
      waiting: [
        { item: "f", readyAt: clock.now() + 5 },
        { item: "d", readyAt: clock.now() + 10 },
        { item: "e", readyAt: clock.now() + 10 },
      ],
      waitingCount: 3,
      shuttingDown: false,
      requeues: [
        { item: "d", requeues: 2 },
        { item: "e", requeues: 1 },
      ],
    });
    expect(queue.inspect(1).waiting).toEqual([{ item: "f", readyAt: clock.now() + 5 }]);

    queue.done("a");
    await clock.advance(10);
    const later = queue.inspect();
    expect(later.depth).toBe(6); // b, c, a (dirty when done), then f, d and e as they came due
    expect(later.processing).toEqual([]);
    expect(later.waitingCount).toBe(0);
    queue.shutDown();
    expect(queue.inspect().shuttingDown).toBe(true);
  });
});
