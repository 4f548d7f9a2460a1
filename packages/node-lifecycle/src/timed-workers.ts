import { type Clock, realClock, type TimerHandle } from "@reconcile/clock";

/**
 * Work that runs once at a given instant, one per key, cancellable until it
 * fires (upstream `TimedWorkerQueue` of the taint eviction controller). A key
 * whose work succeeded stays taken, so the same eviction is not scheduled a
 * second time; cancelling releases it. Work that failed releases its key.
 */
export class TimedWorkerQueue {
  readonly #clock: Clock;
  readonly #work: (key: string, fireAt: number) => Promise<void>;
  /** A scheduled worker, or null once its work has succeeded. */
  readonly #workers = new Map<string, TimedWorker | null>();
  readonly #running = new Set<Promise<void>>();

  constructor(options: { work: (key: string, fireAt: number) => Promise<void>; clock?: Clock | undefined }) {
    this.#work = options.work;
    this.#clock = options.clock ?? realClock;
  }

  /** Schedules the work for `key` at `fireAt` (now or past: at once), remembering `createdAt`. No-op if the key is taken. */
  addWork(key: string, createdAt: number, fireAt: number): void {
    if (this.#workers.has(key)) return;
    const worker: TimedWorker = { createdAt, fireAt, timer: undefined };
    this.#workers.set(key, worker);
    const delay = fireAt - this.#clock.now();
    if (delay <= 0) {
      this.#fire(key, worker);
      return;
    }
    worker.timer = this.#clock.setTimeout(() => {
      worker.timer = undefined;
      this.#fire(key, worker);
    }, delay);
  }

  /** Cancels the work for `key` and releases it; true only if a not-yet-fired worker was cancelled. */
  cancelWork(key: string): boolean {
    if (!this.#workers.has(key)) return false;
    const worker = this.#workers.get(key);
    this.#workers.delete(key);
    if (worker === null || worker === undefined) return false;
    if (worker.timer !== undefined) this.#clock.clearTimeout(worker.timer);
    worker.cancelled = true;
    return true;
  }

  /** The scheduled worker of `key`: undefined if none, null if its work has already succeeded. */
  getWorker(key: string): Readonly<{ createdAt: number; fireAt: number }> | null | undefined {
    return this.#workers.get(key);
  }

  /** Keys with a worker that has not fired yet. */
  scheduledKeys(): string[] {
    return [...this.#workers].filter(([, w]) => w !== null && w.timer !== undefined).map(([key]) => key);
  }

  /** Cancels every pending worker and waits for the ones running. */
  async stop(): Promise<void> {
    for (const [key, worker] of this.#workers) {
      if (worker?.timer !== undefined) this.#clock.clearTimeout(worker.timer);
      if (worker) worker.cancelled = true;
      this.#workers.delete(key);
    }
    await Promise.allSettled([...this.#running]);
  }

  #fire(key: string, worker: TimedWorker): void {
    if (worker.cancelled) return;
    const run = this.#work(key, worker.fireAt).then(
      () => {
        if (this.#workers.get(key) === worker) this.#workers.set(key, null);
      },
      () => {
        if (this.#workers.get(key) === worker) this.#workers.delete(key);
      },
    );
    this.#running.add(run);
    void run.finally(() => this.#running.delete(run));
  }
}

interface TimedWorker {
  createdAt: number;
  fireAt: number;
  timer: TimerHandle | undefined;
  cancelled?: boolean;
}
