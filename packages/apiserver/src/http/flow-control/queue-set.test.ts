import { FakeClock } from "@reconcile/clock";
import { describe, expect, it } from "vitest";
import { dealHand, FlowControlRejection, QueueSet, type SeatRequest } from "./queue-set.js";

const queued = { reject: false, queues: 8, handSize: 2, queueLengthLimit: 2 };

/** A request of the flow `hash`. */
function flow(hash: bigint): SeatRequest {
  return { flowSchema: "fs", flowDistinguisher: "", hash, arrived: 0, priorityLevel: "pl" };
}

/** The reason a seat was refused with, or "seated". */
async function outcome(seat: Promise<unknown>): Promise<string> {
  try {
    await seat;
    return "seated";
  } catch (error) {
    if (error instanceof FlowControlRejection) return error.reason;
    throw error;
  }
}

/** A seat as a promise, refusals included. */
function tryAcquire(set: QueueSet, hash: bigint, signal?: AbortSignal): Promise<() => void> {
  try {
    return Promise.resolve(
      set.acquire(flow(hash), 15_000, signal === undefined ? undefined : { cancel: () => signal }),
    );
  } catch (error) {
    return Promise.reject(error);
  }
}

describe("dealHand", () => {
  it("deals distinct queues below the deck size, the same for the same hash", () => {
    for (const hash of [0n, 1n, 7n, 123_456_789n, 2n ** 64n - 1n]) {
      const hand = dealHand(hash, 64, 8);
      expect(new Set(hand).size).toBe(8);
      expect(hand.every((card) => card >= 0 && card < 64)).toBe(true);
      expect(dealHand(hash, 64, 8)).toEqual(hand);
    }
    // 0 deals the lowest cards in order; each next card skips those dealt.
    expect(dealHand(0n, 10, 3)).toEqual([0, 1, 2]);
    // 7 = 7 % 10 → card 7; then 0 % 9 → 0; then 0 % 8 → 0 → 1 (0 is dealt).
    expect(dealHand(7n, 10, 3)).toEqual([7, 0, 1]);
  });
});

describe("QueueSet", () => {
  it("rejects at once past its seats when it does not queue", async () => {
    const set = new QueueSet(1, { ...queued, reject: true }, new FakeClock());
    const release = set.acquire(flow(1n), 15_000) as () => void;
    expect(await outcome(tryAcquire(set, 2n))).toBe("concurrency-limit");
    release();
    expect(await outcome(tryAcquire(set, 2n))).toBe("seated");
    expect(set.counts).toEqual({ dispatched: 2, rejected: 1, timedOut: 0, cancelled: 0 });
  });

  it("queues past its seats, and rejects a request whose shortest queue is full", async () => {
    const set = new QueueSet(1, { ...queued, queues: 1, handSize: 1 }, new FakeClock());
    const release = set.acquire(flow(1n), 15_000) as () => void;
    const waiting = [tryAcquire(set, 1n), tryAcquire(set, 1n)];
    expect(set.waiting).toBe(2);
    expect(await outcome(tryAcquire(set, 1n))).toBe("queue-full");
    release();
    const second = await waiting[0]!;
    expect(set.executing).toBe(1);
    second();
    (await waiting[1]!)();
    expect([set.executing, set.waiting, set.counts.dispatched, set.counts.rejected]).toEqual([0, 0, 3, 1]);
  });

  it("gives freed seats to the queues in turn, so a small flow is not stuck behind a big one", async () => {
    // The big flow (hash 0) is dealt queues 0 and 1 and spreads over both; the small one (hash 2)
    // is dealt queues 2 and 0 and waits alone in queue 2.
    const set = new QueueSet(1, { ...queued, queues: 4, handSize: 2, queueLengthLimit: 10 }, new FakeClock());
    let current: (() => void) | undefined = set.acquire(flow(0n), 15_000) as () => void;
    const order: string[] = [];
    const track = (name: string, hash: bigint) =>
      tryAcquire(set, hash).then((release) => {
        order.push(name);
        current = release;
      });
    const all = [track("big1", 0n), track("big2", 0n), track("big3", 0n), track("small", 2n)];
    for (let i = 0; i < 4; i++) {
      const release = current!;
      current = undefined;
      release();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(all);
    current?.();
    expect(order).toEqual(["big1", "big2", "small", "big3"]);
    expect([set.executing, set.waiting]).toEqual([0, 0]);
  });

  it("rejects a request that waits longer than the wait limit, or whose client goes away", async () => {
    const clock = new FakeClock();
    const set = new QueueSet(1, queued, clock);
    set.acquire(flow(1n), 15_000);
    const late = outcome(tryAcquire(set, 1n));
    const gone = new AbortController();
    const cancelled = tryAcquire(set, 2n, gone.signal);
    gone.abort();
    expect(await outcome(cancelled)).toBe("cancelled");
    await clock.advance(15_000);
    expect(await late).toBe("time-out");
    expect([set.waiting, set.counts.timedOut, set.counts.cancelled, set.counts.rejected]).toEqual([
      0, 1, 1, 2,
    ]);
  });

  it("keeps waiting requests through a new shape, serving them or timing them out from their new queues", async () => {
    const clock = new FakeClock();
    const set = new QueueSet(1, queued, clock);
    const release = set.acquire(flow(1n), 15_000) as () => void;
    const first = tryAcquire(set, 1n);
    const second = outcome(tryAcquire(set, 2n));
    set.reshape(1, { ...queued, reject: true });
    expect(set.waiting).toBe(2);
    release();
    const held = await first;
    expect(set.executing).toBe(1);
    await clock.advance(15_000);
    expect(await second).toBe("time-out");
    expect([set.waiting, set.executing]).toEqual([0, 1]);
    held();
    expect([set.waiting, set.executing]).toEqual([0, 0]);
  });
});
