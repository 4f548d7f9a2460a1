import type { KubeObject } from "@reconcile/api";
import { ReconcileError } from "@reconcile/api";

/**
 * What the registry needs from a key-value store with revisions: the seam
 * where a durable backend (etcd) replaces the in-memory one. Keys are
 * `/`-separated paths; a list or watch covers every key under a prefix.
 *
 * Objects handed to the storage become the storage's: the caller must not
 * change them afterwards. Objects it hands out are shared and must be treated
 * as read-only (the registry copies before anything leaves the server).
 * The storage sets `metadata.resourceVersion` to the revision of the write.
 */
export interface Storage {
  /** The revision of the newest write (0 before any). */
  currentRevision(): Promise<number>;
  /**
   * Resolves when the backing store answers, rejects with why not: the
   * `etcd` check of `/healthz`, `/livez` and `/readyz`. Optional: a storage
   * without it (in memory) has no such check.
   */
  checkHealth?(): Promise<void>;
  /**
   * Stores a new object. Rejects with `KeyExists` if the key is taken, and
   * with `ObjectTooLarge` if the object is larger than the backend stores
   * (as `update` does; etcd's request limit).
   */
  create(key: string, object: KubeObject): Promise<KubeObject>;
  /**
   * How many objects one resource holds (`prefix` the resource's whole
   * prefix, `/apps/deployments/`), when the storage knows without asking
   * anyone; undefined otherwise (API Priority and Fairness then assumes the least).
   */
  count?(prefix: string): number | undefined;
  /** The object under `key`, or undefined. */
  get(key: string): Promise<KubeObject | undefined>;
  /**
   * The objects under `prefix`, in key order. With `revision`, the state as
   * it was at that revision (`Expired` once it has left the history, and
   * `TooLargeResourceVersion` if it is in the future).
   */
  list(prefix: string, options?: StorageListOptions): Promise<StorageListResult>;
  /**
   * Replaces the object under `key`. With `expectedRevision`, rejects with
   * `Conflict` unless the stored object was last written at that revision.
   * Rejects with `KeyNotFound` if there is nothing to replace.
   */
  update(key: string, object: KubeObject, expectedRevision?: number): Promise<KubeObject>;
  /**
   * Removes the object under `key` and resolves with its last state (its
   * resourceVersion set to the revision of the delete, as kube-apiserver
   * reports deletions). Same preconditions as `update`.
   */
  delete(key: string, expectedRevision?: number): Promise<KubeObject>;
  /**
   * Watches every key under `prefix`. The watcher starts at once; see
   * {@link StorageWatchOptions.fromRevision} for what it replays. A watcher
   * whose reader falls too far behind receives a last ERROR event
   * (`WatcherTooSlow`) and stops; it never buffers without bound.
   */
  watch(prefix: string, options?: StorageWatchOptions): StorageWatcher;
  /** Stops every watcher and releases timers. */
  close(): void;
}

export interface StorageListOptions {
  /** Serve the state at exactly this revision (a continue token's snapshot). Default: the current state. */
  revision?: number | undefined;
  /** Start at this key (inclusive); keys before it are skipped. */
  startKey?: string | undefined;
  /** At most this many matching items; 0 or undefined = all. */
  limit?: number | undefined;
  /** Only objects for which this returns true are listed (and counted against `limit`). */
  predicate?: ((object: KubeObject) => boolean) | undefined;
}

export interface StorageListResult {
  items: KubeObject[];
  /** The revision the items were read at. */
  revision: number;
  /** When `limit` cut the list short: the key to continue from. */
  nextKey?: string | undefined;
  /** When `limit` cut the list short and no predicate was given: how many keys remain. */
  remaining?: number | undefined;
}

export interface StorageWatchOptions {
  /**
   * undefined: synthetic ADDED events for the current state first, then every
   * later change. A number N: exactly the changes with revision > N, replayed
   * from the history (an ERROR `Expired` event if N has left it).
   */
  fromRevision?: number | undefined;
  /**
   * Only objects for which this returns true are reported. As kube-apiserver
   * does, an object that stops matching is reported as DELETED and one that
   * starts matching as ADDED.
   */
  predicate?: ((object: KubeObject) => boolean) | undefined;
  /** Send a BOOKMARK with the current revision every this many milliseconds. Default: never. */
  bookmarkIntervalMs?: number | undefined;
}

export type StorageEventType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";

export interface StorageEvent {
  type: StorageEventType;
  /** The object (the last state for DELETED); undefined for BOOKMARK and ERROR. */
  object?: KubeObject | undefined;
  /** The revision of the change, or of the bookmark. */
  revision: number;
  /** ERROR only: what went wrong. */
  error?: StorageError | undefined;
  /** The size of the stored object in bytes, when the storage knows it (for a cache's memory budget). */
  bytes?: number | undefined;
}

/** A running watch: an async iterable of events that ends when the watcher stops. */
export interface StorageWatcher extends AsyncIterable<StorageEvent> {
  /** Stops the watcher; iteration ends after the events already delivered. */
  stop(): void;
  /** Why the watcher stopped, once it has: "stopped", "storage closed", or an overflow reason. */
  readonly closeReason: string | undefined;
}

export type StorageErrorCode =
  | "KeyExists"
  | "KeyNotFound"
  | "Conflict"
  | "Expired"
  | "TooLargeResourceVersion"
  /** A watcher fell too far behind and was closed. */
  | "WatcherTooSlow"
  /** An object larger than the storage takes (etcd's request limit). */
  | "ObjectTooLarge";

/** A storage-level failure; the registry turns it into the matching `StatusError`. */
export class StorageError extends ReconcileError {
  readonly storageCode: StorageErrorCode;
  readonly key: string;

  constructor(storageCode: StorageErrorCode, key: string, message: string) {
    super(`storage.${storageCode}`, message);
    this.name = "StorageError";
    this.storageCode = storageCode;
    this.key = key;
  }

  /**
   * Whether `error` is a StorageError (of `code`). By its `storage.*` code,
   * not the prototype chain: a storage from another copy of this package
   * (the CommonJS build beside the ESM one, two installs) throws its own class.
   */
  static is(error: unknown, code?: StorageErrorCode): error is StorageError {
    if (
      !ReconcileError.isInstance(error) ||
      typeof error.code !== "string" ||
      !error.code.startsWith("storage.")
    ) {
      return false;
    }
    return code === undefined || (error as StorageError).storageCode === code;
  }
}

/** kube-apiserver's wording for a watch or list from a compacted revision. */
export function tooOldResourceVersion(requested: number, oldest: number): StorageError {
  return new StorageError("Expired", "", `too old resource version: ${requested} (${oldest})`);
}
