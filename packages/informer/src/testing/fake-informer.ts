import {
  type DeepReadonly,
  DeletedFinalStateUnknown,
  deepFreeze,
  deletionHandlingMetaNamespaceKeyFunc,
  type KubeObject,
} from "@reconcile/api";
import type { ResourceEventHandler } from "../processor-listener.js";
import type { ResourceEventHandlerRegistration } from "../shared-informer.js";
import { createIndexer, type Indexer, type Indexers, type Store } from "../store.js";

export interface FakeInformerOptions<T extends KubeObject> {
  /** Objects in the cache from the start, as if listed. Default none. */
  objects?: readonly T[] | undefined;
  /** Index functions besides `namespace`. Default none. */
  indexers?: Indexers<T> | undefined;
  /** Whether the informer reports synced from the start. Default true; otherwise call `markSynced()`. */
  synced?: boolean | undefined;
  /** Deep-freeze a copy of every object put in the cache, so a handler that mutates one throws. Default false. */
  detectMutations?: boolean | undefined;
}

/**
 * An informer a test drives by hand: `add`, `update` and `delete` change a
 * real indexer and call every handler at once, in order, as a running
 * `SharedIndexInformer` would after a watch event. It has the members
 * controllers use (`addEventHandler`, `hasSynced`, `whenSynced`,
 * `getIndexer`, `getStore`, `lastWatchError`), so it stands in wherever a
 * `SharedIndexInformer` (or `@reconcile/controller`'s `ControllerInformer`)
 * is asked for, with no lister-watcher and no clock.
 */
export class FakeInformer<T extends KubeObject> {
  readonly #indexer: Indexer<T>;
  readonly #handlers: ResourceEventHandler<T>[] = [];
  readonly #detectMutations: boolean;
  #synced: boolean;
  #markSynced!: () => void;
  readonly #whenSynced: Promise<void>;
  /** What `lastWatchError()` returns; set it to test how a controller reports a failing watch. */
  lastError: unknown;

  constructor(options: FakeInformerOptions<T> = {}) {
    this.#indexer = createIndexer<T>({ indexers: options.indexers });
    this.#detectMutations = options.detectMutations ?? false;
    this.#whenSynced = new Promise<void>((resolve) => {
      this.#markSynced = resolve;
    });
    this.#synced = false;
    for (const obj of options.objects ?? []) this.#indexer.add(this.#cached(obj));
    if (options.synced ?? true) this.markSynced();
  }

  /** The handlers added so far, in order. */
  get handlers(): readonly ResourceEventHandler<T>[] {
    return this.#handlers;
  }

  /** Adds a handler; it is called at once with `onAdd(obj, true)` for every cached object, as upstream does. */
  addEventHandler(handler: ResourceEventHandler<T>): ResourceEventHandlerRegistration {
    this.#handlers.push(handler);
    for (const obj of this.#indexer.list()) handler.onAdd?.(obj, true);
    return { hasSynced: () => this.#synced };
  }

  hasSynced(): boolean {
    return this.#synced;
  }

  whenSynced(): Promise<void> {
    return this.#whenSynced;
  }

  /** Turns `hasSynced()` true and resolves `whenSynced()`. */
  markSynced(): void {
    this.#synced = true;
    this.#markSynced();
  }

  lastWatchError(): unknown {
    return this.lastError;
  }

  getIndexer(): Indexer<T> {
    return this.#indexer;
  }

  getStore(): Store<T> {
    return this.#indexer;
  }

  /** Caches `obj` and calls every handler's `onAdd(obj, false)`; returns the cached object. */
  add(obj: T): DeepReadonly<T> {
    const cached = this.#cached(obj);
    this.#indexer.add(cached);
    for (const handler of this.#handlers) handler.onAdd?.(cached, false);
    return cached;
  }

  /**
   * Replaces the cached object with `obj` and calls every handler's
   * `onUpdate(old, new)`; an object not cached yet is added instead (as a
   * watch event after a missed add would be). Returns the cached object.
   */
  update(obj: T): DeepReadonly<T> {
    const old = this.#indexer.getByKey(deletionHandlingMetaNamespaceKeyFunc(obj));
    if (old === undefined) return this.add(obj);
    const cached = this.#cached(obj);
    this.#indexer.update(cached);
    for (const handler of this.#handlers) handler.onUpdate?.(old, cached);
    return cached;
  }

  /**
   * Removes `obj` from the cache and calls every handler's `onDelete` with
   * the last cached state; with `{ tombstone: true }` handlers get a
   * `DeletedFinalStateUnknown` instead, as after a delete the watch missed.
   */
  delete(obj: T, options: { tombstone?: boolean | undefined } = {}): void {
    const key = deletionHandlingMetaNamespaceKeyFunc(obj);
    const last = this.#indexer.getByKey(key) ?? this.#cached(obj);
    this.#indexer.delete(last);
    const delivered = options.tombstone ? new DeletedFinalStateUnknown(key, last) : last;
    for (const handler of this.#handlers) handler.onDelete?.(delivered);
  }

  #cached(obj: T): DeepReadonly<T> {
    return (this.#detectMutations ? deepFreeze(structuredClone(obj)) : obj) as DeepReadonly<T>;
  }
}
