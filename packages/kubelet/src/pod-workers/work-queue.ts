import { type Clock, realClock } from "@reconcile/clock";
import type { PodWorkQueue } from "./types.js";

/**
 * The kubelet's queue of pods due for a resync (`basicWorkQueue`): one
 * deadline per UID, a later `enqueue` replacing the earlier one, and
 * `getWork` handing out every UID whose deadline has passed.
 */
export class BasicWorkQueue implements PodWorkQueue {
  readonly #clock: Clock;
  readonly #deadlines = new Map<string, number>();

  constructor(options: { clock?: Clock | undefined } = {}) {
    this.#clock = options.clock ?? realClock;
  }

  enqueue(uid: string, delayMs: number): void {
    this.#deadlines.set(uid, this.#clock.now() + delayMs);
  }

  getWork(): string[] {
    const now = this.#clock.now();
    const ready: string[] = [];
    for (const [uid, deadline] of this.#deadlines) {
      // strictly before now, as upstream's `timestamp.Before(now)`
      if (deadline < now) {
        ready.push(uid);
        this.#deadlines.delete(uid);
      }
    }
    return ready;
  }

  /** How many UIDs are scheduled. */
  get size(): number {
    return this.#deadlines.size;
  }
}
