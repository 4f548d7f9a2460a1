import { FakeClock } from "@reconcile/clock";
import { describe, expect, it } from "vitest";
import { Queue } from "./queue.js";
import { ItemExponentialFailureRateLimiter } from "./rate-limiters.js";
import { RateLimitingQueue } from "./rate-limiting-queue.js";

/** A small seeded PRNG (mulberry32), so a failure replays the same interleaving. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** Gives other async loops a chance to run: a few microtask turns, now and then a macrotask hop. */
async function yieldRandomly(next: () => number): Promise<void> {
  const roll = next();
  if (roll < 0.05) {
    await new Promise<void>((resolve) => setImmediate(resolve));
    return;
  }
  for (let i = Math.floor(roll * 4); i > 0; i--) await undefined;
}

/** Tracks which consumer holds which item; any overlap is a violation of "stingy". */
class HoldChecker {
  readonly held = new Map<string, number>();
  readonly violations: string[] = [];

  take(item: string, consumer: number): void {
    const holder = this.held.get(item);
    if (holder !== undefined) this.violations.push(`${item} handed to ${consumer} while ${holder} holds it`);
    this.held.set(item, consumer);
  }

  release(item: string): void {
    this.held.delete(item);
  }
}

describe.each([
  { seed: 1, shutDown: "shutDown" as const },
  { seed: 2, shutDown: "shutDownWithDrain" as const },
  { seed: 3, shutDown: "shutDownWithDrain" as const },
])("stress (seed $seed, $shutDown)", ({ seed, shutDown }) => {
  it("never hands one item to two consumers, hands out every add, and every consumer exits", async () => {
    const next = random(seed);
    const queue = new Queue<string>();
    const checker = new HoldChecker();
    /** Items added since they were last handed out: each must be handed out again. */
    const owed = new Set<string>();
    const producers = 20;
    const consumers = 8;
    const addsPerProducer = 300;
    const keys = Array.from({ length: 40 }, (_, i) => `ns/name-${i}`);
    let processed = 0;
    let exited = 0;

    const add = (key: string) => {
      // Adds after shutdown are dropped and owe nothing.
      if (!queue.shuttingDown()) owed.add(key);
      queue.add(key);
    };
    const produce = async () => {
      for (let i = 0; i < addsPerProducer; i++) {
        add(keys[Math.floor(next() * keys.length)]!);
        await yieldRandomly(next);
      }
    };
    const consume = async (consumer: number) => {
      for (;;) {
        const result = await queue.get();
        if (result.shutdown) break;
        const { item } = result;
        owed.delete(item);
        checker.take(item, consumer);
        await yieldRandomly(next);
        // Sometimes the item changes again while it is being processed.
        if (next() < 0.2) add(item);
        await yieldRandomly(next);
        checker.release(item);
        queue.done(item);
        processed++;
      }
      exited++;
    };

    const consumerLoops = Array.from({ length: consumers }, (_, i) => consume(i));
    await Promise.all(Array.from({ length: producers }, produce));
    const drained = queue[shutDown]();
    add("ns/added-after-shutdown");
    await Promise.all(consumerLoops);
    await drained;

    expect(checker.violations).toEqual([]);
    expect(exited).toBe(consumers);
    expect([...owed]).toEqual([]);
    expect(checker.held.size).toBe(0);
    expect(queue.len()).toBe(0);
    expect(processed).toBeGreaterThanOrEqual(keys.length);
  });
});

describe("stress with retries", () => {
  it("retried items are never held twice, every failure is eventually forgotten, and every consumer exits", async () => {
    const next = random(42);
    const clock = new FakeClock();
    const queue = new RateLimitingQueue<string>({
      clock,
      rateLimiter: new ItemExponentialFailureRateLimiter({ baseDelayMs: 1, maxDelayMs: 50 }),
    });
    const checker = new HoldChecker();
    const keys = Array.from({ length: 30 }, (_, i) => `ns/name-${i}`);
    const maxRetries = 4;
    let exited = 0;

    const produce = async () => {
      for (let i = 0; i < 100; i++) {
        queue.add(keys[Math.floor(next() * keys.length)]!);
        await yieldRandomly(next);
      }
    };
    const consume = async (consumer: number) => {
      for (;;) {
        const result = await queue.get();
        if (result.shutdown) break;
        const { item } = result;
        checker.take(item, consumer);
        await yieldRandomly(next);
        const failed = next() < 0.5;
        checker.release(item);
        if (failed && queue.numRequeues(item) < maxRetries) queue.addRateLimited(item);
        else queue.forget(item);
        queue.done(item);
      }
      exited++;
    };

    const consumerLoops = Array.from({ length: 6 }, (_, i) => consume(i));
    const producing = Promise.all(Array.from({ length: 10 }, produce));
    let producersDone = false;
    void producing.then(() => {
      producersDone = true;
    });
    // Move time on until nothing is left to retry: the longest retry chain takes 1+2+4+8 ms.
    while (!producersDone) await clock.advance(1);
    await clock.advance(1_000);
    await queue.shutDownWithDrain();
    await Promise.all(consumerLoops);

    expect(checker.violations).toEqual([]);
    expect(exited).toBe(6);
    expect(keys.filter((key) => queue.numRequeues(key) > 0)).toEqual([]);
    expect(clock.pendingTimers()).toEqual([]);
  });
});
