import { type Clock, realClock } from "@reconcile/clock";

/**
 * How long expectations are trusted (kube-controller-manager's
 * `ExpectationsTimeout`): a controller whose expected events were lost (a
 * dropped watch, a failed create it never heard back about) syncs again once
 * its record is older than this, instead of waiting forever.
 */
export const expectationsTimeoutMs = 5 * 60 * 1000;

export interface ControllerExpectationsOptions {
  /** The source of time for record timestamps and expiry. Default: `realClock`. */
  clock?: Clock | undefined;
  /** A record older than this (strictly) counts as satisfied. Default: {@link expectationsTimeoutMs} (5 minutes). */
  ttlMs?: number | undefined;
}

/**
 * One controller's outstanding creations and deletions (upstream's
 * `ControlleeExpectations`). Counters may go below zero when more events are
 * observed than were expected; the record is then fulfilled.
 */
export interface ControlleeExpectations {
  /** The controller's key (`namespace/name`). */
  readonly key: string;
  /** Creations still expected. */
  readonly add: number;
  /** Deletions still expected. */
  readonly del: number;
  /** When the record was set, in the clock's milliseconds. Raising or lowering does not change it. */
  readonly timestamp: number;
  /** `add <= 0 && del <= 0`. */
  fulfilled(): boolean;
  /** Whether the record is older than the TTL (strictly: exactly the TTL old is not expired). */
  isExpired(): boolean;
}

/**
 * What a controller expects to see from its informers after it writes, so it
 * does not act twice on a stale cache (kube-controller-manager's
 * `ControllerExpectationsInterface`).
 */
export interface ControllerExpectationsInterface {
  getExpectations(key: string): ControlleeExpectations | undefined;
  satisfiedExpectations(key: string): boolean;
  deleteExpectations(key: string): void;
  setExpectations(key: string, add: number, del: number): void;
  expectCreations(key: string, adds: number): void;
  expectDeletions(key: string, dels: number): void;
  creationObserved(key: string): void;
  deletionObserved(key: string): void;
  raiseExpectations(key: string, add: number, del: number): void;
  lowerExpectations(key: string, add: number, del: number): void;
  /** The records still waiting for something, for a debugging view. */
  outstanding?(): OutstandingExpectations[];
}

/** One controller's unfulfilled expectations, as a debugging view shows them. */
export interface OutstandingExpectations {
  key: string;
  /** Creations and deletions still expected. */
  add: number;
  del: number;
  /** How long ago they were set, in ms; past the TTL they no longer hold the controller back. */
  ageMs: number;
  expired: boolean;
  /** The keys of the pods whose deletion is expected (UID-tracking expectations). */
  deleting?: string[];
}

/**
 * Per-controller counters of creations and deletions the controller has
 * issued but its informers have not yet shown it (kube-controller-manager's
 * `ControllerExpectations`).
 *
 * A controller sets expectations before it writes (`expectCreations(key, n)`),
 * its event handlers count the results in (`creationObserved(key)`), and its
 * sync does nothing but wait while `satisfiedExpectations(key)` is false. A
 * record that is fulfilled, missing, or older than the TTL is satisfied.
 */
export class ControllerExpectations implements ControllerExpectationsInterface {
  readonly #clock: Clock;
  readonly #ttlMs: number;
  readonly #records = new Map<string, ExpectationsRecord>();

  constructor(options: ControllerExpectationsOptions = {}) {
    this.#clock = options.clock ?? realClock;
    const ttlMs = options.ttlMs ?? expectationsTimeoutMs;
    if (!(ttlMs >= 0) || !Number.isFinite(ttlMs)) {
      throw new RangeError(`ttlMs must be a finite number >= 0, got ${ttlMs}`);
    }
    this.#ttlMs = ttlMs;
  }

  /** The record for `key`, or undefined. The record is live: later observations show in it. */
  getExpectations(key: string): ControlleeExpectations | undefined {
    return this.#records.get(key);
  }

  /**
   * Whether the controller may sync: true when there is no record (it never
   * set expectations, or they were deleted), when the record is fulfilled, or
   * when it is older than the TTL.
   */
  satisfiedExpectations(key: string): boolean {
    const record = this.#records.get(key);
    if (record === undefined) return true;
    return record.fulfilled() || record.isExpired();
  }

  /** Forgets the record (call it when the controller object is deleted). */
  deleteExpectations(key: string): void {
    this.#records.delete(key);
  }

  /** Every record not yet fulfilled, oldest first: what the controller still waits to see. */
  outstanding(): OutstandingExpectations[] {
    const now = this.#clock.now();
    const out: OutstandingExpectations[] = [];
    for (const record of this.#records.values()) {
      if (record.fulfilled()) continue;
      out.push({
        key: record.key,
        add: Math.max(0, record.add),
        del: Math.max(0, record.del),
        ageMs: now - record.timestamp,
        expired: record.isExpired(),
      });
    }
    return out.sort((a, b) => b.ageMs - a.ageMs);
  }

  /** Replaces any record for `key` with these counts, stamped now. */
  setExpectations(key: string, add: number, del: number): void {
    checkCount("add", add);
    checkCount("del", del);
    this.#records.set(key, new ExpectationsRecord(key, add, del, this.#clock, this.#ttlMs));
  }

  /** `setExpectations(key, adds, 0)`: replaces the record, so pending deletions are forgotten. */
  expectCreations(key: string, adds: number): void {
    this.setExpectations(key, adds, 0);
  }

  /** `setExpectations(key, 0, dels)`: replaces the record, so pending creations are forgotten. */
  expectDeletions(key: string, dels: number): void {
    this.setExpectations(key, 0, dels);
  }

  /** One expected creation happened (or failed and will never be seen). */
  creationObserved(key: string): void {
    this.lowerExpectations(key, 1, 0);
  }

  /** One expected deletion happened (or failed and will never be seen). */
  deletionObserved(key: string): void {
    this.lowerExpectations(key, 0, 1);
  }

  /** Adds to the counts of an existing record without refreshing its timestamp; no record, no effect. */
  raiseExpectations(key: string, add: number, del: number): void {
    checkCount("add", add);
    checkCount("del", del);
    this.#records.get(key)?.change(add, del);
  }

  /** Subtracts from the counts of an existing record (they may go negative); no record, no effect. */
  lowerExpectations(key: string, add: number, del: number): void {
    checkCount("add", add);
    checkCount("del", del);
    this.#records.get(key)?.change(-add, -del);
  }
}

/**
 * What `expectations` still waits for, when it can say (both classes here
 * can; a caller's own implementation may not): for a controller's
 * introspection.
 */
export function outstandingOf(expectations: unknown): OutstandingExpectations[] {
  return (
    (expectations as { outstanding?: () => OutstandingExpectations[] } | undefined)?.outstanding?.() ?? []
  );
}

class ExpectationsRecord implements ControlleeExpectations {
  readonly key: string;
  readonly timestamp: number;
  #add: number;
  #del: number;
  readonly #clock: Clock;
  readonly #ttlMs: number;

  constructor(key: string, add: number, del: number, clock: Clock, ttlMs: number) {
    this.key = key;
    this.#add = add;
    this.#del = del;
    this.#clock = clock;
    this.#ttlMs = ttlMs;
    this.timestamp = clock.now();
  }

  get add(): number {
    return this.#add;
  }

  get del(): number {
    return this.#del;
  }

  change(add: number, del: number): void {
    this.#add += add;
    this.#del += del;
  }

  fulfilled(): boolean {
    return this.#add <= 0 && this.#del <= 0;
  }

  isExpired(): boolean {
    return this.#clock.now() - this.timestamp > this.#ttlMs;
  }
}

function checkCount(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${name} must be a whole number >= 0, got ${value}`);
  }
}
