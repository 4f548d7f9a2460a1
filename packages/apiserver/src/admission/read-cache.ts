import type { KubeObject, ResourceDescriptor } from "@reconcile/api";
import { type Clock, realClock } from "@reconcile/clock";
import { collectionPrefix } from "../registry/store/keys.js";
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

/** How many writes a storage has made under one collection. */
export interface WriteCount {
  writes: number;
}

/**
 * A storage that counts the writes made through it per collection, so a
 * reader can tell in O(1) whether anything it listed before has changed
 * (admission's lists of LimitRanges, quotas, webhook configurations and
 * policies, read on every write). Everything else is the storage's own.
 */
export class WriteCountingStorage implements Storage {
  readonly #storage: Storage;
  readonly #writes = new Map<string, WriteCount>();
  declare checkHealth?: () => Promise<void>;

  constructor(storage: Storage) {
    this.#storage = storage;
    if (storage.checkHealth !== undefined) this.checkHealth = () => storage.checkHealth!();
  }

  /** How many writes this storage has made under `collection` (`/core/limitranges/`). */
  writesTo(collection: string): number {
    return this.#writes.get(collection)?.writes ?? 0;
  }

  /** The count of writes under `collection`, which goes on counting: read without a lookup. */
  counter(collection: string): WriteCount {
    let count = this.#writes.get(collection);
    if (count === undefined) this.#writes.set(collection, (count = { writes: 0 }));
    return count;
  }

  #count(key: string): void {
    this.counter(collectionOf(key)).writes++;
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
  /** The cache's {@link ListCache.clear} count when it was read. */
  readonly clears: number;
  readonly items: readonly KubeObject[];
  /** The items by name, made on the first `get` of this list. */
  byName?: Map<string, KubeObject>;
}

/**
 * One prefix a plugin reads: the write count of its collection (held, not
 * looked up) and its cached list, if any.
 */
export interface ListedPrefix {
  readonly prefix: string;
  readonly count: WriteCount;
  list: CachedList | undefined;
}

/** The item named `name` of a cached list, by an index made on first use. */
function named(entry: CachedList, name: string): KubeObject | undefined {
  entry.byName ??= new Map(entry.items.map((item) => [item.metadata?.name ?? "", item]));
  return entry.byName.get(name);
}

function itemsOf(entry: CachedList): readonly KubeObject[] {
  return entry.items;
}

/** At most this many prefixes are remembered per resource (namespaces), and as many by text. */
const maxPrefixes = 10_000;

/**
 * Lists under a prefix, kept until a write through `storage` touches their
 * collection or a second has passed (writes by another API server on the
 * same etcd are seen within that second, as an informer would see them).
 * A prefix is named by its text, or by a resource and a namespace (found
 * by identity, which is what admission plugins read by).
 */
export class ListCache {
  readonly #storage: WriteCountingStorage;
  readonly #byPrefix = new Map<string, ListedPrefix>();
  readonly #byResource = new WeakMap<ResourceDescriptor, Map<string, ListedPrefix>>();
  readonly #clock: Clock;
  #clears = 0;
  /**
   * The clock's reading for the task now running, so the dozen lists a write's
   * plugins read take one reading between them (a reading costs more than
   * the rest of a cached read); forgotten when the task's microtasks run.
   */
  #taskNow: number | undefined;
  readonly #forgetNow = () => {
    this.#taskNow = undefined;
  };

  /** `clock` measures a list's age: the server's own, so a simulated run reads lists again when it would. */
  constructor(storage: WriteCountingStorage, clock: Clock = realClock) {
    this.#storage = storage;
    this.#clock = clock;
  }

  /** The items under `prefix`: at once when the cached list is current, else a promise of them read afresh. */
  list(prefix: string | ListedPrefix): readonly KubeObject[] | Promise<readonly KubeObject[]> {
    const entry = this.#entry(this.#listed(prefix));
    return entry instanceof Promise ? entry.then(itemsOf) : entry.items;
  }

  /**
   * The object named `name` directly under `prefix` (`/core/namespaces/` and
   * `default`), from the cached list: at once when it is current.
   */
  get(prefix: string | ListedPrefix, name: string): KubeObject | undefined | Promise<KubeObject | undefined> {
    const entry = this.#entry(this.#listed(prefix));
    return entry instanceof Promise ? namedOnce(entry, name) : named(entry, name);
  }

  /** The prefix of `resource`'s objects in `namespace` (all namespaces for ""), made once. */
  prefixOf(resource: ResourceDescriptor, namespace: string): ListedPrefix {
    let byNamespace = this.#byResource.get(resource);
    if (byNamespace === undefined) this.#byResource.set(resource, (byNamespace = new Map()));
    let listed = byNamespace.get(namespace);
    if (listed === undefined) {
      listed = this.#listed(collectionPrefix(resource, namespace || undefined));
      if (byNamespace.size >= maxPrefixes) byNamespace.clear();
      byNamespace.set(namespace, listed);
    }
    return listed;
  }

  /**
   * Forgets every list, so each is read afresh on its next use. The server
   * does this once its bootstrap policy is made, which a process's first
   * server makes through the registry (reading these lists) and later ones
   * write straight into storage: afterwards every server's cache is alike.
   */
  clear(): void {
    this.#clears++;
  }

  /** How many writes this server has made to the collection `prefix` lies in. */
  writes(prefix: string | ListedPrefix): number {
    return this.#listed(prefix).count.writes;
  }

  /**
   * Puts `object`, just written through this server over the item of its
   * name, into the list cached under `prefix`, when that write (the one that
   * took the collection's count past `writesBefore`) is the only one since the
   * list was read: a plugin that writes what it reads (a quota's usage) then
   * reads it back without listing again.
   */
  replaced(prefix: string | ListedPrefix, object: KubeObject, writesBefore: number): void {
    const listed = this.#listed(prefix);
    const cached = listed.list;
    if (cached === undefined || cached.writes !== writesBefore) return;
    const writes = listed.count.writes;
    if (writes !== writesBefore + 1) return;
    const name = object.metadata?.name;
    const items = cached.items.map((item) => (item.metadata?.name === name ? object : item));
    listed.list = { writes, at: cached.at, clears: cached.clears, items };
  }

  #listed(prefix: string | ListedPrefix): ListedPrefix {
    if (typeof prefix !== "string") return prefix;
    let listed = this.#byPrefix.get(prefix);
    if (listed === undefined) {
      listed = { prefix, count: this.#storage.counter(collectionOf(prefix)), list: undefined };
      // Past the bound, prefixes are forgotten: one made again starts without a list.
      if (this.#byPrefix.size >= maxPrefixes) this.#byPrefix.clear();
      this.#byPrefix.set(prefix, listed);
    }
    return listed;
  }

  /** The cached list of `listed` (at once, when it is current), or a promise of it read afresh. */
  #entry(listed: ListedPrefix): CachedList | Promise<CachedList> {
    const writes = listed.count.writes;
    let now = this.#taskNow;
    if (now === undefined) {
      now = this.#taskNow = this.#clock.now();
      queueMicrotask(this.#forgetNow);
    }
    const cached = listed.list;
    const clears = this.#clears;
    if (
      cached !== undefined &&
      cached.writes === writes &&
      cached.clears === clears &&
      now - cached.at < maxAgeMs
    )
      return cached;
    return this.#read(listed, writes, now, clears);
  }

  /**
   * Reads the list of `listed` afresh. Apart from #entry, whose every call
   * would otherwise keep its variables for this closure.
   */
  async #read(listed: ListedPrefix, writes: number, at: number, clears: number): Promise<CachedList> {
    const { items } = await this.#storage.list(listed.prefix);
    const entry: CachedList = { writes, at, clears, items };
    // A write that finished while the list was read leaves the count changed: not cached then.
    if (listed.count.writes === writes) listed.list = entry;
    return entry;
  }
}

/** The item named `name` of a list being read. */
function namedOnce(entry: Promise<CachedList>, name: string): Promise<KubeObject | undefined> {
  return entry.then((e) => named(e, name));
}
