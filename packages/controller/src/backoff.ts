// client-go's `flowcontrol.Backoff`, as the kubelet uses it for container
// restarts and image pulls and the DaemonSet controller for failed pods: per
// key, an initial delay that doubles up to a maximum, no jitter, and an entry
// forgotten once it has not been touched for twice the maximum.
import type { Clock } from "@reconcile/clock";

interface Entry {
  backoffMs: number;
  lastUpdate: number;
}

export class Backoff {
  readonly #clock: Clock;
  readonly #initialMs: number;
  readonly #maxMs: number;
  readonly #entries = new Map<string, Entry>();

  constructor(clock: Clock, initialMs: number, maxMs: number) {
    this.#clock = clock;
    this.#initialMs = initialMs;
    this.#maxMs = maxMs;
  }

  /** The current delay for `key`; 0 when it has none. */
  get(key: string): number {
    return this.#entries.get(key)?.backoffMs ?? 0;
  }

  /** Moves `key` one step up the ladder, as of `eventTime` (`Next`). */
  next(key: string, eventTime: number): void {
    const entry = this.#entries.get(key);
    if (entry === undefined || this.#hasExpired(eventTime, entry.lastUpdate)) {
      this.#entries.set(key, { backoffMs: this.#initialMs, lastUpdate: this.#clock.now() });
      return;
    }
    entry.backoffMs = Math.min(entry.backoffMs * 2, this.#maxMs);
    entry.lastUpdate = this.#clock.now();
  }

  /** Whether `key` is still backing off from an event at `eventTime` (`IsInBackOffSince`). */
  isInBackOffSince(key: string, eventTime: number): boolean {
    const entry = this.#entries.get(key);
    if (entry === undefined) return false;
    if (this.#hasExpired(eventTime, entry.lastUpdate)) return false;
    return this.#clock.now() - eventTime < entry.backoffMs;
  }

  /** Whether `key` is backing off from its own last update (`IsInBackOffSinceUpdate`). */
  isInBackOffSinceUpdate(key: string): boolean {
    const entry = this.#entries.get(key);
    if (entry === undefined) return false;
    if (this.#hasExpired(this.#clock.now(), entry.lastUpdate)) return false;
    return this.#clock.now() - entry.lastUpdate < entry.backoffMs;
  }

  /** When `key`'s current backoff from `eventTime` ends. */
  expiresAt(key: string, eventTime: number): number {
    return eventTime + (this.#entries.get(key)?.backoffMs ?? 0);
  }

  /** Forgets entries untouched for twice the maximum (`GC`). */
  gc(): void {
    const now = this.#clock.now();
    for (const [key, entry] of this.#entries) {
      if (now - entry.lastUpdate > 2 * this.#maxMs) this.#entries.delete(key);
    }
  }

  #hasExpired(eventTime: number, lastUpdate: number): boolean {
    return eventTime - lastUpdate > 2 * this.#maxMs;
  }
}
