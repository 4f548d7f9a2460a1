import type { KubeObject } from "@reconcile/api";
import type { Clock, TimerHandle } from "@reconcile/clock";
import { jsonLengthBounds } from "../json.js";
import { StorageError } from "./storage.js";
import type { WatchChannel } from "./watch-channel.js";
import type { StorageChange } from "./watch-events.js";

// What the in-memory storage keeps (entries, buckets of keys in etcd's order,
// the history's changes) and the pure functions over them.

export interface MemoryStorageOptions {
  /** Source of time for bookmark intervals. Default: `realClock`. */
  clock?: Clock | undefined;
  /** How many changes the history keeps for watches and continue tokens. Default: 10,000. */
  historySize?: number | undefined;
  /**
   * The memory budget of the history, in bytes of JSON of the objects it
   * holds: the oldest changes leave it once it holds more (the newest always
   * stays), and a watcher with unread events that left it is closed with an
   * ERROR `Expired` event. Default: 128 MiB.
   */
  historyBytes?: number | undefined;
  /**
   * The largest object stored, in bytes of JSON; a larger one is refused with
   * `ObjectTooLarge` (etcd's request limit). Default: 1.5 MiB.
   */
  maxObjectBytes?: number | undefined;
  /**
   * How many live events one watcher may have unread before it is closed
   * (it then resumes from the last revision it read). Default: 10,000.
   */
  watchBufferSize?: number | undefined;
}

/** One change, as the history keeps it: enough to replay it and to undo it. */
export interface Change extends StorageChange {
  key: string;
  /** The size of `object` in bytes of JSON (for DELETED, of the object deleted). */
  objectBytes: number;
  /**
   * What the history holds through this change, in bytes of JSON: the object
   * written (not for DELETED, whose object is the one deleted), and the state
   * it replaced unless an earlier change in the history holds that already.
   */
  bytes: number;
  /** The next change of the same key, once there is one: it holds this change's object as `previous`. */
  next: Change | undefined;
}

export interface Entry {
  object: KubeObject;
  revision: number;
  /** The object's size in bytes of JSON. */
  bytes: number;
}

/** The keys of one resource (all keys sharing their first two path segments), kept sortable. */
export interface Bucket {
  entries: Map<string, Entry>;
  sortedKeys: string[] | undefined;
}

export interface Watch {
  prefix: string;
  /** Changes at or below this revision are not sent (they were replayed, or predate the start). */
  after: number;
  predicate: ((object: KubeObject) => boolean) | undefined;
  channel: WatchChannel;
  bookmarkTimer: TimerHandle | undefined;
}

/**
 * The size of `object` in bytes of JSON (in UTF-16 code units, escapes not
 * counted, when that cannot be over a third of the limit: the history's
 * budget needs no more precision);
 * larger than `maxObjectBytes` is refused, as etcd refuses the request.
 */
export function measureObject(maxObjectBytes: number, key: string, object: KubeObject): number {
  // A UTF-16 code unit is at most 3 bytes of UTF-8: count them exactly only when that could pass the limit.
  const { lower, upper } = jsonLengthBounds(object);
  let bytes: number;
  if (upper * 3 <= maxObjectBytes) bytes = lower;
  else {
    const text = JSON.stringify(object);
    bytes = text.length * 3 <= maxObjectBytes ? text.length : Buffer.byteLength(text);
  }
  if (bytes > maxObjectBytes)
    throw new StorageError(
      "ObjectTooLarge",
      key,
      `the object is ${bytes} bytes of JSON; limit is ${maxObjectBytes}`,
    );
  return bytes;
}

export function setResourceVersion(object: KubeObject, revision: number): void {
  const meta = (object.metadata ??= {}) as { resourceVersion?: string };
  meta.resourceVersion = String(revision);
}

/** `/group/resource/`: the first two path segments, where one resource's keys live. */
export function bucketOf(key: string): string {
  let slashes = 0;
  for (let i = 0; i < key.length; i++) {
    if (key.charCodeAt(i) === 47 && ++slashes === 3) return key.slice(0, i + 1);
  }
  return key.slice(0, key.lastIndexOf("/") + 1);
}

export function sortedKeysOf(bucket: Bucket): string[] {
  bucket.sortedKeys ??= [...bucket.entries.keys()].sort(compareKeys);
  return bucket.sortedKeys;
}

export function keysWithPrefix(sorted: string[], prefix: string): string[] {
  const start = lowerBound(sorted, prefix);
  // Keys are ASCII paths, so every key under the prefix sorts before prefix + U+FFFF.
  const end = lowerBound(sorted, `${prefix}\uffff`, start);
  return start === 0 && end === sorted.length ? sorted : sorted.slice(start, end);
}

/** Byte order, as etcd sorts keys (the default sort compares UTF-16 code units; equal for ASCII keys). */
export function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The index of the first key >= `key`. */
export function lowerBound(sorted: string[], key: string, from = 0): number {
  let low = from;
  let high = sorted.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (sorted[mid]! < key) low = mid + 1;
    else high = mid;
  }
  return low;
}

export function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1)
    throw new RangeError(`${name} must be a positive integer, got ${value}`);
  return value;
}

/** Every stored key under `prefix`, sorted. */
export function sortedKeysUnder(buckets: ReadonlyMap<string, Bucket>, prefix: string): string[] {
  const bucketName = bucketOf(prefix);
  const bucket = bucketName.length <= prefix.length ? buckets.get(bucketName) : undefined;
  if (bucket !== undefined) return keysWithPrefix(sortedKeysOf(bucket), prefix);
  // A prefix shorter than one resource (for example "/"): every bucket under it.
  const keys: string[] = [];
  for (const name of [...buckets.keys()].sort(compareKeys)) {
    if (name.startsWith(prefix)) keys.push(...sortedKeysOf(buckets.get(name)!));
  }
  return keys;
}

/** Reads stored objects by key; bound to one bucket when the prefix lies inside one. */
export function lookupFor(buckets: Map<string, Bucket>, prefix: string): (key: string) => KubeObject {
  const name = bucketOf(prefix);
  const bucket = name.length <= prefix.length ? buckets.get(name) : undefined;
  if (bucket !== undefined) return (key) => bucket.entries.get(key)!.object;
  return (key) => bucketFor(buckets, key, false)!.entries.get(key)!.object;
}

export function bucketFor(buckets: Map<string, Bucket>, key: string, create: boolean): Bucket | undefined {
  const name = bucketOf(key);
  let bucket = buckets.get(name);
  if (bucket === undefined && create) {
    bucket = { entries: new Map(), sortedKeys: undefined };
    buckets.set(name, bucket);
  }
  return bucket;
}
