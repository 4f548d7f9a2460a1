import type { DeepReadonly, DeletedFinalStateUnknown } from "@reconcile/api";

/**
 * The part of an informer the ReplicaSet controller uses. `SharedIndexInformer`
 * from `@reconcile/informer` has it; so can a hand-written fake in a test.
 */
export interface ControllerInformer<T> {
  addEventHandler(handler: {
    onAdd?(obj: DeepReadonly<T>, isInInitialList: boolean): unknown;
    onUpdate?(oldObj: DeepReadonly<T>, newObj: DeepReadonly<T>): unknown;
    onDelete?(obj: DeepReadonly<T> | DeletedFinalStateUnknown<DeepReadonly<T>>): unknown;
  }): unknown;
  hasSynced(): boolean;
  getIndexer(): ControllerIndexer<T>;
}

/** The cache reads the controller makes. */
export interface ControllerIndexer<T> {
  getByKey(key: string): DeepReadonly<T> | undefined;
  /** Objects indexed under `indexedValue` by index `indexName` (the `namespace` index is always there). */
  byIndex(indexName: string, indexedValue: string): DeepReadonly<T>[];
  getIndexers(): Record<string, unknown>;
  addIndexers(indexers: Record<string, (obj: DeepReadonly<T>) => readonly string[]>): void;
}
