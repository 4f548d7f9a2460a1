import {
  type DeepReadonly,
  DeletedFinalStateUnknown,
  isDeletedFinalStateUnknown,
  type KubeObject,
  metaNamespaceKeyFunc,
  ReconcileError,
} from "@reconcile/api";
import { RingBuffer } from "./ring-buffer.js";

/** What happened to an object (client-go's `DeltaType`). */
export type DeltaType = "Added" | "Updated" | "Deleted" | "Replaced" | "Sync";

/** An object as a delta carries it: the object, or a tombstone for a delete the informer missed. */
export type DeltaObject<T> = DeepReadonly<T> | DeletedFinalStateUnknown<DeepReadonly<T>>;

/** One change (client-go's `Delta`). */
export interface Delta<T> {
  readonly type: DeltaType;
  readonly object: DeltaObject<T>;
}

/** Every change to one key since it was last popped, oldest first. */
export type Deltas<T> = readonly Delta<T>[];

/** The newest delta, or undefined for an empty list. */
export function newestDelta<T>(deltas: Deltas<T>): Delta<T> | undefined {
  return deltas[deltas.length - 1];
}

/** The oldest delta, or undefined for an empty list. */
export function oldestDelta<T>(deltas: Deltas<T>): Delta<T> | undefined {
  return deltas[0];
}

/** What a DeltaFIFO needs of the informer's cache to build tombstones and resyncs (client-go's `KeyListerGetter`). */
export interface KeyListerGetter<T> {
  listKeys(): string[];
  getByKey(key: string): DeepReadonly<T> | undefined;
}

/** Rewrites an object before it is queued and cached (client-go's `TransformFunc`). Must be idempotent. */
export type TransformFunc<T> = (obj: T) => T;

/** Processes the deltas of one key; `isInInitialList` is true while the initial list is being delivered. */
export type PopProcessFunc<T> = (deltas: Deltas<T>, isInInitialList: boolean, key: string) => void;

export interface DeltaFIFOOptions<T> {
  /** Computes an object's key. Default: `metaNamespaceKeyFunc` (`namespace/name`). Tombstones use their own key. */
  keyFunction?: ((obj: DeepReadonly<T>) => string) | undefined;
  /**
   * The consumer's cache. With it, `delete` of an unknown object is ignored,
   * `replace` makes tombstones for cached keys missing from the list, and
   * `resync` queues Sync deltas. Default: none.
   */
  knownObjects?: KeyListerGetter<T> | undefined;
  /** Whether `replace` queues `Replaced` (true) or `Sync` (false) deltas. Default: false, as in client-go; informers set true. */
  emitDeltaTypeReplaced?: boolean | undefined;
  /** Applied to every object queued, except tombstones and Sync deltas. Default: none. */
  transformer?: TransformFunc<T> | undefined;
  /** Called once, as soon as {@link DeltaFIFO.hasSynced} turns true (the informer's synced signal). Default: none. */
  onSynced?: (() => void) | undefined;
}

const fifoClosedMarker = Symbol.for("reconcile.fifo-closed-error");

/** Pop on a closed, drained DeltaFIFO (client-go's `ErrFIFOClosed`). */
export class FIFOClosedError extends ReconcileError {
  readonly [fifoClosedMarker] = true;

  constructor() {
    super("informer.fifo-closed", "DeltaFIFO: manipulating with closed queue", { legacyCode: "fifo.closed" });
    this.name = "FIFOClosedError";
  }

  static override isInstance(error: unknown): error is FIFOClosedError {
    return ReconcileError.hasMarker(error, fifoClosedMarker);
  }
}

/**
 * client-go's classic `DeltaFIFO`: a queue of keys in the order each key was
 * first added since it was last popped, where each key carries every delta
 * since then. The reflector produces into it; the informer pops from it.
 */
export class DeltaFIFO<T extends KubeObject = KubeObject> {
  readonly #keyFunction: (obj: DeepReadonly<T>) => string;
  readonly #knownObjects: KeyListerGetter<T> | undefined;
  readonly #emitDeltaTypeReplaced: boolean;
  readonly #transformer: TransformFunc<T> | undefined;
  readonly #items = new Map<string, Delta<T>[]>();
  readonly #queue = new RingBuffer<string>(1024);
  #waiters: (() => void)[] = [];
  #populated = false;
  #initialPopulationCount = 0;
  #closed = false;
  #onSynced: (() => void) | undefined;

  constructor(options: DeltaFIFOOptions<T> = {}) {
    this.#onSynced = options.onSynced;
    this.#keyFunction = options.keyFunction ?? metaNamespaceKeyFunc;
    this.#knownObjects = options.knownObjects;
    this.#emitDeltaTypeReplaced = options.emitDeltaTypeReplaced ?? false;
    this.#transformer = options.transformer;
  }

  /** The number of keys waiting to be popped. */
  get length(): number {
    return this.#queue.length;
  }

  /** The key of an object, a tombstone, or a `Deltas` (its newest object). */
  keyOf(obj: T | DeepReadonly<T> | DeletedFinalStateUnknown<unknown> | Deltas<T>): string {
    if (Array.isArray(obj)) {
      const newest = newestDelta(obj as Deltas<T>);
      if (newest === undefined) throw new TypeError("DeltaFIFO: cannot compute the key of an empty Deltas");
      return this.keyOf(newest.object);
    }
    if (isDeletedFinalStateUnknown(obj)) return obj.key;
    return this.#keyFunction(obj as DeepReadonly<T>);
  }

  add(obj: T | DeepReadonly<T>): void {
    this.#populated = true;
    this.#queueAction("Added", obj as DeepReadonly<T>);
    this.#notifyIfSynced();
  }

  update(obj: T | DeepReadonly<T>): void {
    this.#populated = true;
    this.#queueAction("Updated", obj as DeepReadonly<T>);
    this.#notifyIfSynced();
  }

  /**
   * Queues a Deleted delta. With `knownObjects`, a delete of a key that is
   * neither cached nor queued is ignored (it was already deleted); without,
   * a delete of a key not queued is ignored.
   */
  delete(obj: T | DeepReadonly<T> | DeletedFinalStateUnknown<DeepReadonly<T>>): void {
    const key = this.keyOf(obj);
    this.#populated = true;
    this.#notifyIfSynced();
    if (!this.#items.has(key)) {
      if (this.#knownObjects === undefined) return;
      if (this.#knownObjects.getByKey(key) === undefined) return;
    }
    this.#queueAction("Deleted", obj as DeltaObject<T>);
  }

  /**
   * Queues a Replaced (or Sync) delta for every listed object, and a Deleted
   * tombstone for every queued or known key the list no longer has.
   */
  replace(list: readonly (T | DeepReadonly<T>)[], _resourceVersion: string): void {
    const action: DeltaType = this.#emitDeltaTypeReplaced ? "Replaced" : "Sync";
    const knownKeys = this.#knownObjects?.listKeys() ?? [];
    if (this.#items.size === 0 && knownKeys.length === 0) {
      // Nothing queued or known (the first list): no tombstones to compute, no key set to build.
      for (const obj of list) this.#queueAction(action, obj as DeepReadonly<T>);
      if (!this.#populated) {
        this.#populated = true;
        this.#initialPopulationCount = this.#items.size;
      }
      this.#notifyIfSynced();
      return;
    }
    const keys = new Set<string>();
    for (const obj of list) {
      keys.add(this.keyOf(obj));
      this.#queueAction(action, obj as DeepReadonly<T>);
    }
    let queuedDeletions = 0;
    for (const [key, deltas] of this.#items) {
      if (keys.has(key)) continue;
      let last = newestDelta(deltas)!.object;
      if (isDeletedFinalStateUnknown(last)) last = last.obj;
      this.#queueAction("Deleted", new DeletedFinalStateUnknown(key, last));
      queuedDeletions++;
    }
    for (const key of knownKeys) {
      if (keys.has(key) || this.#items.has(key)) continue;
      const known = this.#knownObjects!.getByKey(key);
      this.#queueAction("Deleted", new DeletedFinalStateUnknown(key, known as DeepReadonly<T>));
      queuedDeletions++;
    }
    if (!this.#populated) {
      this.#populated = true;
      this.#initialPopulationCount = keys.size + queuedDeletions;
    }
    this.#notifyIfSynced();
  }

  /** Queues a Sync delta for every known object that has no pending deltas. No-op without `knownObjects`. */
  resync(): void {
    if (this.#knownObjects === undefined) return;
    for (const key of this.#knownObjects.listKeys()) {
      // A key with pending deltas would be synced to a stale object: skip it, as client-go does.
      if (this.#items.has(key)) continue;
      const obj = this.#knownObjects.getByKey(key);
      if (obj === undefined) continue;
      this.#queueAction("Sync", obj);
    }
  }

  /**
   * Waits for a key, removes it with its deltas and calls `process` on them.
   * Rejects with {@link FIFOClosedError} once closed and drained, or with
   * whatever `process` throws (the deltas are not re-queued).
   */
  async pop(process: PopProcessFunc<T>): Promise<Deltas<T>> {
    while (this.#queue.length === 0) {
      if (this.#closed) throw new FIFOClosedError();
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
    return this.popReady(process)!;
  }

  /**
   * Like {@link pop}, but never waits: returns undefined when nothing is
   * queued. Lets a consumer drain a burst without one promise per key.
   */
  popReady(process: PopProcessFunc<T>): Deltas<T> | undefined {
    const key = this.#queue.shift();
    if (key === undefined) return undefined;
    const isInInitialList = !this.hasSynced();
    const deltas = this.#items.get(key)!;
    this.#items.delete(key);
    try {
      process(deltas, isInInitialList, key);
    } finally {
      // Counted after processing, so hasSynced() means "the initial list has been processed".
      if (this.#initialPopulationCount > 0) this.#initialPopulationCount--;
      this.#notifyIfSynced();
    }
    return deltas;
  }

  /** True once the first replace (or any add/update/delete before it) has been fully popped. */
  hasSynced(): boolean {
    return this.#populated && this.#initialPopulationCount === 0;
  }

  /** Unblocks waiting pops; they reject with {@link FIFOClosedError} once the queue is empty. */
  close(): void {
    this.#closed = true;
    this.#wake();
  }

  isClosed(): boolean {
    return this.#closed;
  }

  /** The newest object of every queued key (classic `List`). */
  list(): DeltaObject<T>[] {
    const objects: DeltaObject<T>[] = [];
    for (const deltas of this.#items.values()) objects.push(newestDelta(deltas)!.object);
    return objects;
  }

  /** Queued keys in pop order (classic `ListKeys`). */
  listKeys(): string[] {
    return Array.from(this.#queue);
  }

  /** A copy of the pending deltas of `obj`'s key (classic `Get`). */
  get(obj: T | DeepReadonly<T>): Delta<T>[] | undefined {
    return this.getByKey(this.keyOf(obj));
  }

  /** A copy of the pending deltas of `key` (classic `GetByKey`). */
  getByKey(key: string): Delta<T>[] | undefined {
    const deltas = this.#items.get(key);
    return deltas === undefined ? undefined : [...deltas];
  }

  /** Queues `deltas` at the back unless their key is already queued (classic `AddIfNotPresent`). */
  addIfNotPresent(deltas: Deltas<T>): void {
    if (!Array.isArray(deltas) || deltas.length === 0)
      throw new TypeError("DeltaFIFO.addIfNotPresent: expected a non-empty Deltas array");
    this.#populated = true;
    this.#notifyIfSynced();
    const key = this.keyOf(deltas);
    if (this.#items.has(key)) return;
    this.#queue.push(key);
    this.#items.set(key, [...deltas]);
    this.#wake();
  }

  #notifyIfSynced(): void {
    if (this.#onSynced === undefined || !this.hasSynced()) return;
    const onSynced = this.#onSynced;
    this.#onSynced = undefined;
    onSynced();
  }

  #queueAction(type: DeltaType, obj: DeltaObject<T>): void {
    const key = this.keyOf(obj);
    if (this.#transformer !== undefined && type !== "Sync" && !isDeletedFinalStateUnknown(obj)) {
      obj = this.#transformer(obj as T) as DeepReadonly<T>;
    }
    const delta: Delta<T> = { type, object: obj };
    const deltas = this.#items.get(key);
    if (deltas === undefined) {
      this.#items.set(key, [delta]);
      this.#queue.push(key);
      this.#wake();
      return;
    }
    deltas.push(delta);
    dedupDeltas(deltas);
  }

  #wake(): void {
    if (this.#waiters.length === 0) return;
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const resolve of waiters) resolve();
  }
}

// Only the last two deltas are compared: two deletes in a row become one,
// keeping the older unless it is a tombstone (the newer one knows more).
function dedupDeltas<T>(deltas: Delta<T>[]): void {
  const n = deltas.length;
  if (n < 2) return;
  const a = deltas[n - 1]!;
  const b = deltas[n - 2]!;
  if (a.type !== "Deleted" || b.type !== "Deleted") return;
  if (isDeletedFinalStateUnknown(b.object)) deltas[n - 2] = a;
  deltas.length = n - 1;
}
