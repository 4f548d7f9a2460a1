import { StorageError, type StorageEvent, type StorageWatcher } from "@reconcile/apiserver";

/**
 * One watcher's queue of events not yet read. Past `limit` unread events the
 * watcher is closed with a last ERROR `WatcherTooSlow` (the reader resumes from
 * the last revision it read), so a slow reader neither holds the producer up
 * nor makes memory grow without bound. Initial events are not counted.
 */
export class EventChannel implements StorageWatcher {
  readonly #limit: number;
  readonly #onStop: () => void;
  #alsoOnStop: (() => void) | undefined;
  #queue: StorageEvent[] = [];
  #head = 0;
  #initialRemaining = 0;
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

  /** Queues events that do not count against the limit (a snapshot or a replay). */
  pushInitial(events: StorageEvent[]): void {
    if (this.#closeReason !== undefined) return;
    for (const event of events) this.#queue.push(event);
    this.#initialRemaining += events.length;
    this.#notify();
  }

  /** Queues a live event; closes the watcher if it is too far behind. */
  push(event: StorageEvent): void {
    if (this.#closeReason !== undefined) return;
    if (this.#queue.length - this.#head - this.#initialRemaining >= this.#limit) {
      const reason = `the watcher fell more than ${this.#limit} events behind and was closed; watch again from the last resourceVersion read`;
      this.#queue.push({
        type: "ERROR",
        revision: event.revision,
        error: new StorageError("WatcherTooSlow", "", reason),
      });
      this.close(reason);
      return;
    }
    this.#queue.push(event);
    this.#notify();
  }

  /** Queues a last ERROR event and ends the watch after it. */
  fail(error: StorageError | Error, revision: number): void {
    if (this.#closeReason !== undefined) return;
    this.#queue.push({ type: "ERROR", revision, error: error as StorageError });
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

  /** Also calls `callback` when the channel closes (once). */
  onClose(callback: () => void): void {
    if (this.#closeReason !== undefined) callback();
    else this.#alsoOnStop = callback;
  }

  stop(): void {
    this.#queue = [];
    this.#head = 0;
    this.#initialRemaining = 0;
    this.close("stopped");
  }

  [Symbol.asyncIterator](): AsyncIterator<StorageEvent> {
    return this;
  }

  next(): Promise<IteratorResult<StorageEvent>> {
    const event = this.#poll();
    if (event !== undefined) return Promise.resolve({ done: false, value: event });
    if (this.#closeReason !== undefined) return Promise.resolve({ done: true, value: undefined });
    return new Promise((resolve) => {
      const wake = () => {
        const next = this.#poll();
        if (next !== undefined) resolve({ done: false, value: next });
        else if (this.#closeReason !== undefined) resolve({ done: true, value: undefined });
        else this.#wake = wake; // woken with nothing to read (an empty batch): keep waiting
      };
      this.#wake = wake;
    });
  }

  return(): Promise<IteratorResult<StorageEvent>> {
    this.stop();
    return Promise.resolve({ done: true, value: undefined });
  }

  #poll(): StorageEvent | undefined {
    if (this.#head >= this.#queue.length) return undefined;
    const event = this.#queue[this.#head]!;
    this.#queue[this.#head++] = undefined as unknown as StorageEvent;
    if (this.#initialRemaining > 0) this.#initialRemaining--;
    // Compact the array once the read part dominates, keeping shift O(1) amortised.
    if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
    return event;
  }

  #notify(): void {
    const wake = this.#wake;
    if (wake !== undefined) {
      this.#wake = undefined;
      wake();
    }
  }
}
