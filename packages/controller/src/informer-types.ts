import type { DeepReadonly, DeletedFinalStateUnknown } from "@reconcile/api";

/**
 * The handler a controller registers on an informer (client-go's
 * `ResourceEventHandlerFuncs`). A delete may carry a tombstone when the
 * informer missed the final state, so the type makes that case visible.
 */
export interface ControllerEventHandler<T> {
  onAdd?(obj: DeepReadonly<T>, isInInitialList: boolean): unknown;
  onUpdate?(oldObj: DeepReadonly<T>, newObj: DeepReadonly<T>): unknown;
  onDelete?(obj: DeepReadonly<T> | DeletedFinalStateUnknown<DeepReadonly<T>>): unknown;
}

/**
 * The part of an informer a controller uses. `SharedIndexInformer` from
 * `@reconcile/informer` has it all; a hand-written fake in a test needs only
 * the required members.
 */
export interface ControllerInformer<T> {
  addEventHandler(handler: ControllerEventHandler<T>): unknown;
  /** True once the initial list is in the cache. */
  hasSynced(): boolean;
  /**
   * Resolves once `hasSynced()` is true (client-go's `HasSyncedChecker().Done()`).
   * With it, waiting for the cache costs no timer at all; without it (a
   * fake), `hasSynced` is polled on the controller's clock.
   */
  whenSynced?(): Promise<void>;
  /** The last list/watch error, named in a cache-sync timeout. */
  lastWatchError?(): unknown;
  getIndexer(): ControllerIndexer<T>;
}

/** The cache reads a controller makes. */
export interface ControllerIndexer<T> {
  getByKey(key: string): DeepReadonly<T> | undefined;
  /** Objects indexed under `indexedValue` by index `indexName` (the `namespace` index is always there). */
  byIndex(indexName: string, indexedValue: string): DeepReadonly<T>[];
  getIndexers(): Record<string, unknown>;
  addIndexers(indexers: Record<string, (obj: DeepReadonly<T>) => readonly string[]>): void;
}

/**
 * Adds the index `name` to `indexer` unless it is there already: several
 * controllers on one shared informer ask for the same index, and an index is
 * added once (client-go's `AddIndexers` refuses a second with the same name).
 */
export function ensureIndex<T>(
  indexer: ControllerIndexer<T>,
  name: string,
  indexFunc: (obj: DeepReadonly<T>) => readonly string[],
): void {
  if (!(name in indexer.getIndexers())) indexer.addIndexers({ [name]: indexFunc });
}
