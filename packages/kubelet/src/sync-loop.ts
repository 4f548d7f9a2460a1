import type { DeepReadonly, Pod } from "@reconcile/api";
import type { Clock } from "@reconcile/clock";
import type { Logger } from "@reconcile/controller";
import type { ConfigOp } from "./config/api-source.js";
import type { PodLifecycleEvent } from "./pleg.js";
import type { ProbeUpdate } from "./prober.js";

/** One message of the sync loop, as one arm of upstream's `select`. */
export type LoopMessage =
  | { kind: "config"; op: ConfigOp; pods: DeepReadonly<Pod>[] }
  | { kind: "pleg"; events: readonly PodLifecycleEvent[] }
  | { kind: "sync"; uids?: readonly string[] }
  | { kind: "probe"; update: ProbeUpdate }
  | { kind: "housekeeping" };

const syncTickMs = 1000;
const housekeepingPeriodMs = 2000;

/**
 * The channels and tickers of upstream's `syncLoop`: config changes, PLEG
 * events, probe results and timed syncs arrive as messages, handled one at a
 * time in arrival order; one timer drives the PLEG relist, the 1 s sync tick
 * and the 2 s housekeeping tick (upstream's three tickers, at their periods),
 * so an idle node wakes once a second, not three times.
 */
export class SyncLoop {
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #node: string;
  readonly #messages: LoopMessage[] = [];
  #wake: (() => void) | undefined;
  readonly #timers = new Set<unknown>();
  #closed = false;

  constructor(options: { clock: Clock; logger: Logger; nodeName: string }) {
    this.#clock = options.clock;
    this.#logger = options.logger;
    this.#node = options.nodeName;
  }

  send(message: LoopMessage): void {
    this.#messages.push(message);
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  /** A sync of `uid` at `atMs` (a container's restart backoff ending). */
  syncAt(uid: string, atMs: number): void {
    this.#after(Math.max(0, atMs - this.#clock.now()), () => this.send({ kind: "sync", uids: [uid] }));
  }

  /** Handles every message with `iterate` (`syncLoopIteration`) and runs the tickers until `signal` aborts. */
  async run(options: {
    signal: AbortSignal;
    iterate: (message: LoopMessage) => void;
    relist: () => void;
    relistPeriodMs: number;
  }): Promise<void> {
    const { signal } = options;
    this.#tick(options);
    const onAbort = () => this.#wake?.();
    signal.addEventListener("abort", onAbort, { once: true });
    let next = 0;
    while (!signal.aborted) {
      if (next >= this.#messages.length) {
        this.#messages.length = 0;
        next = 0;
        await new Promise<void>((resolve) => {
          this.#wake = resolve;
        });
        continue;
      }
      const message = this.#messages[next++] as LoopMessage;
      try {
        options.iterate(message);
      } catch (error) {
        this.#logger.error({ err: error, node: this.#node }, "sync loop iteration failed");
      }
    }
    signal.removeEventListener("abort", onAbort);
  }

  /** Clears every timer; none is set after this. */
  close(): void {
    this.#closed = true;
    for (const timer of this.#timers) this.#clock.clearTimeout(timer);
    this.#timers.clear();
  }

  #tick({
    signal,
    relist,
    relistPeriodMs,
  }: {
    signal: AbortSignal;
    relist: () => void;
    relistPeriodMs: number;
  }) {
    const periodMs = Math.min(syncTickMs, relistPeriodMs);
    let lastRelist = Number.NEGATIVE_INFINITY;
    let lastSync = this.#clock.now();
    let lastHousekeeping = this.#clock.now();
    const beat = () => {
      if (signal.aborted) return;
      const now = this.#clock.now();
      if (now - lastRelist >= relistPeriodMs) {
        lastRelist = now;
        relist();
      }
      if (now - lastSync >= syncTickMs) {
        lastSync = now;
        this.send({ kind: "sync" });
      }
      if (now - lastHousekeeping >= housekeepingPeriodMs) {
        lastHousekeeping = now;
        this.send({ kind: "housekeeping" });
      }
      this.#after(periodMs, beat);
    };
    beat();
  }

  #after(ms: number, run: () => void): void {
    if (this.#closed) return;
    const timer = this.#clock.setTimeout(() => {
      this.#timers.delete(timer);
      run();
    }, ms);
    this.#timers.add(timer);
  }
}
