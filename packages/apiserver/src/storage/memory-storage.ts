import type { KubeObject } from "@reconcile/api";
import type { Clock } from "@reconcile/clock";
import { realClock } from "@reconcile/clock";
import { defaultMaxObjectBytes } from "../limits.js";
import {
  type Bucket,
  bucketFor,
  bucketOf,
  type Change,
  compareKeys,
  type Entry,
  lookupFor,
  lowerBound,
  type MemoryStorageOptions,
  measureObject,
  positiveInteger,
  setResourceVersion,
  sortedKeysUnder,
  type Watch,
} from "./memory-entries.js";
import { RingBuffer } from "./ring-buffer.js";
import {
  type Storage,
  StorageError,
  type StorageEvent,
  type StorageListOptions,
  type StorageListResult,
  type StorageWatcher,
  type StorageWatchOptions,
  tooOldResourceVersion,
} from "./storage.js";
import { WatchChannel } from "./watch-channel.js";
import { watchEventFor, withResourceVersion } from "./watch-events.js";

export type { MemoryStorageOptions };

/** The default memory budget of the history, in bytes of JSON. */
export const defaultHistoryBytes = 128 * 1024 * 1024;

/**
 * The in-memory `Storage`: one global revision counter, a map per resource,
 * and a ring buffer of the last changes (at most `historySize` of them and
 * `historyBytes` of JSON) from which watches are replayed and older list
 * snapshots (continue tokens) are reconstructed.
 */
export class MemoryStorage implements Storage {
  readonly #clock: Clock;
  readonly #historySize: number;
  readonly #historyBudget: number;
  readonly #maxObjectBytes: number;
  readonly #watchBufferSize: number;
  readonly #buckets = new Map<string, Bucket>();
  readonly #history: RingBuffer<Change>;
  /** The newest change of each key in the history. */
  readonly #lastChange = new Map<string, Change>();
  readonly #watches = new Set<Watch>();
  #revision = 0;
  #historyBytes = 0;
  #closed = false;
  /** The last reconstructed snapshot, so that paging through one does not rebuild it per page. */
  #snapshotCache: { prefix: string; revision: number; keys: string[]; objects: KubeObject[] } | undefined;

  constructor(options: MemoryStorageOptions = {}) {
    this.#clock = options.clock ?? realClock;
    this.#historySize = positiveInteger("historySize", options.historySize ?? 10_000);
    this.#historyBudget = positiveInteger("historyBytes", options.historyBytes ?? defaultHistoryBytes);
    this.#maxObjectBytes = positiveInteger("maxObjectBytes", options.maxObjectBytes ?? defaultMaxObjectBytes);
    this.#watchBufferSize = positiveInteger("watchBufferSize", options.watchBufferSize ?? 10_000);
    this.#history = new RingBuffer<Change>(Math.min(this.#historySize, 1024));
  }

  async currentRevision(): Promise<number> {
    return this.#revision;
  }

  /** The newest revision, synchronously (the in-memory store can answer at once). */
  get revision(): number {
    return this.#revision;
  }

  /** The oldest revision a watch may start from or a snapshot be read at. */
  get compactedRevision(): number {
    const oldest = this.#history.at(0);
    return oldest === undefined ? this.#revision : oldest.revision - 1;
  }

  /** How many bytes of JSON the history holds now (at most `historyBytes`, unless its one newest change is larger). */
  get historyBytes(): number {
    return this.#historyBytes;
  }

  /** How many changes the history holds now. */
  get historyLength(): number {
    return this.#history.length;
  }

  /** How many objects are stored. */
  get size(): number {
    let size = 0;
    for (const bucket of this.#buckets.values()) size += bucket.entries.size;
    return size;
  }

  count(prefix: string): number | undefined {
    if (bucketOf(prefix) !== prefix) return undefined;
    return this.#buckets.get(prefix)?.entries.size ?? 0;
  }

  async create(key: string, object: KubeObject): Promise<KubeObject> {
    const bucket = bucketFor(this.#buckets, key, true)!;
    if (bucket.entries.has(key)) throw new StorageError("KeyExists", key, `key ${key} already exists`);
    const revision = this.#revision + 1;
    setResourceVersion(object, revision);
    const bytes = measureObject(this.#maxObjectBytes, key, object);
    this.#revision = revision;
    bucket.entries.set(key, { object, revision, bytes });
    bucket.sortedKeys = undefined;
    this.#record({
      type: "ADDED",
      key,
      revision,
      object,
      previous: undefined,
      objectBytes: bytes,
      bytes,
      next: undefined,
    });
    return object;
  }

  async get(key: string): Promise<KubeObject | undefined> {
    return bucketFor(this.#buckets, key, false)?.entries.get(key)?.object;
  }

  async update(key: string, object: KubeObject, expectedRevision?: number): Promise<KubeObject> {
    const { bucket, entry } = this.#existing(key, expectedRevision);
    const revision = this.#revision + 1;
    setResourceVersion(object, revision);
    const bytes = measureObject(this.#maxObjectBytes, key, object);
    this.#revision = revision;
    bucket.entries.set(key, { object, revision, bytes });
    this.#record({
      type: "MODIFIED",
      key,
      revision,
      object,
      previous: entry.object,
      objectBytes: bytes,
      bytes: bytes + entry.bytes,
      next: undefined,
    });
    return object;
  }

  async delete(key: string, expectedRevision?: number): Promise<KubeObject> {
    const { bucket, entry } = this.#existing(key, expectedRevision);
    const revision = ++this.#revision;
    bucket.entries.delete(key);
    bucket.sortedKeys = undefined;
    const last = withResourceVersion(entry.object, revision);
    this.#record({
      type: "DELETED",
      key,
      revision,
      object: last,
      previous: entry.object,
      objectBytes: entry.bytes,
      bytes: entry.bytes,
      next: undefined,
    });
    return last;
  }

  /** The stored entry of `key` and its bucket, for a write that requires it to exist at `expectedRevision`. */
  #existing(key: string, expectedRevision: number | undefined): { bucket: Bucket; entry: Entry } {
    const bucket = bucketFor(this.#buckets, key, false);
    const entry = bucket?.entries.get(key);
    if (bucket === undefined || entry === undefined)
      throw new StorageError("KeyNotFound", key, `key ${key} not found`);
    if (expectedRevision !== undefined && entry.revision !== expectedRevision) {
      throw new StorageError(
        "Conflict",
        key,
        `revision precondition failed for ${key}: expected ${expectedRevision}, stored ${entry.revision}`,
      );
    }
    return { bucket, entry };
  }

  async list(prefix: string, options: StorageListOptions = {}): Promise<StorageListResult> {
    const current = this.#revision;
    const { revision, startKey, predicate } = options;
    const limit = options.limit !== undefined && options.limit > 0 ? options.limit : Number.POSITIVE_INFINITY;
    let keys: string[];
    let objectAt: (index: number) => KubeObject;
    if (revision !== undefined && revision > current) {
      throw new StorageError(
        "TooLargeResourceVersion",
        prefix,
        `Too large resource version: ${revision}, current: ${current}`,
      );
    }
    if (revision === undefined || revision === current) {
      keys = sortedKeysUnder(this.#buckets, prefix);
      const lookup = lookupFor(this.#buckets, prefix);
      objectAt = (index) => lookup(keys[index]!);
    } else {
      const snapshot = this.#snapshot(prefix, revision);
      keys = snapshot.keys;
      objectAt = (index) => snapshot.objects[index]!;
    }
    let index = startKey === undefined ? 0 : lowerBound(keys, startKey);
    const items: KubeObject[] = [];
    for (; index < keys.length && items.length < limit; index++) {
      const object = objectAt(index);
      if (predicate === undefined || predicate(object)) items.push(object);
    }
    const result: StorageListResult = { items, revision: revision ?? current };
    if (items.length === limit && index < keys.length) {
      if (predicate === undefined) {
        result.nextKey = keys[index - 1]! + "\u0000";
        result.remaining = keys.length - index;
      } else {
        // Continue only if something further on matches, so the last page never comes back empty.
        for (let next = index; next < keys.length; next++) {
          if (predicate(objectAt(next))) {
            result.nextKey = keys[index - 1]! + "\u0000";
            break;
          }
        }
      }
    }
    return result;
  }

  watch(prefix: string, options: StorageWatchOptions = {}): StorageWatcher {
    const watch: Watch = {
      prefix,
      after: this.#revision,
      predicate: options.predicate,
      channel: undefined as unknown as WatchChannel,
      bookmarkTimer: undefined,
    };
    watch.channel = new WatchChannel({
      limit: this.#watchBufferSize,
      onStop: () => {
        this.#watches.delete(watch);
        if (watch.bookmarkTimer !== undefined) this.#clock.clearTimeout(watch.bookmarkTimer);
        watch.bookmarkTimer = undefined;
      },
    });
    if (this.#closed) {
      watch.channel.close("storage closed");
      return watch.channel;
    }
    const { fromRevision } = options;
    if (fromRevision === undefined) {
      watch.channel.pushInitial(this.#initialState(prefix, options.predicate));
    } else if (fromRevision < this.compactedRevision) {
      const error = tooOldResourceVersion(fromRevision, this.compactedRevision);
      watch.channel.pushInitial([{ type: "ERROR", revision: this.#revision, error }]);
      watch.channel.close(error.message);
      return watch.channel;
    } else {
      watch.channel.pushInitial(this.#replay(prefix, fromRevision, options.predicate));
      watch.after = Math.max(fromRevision, this.#revision);
    }
    this.#watches.add(watch);
    const interval = options.bookmarkIntervalMs;
    if (interval !== undefined && interval > 0) {
      const tick = () => {
        watch.channel.push({ type: "BOOKMARK", revision: Math.max(this.#revision, watch.after) });
        if (!watch.channel.closed) watch.bookmarkTimer = this.#clock.setTimeout(tick, interval);
      };
      watch.bookmarkTimer = this.#clock.setTimeout(tick, interval);
    }
    return watch.channel;
  }

  close(): void {
    this.#closed = true;
    for (const watch of [...this.#watches]) watch.channel.close("storage closed");
  }

  /** Every change under `prefix` after `revision`, as a watcher with `predicate` sees it. */
  #replay(prefix: string, revision: number, predicate: ((o: KubeObject) => boolean) | undefined) {
    const events: StorageEvent[] = [];
    const first = revision - this.compactedRevision; // index of the first change after `revision`
    for (let i = Math.max(0, first); i < this.#history.length; i++) {
      const change = this.#history.at(i)!;
      if (!change.key.startsWith(prefix)) continue;
      const event = watchEventFor(change, predicate);
      if (event !== undefined) events.push(event);
    }
    return events;
  }

  #initialState(prefix: string, predicate: ((o: KubeObject) => boolean) | undefined): StorageEvent[] {
    const keys = sortedKeysUnder(this.#buckets, prefix);
    const lookup = lookupFor(this.#buckets, prefix);
    const revision = this.#revision;
    const events: StorageEvent[] = [];
    for (const key of keys) {
      const object = lookup(key);
      if (predicate === undefined || predicate(object)) events.push({ type: "ADDED", object, revision });
    }
    return events;
  }

  /**
   * Appends `change` to the history, evicts what exceeds the count and the
   * memory budget, and sends the change to the watchers. The caller counts in
   * `change.bytes` the state the change replaced; if an earlier change in the
   * history wrote that state, it is counted there instead.
   */
  #record(change: Change): void {
    const earlier = this.#lastChange.get(change.key);
    if (earlier !== undefined && change.previous !== undefined) {
      // The state this change replaced is the object the earlier change wrote: counted there.
      earlier.next = change;
      change.bytes -= earlier.objectBytes;
    }
    this.#lastChange.set(change.key, change);
    if (this.#history.length >= this.#historySize) this.#evictOldest();
    this.#history.push(change);
    this.#historyBytes += change.bytes;
    let overBudget = false;
    while (this.#historyBytes > this.#historyBudget && this.#history.length > 1) {
      this.#evictOldest();
      overBudget = true;
    }
    if (
      overBudget &&
      this.#snapshotCache !== undefined &&
      this.#snapshotCache.revision < this.compactedRevision
    )
      this.#snapshotCache = undefined;
    // A watcher still holding events that left the history would keep their objects alive
    // past the budget: it is closed, as if it had asked for a revision already compacted.
    const compacted = overBudget ? this.compactedRevision : 0;
    for (const watch of this.#watches) {
      if (overBudget) {
        const oldest = watch.channel.oldestQueuedRevision;
        if (oldest !== undefined && oldest <= compacted) {
          watch.channel.fail(tooOldResourceVersion(oldest - 1, compacted), change.revision, true);
          continue;
        }
      }
      if (change.revision <= watch.after || !change.key.startsWith(watch.prefix)) continue;
      const event = watchEventFor(change, watch.predicate);
      if (event !== undefined) watch.channel.push(event);
    }
  }

  /** Drops the oldest change; an object a later change still holds as `previous` stays counted, there. */
  #evictOldest(): void {
    const oldest = this.#history.shift()!;
    this.#historyBytes -= oldest.bytes;
    if (oldest.next !== undefined && oldest.type !== "DELETED") {
      oldest.next.bytes += oldest.objectBytes;
      this.#historyBytes += oldest.objectBytes;
    }
    if (this.#lastChange.get(oldest.key) === oldest) this.#lastChange.delete(oldest.key);
  }

  /** The state under `prefix` at `revision`: the current state with newer changes undone. */
  #snapshot(prefix: string, revision: number): { keys: string[]; objects: KubeObject[] } {
    if (revision < this.compactedRevision) throw tooOldResourceVersion(revision, this.compactedRevision);
    const cached = this.#snapshotCache;
    if (cached !== undefined && cached.prefix === prefix && cached.revision === revision) return cached;
    const state = new Map<string, KubeObject>();
    const keys = sortedKeysUnder(this.#buckets, prefix);
    const lookup = lookupFor(this.#buckets, prefix);
    for (const key of keys) state.set(key, lookup(key));
    for (let i = this.#history.length - 1; i >= 0; i--) {
      const change = this.#history.at(i)!;
      if (change.revision <= revision) break;
      if (!change.key.startsWith(prefix)) continue;
      if (change.type === "ADDED") state.delete(change.key);
      else state.set(change.key, change.previous!);
    }
    const sortedKeys = [...state.keys()].sort(compareKeys);
    const snapshot = {
      prefix,
      revision,
      keys: sortedKeys,
      objects: sortedKeys.map((key) => state.get(key)!),
    };
    this.#snapshotCache = snapshot;
    return snapshot;
  }
}
