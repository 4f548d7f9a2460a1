import {
  type DeepReadonly,
  type DeletedFinalStateUnknown,
  deletionHandlingMetaNamespaceKeyFunc,
  type KubeObject,
  ReconcileError,
} from "@reconcile/api";

/** A multi-valued index function (client-go's `IndexFunc`): the values `obj` is indexed under. */
export type IndexFunc<T> = (obj: DeepReadonly<T>) => readonly string[];

/** Named index functions (client-go's `Indexers`). */
export type Indexers<T> = Record<string, IndexFunc<T>>;

/** The name of the built-in namespace index (client-go's `NamespaceIndex`). */
export const namespaceIndex = "namespace";

/** Indexes an object under its namespace (client-go's `MetaNamespaceIndexFunc`). */
export function metaNamespaceIndexFunc(obj: DeepReadonly<KubeObject>): readonly string[] {
  return [obj.metadata?.namespace ?? ""];
}

/** How a store computes keys. Receives tombstones too when deletes go through it. */
export type StoreKeyFunc<T> = (obj: DeepReadonly<T> | DeletedFinalStateUnknown<DeepReadonly<T>>) => string;

/**
 * A keyed, read-mostly cache of objects (client-go's `Store`). Add and update
 * are both upserts. What it hands out is shared: treat it as read-only.
 */
export interface Store<T> {
  add(obj: T | DeepReadonly<T>): void;
  update(obj: T | DeepReadonly<T>): void;
  /** Deletes the object with `obj`'s key; a tombstone deletes its key. Unknown keys are ignored. */
  delete(obj: T | DeepReadonly<T> | DeletedFinalStateUnknown<T | DeepReadonly<T>>): void;
  /** The stored object with `obj`'s key, or undefined. */
  get(obj: T | DeepReadonly<T>): DeepReadonly<T> | undefined;
  getByKey(key: string): DeepReadonly<T> | undefined;
  list(): DeepReadonly<T>[];
  listKeys(): string[];
  /** Swaps the whole content for `list` and rebuilds every index. */
  replace(list: readonly (T | DeepReadonly<T>)[], resourceVersion: string): void;
  /** Nothing to do for a plain store; part of the interface a reflector writes to. */
  resync(): void;
  /** The number of stored objects. */
  readonly size: number;
}

/** A {@link Store} with named secondary indexes (client-go's `Indexer`). */
export interface Indexer<T> extends Store<T> {
  /** Objects sharing any index value with `obj` under index `indexName`. */
  index(indexName: string, obj: T | DeepReadonly<T>): DeepReadonly<T>[];
  /** Keys indexed under `indexedValue`, sorted. */
  indexKeys(indexName: string, indexedValue: string): string[];
  /** Every value index `indexName` currently holds. Unknown index: empty. */
  listIndexFuncValues(indexName: string): string[];
  /** Objects indexed under `indexedValue`. */
  byIndex(indexName: string, indexedValue: string): DeepReadonly<T>[];
  getIndexers(): Indexers<T>;
  /** Adds index functions, indexing what is already stored. A name already in use is an error. */
  addIndexers(indexers: Indexers<T>): void;
}

export interface IndexerOptions<T> {
  /** Computes each object's key. Default: `deletionHandlingMetaNamespaceKeyFunc` (`namespace/name`). */
  keyFunc?: StoreKeyFunc<T> | undefined;
  /**
   * Extra index functions. The `namespace` index is always there (unless
   * `namespaceIndex: false`); naming another index `namespace` is an error.
   */
  indexers?: Indexers<T> | undefined;
  /** Whether to build the `namespace` index. Default: true. */
  namespaceIndex?: boolean | undefined;
}

const indexErrorMarker = Symbol.for("reconcile.index-error");

/** Thrown for misuse of an index: an unknown index name, a name conflict, a failing index function. */
export class IndexError extends ReconcileError {
  readonly [indexErrorMarker] = true;

  constructor(message: string, options?: { cause?: unknown }) {
    super("informer.index", message, options);
    this.name = "IndexError";
  }

  static override isInstance(error: unknown): error is IndexError {
    return ReconcileError.hasMarker(error, indexErrorMarker);
  }
}

/** A new indexer (client-go's `NewIndexer`), with the namespace index built in. */
export function createIndexer<T extends KubeObject = KubeObject>(
  options: IndexerOptions<T> = {},
): Indexer<T> {
  return new ThreadSafeIndexer<T>(options);
}

/** A plain store: an indexer without the namespace index (client-go's `NewStore`). */
export function createStore<T extends KubeObject = KubeObject>(
  options: Pick<IndexerOptions<T>, "keyFunc"> = {},
): Store<T> {
  return new ThreadSafeIndexer<T>({ ...options, namespaceIndex: false });
}

type Index = Map<string, Set<string>>;

const noValues: readonly string[] = [];

// One class serves both interfaces. The name keeps client-go's
// (`threadSafeMap`): there is one thread, so nothing needs locking.
class ThreadSafeIndexer<T> implements Indexer<T> {
  readonly #keyFunc: StoreKeyFunc<T>;
  readonly #items = new Map<string, DeepReadonly<T>>();
  readonly #indexers = new Map<string, IndexFunc<T>>();
  readonly #indices = new Map<string, Index>();

  constructor(options: IndexerOptions<T>) {
    this.#keyFunc = options.keyFunc ?? (deletionHandlingMetaNamespaceKeyFunc as unknown as StoreKeyFunc<T>);
    if (options.namespaceIndex !== false) {
      this.#indexers.set(namespaceIndex, metaNamespaceIndexFunc as unknown as IndexFunc<T>);
      this.#indices.set(namespaceIndex, new Map());
    }
    if (options.indexers) this.addIndexers(options.indexers);
  }

  get size(): number {
    return this.#items.size;
  }

  add(obj: T | DeepReadonly<T>): void {
    this.#put(obj as DeepReadonly<T>);
  }

  update(obj: T | DeepReadonly<T>): void {
    this.#put(obj as DeepReadonly<T>);
  }

  delete(obj: T | DeepReadonly<T> | DeletedFinalStateUnknown<T | DeepReadonly<T>>): void {
    const key = this.#keyFunc(obj as DeepReadonly<T>);
    const old = this.#items.get(key);
    if (old === undefined) return;
    if (this.#indexers.size > 0) {
      for (const [name, indexFunc] of this.#indexers) {
        const index = this.#indices.get(name)!;
        for (const value of this.#valuesOf(name, indexFunc, old)) removeFromIndex(index, value, key);
      }
    }
    this.#items.delete(key);
  }

  get(obj: T | DeepReadonly<T>): DeepReadonly<T> | undefined {
    return this.#items.get(this.#keyFunc(obj as DeepReadonly<T>));
  }

  getByKey(key: string): DeepReadonly<T> | undefined {
    return this.#items.get(key);
  }

  list(): DeepReadonly<T>[] {
    return Array.from(this.#items.values());
  }

  listKeys(): string[] {
    return Array.from(this.#items.keys());
  }

  replace(list: readonly (T | DeepReadonly<T>)[], _resourceVersion: string): void {
    // Compute everything first so that a failing key or index function leaves the store as it was.
    const items = new Map<string, DeepReadonly<T>>();
    for (const obj of list) items.set(this.#keyFunc(obj as DeepReadonly<T>), obj as DeepReadonly<T>);
    const indices = new Map<string, Index>();
    for (const [name, indexFunc] of this.#indexers) {
      const index: Index = new Map();
      for (const [key, obj] of items) {
        for (const value of this.#valuesOf(name, indexFunc, obj)) addToIndex(index, value, key);
      }
      indices.set(name, index);
    }
    this.#items.clear();
    for (const [key, obj] of items) this.#items.set(key, obj);
    for (const [name, index] of indices) this.#indices.set(name, index);
  }

  resync(): void {}

  index(indexName: string, obj: T | DeepReadonly<T>): DeepReadonly<T>[] {
    const indexFunc = this.#indexFunc(indexName);
    const index = this.#indices.get(indexName)!;
    const values = this.#valuesOf(indexName, indexFunc, obj as DeepReadonly<T>);
    if (values.length === 1) return this.#objectsOf(index.get(values[0]!));
    const keys = new Set<string>();
    for (const value of values) for (const key of index.get(value) ?? []) keys.add(key);
    return this.#objectsOf(keys);
  }

  indexKeys(indexName: string, indexedValue: string): string[] {
    this.#indexFunc(indexName);
    const keys = this.#indices.get(indexName)!.get(indexedValue);
    return keys === undefined ? [] : Array.from(keys).sort();
  }

  listIndexFuncValues(indexName: string): string[] {
    const index = this.#indices.get(indexName);
    return index === undefined ? [] : Array.from(index.keys());
  }

  byIndex(indexName: string, indexedValue: string): DeepReadonly<T>[] {
    this.#indexFunc(indexName);
    return this.#objectsOf(this.#indices.get(indexName)!.get(indexedValue));
  }

  getIndexers(): Indexers<T> {
    return Object.fromEntries(this.#indexers);
  }

  addIndexers(indexers: Indexers<T>): void {
    const names = Object.keys(indexers);
    const conflicts = names.filter((name) => this.#indexers.has(name));
    if (conflicts.length > 0) throw new IndexError(`indexer conflict: ${conflicts.join(", ")}`);
    const built = new Map<string, Index>();
    for (const name of names) {
      const indexFunc = indexers[name];
      if (typeof indexFunc !== "function")
        throw new IndexError(`index function ${JSON.stringify(name)} is not a function`);
      const index: Index = new Map();
      for (const [key, obj] of this.#items) {
        for (const value of this.#valuesOf(name, indexFunc, obj)) addToIndex(index, value, key);
      }
      built.set(name, index);
    }
    for (const name of names) {
      this.#indexers.set(name, indexers[name]!);
      this.#indices.set(name, built.get(name)!);
    }
  }

  #put(obj: DeepReadonly<T>): void {
    const key = this.#keyFunc(obj);
    const old = this.#items.get(key);
    if (this.#indexers.size > 0) {
      // Compute every new value before touching anything: a throwing index function changes nothing.
      const newValues: (readonly string[])[] = [];
      for (const [name, indexFunc] of this.#indexers) newValues.push(this.#valuesOf(name, indexFunc, obj));
      let i = 0;
      for (const [name, indexFunc] of this.#indexers) {
        const index = this.#indices.get(name)!;
        const values = newValues[i++]!;
        const oldValues = old === undefined ? noValues : this.#valuesOf(name, indexFunc, old);
        // The common case (one value, unchanged) touches nothing, as client-go's updateIndices.
        if (values.length === 1 && oldValues.length === 1 && values[0] === oldValues[0]) continue;
        for (const value of oldValues) removeFromIndex(index, value, key);
        for (const value of values) addToIndex(index, value, key);
      }
    }
    this.#items.set(key, obj);
  }

  #indexFunc(indexName: string): IndexFunc<T> {
    const indexFunc = this.#indexers.get(indexName);
    if (indexFunc === undefined) throw new IndexError(`Index with name ${indexName} does not exist`);
    return indexFunc;
  }

  #valuesOf(name: string, indexFunc: IndexFunc<T>, obj: DeepReadonly<T>): readonly string[] {
    let values: readonly string[];
    try {
      values = indexFunc(obj);
    } catch (error) {
      throw new IndexError(`unable to calculate an index entry for index ${JSON.stringify(name)}`, {
        cause: error,
      });
    }
    if (!Array.isArray(values))
      throw new IndexError(`index function ${JSON.stringify(name)} must return an array of strings`);
    return values;
  }

  #objectsOf(keys: Iterable<string> | undefined): DeepReadonly<T>[] {
    const objects: DeepReadonly<T>[] = [];
    if (keys === undefined) return objects;
    for (const key of keys) {
      const obj = this.#items.get(key);
      if (obj !== undefined) objects.push(obj);
    }
    return objects;
  }
}

function addToIndex(index: Index, value: string, key: string): void {
  let keys = index.get(value);
  if (keys === undefined) index.set(value, (keys = new Set()));
  keys.add(key);
}

function removeFromIndex(index: Index, value: string, key: string): void {
  const keys = index.get(value);
  if (keys === undefined) return;
  keys.delete(key);
  // Empty sets are dropped so that churning values do not leak (kubernetes#84959).
  if (keys.size === 0) index.delete(value);
}
