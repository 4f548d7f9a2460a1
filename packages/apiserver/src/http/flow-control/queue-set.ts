import type { Clock, TimerHandle } from "@reconcile/clock";
import { SeatDemandIntegrator } from "./borrowing.js";
import type { Classification } from "./classify.js";

// One priority level's seats and queues (k8s.io/apiserver's
// util/flowcontrol/fairqueuing/queueset, with every request one seat): a
// request runs at once while a seat is free and nobody waits; otherwise a
// level that rejects answers 429 at once, and a level that queues deals the
// flow a hand of queues (shuffle sharding), puts the request at the end of the
// shortest, and rejects it when that queue is full or it waits too long.

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
  /** The queue it waited in; undefined when it took a seat at once. */
  queue?: number | undefined;
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

interface Waiter {
  readonly request: SeatRequest;
  readonly dispatch: () => void;
  readonly fail: (reason: RejectionReason) => void;
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

export class QueueSet {
  /** The seats requests may hold at once. */
  concurrencyLimit: number;
  shape: QueuingShape;
  executing = 0;
  readonly counts: LevelCounts = { dispatched: 0, rejected: 0, timedOut: 0, cancelled: 0 };
  #queues: Waiter[][];
  #waiting = 0;
  /** The requests holding a seat now. */
  readonly #seated = new Set<SeatRequest>();
  /** The queue the next free seat looks at first: seats go round the non-empty queues in turn. */
  #next = 0;
  readonly #clock: Clock;
  /** Seats executing plus seats waiting, integrated over time, for the borrowing between levels. */
  readonly demand: SeatDemandIntegrator;

  constructor(concurrencyLimit: number, shape: QueuingShape, clock: Clock) {
    this.concurrencyLimit = concurrencyLimit;
    this.shape = shape;
    this.#clock = clock;
    this.demand = new SeatDemandIntegrator(clock);
    this.#queues = Array.from({ length: shape.reject ? 0 : shape.queues }, () => []);
  }

  /** Requests waiting in the queues. */
  get waiting(): number {
    return this.#waiting;
  }

  /** Queues with a request waiting. */
  get activeQueues(): number {
    return this.#queues.filter((queue) => queue.length > 0).length;
  }

  /** How many queues the level has (none for one that rejects, or is exempt). */
  get queueCount(): number {
    return this.#queues.length;
  }

  /** The requests waiting in each queue, in their order. */
  waitingIn(queue: number): readonly SeatRequest[] {
    return (this.#queues[queue] ?? []).map((waiter) => waiter.request);
  }

  /**
   * The requests holding a seat, each with the queue it counts in: the one it
   * waited in, or, for one seated at once, the first of its hand (the queue
   * upstream puts a request in when every queue is empty); -1 for a level
   * without queues.
   */
  seated(): [SeatRequest, number][] {
    return [...this.#seated].map((request) => [request, this.#queueOf(request)]);
  }

  #queueOf(request: SeatRequest): number {
    if (this.#queues.length === 0) return -1;
    if (request.queue !== undefined && request.queue < this.#queues.length) return request.queue;
    return dealHand(request.hash, this.#queues.length, Math.max(1, this.shape.handSize))[0]!;
  }

  /** Takes a new shape (the level's configuration changed); waiting requests keep their places. */
  reshape(concurrencyLimit: number, shape: QueuingShape): void {
    this.concurrencyLimit = concurrencyLimit;
    if (shape.queues !== this.shape.queues || shape.reject !== this.shape.reject) {
      const waiting = this.#queues.flat();
      // Requests already queued stay queued (in one queue, for a level that now rejects), spread
      // over the new queues in order.
      const queues = shape.reject ? Math.min(1, waiting.length) : Math.max(1, shape.queues);
      this.#queues = Array.from({ length: queues }, () => []);
      for (const [i, waiter] of waiting.entries()) {
        this.#queues[i % queues]!.push(waiter);
        waiter.request.queue = i % queues;
      }
    }
    this.shape = shape;
    this.#dispatch();
  }

  /**
   * A seat for `request` (its flow's hash deals its queues): at once (a function releasing
   * it), or a promise of one once a seat frees (`waiting.cancel()` then gives
   * the signal that takes it out of its queue). Throws or rejects with a
   * {@link FlowControlRejection} when the request is refused.
   */
  acquire(
    request: SeatRequest,
    waitLimitMs: number,
    waiting?: { cancel(): AbortSignal },
  ): (() => void) | Promise<() => void> {
    if (this.#waiting === 0 && this.executing < this.concurrencyLimit) return this.#seat(request);
    if (this.shape.reject || this.#queues.length === 0) throw this.#reject("concurrency-limit");
    const hand = dealHand(request.hash, this.#queues.length, this.shape.handSize);
    let index = hand[0]!;
    for (const card of hand) if (this.#queues[card]!.length < this.#queues[index]!.length) index = card;
    const chosen = this.#queues[index]!;
    if (chosen.length >= this.shape.queueLengthLimit) throw this.#reject("queue-full");
    request.queue = index;
    const signal = waiting?.cancel();
    return new Promise<() => void>((resolve, reject) => {
      let timer: TimerHandle | undefined;
      const settle = () => {
        if (timer !== undefined) this.#clock.clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
      };
      const waiter: Waiter = {
        request,
        dispatch: () => {
          settle();
          resolve(this.#seat(request));
        },
        fail: (reason) => {
          settle();
          // Its queue, wherever a new shape put it.
          for (const queue of this.#queues) {
            const index = queue.indexOf(waiter);
            if (index < 0) continue;
            queue.splice(index, 1);
            this.#waiting--;
            this.#noteDemand();
            break;
          }
          reject(this.#reject(reason));
        },
      };
      const onAbort = () => waiter.fail("cancelled");
      chosen.push(waiter);
      this.#waiting++;
      this.#noteDemand();
      request.asked?.queued?.(request.priorityLevel, request.flowSchema, chosen.length);
      timer = this.#clock.setTimeout(() => waiter.fail("time-out"), waitLimitMs);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  #seat(request: SeatRequest): () => void {
    this.executing++;
    this.counts.dispatched++;
    request.started = this.#clock.now();
    this.#seated.add(request);
    this.#noteDemand();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.executing--;
      this.#seated.delete(request);
      this.#dispatch();
      this.#noteDemand();
    };
  }

  #noteDemand(): void {
    this.demand.set(this.executing + this.#waiting);
  }

  #reject(reason: RejectionReason): FlowControlRejection {
    this.counts.rejected++;
    if (reason === "time-out") this.counts.timedOut++;
    if (reason === "cancelled") this.counts.cancelled++;
    return new FlowControlRejection(reason);
  }

  /** Gives free seats to waiting requests, one queue after another. */
  #dispatch(): void {
    while (this.#waiting > 0 && this.executing < this.concurrencyLimit) {
      let queue = this.#queues[this.#next % this.#queues.length]!;
      while (queue.length === 0) {
        this.#next = (this.#next + 1) % this.#queues.length;
        queue = this.#queues[this.#next]!;
      }
      this.#next = (this.#next + 1) % this.#queues.length;
      const waiter = queue.shift()!;
      this.#waiting--;
      waiter.dispatch();
    }
  }
}
