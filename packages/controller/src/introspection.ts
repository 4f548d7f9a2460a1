import type { Delivery } from "@reconcile/informer";
import type { ReconcileRecord } from "./sync-result.js";

/**
 * One part of a running component that can say what it holds right now: a
 * controller's queues and last reconciles, a scheduler's queue and
 * decisions, a kubelet's pod workers. `snapshot` is called when someone
 * looks (a debugging page, `/debug/machinery`), never on a hot path, and
 * returns plain JSON.
 */
export interface MachinerySource {
  /** What it is: `controller`, `informer`, `scheduler`, `kubelet`, … */
  readonly kind: string;
  /** Its name among its kind (a controller's name, a node's name). */
  readonly name: string;
  snapshot(): unknown;
}

/** What {@link Introspection.snapshot} returns for one source. */
export interface MachinerySnapshot {
  kind: string;
  name: string;
  state: unknown;
}

/**
 * The sources of one process, by kind and name: each controller built with
 * it in its context registers itself, and whoever serves the view asks for
 * every snapshot at once. A source that throws is reported with its error,
 * not dropped, so a broken part is visible.
 */
export class Introspection {
  readonly #sources = new Map<string, MachinerySource>();

  /** Adds `source`, replacing one of the same kind and name; the returned function removes it. */
  register(source: MachinerySource): () => void {
    const id = `${source.kind}/${source.name}`;
    this.#sources.set(id, source);
    return () => {
      if (this.#sources.get(id) === source) this.#sources.delete(id);
    };
  }

  /** Every source's state now, sorted by kind and name. */
  snapshot(): MachinerySnapshot[] {
    const out: MachinerySnapshot[] = [];
    for (const [id, source] of [...this.#sources].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      let state: unknown;
      try {
        state = source.snapshot();
      } catch (error) {
        state = { error: error instanceof Error ? error.message : String(error) };
      }
      out.push({ kind: source.kind, name: id.slice(source.kind.length + 1), state });
    }
    return out;
  }
}

/** A reconcile as a view shows it: JSON, with the key and the error as text. */
export interface ReconcileSummary {
  controller: string;
  key: string;
  reason: string | undefined;
  /** The informer delivery that queued it: `MODIFIED pods default/web-1 rv 42`. */
  trigger?: string | undefined;
  reconcileID: string;
  outcome: string;
  error?: string | undefined;
  requeueAfterMs?: number | undefined;
  startedAt: number;
  durationMs: number;
}

/**
 * The last `capacity` values pushed, oldest first: a fixed ring, so keeping
 * a recent history costs one slot per value and nothing more. `total`
 * counts every value pushed, the forgotten ones too.
 */
export class RecentRing<T> {
  readonly #slots: (T | undefined)[];
  #next = 0;
  #total = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 0) {
      throw new RangeError(`RecentRing: capacity must be a whole number, got ${capacity}`);
    }
    this.#slots = new Array(capacity);
  }

  push(value: T): void {
    this.#total++;
    if (this.capacity === 0) return;
    this.#slots[this.#next] = value;
    this.#next = (this.#next + 1) % this.capacity;
  }

  get total(): number {
    return this.#total;
  }

  /** The values kept, oldest first. */
  list(): T[] {
    const out: T[] = [];
    for (let i = 0; i < this.capacity; i++) {
      const value = this.#slots[(this.#next + i) % this.capacity];
      if (value !== undefined) out.push(value);
    }
    return out;
  }
}

/** The last `capacity` reconciles of a controller, newest last. */
export class ReconcileHistory {
  readonly #ring: RecentRing<ReconcileSummary>;

  constructor(readonly capacity = 20) {
    this.#ring = new RecentRing(capacity);
  }

  record(record: ReconcileRecord): void {
    this.#ring.push({
      controller: record.controller,
      key: typeof record.key === "string" ? record.key : JSON.stringify(record.key),
      reason: record.reason,
      ...(record.trigger === undefined ? {} : { trigger: deliveryText(record.trigger) }),
      reconcileID: record.reconcileID,
      outcome: record.outcome,
      ...(record.error === undefined ? {} : { error: errorText(record.error) }),
      ...(record.requeueAfterMs === undefined ? {} : { requeueAfterMs: record.requeueAfterMs }),
      startedAt: record.startedAt,
      durationMs: record.endedAt - record.startedAt,
    });
  }

  /** Reconciles recorded so far, including those the ring has forgotten. */
  get total(): number {
    return this.#ring.total;
  }

  /** The remembered reconciles, oldest first. */
  list(): ReconcileSummary[] {
    return this.#ring.list();
  }
}

/** A delivery in one line: `MODIFIED pods default/web-1 rv 42`. */
export function deliveryText(delivery: Delivery): string {
  return `${delivery.type} ${delivery.informer} ${delivery.key} rv ${delivery.resourceVersion}`;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
