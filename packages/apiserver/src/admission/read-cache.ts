import type { KubeObject } from "@reconcile/api";
import { type Clock, realClock } from "@reconcile/clock";
import type {
  Storage,
  StorageListOptions,
  StorageListResult,
  StorageWatcher,
  StorageWatchOptions,
} from "../storage/storage.js";

/** `/core/pods/` of `/core/pods/default/web`: the collection a key belongs to. */
function collectionOf(key: string): string {
  const second = key.indexOf("/", 1);
  const third = second < 0 ? -1 : key.indexOf("/", second + 1);
  return third < 0 ? key : key.slice(0, third + 1);
}

/**
 * A storage that counts the writes made through it per collection, so a
 * reader can tell in O(1) whether anything it listed before has changed
 * (admission's lists of LimitRanges, quotas, webhook configurations and
 * policies, read on every write). Everything else is the storage's own.
 */
export class WriteCountingStorage implements Storage {
  readonly #storage: Storage;
  readonly #writes = new Map<string, number>();
  declare checkHealth?: () => Promise<void>;

  constructor(storage: Storage) {
    this.#storage = storage;
    if (storage.checkHealth !== undefined) this.checkHealth = () => storage.checkHealth!();
  }

  /** How many writes this storage has made under `collection` (`/core/limitranges/`). */
  writesTo(collection: string): number {
    return this.#writes.get(collection) ?? 0;
  }

  #count(key: string): void {
    const collection = collectionOf(key);
    this.#writes.set(collection, (this.#writes.get(collection) ?? 0) + 1);
  }

  currentRevision(): Promise<number> {
    return this.#storage.currentRevision();
  }

  async create(key: string, object: KubeObject): Promise<KubeObject> {
    try {
      return await this.#storage.create(key, object);
    } finally {
      this.#count(key);
    }
  }

  count(prefix: string): number | undefined {
    return this.#storage.count?.(prefix);
  }

  get(key: string): Promise<KubeObject | undefined> {
    return this.#storage.get(key);
  }

  list(prefix: string, options?: StorageListOptions): Promise<StorageListResult> {
    return this.#storage.list(prefix, options);
  }

  async update(key: string, object: KubeObject, expectedRevision?: number): Promise<KubeObject> {
    try {
      return await this.#storage.update(key, object, expectedRevision);
    } finally {
      this.#count(key);
    }
  }

  async delete(key: string, expectedRevision?: number): Promise<KubeObject> {
    try {
      return await this.#storage.delete(key, expectedRevision);
    } finally {
      this.#count(key);
    }
  }

  watch(prefix: string, options?: StorageWatchOptions): StorageWatcher {
    return this.#storage.watch(prefix, options);
  }

  close(): void {
    this.#storage.close();
  }
}

/** How long a cached list is trusted when nothing was written through this server (another server may write). */
const maxAgeMs = 1_000;

interface CachedList {
  readonly writes: number;
  readonly at: number;
  readonly items: readonly KubeObject[];
  /** The items by name, made on the first `get` of this list. */
  byName?: Map<string, KubeObject>;
}

/** The item named `name` of a cached list, by an index made on first use. */
function named(entry: CachedList, name: string): KubeObject | undefined {
  entry.byName ??= new Map(entry.items.map((item) => [item.metadata?.name ?? "", item]));
  return entry.byName.get(name);
}

/**
 * Lists under a prefix, kept until a write through `storage` touches their
 * collection or a second has passed (writes by another API server on the
 * same etcd are seen within that second, as an informer would see them).
 */
export class ListCache {
  readonly #storage: WriteCountingStorage;
  readonly #lists = new Map<string, CachedList>();
  /** The collection of each prefix listed (`/core/pods/` of `/core/pods/default/`). */
  readonly #collections = new Map<string, string>();

  readonly #clock: Clock;

  /** `clock` measures a list's age: the server's own, so a simulated run reads lists again when it would. */
  constructor(storage: WriteCountingStorage, clock: Clock = realClock) {
    this.#storage = storage;
    this.#clock = clock;
  }

  /** The items under `prefix`: at once when the cached list is current, else a promise of them read afresh. */
  list(prefix: string): readonly KubeObject[] | Promise<readonly KubeObject[]> {
    const entry = this.#entry(prefix);
    return entry instanceof Promise ? entry.then((e) => e.items) : entry.items;
  }

  /**
   * The object named `name` directly under `prefix` (`/core/namespaces/` and
   * `default`), from the cached list: at once when it is current.
   */
  get(prefix: string, name: string): KubeObject | undefined | Promise<KubeObject | undefined> {
    const entry = this.#entry(prefix);
    return entry instanceof Promise ? entry.then((e) => named(e, name)) : named(entry, name);
  }

  /**
   * Forgets every list, so each is read afresh on its next use. The server
   * does this once its bootstrap policy is made, which a process's first
   * server makes through the registry (reading these lists) and later ones
   * write straight into storage: afterwards every server's cache is alike.
   */
  clear(): void {
    this.#lists.clear();
  }

  /** How many writes this server has made to the collection `prefix` lies in. */
  writes(prefix: string): number {
    return this.#storage.writesTo(this.#collectionOf(prefix));
  }

  /**
   * Puts `object`, just written through this server over the item of its
   * name, into the list cached under `prefix`, when that write (the one that
   * took the collection's count past `writesBefore`) is the only one since the
   * list was read: a plugin that writes what it reads (a quota's usage) then
   * reads it back without listing again.
   */
  replaced(prefix: string, object: KubeObject, writesBefore: number): void {
    const cached = this.#lists.get(prefix);
    if (cached === undefined || cached.writes !== writesBefore) return;
    const writes = this.#storage.writesTo(this.#collectionOf(prefix));
    if (writes !== writesBefore + 1) return;
    const name = object.metadata?.name;
    const items = cached.items.map((item) => (item.metadata?.name === name ? object : item));
    this.#lists.set(prefix, { writes, at: cached.at, items });
  }

  #collectionOf(prefix: string): string {
    let collection = this.#collections.get(prefix);
    if (collection === undefined) {
      collection = collectionOf(prefix);
      if (this.#collections.size > 10_000) this.#collections.clear();
      this.#collections.set(prefix, collection);
    }
    return collection;
  }

  /** The cached list under `prefix` (at once, when it is current), or a promise of it read afresh. */
  #entry(prefix: string): CachedList | Promise<CachedList> {
    const collection = this.#collectionOf(prefix);
    const writes = this.#storage.writesTo(collection);
    const now = this.#clock.now();
    const cached = this.#lists.get(prefix);
    if (cached !== undefined && cached.writes === writes && now - cached.at < maxAgeMs) return cached;
    return this.#storage.list(prefix).then(({ items }) => {
      const entry: CachedList = { writes, at: now, items };
      // A write that finished while the list was read leaves the count changed: not cached then.
      if (this.#storage.writesTo(collection) === writes) {
        if (this.#lists.size > 10_000) this.#lists.clear();
        this.#lists.set(prefix, entry);
      }
      return entry;
    });
  }
}
