import type { Clock, TimerHandle } from "@reconcile/clock";
import { SeatDemandIntegrator } from "./borrowing.js";
import type { Classification } from "./classify.js";
import { maxSeatsOf, oneSeat, seatsTimesMs, type WorkEstimate } from "./work-estimate.js";

// One priority level's seats and queues (k8s.io/apiserver's
// util/flowcontrol/fairqueuing/queueset): fair queuing in virtual time. Each
// request takes the seats its work estimate asks; a level that rejects seats
// it when they are free and answers 429 otherwise; a level that queues deals
// the flow a hand of queues (shuffle sharding), puts the request in the one
// with the least work waiting, and serves next the queue whose oldest request
// would finish first in virtual time (`R`, which advances by the seats each
// busy queue is owed), so that every busy flow gets an equal share of seats
// whatever its rate.

/** Why a request was refused, as upstream's `apiserver_flowcontrol_rejected_requests_total` says. */
export type RejectionReason = "queue-full" | "concurrency-limit" | "time-out" | "cancelled";

export class FlowControlRejection extends Error {
  /** `classification`: where the request was classified, once known. */
  constructor(
    readonly reason: RejectionReason,
    readonly classification?: Classification | undefined,
  ) {
    super(`request rejected by API Priority and Fairness (${reason})`);
  }
}

/** How a limited level holds requests beyond its seats. */
export interface QueuingShape {
  /** `Reject`: refuse at once; otherwise queue. */
  readonly reject: boolean;
  readonly queues: number;
  readonly handSize: number;
  readonly queueLengthLimit: number;
}

/** A request holding or waiting for a seat, as the debug dumps list it. */
export interface SeatRequest {
  readonly flowSchema: string;
  readonly flowDistinguisher: string;
  /** The flow's hash, which deals the queues it may wait in. */
  readonly hash: bigint;
  /** When it came to the level, on the level's clock (ms). */
  readonly arrived: number;
  /** When it took its seat; undefined while it waits. */
  started?: number | undefined;
  /** What it is expected to cost; one seat when not given. */
  readonly work?: WorkEstimate | undefined;
  /** Its priority level's name. */
  readonly priorityLevel: string;
  /** The request itself: what it asks, and what is told the queue it joins. */
  readonly asked?: SeatHolder | undefined;
}

/** What a {@link SeatRequest} says of the request behind it. */
export interface SeatHolder {
  /** What it asks, for `dump_requests?includeRequestDetails=1`. */
  details?(): SeatRequestDetails;
  /** Told where it waits: its level, FlowSchema, and the length of the queue it joined (itself counted). */
  queued?(priorityLevel: string, flowSchema: string, length: number): void;
}

/** A request's user and what it asks (upstream's `RequestInfo` as the dump prints it). */
export interface SeatRequestDetails {
  readonly userName: string;
  readonly verb: string;
  readonly path: string;
  readonly namespace: string;
  readonly name: string;
  /** `group/version`, `v1`, or "" for a path that names no resource. */
  readonly apiVersion: string;
  readonly resource: string;
  readonly subresource: string;
}

/**
 * The queues of a hand: `handSize` distinct indices below `deckSize`, dealt
 * from `hash` as upstream's shuffle-sharding Dealer does (each card the hash's
 * remainder by the cards left, skipping those already dealt).
 */
export function dealHand(hash: bigint, deckSize: number, handSize: number): number[] {
  const hand: number[] = [];
  let remainder = hash;
  for (let i = 0; i < handSize && i < deckSize; i++) {
    const left = BigInt(deckSize - i);
    let card = Number(remainder % left);
    remainder /= left;
    // The card-th index among those not dealt yet.
    for (const dealt of [...hand].sort((a, b) => a - b)) if (card >= dealt) card++;
    hand.push(card);
  }
  return hand;
}

/** Counts kept per level, for `/debug/api_priority_and_fairness/dump_priority_levels` and metrics. */
export interface LevelCounts {
  dispatched: number;
  rejected: number;
  timedOut: number;
  cancelled: number;
}

/** Upstream's estimate of how long a request executes, for its place in virtual time. */
const estimatedServiceMs = 3;

/** A request in a set: waiting in a queue, or executing. */
interface Entry {
  readonly request: SeatRequest;
  readonly work: WorkEstimate;
  /** The seats it holds: the larger of its initial and final seats. */
  readonly seats: number;
  /** Its initial and final work, in SeatSeconds units. */
  readonly totalWork: number;
  /** The virtual time it arrived at. */
  readonly arrivalR: number;
  /** The queue it was dealt; undefined for one seated without a queue. */
  readonly queue: Queue | undefined;
  /** Seated at once: its release. */
  release?: (() => void) | undefined;
  /** While it waits: hands it its release (resolving its promise), or refuses it. */
  resolve?: ((release: () => void) => void) | undefined;
  fail?: ((reason: RejectionReason) => void) | undefined;
}

/** One queue: its waiting requests in order, its executing ones, and where it stands in virtual time. */
interface Queue {
  index: number;
  readonly waiting: Entry[];
  executing: number;
  seatsInUse: number;
  /** The virtual time its next request is dispatched at (SeatSeconds units). */
  nextDispatchR: number;
}

/** One queue as the debug dump shows it. */
export interface QueueDigest {
  readonly index: number;
  readonly waiting: readonly SeatRequest[];
  readonly executing: number;
  readonly seatsInUse: number;
  readonly nextDispatchR: number;
  readonly initialSeatsSum: number;
  readonly maxSeatsSum: number;
  readonly totalWorkSum: number;
}

export class QueueSet {
  /** The seats requests may hold at once. */
  concurrencyLimit: number;
  shape: QueuingShape;
  /** Requests executing now. */
  executing = 0;
  /** Seats held now (by executing requests, and by finished ones' final seats). */
  seatsInUse = 0;
  readonly counts: LevelCounts = { dispatched: 0, rejected: 0, timedOut: 0, cancelled: 0 };
  /** Told when the set holds no request any more (a deleted level's, to give its seats back). */
  onIdle: (() => void) | undefined;
  #queues: Queue[];
  #waiting = 0;
  #waitingSeats = 0;
  /** The requests holding a seat now. */
  readonly #seated = new Map<SeatRequest, Entry>();
  /** Virtual time (SeatSeconds units), and the real time it was last brought up to. */
  #currentR = 0;
  #lastRealTime: number;
  /** The queue the last dispatch went to: the search for the next starts after it. */
  #robinIndex = -1;
  /** Requests enqueued so far: where in its hand the search for the emptiest queue starts. */
  #enqueues = 0;
  /** Queues with a request waiting or executing, and the seats held in queues: virtual time's pace, kept as they change. */
  #busyQueues = 0;
  #queuedSeatsInUse = 0;
  /** Each flow's hand, by its hash, for the queues there are now. */
  readonly #hands = new Map<bigint, number[]>();
  /** The queue the newest request was put in. */
  #lastQueued: Queue | undefined;
  readonly #clock: Clock;
  /** Seats executing plus seats waiting, integrated over time, for the borrowing between levels. */
  readonly demand: SeatDemandIntegrator;

  constructor(concurrencyLimit: number, shape: QueuingShape, clock: Clock) {
    this.concurrencyLimit = concurrencyLimit;
    this.shape = shape;
    this.#clock = clock;
    this.#lastRealTime = clock.now();
    this.demand = new SeatDemandIntegrator(clock);
    this.#queues = shape.reject ? [] : newQueues(shape.queues, 0);
  }

  /** Requests waiting in the queues. */
  get waiting(): number {
    return this.#waiting;
  }

  /** Seats the waiting requests ask for. */
  get waitingSeats(): number {
    return this.#waitingSeats;
  }

  /** Queues with a request waiting. */
  get activeQueues(): number {
    return this.#queues.filter((queue) => queue.waiting.length > 0).length;
  }

  /** How many queues the level has (none for one that rejects, or is exempt). */
  get queueCount(): number {
    return this.#queues.length;
  }

  /** The virtual time now, in SeatSeconds units. */
  get currentR(): number {
    this.#syncTime();
    return this.#currentR;
  }

  /** The requests waiting in each queue, in their order. */
  waitingIn(queue: number): readonly SeatRequest[] {
    return (this.#queues[queue]?.waiting ?? []).map((entry) => entry.request);
  }

  /** Each queue's requests, seats and place in virtual time. */
  queues(): QueueDigest[] {
    return this.#queues.map((queue) => {
      let initialSeatsSum = 0;
      let maxSeatsSum = 0;
      let totalWorkSum = 0;
      for (const entry of queue.waiting) {
        initialSeatsSum += entry.work.initialSeats;
        maxSeatsSum += entry.seats;
        totalWorkSum += entry.totalWork;
      }
      return {
        index: queue.index,
        waiting: queue.waiting.map((entry) => entry.request),
        executing: queue.executing,
        seatsInUse: queue.seatsInUse,
        nextDispatchR: queue.nextDispatchR,
        initialSeatsSum,
        maxSeatsSum,
        totalWorkSum,
      };
    });
  }

  /** The requests holding a seat, each with the queue it was dealt (-1 for one seated without a queue). */
  seated(): [SeatRequest, number][] {
    return [...this.#seated.values()].map((entry) => [entry.request, entry.queue?.index ?? -1]);
  }

  /**
   * Takes a new shape (the level's configuration or its current limit
   * changed): more queues are added at once; queues beyond a smaller count go
   * once empty; for a level that now rejects, the queues drain as they are
   * and new requests are seated without one.
   */
  reshape(concurrencyLimit: number, shape: QueuingShape): void {
    this.#syncTime();
    this.concurrencyLimit = concurrencyLimit;
    if (!shape.reject && shape.queues > this.#queues.length) {
      this.#queues.push(...newQueues(shape.queues - this.#queues.length, this.#queues.length));
      this.#hands.clear();
    }
    this.shape = shape;
    for (const queue of [...this.#queues]) this.#removeIfEmpty(queue);
    this.#dispatchAsMuchAsPossible();
  }

  /**
   * A seat for `request` (its flow's hash deals its queues): at once (a function releasing
   * it), or a promise of one once seats free (`waiting.cancel()` then gives
   * the signal that takes it out of its queue). Throws or rejects with a
   * {@link FlowControlRejection} when the request is refused.
   */
  acquire(
    request: SeatRequest,
    waitLimitMs: number,
    waiting?: { cancel(): AbortSignal },
  ): (() => void) | Promise<() => void> {
    this.#syncTime();
    const work = request.work ?? oneSeat;
    const seats = maxSeatsOf(work);
    const totalWork =
      seatsTimesMs(work.initialSeats, estimatedServiceMs) +
      seatsTimesMs(work.finalSeats, work.additionalLatencyMs);
    if (this.shape.reject || this.#queues.length === 0) {
      if (!this.#canAccommodate(seats)) throw this.#reject("concurrency-limit");
      const entry: Entry = { request, work, seats, totalWork, arrivalR: this.#currentR, queue: undefined };
      return this.#seat(entry);
    }
    const queue = this.#queues[this.#shuffleShard(request.hash)]!;
    if (this.seatsInUse >= this.concurrencyLimit && queue.waiting.length >= this.shape.queueLengthLimit)
      throw this.#reject("queue-full");
    // An idle queue starts at the virtual time now.
    if (queue.waiting.length === 0 && queue.executing === 0) queue.nextDispatchR = this.#currentR;
    const entry: Entry = { request, work, seats, totalWork, arrivalR: this.#currentR, queue };
    if (queue.waiting.length === 0 && queue.executing === 0) this.#busyQueues++;
    this.#lastQueued = queue;
    queue.waiting.push(entry);
    this.#waiting++;
    this.#waitingSeats += seats;
    this.#boundNextDispatch(queue);
    this.#noteDemand();
    this.#dispatchAsMuchAsPossible();
    if (entry.release !== undefined) return entry.release;
    request.asked?.queued?.(request.priorityLevel, request.flowSchema, queue.waiting.length);
    const signal = waiting?.cancel();
    return new Promise<() => void>((resolve, reject) => {
      let timer: TimerHandle | undefined;
      const settle = () => {
        if (timer !== undefined) this.#clock.clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        entry.resolve = undefined;
        entry.fail = undefined;
      };
      entry.resolve = (release) => {
        settle();
        resolve(release);
      };
      entry.fail = (reason) => {
        settle();
        this.#syncTime();
        const index = queue.waiting.indexOf(entry);
        if (index >= 0) {
          queue.waiting.splice(index, 1);
          if (queue.waiting.length === 0 && queue.executing === 0) this.#busyQueues--;
          this.#waiting--;
          this.#waitingSeats -= seats;
          this.#boundNextDispatch(queue);
          this.#noteDemand();
          this.#removeIfEmpty(queue);
        }
        reject(this.#reject(reason));
        if (this.executing === 0 && this.#waiting === 0) this.onIdle?.();
      };
      const onAbort = () => entry.fail?.("cancelled");
      timer = this.#clock.setTimeout(() => entry.fail?.("time-out"), waitLimitMs);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** Brings virtual time up to now: it advances by the seats each busy queue is owed. */
  #syncTime(now = this.#clock.now()): number {
    const elapsedMs = now - this.#lastRealTime;
    this.#lastRealTime = now;
    if (elapsedMs > 0) this.#currentR += seatsTimesMs(this.#virtualTimeRatio(), elapsedMs);
    return now;
  }

  /** Seats each busy queue gets now: the seats asked for in queues (up to the limit) shared by the busy queues. */
  #virtualTimeRatio(): number {
    if (this.#busyQueues === 0) return 0;
    return Math.min(this.#queuedSeatsInUse + this.#waitingSeats, this.concurrencyLimit) / this.#busyQueues;
  }

  /** The queue of the flow's hand with the least work waiting, the search starting at a rotating card. */
  #shuffleShard(hash: bigint): number {
    let hand = this.#hands.get(hash);
    if (hand === undefined) {
      hand = dealHand(hash, this.#queues.length, Math.max(1, this.shape.handSize));
      if (this.#hands.size >= 4096) this.#hands.clear();
      this.#hands.set(hash, hand);
    }
    const offset = this.#enqueues++ % hand.length;
    let best = -1;
    let least = Infinity;
    for (let i = 0; i < hand.length; i++) {
      const index = hand[(offset + i) % hand.length]!;
      let work = 0;
      for (const entry of this.#queues[index]!.waiting) work += entry.totalWork;
      if (work < least) {
        least = work;
        best = index;
      }
    }
    return best;
  }

  /** Whether `seats` more fit now: one wider than the whole limit runs alone. */
  #canAccommodate(seats: number): boolean {
    if (seats > this.concurrencyLimit) return this.executing === 0;
    return this.seatsInUse + seats <= this.concurrencyLimit;
  }

  /** Upstream's anti-windup: a queue is not dispatched, in virtual time, before its oldest request arrived. */
  #boundNextDispatch(queue: Queue): void {
    const oldest = queue.waiting[0];
    if (oldest !== undefined && queue.nextDispatchR < oldest.arrivalR) queue.nextDispatchR = oldest.arrivalR;
  }

  #dispatchAsMuchAsPossible(): void {
    while (this.#waiting > 0 && this.seatsInUse < this.concurrencyLimit && this.#dispatchOne());
  }

  /** Seats the oldest request of the queue whose would finish first in virtual time, if its seats are free. */
  #dispatchOne(): boolean {
    const count = this.#queues.length;
    if (this.#waiting === 1 && this.#lastQueued?.waiting.length === 1) {
      // Only the request just queued waits: its queue is the one the search would find.
      const queue = this.#lastQueued;
      const entry = queue.waiting[0]!;
      if (!this.#canAccommodate(entry.seats)) return false;
      this.#robinIndex = queue.index;
      return this.#dispatchFrom(queue, entry);
    }
    let best: Queue | undefined;
    let bestIndex = 0;
    let minFinish = Infinity;
    for (let i = 0; i < count; i++) {
      this.#robinIndex = (this.#robinIndex + 1) % count;
      const queue = this.#queues[this.#robinIndex]!;
      const oldest = queue.waiting[0];
      if (oldest === undefined) continue;
      const finish = queue.nextDispatchR + oldest.totalWork;
      if (finish < minFinish) {
        minFinish = finish;
        best = queue;
        bestIndex = this.#robinIndex;
      }
    }
    const entry = best?.waiting[0];
    if (best === undefined || entry === undefined || !this.#canAccommodate(entry.seats)) return false;
    this.#robinIndex = bestIndex;
    return this.#dispatchFrom(best, entry);
  }

  /** Seats `entry`, the oldest request of `best`. */
  #dispatchFrom(best: Queue, entry: Entry): boolean {
    best.waiting.shift();
    this.#waiting--;
    this.#waitingSeats -= entry.seats;
    best.nextDispatchR += entry.totalWork;
    const release = this.#seat(entry);
    if (entry.resolve !== undefined) entry.resolve(release);
    else entry.release = release;
    this.#boundNextDispatch(best);
    return true;
  }

  #seat(entry: Entry): () => void {
    const { request, seats, queue } = entry;
    this.executing++;
    this.seatsInUse += seats;
    if (queue !== undefined) {
      // Busy already: it held the request while it waited.
      queue.executing++;
      queue.seatsInUse += seats;
      this.#queuedSeatsInUse += seats;
    }
    this.counts.dispatched++;
    const started = this.#lastRealTime;
    request.started = started;
    this.#seated.set(request, entry);
    this.#noteDemand();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const now = this.#syncTime();
      this.executing--;
      this.#seated.delete(request);
      if (queue !== undefined) {
        queue.executing--;
        if (queue.waiting.length === 0 && queue.executing === 0) this.#busyQueues--;
        // The queue is owed what the request took less than estimated, or owes what it took more.
        const servedMs = now - started;
        queue.nextDispatchR -= seatsTimesMs(entry.work.initialSeats, estimatedServiceMs - servedMs);
        this.#boundNextDispatch(queue);
      }
      const latency = entry.work.additionalLatencyMs;
      if (latency <= 0) this.#releaseSeats(entry);
      else {
        // The final seats stay taken while the watch events go out.
        const timer = this.#clock.setTimeout(() => {
          this.#syncTime();
          this.#releaseSeats(entry);
        }, latency);
        (timer as { unref?: () => void }).unref?.();
      }
      this.#dispatchAsMuchAsPossible();
      if (this.executing === 0 && this.#waiting === 0) this.onIdle?.();
    };
  }

  #releaseSeats({ seats, queue }: Entry): void {
    this.seatsInUse -= seats;
    if (queue !== undefined) {
      queue.seatsInUse -= seats;
      this.#queuedSeatsInUse -= seats;
      this.#removeIfEmpty(queue);
    }
    this.#noteDemand();
    this.#dispatchAsMuchAsPossible();
  }

  /** Drops `queue` when the level has more queues than it wants and it holds nothing. */
  #removeIfEmpty(queue: Queue): void {
    const wanted = this.shape.reject ? 0 : this.shape.queues;
    if (
      this.#queues.length <= wanted ||
      queue.waiting.length > 0 ||
      queue.executing > 0 ||
      queue.seatsInUse > 0
    )
      return;
    const index = this.#queues.indexOf(queue);
    if (index < 0) return;
    this.#queues.splice(index, 1);
    this.#hands.clear();
    for (let i = index; i < this.#queues.length; i++) this.#queues[i]!.index = i;
    if (this.#robinIndex >= index) this.#robinIndex--;
  }

  #noteDemand(): void {
    this.demand.set(this.seatsInUse + this.#waitingSeats);
  }

  #reject(reason: RejectionReason): FlowControlRejection {
    this.counts.rejected++;
    if (reason === "time-out") this.counts.timedOut++;
    if (reason === "cancelled") this.counts.cancelled++;
    return new FlowControlRejection(reason);
  }
}

function newQueues(count: number, first: number): Queue[] {
  return Array.from({ length: count }, (_, i) => ({
    index: first + i,
    waiting: [],
    executing: 0,
    seatsInUse: 0,
    nextDispatchR: 0,
  }));
}
