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

  it("serves the queue whose oldest request finishes first in virtual time, so a small flow is not stuck behind a big one", async () => {
    // The big flow (hash 0) is dealt queues 0 and 1 and spreads over both (big1 and big3 in queue 1,
    // big2 in queue 0 behind the request executing there); the small one (hash 2) is dealt queues 2
    // and 0 and waits alone in queue 2. On a clock that stands still every queue's next request
    // would finish at the same virtual time, so the search, which starts after the queue served
    // last, decides: queue 1 (big1), then queue 2 (small), then queue 0 (big2) and queue 1 (big3).
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
    expect(order).toEqual(["big1", "small", "big2", "big3"]);
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
    // One queue per hand: both wait in the queue of hash 1, in order.
    const set = new QueueSet(1, { ...queued, handSize: 1 }, clock);
    const release = set.acquire(flow(1n), 15_000) as () => void;
    const first = tryAcquire(set, 1n);
    const second = outcome(tryAcquire(set, 1n));
    set.reshape(1, { ...queued, handSize: 1, reject: true });
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

/** A request of the flow `hash` asking for `work`. */
function wide(hash: bigint, initialSeats: number, finalSeats = 0, additionalLatencyMs = 0): SeatRequest {
  return { ...flow(hash), work: { initialSeats, finalSeats, additionalLatencyMs } };
}

describe("QueueSet seats and virtual time", () => {
  it("seats a wide request only when its seats are free, and one wider than the limit alone", async () => {
    const set = new QueueSet(3, { ...queued, queues: 4, handSize: 1, queueLengthLimit: 10 }, new FakeClock());
    const narrow = set.acquire(flow(1n), 15_000) as () => void;
    const wideSeat = Promise.resolve(set.acquire(wide(2n, 3), 15_000));
    expect([set.seatsInUse, set.waiting, set.waitingSeats]).toEqual([1, 1, 3]);
    narrow();
    const release = await wideSeat;
    expect([set.seatsInUse, set.executing, set.waiting]).toEqual([3, 1, 0]);
    release();
    // Five seats of a three-seat level: it waits for the level to be empty, then runs alone.
    const held = set.acquire(flow(1n), 15_000) as () => void;
    const tooWide = Promise.resolve(set.acquire(wide(2n, 5), 15_000));
    expect(set.waiting).toBe(1);
    held();
    (await tooWide)();
    expect([set.seatsInUse, set.executing, set.waiting]).toEqual([0, 0, 0]);
  });

  it("keeps a write's final seats for its additional latency after it is answered", async () => {
    const clock = new FakeClock();
    const set = new QueueSet(4, { ...queued, queueLengthLimit: 10 }, clock);
    const write = set.acquire(wide(1n, 1, 3, 5), 15_000) as () => void;
    expect(set.seatsInUse).toBe(3);
    write();
    expect([set.executing, set.seatsInUse]).toEqual([0, 3]);
    // A two-seat request does not fit beside them until they go.
    const next = Promise.resolve(set.acquire(wide(2n, 2), 15_000));
    expect(set.waiting).toBe(1);
    await clock.advance(5);
    (await next)();
    expect([set.seatsInUse, set.waiting]).toEqual([0, 0]);
  });

  it("advances virtual time by the seats each busy queue is owed", async () => {
    const clock = new FakeClock();
    const set = new QueueSet(2, { ...queued, queues: 4, handSize: 1, queueLengthLimit: 10 }, clock);
    expect(set.currentR).toBe(0);
    const first = set.acquire(flow(0n), 15_000) as () => void;
    // One busy queue asking one seat: R advances one seat-second per second.
    await clock.advance(1000);
    expect(set.currentR).toBe(1e8);
    // Two busy queues, three seats asked of two: each is owed one seat.
    const second = set.acquire(wide(1n, 2), 15_000);
    expect(set.waiting).toBe(1);
    await clock.advance(500);
    expect(set.currentR).toBe(1.5e8);
    first();
    (await second)();
    // Idle: R stands still.
    await clock.advance(1000);
    expect(set.currentR).toBe(1.5e8);
    // A queue's next dispatch moved on by the estimated work of what it served (3 ms a seat), then
    // by what that really took instead: the first request held its seat 1.5 s; the second, which
    // arrived at R = 1e8, none.
    expect(set.queues().map((queue) => queue.nextDispatchR)).toEqual([
      0 + 300_000 - (300_000 - 150_000_000),
      1e8 + 600_000 - 600_000,
      0,
      0,
    ]);
  });

  it("shares seats between two flows equally, whatever rate each sends at", async () => {
    const clock = new FakeClock();
    const set = new QueueSet(1, { ...queued, queues: 8, handSize: 1, queueLengthLimit: 100 }, clock);
    const served: string[] = [];
    let holding = set.acquire(flow(0n), 15_000) as () => void;
    // The heavy flow queues 30 requests before the light one's 5.
    const waits: Promise<void>[] = [];
    const send = (name: string, hash: bigint) =>
      waits.push(
        Promise.resolve(set.acquire(flow(hash), 15_000)).then((release) => {
          served.push(name);
          holding = release;
        }),
      );
    for (let i = 0; i < 30; i++) send("heavy", 0n);
    for (let i = 0; i < 5; i++) send("light", 3n);
    for (let i = 0; i < 35; i++) {
      await clock.advance(10);
      holding();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(waits);
    holding();
    // Each 10 ms request of either flow moves its queue on equally, the one the heavy flow held at
    // the start included: they alternate, the light flow first, until the light flow is done.
    expect(served.slice(0, 10)).toEqual([
      ...["light", "heavy", "light", "heavy", "light"],
      ...["heavy", "light", "heavy", "light", "heavy"],
    ]);
    expect(served.slice(10).every((name) => name === "heavy")).toBe(true);
  });
});
