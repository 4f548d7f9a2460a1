/** Waiting to be handed out: in the FIFO, or (with PROCESSING) to go back in after `done`. */
export const DIRTY = 1;
/** Handed out by `get`, not yet `done`. */
export const PROCESSING = 2;
/** Waiting in a delaying queue until `readyAt`. */
export const WAITING = 4;

/**
 * What a queue knows about one item it holds: dirty, processing and waiting
 * are flags on one record, so one map lookup finds all three (client-go keeps
 * a dirty set, a processing set and a waiting map).
 *
 * The record doubles as the `{ item, shutdown: false }` that `get` resolves
 * with, so handing an item out allocates nothing. Its flags and ready time are
 * private fields: callers see only `item` and `shutdown` (the accessors are
 * typed away by `GetResult`).
 */
export class ItemState<T> {
  readonly shutdown = false;
  #flags = 0;
  #readyAt = 0;

  constructor(readonly item: T) {}

  /** DIRTY, PROCESSING and WAITING bits. */
  get flags(): number {
    return this.#flags;
  }

  set flags(flags: number) {
    this.#flags = flags;
  }

  /** When a WAITING item is due, in the clock's milliseconds. */
  get readyAt(): number {
    return this.#readyAt;
  }

  set readyAt(readyAt: number) {
    this.#readyAt = readyAt;
  }
}
