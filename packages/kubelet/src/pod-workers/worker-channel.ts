/**
 * A channel of capacity one carrying "there is an update" to a worker: a send
 * never blocks and is dropped when one is already waiting.
 */
export class WorkerChannel {
  #signaled = false;
  #closed = false;
  #wake: (() => void) | undefined;

  send(): void {
    if (this.#closed || this.#signaled) return;
    this.#signaled = true;
    this.#notify();
  }

  /** Empties the channel without waking anyone. */
  drain(): void {
    this.#signaled = false;
  }

  close(): void {
    this.#closed = true;
    this.#notify();
  }

  /** Resolves true with the next signal, false once closed and empty (Go's `range` over a channel). */
  async receive(): Promise<boolean> {
    for (;;) {
      if (this.#signaled) {
        this.#signaled = false;
        return true;
      }
      if (this.#closed) return false;
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
    }
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}
