import { RingBuffer } from "./ring-buffer.js";
import { StorageError, type StorageEvent, type StorageWatcher } from "./storage.js";

/**
 * One watcher's queue: the events it has been sent and not yet read. The
 * initial events (a snapshot or a replay from history) are not counted against
 * the limit; live events are, and a watcher more than `limit` live events
 * behind is closed with a final ERROR event (it can resume from the last
 * revision it read), so a slow
 * reader never holds the writer up and never makes memory grow without bound.
 */
export class WatchChannel implements StorageWatcher {
  readonly #live = new RingBuffer<StorageEvent>();
  readonly #limit: number;
  readonly #onStop: () => void;
  #alsoOnStop: (() => void) | undefined;
  #initial: StorageEvent[] = [];
  #initialIndex = 0;
  #closeReason: string | undefined;
  #wake: (() => void) | undefined;

  constructor(options: { limit: number; onStop: () => void }) {
    this.#limit = options.limit;
    this.#onStop = options.onStop;
  }

  get closeReason(): string | undefined {
    return this.#closeReason;
  }

  get closed(): boolean {
    return this.#closeReason !== undefined;
  }

  /** Live events waiting to be read. */
  get backlog(): number {
    return this.#live.length;
  }

  /** The revision of the oldest event queued and not yet read, or undefined when nothing is queued. */
  get oldestQueuedRevision(): number | undefined {
    if (this.#initialIndex < this.#initial.length) return this.#initial[this.#initialIndex]!.revision;
    return this.#live.at(0)?.revision;
  }

  /**
   * Queues events that do not count against the limit: what every watcher
   * starts with (a snapshot or a replay from history), before any `push`.
   */
  pushInitial(events: StorageEvent[]): void {
    if (this.#closeReason !== undefined) return;
    if (this.#initialIndex === this.#initial.length) {
      this.#initial = events;
      this.#initialIndex = 0;
    } else {
      this.#initial = [...this.#initial.slice(this.#initialIndex), ...events];
      this.#initialIndex = 0;
    }
    this.#notify();
  }

  /** Queues a live event; closes the watcher if it is too far behind. */
  push(event: StorageEvent): void {
    if (this.#closeReason !== undefined) return;
    if (this.#live.length >= this.#limit) {
      // One ERROR after what was queued says why the stream ends: the reader resumes
      // from the last version it read (a reflector backs off and re-watches, no relist).
      const reason = `the watcher fell more than ${this.#limit} events behind and was closed; watch again from the last resourceVersion read`;
      this.#live.push({
        type: "ERROR",
        revision: event.revision,
        error: new StorageError("WatcherTooSlow", "", reason),
      });
      this.close(reason);
      return;
    }
    this.#live.push(event);
    this.#notify();
  }

  /**
   * Ends the watch with one ERROR event after what is already queued, as an
   * etcd watcher's buffered result channel delivers what it holds before the
   * error: the reader resumes from the last revision it read (a reflector
   * relists if that has left the history too). With `dropQueued` the queued
   * events go first (a watcher closed to free the memory they hold).
   */
  fail(error: StorageError | Error, revision: number, dropQueued = false): void {
    if (this.#closeReason !== undefined) return;
    if (dropQueued) {
      this.#initial = [];
      this.#initialIndex = 0;
      this.#live.clear();
    }
    this.#live.push({ type: "ERROR", revision, error: error as StorageError });
    this.close(error.message);
  }

  /** Ends the watch: what is queued can still be read, then iteration ends. */
  close(reason: string): void {
    if (this.#closeReason !== undefined) return;
    this.#closeReason = reason;
    this.#onStop();
    this.#alsoOnStop?.();
    this.#notify();
  }

  /** Also calls `callback` when the channel closes (at once if it already has). */
  onClose(callback: () => void): void {
    if (this.#closeReason !== undefined) callback();
    else this.#alsoOnStop = callback;
  }

  /** Ends the watch at once: whatever is still queued is dropped. */
  stop(): void {
    this.#initial = [];
    this.#initialIndex = 0;
    this.#live.clear();
    this.close("stopped");
  }

  /** The next event, or undefined when nothing is queued. */
  poll(): StorageEvent | undefined {
    if (this.#initialIndex < this.#initial.length) {
      const event = this.#initial[this.#initialIndex]!;
      this.#initial[this.#initialIndex++] = undefined as unknown as StorageEvent;
      if (this.#initialIndex === this.#initial.length) {
        this.#initial = [];
        this.#initialIndex = 0;
      }
      return event;
    }
    return this.#live.shift();
  }

  /**
   * The channel is its own iterator (read it once). `next` resolves at once
   * when an event is queued; a plain iterator rather than an async generator,
   * because fan-out to thousands of watchers pays this per event per watcher.
   */
  [Symbol.asyncIterator](): AsyncIterator<StorageEvent> {
    return this;
  }

  next(): Promise<IteratorResult<StorageEvent>> {
    const event = this.poll();
    if (event !== undefined) return Promise.resolve({ done: false, value: event });
    if (this.#closeReason !== undefined) return Promise.resolve({ done: true, value: undefined });
    return new Promise((resolve) => {
      const wake = () => {
        const next = this.poll();
        if (next !== undefined) resolve({ done: false, value: next });
        else if (this.#closeReason !== undefined) resolve({ done: true, value: undefined });
        else this.#wake = wake; // woken with nothing to read (an empty initial batch): keep waiting
      };
      this.#wake = wake;
    });
  }

  return(): Promise<IteratorResult<StorageEvent>> {
    this.stop();
    return Promise.resolve({ done: true, value: undefined });
  }

  #notify(): void {
    const wake = this.#wake;
    if (wake !== undefined) {
      this.#wake = undefined;
      wake();
    }
  }
}
