import type { KubeObject } from "@reconcile/api";
import {
  type Storage,
  type StorageChange,
  StorageError,
  type StorageEvent,
  type StorageListOptions,
  type StorageListResult,
  type StorageWatcher,
  type StorageWatchOptions,
  tooOldResourceVersion,
  WatchChannel,
  watchEventFor,
} from "@reconcile/apiserver";
import { type Clock, realClock, type TimerHandle } from "@reconcile/clock";
import type { EtcdStorage } from "./etcd-storage.js";

export interface CachedStorageOptions {
  /** The etcd storage behind the cache: writes and consistent reads go to it. */
  storage: EtcdStorage;
  /** How many changes each resource's cache keeps for watches that resume. Default: 10,000. */
  historySize?: number | undefined;
  /**
   * The memory budget of every resource's history together, in bytes of the
   * stored values: the oldest changes leave once they hold more, and a
   * watcher still holding them is closed with 410. Default: 128 MiB (the
   * in-memory storage's).
   */
  historyBytes?: number | undefined;
  /** How many unread events one watcher may have before it is closed. Default: 10,000. */
  watchBufferSize?: number | undefined;
  /**
   * How long a watch without a revision waits for the cache to see this
   * server's own latest write to the resource before it starts anyway. Default: 3,000 ms.
   */
  freshnessTimeoutMs?: number | undefined;
  /** Source of time for bookmarks and re-initialisation. Default: `realClock`. */
  clock?: Clock | undefined;
}

/**
 * kube-apiserver's watch cache (the cacher) in front of an {@link EtcdStorage}:
 * one etcd watch per resource feeds an in-memory copy of the resource and a
 * ring buffer of its recent changes, and every watcher of that resource is
 * served from them — a thousand watchers cost one etcd watch. Writes, gets and
 * lists go to etcd, as upstream does for consistent reads when etcd cannot
 * answer ordered progress requests (etcd before 3.4.31).
 */
export class CachedStorage implements Storage {
  readonly storage: EtcdStorage;
  readonly #historySize: number;
  readonly #budget: HistoryBudget;
  readonly #watchBufferSize: number;
  readonly #freshnessTimeoutMs: number;
  readonly #clock: Clock;
  readonly #caches = new Map<string, ResourceCache>();
  #closed = false;

  constructor(options: CachedStorageOptions) {
    this.storage = options.storage;
    this.#historySize = positiveInteger("historySize", options.historySize ?? 10_000);
    this.#budget = {
      limit: positiveInteger("historyBytes", options.historyBytes ?? 128 * 1024 * 1024),
      used: 0,
    };
    this.#watchBufferSize = positiveInteger("watchBufferSize", options.watchBufferSize ?? 10_000);
    this.#freshnessTimeoutMs = options.freshnessTimeoutMs ?? 3_000;
    this.#clock = options.clock ?? realClock;
  }

  checkHealth(): Promise<void> {
    return this.storage.checkHealth?.() ?? Promise.resolve();
  }

  /** How many bytes of stored values the resources' histories hold now (at most `historyBytes`, unless one newest change is larger). */
  get historyBytes(): number {
    return this.#budget.used;
  }

  currentRevision(): Promise<number> {
    return this.storage.currentRevision();
  }

  async create(key: string, object: KubeObject): Promise<KubeObject> {
    return this.#noteWrite(key, await this.storage.create(key, object));
  }

  get(key: string): Promise<KubeObject | undefined> {
    return this.storage.get(key);
  }

  list(prefix: string, options?: StorageListOptions): Promise<StorageListResult> {
    return this.storage.list(prefix, options);
  }

  async update(key: string, object: KubeObject, expectedRevision?: number): Promise<KubeObject> {
    return this.#noteWrite(key, await this.storage.update(key, object, expectedRevision));
  }

  async delete(key: string, expectedRevision?: number): Promise<KubeObject> {
    return this.#noteWrite(key, await this.storage.delete(key, expectedRevision));
  }

  watch(prefix: string, options: StorageWatchOptions = {}): StorageWatcher {
    const resource = resourceOf(prefix);
    // A prefix wider than one resource has no cache of its own: etcd serves it.
    if (resource === undefined || this.#closed) return this.storage.watch(prefix, options);
    return this.#cacheOf(resource).watch(prefix, options);
  }

  /** The objects the resource's cache holds, once it has listed them; undefined for a resource not cached. */
  count(prefix: string): number | undefined {
    const resource = resourceOf(prefix);
    return resource === prefix ? this.#caches.get(resource)?.count : undefined;
  }

  /** How many etcd watches the caches hold (one per resource watched so far). */
  get etcdWatchCount(): number {
    return this.#caches.size;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const cache of this.#caches.values()) cache.close();
    this.#caches.clear();
    this.storage.close();
  }

  #noteWrite(key: string, object: KubeObject): KubeObject {
    const resource = resourceOf(key);
    const cache = resource === undefined ? undefined : this.#caches.get(resource);
    cache?.noteWrite(Number(object.metadata?.resourceVersion));
    return object;
  }

  #cacheOf(resource: string): ResourceCache {
    let cache = this.#caches.get(resource);
    if (cache === undefined) {
      cache = new ResourceCache({
        prefix: resource,
        storage: this.storage,
        historySize: this.#historySize,
        budget: this.#budget,
        watchBufferSize: this.#watchBufferSize,
        freshnessTimeoutMs: this.#freshnessTimeoutMs,
        clock: this.#clock,
      });
      this.#caches.set(resource, cache);
    }
    return cache;
  }
}

/** One change as the cache keeps it: enough to filter it for any watcher. */
interface Change extends StorageChange {
  key: string;
  /** The stored size of `object`, counted against the shared history budget. */
  bytes: number;
}

/** The history bytes every resource cache of one CachedStorage shares. */
interface HistoryBudget {
  readonly limit: number;
  used: number;
}

interface CacheWatcher {
  prefix: string;
  predicate: ((object: KubeObject) => boolean) | undefined;
  /** Changes at or below this revision are not sent. */
  after: number;
  channel: WatchChannel;
}

interface ResourceCacheOptions {
  prefix: string;
  storage: EtcdStorage;
  historySize: number;
  watchBufferSize: number;
  freshnessTimeoutMs: number;
  clock: Clock;
  budget: HistoryBudget;
}

/** The cache of one resource: its objects, its recent changes, its watchers. */
class ResourceCache {
  readonly #options: ResourceCacheOptions;
  readonly #objects = new Map<string, KubeObject>();
  #sortedKeys: string[] | undefined;
  #history: Change[];
  #historyStart = 0;
  #historyLength = 0;
  /** Every change after this revision is in the history. */
  #oldest = 0;
  /** The revision the cache reflects (advanced by changes and by etcd progress notifications). */
  #revision = 0;
  /** The newest revision this server wrote to the resource. */
  #lastWrite = 0;
  readonly #watchers = new Set<CacheWatcher>();
  /** Every open channel, also those still waiting for the cache to be ready. */
  readonly #channels = new Set<WatchChannel>();
  #waiters: { revision: number; resolve: () => void }[] = [];
  #ready: Promise<void>;
  #subscription: { stop(): void } | undefined;
  #retryTimer: TimerHandle | undefined;
  #closed = false;
  #listRevision: number;
  /** Whether a change has left the history since the last list (then older revisions are gone). */
  #evicted = false;
  #listed = false;

  /** How many objects it holds, once listed. */
  get count(): number | undefined {
    return this.#listed ? this.#objects.size : undefined;
  }

  constructor(options: ResourceCacheOptions) {
    this.#options = options;
    this.#listRevision = options.storage.knownRevision;
    this.#history = new Array(Math.min(options.historySize, 1024));
    this.#ready = this.#attempt();
  }

  noteWrite(revision: number): void {
    if (revision > this.#lastWrite) this.#lastWrite = revision;
  }

  watch(prefix: string, options: StorageWatchOptions): StorageWatcher {
    const { clock, watchBufferSize } = this.#options;
    let bookmarkTimer: TimerHandle | undefined;
    const watcher: CacheWatcher = {
      prefix,
      predicate: options.predicate,
      after: 0,
      channel: new WatchChannel({
        limit: watchBufferSize,
        onStop: () => {
          this.#watchers.delete(watcher);
          this.#channels.delete(watcher.channel);
          if (bookmarkTimer !== undefined) clock.clearTimeout(bookmarkTimer);
          bookmarkTimer = undefined;
        },
      }),
    };
    const { channel } = watcher;
    this.#channels.add(channel);
    const lastWrite = this.#lastWrite;
    const start = async () => {
      await this.#ready;
      // A watch of the current state includes this server's own writes made before it.
      if (options.fromRevision === undefined) await this.#waitFor(lastWrite);
      if (channel.closed) return;
      if (this.#closed) {
        channel.close("storage closed");
        return;
      }
      const { fromRevision } = options;
      if (fromRevision === undefined) {
        channel.pushInitial(this.#snapshot(prefix, options.predicate));
        watcher.after = this.#revision;
      } else if (fromRevision < this.#oldest && !this.#evicted) {
        // Older than the cache itself: etcd's own history serves it (410 once etcd compacted it).
        this.#channels.delete(channel);
        this.#forward(channel, this.#options.storage.watch(prefix, options));
        return;
      } else if (fromRevision < this.#oldest) {
        channel.fail(tooOld(fromRevision, this.#oldest), this.#revision);
        return;
      } else {
        channel.pushInitial(this.#replay(watcher, fromRevision));
        watcher.after = Math.max(fromRevision, this.#revision);
      }
      this.#watchers.add(watcher);
      const interval = options.bookmarkIntervalMs;
      if (interval !== undefined && interval > 0) {
        const tick = () => {
          channel.push({ type: "BOOKMARK", revision: Math.max(this.#revision, watcher.after) });
          if (!channel.closed) bookmarkTimer = clock.setTimeout(tick, interval);
        };
        bookmarkTimer = clock.setTimeout(tick, interval);
      }
    };
    start().catch((error: unknown) => channel.fail(error as Error, this.#revision));
    return channel;
  }

  /** Pipes a watcher served by etcd into the channel already handed out. */
  #forward(channel: WatchChannel, source: StorageWatcher): void {
    const iterator = source[Symbol.asyncIterator]();
    const stopSource = () => source.stop();
    const pump = async () => {
      for (;;) {
        const next = await iterator.next();
        if (channel.closed) return stopSource();
        if (next.done) return channel.close(source.closeReason ?? "stopped");
        if (next.value.type === "ERROR") return channel.fail(next.value.error!, next.value.revision);
        channel.push(next.value);
      }
    };
    channel.onClose(stopSource);
    pump().catch((error: unknown) => channel.fail(error as Error, 0));
  }

  close(): void {
    this.#closed = true;
    this.#subscription?.stop();
    if (this.#retryTimer !== undefined) this.#options.clock.clearTimeout(this.#retryTimer);
    for (const channel of [...this.#channels]) channel.close("storage closed");
    for (const waiter of this.#waiters.splice(0)) waiter.resolve();
    this.#releaseHistory();
    this.#historyLength = 0;
  }

  /** Lists the resource, then follows it from the list's revision. */
  async #start(): Promise<void> {
    const { storage, prefix } = this.#options;
    // The first list reads at the newest revision this server knows of when the cache was asked
    // for, so that what was written before is in it and what is written after arrives as changes.
    const known = this.#listRevision;
    this.#listRevision = 0;
    const listed = await storage.listEntries(prefix, known).catch((error: unknown) => {
      if (known > 0 && StorageError.is(error, "Expired")) return storage.listEntries(prefix);
      throw error;
    });
    this.#objects.clear();
    for (const [key, object] of listed.entries) this.#objects.set(key, object);
    this.#sortedKeys = undefined;
    this.#revision = listed.revision;
    // Replace empties the history without moving its start back (upstream's watchCache.Replace).
    this.#releaseHistory();
    this.#history = new Array(this.#history.length);
    this.#historyStart = 0;
    this.#historyLength = 0;
    this.#oldest = Math.max(this.#oldest, listed.revision);
    // After a re-list the changes in between are gone from the cache, as if evicted.
    if (this.#listed) this.#evicted = true;
    this.#listed = true;
    if (this.#closed) return;
    this.#subscription = storage.subscribe(prefix, listed.revision, {
      event: (event, key) => this.#apply(event, key),
      progress: (revision) => this.#advance(revision),
      error: () => this.#reinitialise(),
    });
    this.#advance(listed.revision);
  }

  /**
   * The etcd watch ended (its revision was compacted while it was disconnected,
   * or a stored value could not be decoded): every watcher is closed — clients
   * watch again and get a replay or 410 — and the resource is listed anew.
   */
  #reinitialise(): void {
    this.#subscription = undefined;
    for (const watcher of [...this.#watchers]) watcher.channel.close("the watch cache is re-initialising");
    if (this.#closed) return;
    // New watchers wait for the fresh list rather than being served the stale state.
    this.#ready = new Promise((resolve, reject) => {
      this.#retryTimer = this.#options.clock.setTimeout(() => {
        this.#retryTimer = undefined;
        const attempt = this.#attempt();
        this.#ready = attempt;
        attempt.then(resolve, reject);
      }, 100);
    });
    this.#ready.catch(() => {});
  }

  /**
   * One attempt to list and follow the resource. Watchers waiting on a failed
   * attempt get its error; the cache tries again a second later.
   */
  #attempt(): Promise<void> {
    const attempt = this.#start();
    attempt.catch(() => {
      if (this.#closed) return;
      this.#retryTimer = this.#options.clock.setTimeout(() => {
        this.#retryTimer = undefined;
        this.#ready = this.#attempt();
      }, 1_000);
    });
    return attempt;
  }

  #apply(event: StorageEvent, key: string): void {
    const object = event.object!;
    const previous = this.#objects.get(key);
    if (event.type === "DELETED") {
      this.#objects.delete(key);
      this.#sortedKeys = undefined;
    } else {
      if (previous === undefined) this.#sortedKeys = undefined;
      this.#objects.set(key, object);
    }
    const change: Change = {
      // The cache, not etcd, knows whether the key existed: a re-created key is ADDED.
      type: event.type === "DELETED" ? "DELETED" : previous === undefined ? "ADDED" : "MODIFIED",
      key,
      revision: event.revision,
      object,
      previous,
      bytes: event.bytes ?? 0,
    };
    this.#record(change);
    // Watchers without a predicate all receive the same event object (events are read-only).
    let unfiltered: StorageEvent | undefined;
    for (const watcher of this.#watchers) {
      if (change.revision <= watcher.after || !key.startsWith(watcher.prefix)) continue;
      const translated =
        watcher.predicate === undefined
          ? (unfiltered ??= { type: change.type, object, revision: change.revision })
          : watchEventFor(change, watcher.predicate);
      if (translated !== undefined) watcher.channel.push(translated);
    }
    this.#advance(change.revision);
  }

  #record(change: Change): void {
    const budget = this.#options.budget;
    budget.used += change.bytes;
    const capacity = this.#options.historySize;
    if (this.#historyLength === capacity) {
      const evicted = this.#history[this.#historyStart]!;
      budget.used -= evicted.bytes;
      this.#oldest = evicted.revision;
      this.#evicted = true;
      this.#history[this.#historyStart] = change;
      this.#historyStart = (this.#historyStart + 1) % this.#history.length;
    } else {
      this.#append(change);
    }
    if (budget.used > budget.limit) this.#shrinkToBudget();
  }

  /**
   * Drops the oldest changes while the caches together hold more than the
   * budget (the newest change stays), as the in-memory history does; a
   * watcher still holding changes that left is closed with 410, as if it had
   * asked for a compacted revision, so it cannot keep them alive.
   */
  #shrinkToBudget(): void {
    const budget = this.#options.budget;
    while (budget.used > budget.limit && this.#historyLength > 1) {
      const evicted = this.#history[this.#historyStart]!;
      this.#history[this.#historyStart] = undefined as unknown as Change;
      budget.used -= evicted.bytes;
      this.#oldest = evicted.revision;
      this.#evicted = true;
      this.#historyStart = (this.#historyStart + 1) % this.#history.length;
      this.#historyLength--;
    }
    for (const watcher of this.#watchers) {
      const queued = watcher.channel.oldestQueuedRevision;
      if (queued !== undefined && queued <= this.#oldest) {
        watcher.channel.fail(tooOldResourceVersion(queued - 1, this.#oldest), this.#revision, true);
      }
    }
  }

  #append(change: Change): void {
    if (this.#historyLength === this.#history.length) {
      const grown = new Array<Change>(Math.min(this.#history.length * 2, this.#options.historySize));
      for (let i = 0; i < this.#historyLength; i++) grown[i] = this.#historyAt(i);
      this.#history = grown;
      this.#historyStart = 0;
    }
    this.#history[(this.#historyStart + this.#historyLength) % this.#history.length] = change;
    this.#historyLength++;
  }

  /** Gives the budget back the bytes of every change still held (a re-list empties the history, closing ends it). */
  #releaseHistory(): void {
    for (let i = 0; i < this.#historyLength; i++) this.#options.budget.used -= this.#historyAt(i).bytes;
  }

  #historyAt(index: number): Change {
    return this.#history[(this.#historyStart + index) % this.#history.length]!;
  }

  #advance(revision: number): void {
    if (revision <= this.#revision) return;
    this.#revision = revision;
    if (this.#waiters.length === 0) return;
    const due = this.#waiters.filter((waiter) => waiter.revision <= revision);
    this.#waiters = this.#waiters.filter((waiter) => waiter.revision > revision);
    for (const waiter of due) waiter.resolve();
  }

  /** Resolves once the cache has reached `revision`, or after the freshness timeout. */
  #waitFor(revision: number): Promise<void> {
    if (revision <= this.#revision || this.#closed) return Promise.resolve();
    return new Promise((resolve) => {
      const { clock, freshnessTimeoutMs } = this.#options;
      const waiter = {
        revision,
        resolve: () => {
          clock.clearTimeout(timer);
          resolve();
        },
      };
      const timer = clock.setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w !== waiter);
        resolve();
      }, freshnessTimeoutMs);
      this.#waiters.push(waiter);
    });
  }

  #snapshot(prefix: string, predicate: ((object: KubeObject) => boolean) | undefined): StorageEvent[] {
    this.#sortedKeys ??= [...this.#objects.keys()].sort();
    const revision = this.#revision;
    const events: StorageEvent[] = [];
    for (const key of this.#sortedKeys) {
      if (!key.startsWith(prefix)) continue;
      const object = this.#objects.get(key)!;
      if (predicate === undefined || predicate(object)) events.push({ type: "ADDED", object, revision });
    }
    return events;
  }

  #replay(watcher: CacheWatcher, fromRevision: number): StorageEvent[] {
    const events: StorageEvent[] = [];
    for (let i = 0; i < this.#historyLength; i++) {
      const change = this.#historyAt(i);
      if (change.revision <= fromRevision || !change.key.startsWith(watcher.prefix)) continue;
      const event = watchEventFor(change, watcher.predicate);
      if (event !== undefined) events.push(event);
    }
    return events;
  }
}

/** The cacher's wording: `too old resource version: <asked> (<oldest servable>)`. */
function tooOld(requested: number, oldest: number): StorageError {
  return new StorageError("Expired", "", `too old resource version: ${requested} (${oldest})`);
}

/** `/group/plural/` of a key or prefix inside one resource, else undefined. */
function resourceOf(prefix: string): string | undefined {
  const first = prefix.indexOf("/", 1);
  const second = first < 0 ? -1 : prefix.indexOf("/", first + 1);
  return prefix.startsWith("/") && second > 0 ? prefix.slice(0, second + 1) : undefined;
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1)
    throw new RangeError(`${name} must be a positive integer, got ${value}`);
  return value;
}
