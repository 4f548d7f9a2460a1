import type { KubeObject } from "@reconcile/api";
import {
  type Storage,
  StorageError,
  type StorageEvent,
  type StorageListOptions,
  type StorageListResult,
  type StorageWatcher,
  type StorageWatchOptions,
  WatchChannel,
} from "@reconcile/apiserver";
import { type Clock, realClock, type TimerHandle } from "@reconcile/clock";
import type { Etcd3, IKeyValue, IRangeResponse, ITxnResponse } from "etcd3";
import { createEtcdClient } from "./client.js";
import { Compactor } from "./compactor.js";
import {
  compactedText,
  deadlineExceeded,
  fromEtcdError,
  futureRevisionText,
  neverSent,
  retriableRead,
} from "./errors.js";
import { KeyLayout, type KeyLayoutOptions, prefixEnd } from "./keys.js";
import { type EtcdWatch, openEtcdWatch, translateEvent } from "./watcher.js";

export interface EtcdStorageOptions extends KeyLayoutOptions {
  /**
   * etcd client URLs (`http://127.0.0.1:2379`), one or a list. The storage
   * creates its client with {@link createEtcdClient} and closes it on `close()`.
   */
  endpoints?: string | readonly string[] | undefined;
  /**
   * A client to use instead (not closed by `close()`). Build it with
   * {@link createEtcdClient}: the `etcd3` defaults retry writes and open a
   * circuit breaker that refuses every call for 5 s after three failures.
   */
  client?: Etcd3 | undefined;
  /** Deadline of one etcd call; past it the request fails with 504 Timeout. Default: 30,000 ms. */
  requestTimeoutMs?: number | undefined;
  /** How long the `etcd` health check waits (kube-apiserver's `--etcd-healthcheck-timeout`). Default: 2,000 ms. */
  healthCheckTimeoutMs?: number | undefined;
  /**
   * How often etcd's history is compacted (kube-apiserver's `--etcd-compaction-interval`);
   * 0 turns compaction off. Default: 300,000 ms (5 minutes).
   */
  compactionIntervalMs?: number | undefined;
  /** How many unread events one watcher may have before it is closed. Default: 10,000. */
  watchBufferSize?: number | undefined;
  /** Source of time for bookmarks, retries and compaction. Default: `realClock`. */
  clock?: Clock | undefined;
}

/** Receives a subscription's changes; see {@link EtcdStorage.subscribe}. */
export interface WatchSink {
  /** A change, with the storage key it happened to. */
  event(event: StorageEvent, key: string): void;
  /** etcd has sent every change up to `revision`. */
  progress(revision: number): void;
  /** The subscription cannot go on; `revision` is the last one delivered. */
  error(error: Error, revision: number): void;
}

/** Items read per etcd call for lists without a limit, and the cap when a selector makes pages grow. */
const maxPageSize = 10_000;

/**
 * The `Storage` interface on etcd v3, as kube-apiserver's etcd3 store keeps
 * objects: one key per object (see {@link KeyLayout}), JSON values without
 * `metadata.resourceVersion`, whose value is the key's mod revision. Creates
 * are transactions on the key's absence, updates and deletes transactions on
 * its mod revision; lists read one snapshot revision page by page; watches are
 * etcd watches with previous values. Nothing is reported written that etcd did
 * not commit: a write whose outcome is unknown (deadline, lost connection)
 * fails.
 */
export class EtcdStorage implements Storage {
  readonly client: Etcd3;
  readonly layout: KeyLayout;
  readonly #ownsClient: boolean;
  readonly #timeoutMs: number;
  readonly #healthCheckTimeoutMs: number;
  readonly #watchBufferSize: number;
  readonly #clock: Clock;
  readonly #watchers = new Set<WatchChannel>();
  readonly #subscriptions = new Set<() => void>();
  readonly #compaction: AbortController | undefined;
  #closed = false;
  /** The newest revision any response has shown: at least that of every write acknowledged. */
  #knownRevision = 0;

  constructor(options: EtcdStorageOptions) {
    if (options.client === undefined && options.endpoints === undefined)
      throw new TypeError("EtcdStorage needs `endpoints` or `client`");
    this.#ownsClient = options.client === undefined;
    this.client = options.client ?? createEtcdClient(options.endpoints!);
    this.layout = new KeyLayout(options);
    this.#timeoutMs = positive("requestTimeoutMs", options.requestTimeoutMs ?? 30_000);
    this.#healthCheckTimeoutMs = positive("healthCheckTimeoutMs", options.healthCheckTimeoutMs ?? 2_000);
    this.#watchBufferSize = positive("watchBufferSize", options.watchBufferSize ?? 10_000);
    this.#clock = options.clock ?? realClock;
    const interval = options.compactionIntervalMs ?? 300_000;
    if (interval > 0) {
      this.#compaction = new AbortController();
      const compactor = new Compactor({ client: this.client, intervalMs: interval, clock: this.#clock });
      compactor.run({ signal: this.#compaction.signal }).catch(() => {});
    }
  }

  /** The newest revision any etcd response has shown so far: at least that of every write acknowledged. */
  get knownRevision(): number {
    return this.#knownRevision;
  }

  /**
   * kube-apiserver's etcd health check: a read that etcd answers within 2 s
   * (`--etcd-healthcheck-timeout`), else the reason.
   */
  async checkHealth(): Promise<void> {
    const deadline = new Date(Date.now() + this.#healthCheckTimeoutMs);
    try {
      await this.client.kv.range(
        { key: Buffer.from(`${this.layout.root}health`), count_only: true },
        { deadline },
      );
    } catch (error) {
      throw fromEtcdError(error, "health");
    }
  }

  async currentRevision(): Promise<number> {
    const response = await this.#read("", (deadline) =>
      this.client.kv.range({ key: Buffer.from(this.layout.root), count_only: true }, { deadline }),
    );
    return Number(response.header.revision);
  }

  async create(key: string, object: KubeObject): Promise<KubeObject> {
    const etcdKey = this.#objectKey(key);
    const value = encode(object);
    const response = await this.#write(key, (deadline) =>
      this.client.kv.txn(
        {
          compare: [{ key: etcdKey, target: "Mod", result: "Equal", mod_revision: 0 }],
          success: [{ request_put: { key: etcdKey, value } }],
        },
        { deadline },
      ),
    );
    if (!response.succeeded) throw new StorageError("KeyExists", key, `key ${key} already exists`);
    setResourceVersion(object, Number(response.header.revision));
    return object;
  }

  async get(key: string): Promise<KubeObject | undefined> {
    const etcdKey = this.#objectKey(key);
    const response = await this.#read(key, (deadline) =>
      this.client.kv.range({ key: etcdKey }, { deadline }),
    );
    const kv = response.kvs[0];
    return kv === undefined ? undefined : this.#decode(key, kv.value, Number(kv.mod_revision));
  }

  async update(key: string, object: KubeObject, expectedRevision?: number): Promise<KubeObject> {
    const etcdKey = this.#objectKey(key);
    const value = encode(object);
    const response = await this.#write(key, (deadline) =>
      this.client.kv.txn(
        {
          compare: [this.#precondition(etcdKey, expectedRevision)],
          success: [{ request_put: { key: etcdKey, value } }],
          failure: [{ request_range: { key: etcdKey } }],
        },
        { deadline },
      ),
    );
    if (!response.succeeded) throw this.#preconditionFailure(key, response, expectedRevision);
    setResourceVersion(object, Number(response.header.revision));
    return object;
  }

  async delete(key: string, expectedRevision?: number): Promise<KubeObject> {
    const etcdKey = this.#objectKey(key);
    const response = await this.#write(key, (deadline) =>
      this.client.kv.txn(
        {
          compare: [this.#precondition(etcdKey, expectedRevision)],
          success: [{ request_delete_range: { key: etcdKey, prev_kv: true } }],
          failure: [{ request_range: { key: etcdKey } }],
        },
        { deadline },
      ),
    );
    if (!response.succeeded) throw this.#preconditionFailure(key, response, expectedRevision);
    const previous = response.responses[0]?.response_delete_range?.prev_kvs[0];
    if (previous === undefined) throw new StorageError("KeyNotFound", key, `key ${key} not found`);
    // kube-apiserver reports a deletion with the revision of the delete.
    return this.#decode(key, previous.value, Number(response.header.revision));
  }

  async list(prefix: string, options: StorageListOptions = {}): Promise<StorageListResult> {
    return this.#list(prefix, options, undefined);
  }

  /** Every object under `prefix` with its storage key, read at one revision (the watch cache's list). */
  async listEntries(
    prefix: string,
    revision?: number,
  ): Promise<{ entries: [string, KubeObject][]; revision: number }> {
    const keys: string[] = [];
    const result = await this.#list(prefix, revision ? { revision } : {}, keys);
    return { entries: result.items.map((object, i) => [keys[i]!, object]), revision: result.revision };
  }

  async #list(
    prefix: string,
    options: StorageListOptions,
    keys: string[] | undefined,
  ): Promise<StorageListResult> {
    const range = this.#rangeOf(prefix);
    const { predicate } = options;
    const limit = options.limit !== undefined && options.limit > 0 ? options.limit : 0;
    let start = range.key;
    if (options.startKey !== undefined) {
      const from = Buffer.from(this.layout.toEtcd(options.startKey) ?? this.layout.root);
      if (Buffer.compare(from, start) > 0) start = from;
    }
    // Pages grow when a predicate filters items out, as upstream's list does (1, 2, 4 … 10,000).
    let pageSize = limit > 0 ? Math.min(limit, maxPageSize) : maxPageSize;
    let revision = options.revision ?? 0;
    const items: KubeObject[] = [];
    let lastKey: Buffer | undefined;
    let more = false;
    let limitReached = false;
    let remaining: number | undefined;
    for (;;) {
      const response = await this.#rangeAt(prefix, start, range.end, pageSize, revision);
      if (revision === 0) revision = Number(response.header.revision);
      more = response.more;
      if (response.kvs.length === 0 && more)
        throw new Error("no results were found, but etcd indicated there were more values remaining");
      let consumed = 0;
      for (const kv of response.kvs) {
        if (limit > 0 && items.length >= limit) {
          limitReached = true;
          break;
        }
        consumed++;
        lastKey = kv.key;
        const etcdKey = kv.key.toString("utf8");
        if (range.filter !== undefined && !range.filter(etcdKey)) continue;
        const object = this.#decode(etcdKey, kv.value, Number(kv.mod_revision));
        if (predicate === undefined || predicate(object)) {
          items.push(object);
          keys?.push(this.layout.fromEtcd(etcdKey));
        }
      }
      remaining = Number(response.count) - consumed;
      if (limitReached || !more) break;
      if (limit > 0 && items.length >= limit) break;
      start = Buffer.concat([lastKey!, zeroByte]);
      if (limit > 0) pageSize = Math.min(pageSize * 2, maxPageSize);
    }
    const result: StorageListResult = { items, revision };
    if ((more || limitReached) && lastKey !== undefined) {
      result.nextKey = `${this.layout.fromEtcd(lastKey.toString("utf8"))}\u0000`;
      // etcd counts every key left, so the count is only exact without a filter (as upstream).
      if (predicate === undefined && range.filter === undefined) result.remaining = remaining;
    }
    return result;
  }

  watch(prefix: string, options: StorageWatchOptions = {}): StorageWatcher {
    return this.watchWithProgress(prefix, options, false);
  }

  /**
   * `watch`, and with `progress` also a BOOKMARK for every etcd progress
   * notification (the watch cache uses them to learn how current it is).
   */
  watchWithProgress(prefix: string, options: StorageWatchOptions, progress: boolean): WatchChannel {
    let etcdWatch: EtcdWatch | undefined;
    let bookmarkTimer: TimerHandle | undefined;
    const channel: WatchChannel = new WatchChannel({
      limit: this.#watchBufferSize,
      onStop: () => {
        etcdWatch?.stop();
        if (bookmarkTimer !== undefined) this.#clock.clearTimeout(bookmarkTimer);
        bookmarkTimer = undefined;
        this.#watchers.delete(channel);
      },
    });
    if (this.#closed) {
      channel.close("storage closed");
      return channel;
    }
    this.#watchers.add(channel);
    const range = this.#rangeOf(prefix);
    const { predicate } = options;
    // The initial state is read at the newest revision known now, so that a write acknowledged
    // before watch() was called is in the snapshot and one made after it arrives as an event.
    const snapshotRevision = this.#knownRevision;
    let seen = 0;
    const start = async () => {
      let after = options.fromRevision;
      if (after === undefined) {
        const listed = await this.#listForWatch(prefix, predicate, snapshotRevision);
        channel.pushInitial(
          listed.items.map((object): StorageEvent => ({ type: "ADDED", object, revision: listed.revision })),
        );
        after = listed.revision;
      }
      seen = after;
      if (channel.closed) return;
      etcdWatch = openEtcdWatch({
        client: this.client,
        key: range.key,
        rangeEnd: range.end,
        startRevision: after + 1,
        clock: this.#clock,
        onEvents: (events) => {
          for (const event of events) {
            seen = Number(event.kv.mod_revision);
            if (range.filter !== undefined && !range.filter(event.kv.key.toString("utf8"))) continue;
            let translated: StorageEvent | undefined;
            try {
              translated = translateEvent(event, (value, rv) => this.#decode(prefix, value, rv), predicate);
            } catch (error) {
              channel.fail(error as Error, seen);
              return;
            }
            if (translated !== undefined) channel.push(translated);
          }
        },
        onProgress: (revision) => {
          seen = Math.max(seen, revision);
          if (progress) channel.push({ type: "BOOKMARK", revision });
        },
        onError: (error) => channel.fail(error, seen),
      });
      const interval = options.bookmarkIntervalMs;
      if (interval !== undefined && interval > 0) {
        const tick = () => {
          channel.push({ type: "BOOKMARK", revision: seen });
          if (!channel.closed) bookmarkTimer = this.#clock.setTimeout(tick, interval);
        };
        bookmarkTimer = this.#clock.setTimeout(tick, interval);
      }
    };
    start().catch((error: unknown) => channel.fail(fromEtcdError(error, prefix), seen));
    return channel;
  }

  /**
   * Every change under `prefix` after `fromRevision`, unfiltered, handed to
   * `sink` as it arrives (no queue): the watch cache's feed. `sink.error` is
   * called at most once and ends the subscription; so does `stop()`.
   */
  subscribe(prefix: string, fromRevision: number, sink: WatchSink): { stop(): void } {
    const range = this.#rangeOf(prefix);
    let ended = false;
    const etcdWatch = openEtcdWatch({
      client: this.client,
      key: range.key,
      rangeEnd: range.end,
      startRevision: fromRevision + 1,
      clock: this.#clock,
      onEvents: (events) => {
        for (const event of events) {
          if (ended) return;
          const revision = Number(event.kv.mod_revision);
          if (range.filter !== undefined && !range.filter(event.kv.key.toString("utf8"))) continue;
          let translated: StorageEvent | undefined;
          try {
            translated = translateEvent(event, (value, rv) => this.#decode(prefix, value, rv), undefined);
          } catch (error) {
            end();
            sink.error(error as Error, revision);
            return;
          }
          if (translated !== undefined)
            sink.event(translated, this.layout.fromEtcd(event.kv.key.toString("utf8")));
        }
      },
      onProgress: (revision) => sink.progress(revision),
      onError: (error) => {
        if (ended) return;
        end();
        sink.error(error, etcdWatch.nextRevision - 1);
      },
    });
    const end = () => {
      if (ended) return;
      ended = true;
      etcdWatch.stop();
      this.#subscriptions.delete(end);
    };
    this.#subscriptions.add(end);
    if (this.#closed) end();
    return { stop: end };
  }

  close(): void {
    if (this.#closed) return;
    for (const end of [...this.#subscriptions]) end();
    this.#closed = true;
    this.#compaction?.abort();
    for (const watcher of [...this.#watchers]) watcher.close("storage closed");
    if (this.#ownsClient) this.client.close();
  }

  async #listForWatch(
    prefix: string,
    predicate: ((object: KubeObject) => boolean) | undefined,
    revision: number,
  ): Promise<StorageListResult> {
    if (revision === 0) return this.list(prefix, { predicate });
    try {
      return await this.list(prefix, { predicate, revision });
    } catch (error) {
      // Compacted since: the current state is as good a start.
      if (StorageError.is(error, "Expired")) return this.list(prefix, { predicate });
      throw error;
    }
  }

  /** The etcd key of one object; rejects keys that are not one path per object, as upstream's key checks. */
  #objectKey(key: string): Buffer {
    const etcdKey = this.layout.toEtcd(key);
    if (etcdKey === undefined || etcdKey.endsWith("/") || hasDotSegment(key))
      throw new Error(`invalid key: ${key}`);
    return Buffer.from(etcdKey);
  }

  /**
   * The etcd range of a storage prefix. A prefix that names no single resource
   * (`/`, `/core/`) spans the whole root, and keys outside it are filtered out.
   */
  #rangeOf(prefix: string): { key: Buffer; end: Buffer; filter: ((etcdKey: string) => boolean) | undefined } {
    const mapped = this.layout.toEtcd(prefix);
    const key = Buffer.from(mapped ?? this.layout.root);
    const filter =
      mapped === undefined && prefix !== "/"
        ? (etcdKey: string) => this.layout.fromEtcd(etcdKey).startsWith(prefix)
        : undefined;
    return { key, end: prefixEnd(key), filter };
  }

  #precondition(etcdKey: Buffer, expectedRevision: number | undefined) {
    return expectedRevision === undefined
      ? { key: etcdKey, target: "Mod" as const, result: "Greater" as const, mod_revision: 0 }
      : { key: etcdKey, target: "Mod" as const, result: "Equal" as const, mod_revision: expectedRevision };
  }

  #preconditionFailure(
    key: string,
    response: ITxnResponse,
    expectedRevision: number | undefined,
  ): StorageError {
    const current: IKeyValue | undefined = response.responses[0]?.response_range?.kvs[0];
    if (current === undefined) return new StorageError("KeyNotFound", key, `key ${key} not found`);
    return new StorageError(
      "Conflict",
      key,
      `revision precondition failed for ${key}: expected ${expectedRevision}, stored ${current.mod_revision}`,
    );
  }

  async #rangeAt(
    prefix: string,
    start: Buffer,
    end: Buffer,
    limit: number,
    revision: number,
  ): Promise<IRangeResponse> {
    try {
      return await this.#read(prefix, (deadline) =>
        this.client.kv.range({ key: start, range_end: end, limit, revision }, { deadline }),
      );
    } catch (error) {
      if (StorageError.is(error, "Expired"))
        throw new StorageError("Expired", prefix, "The resourceVersion for the provided list is too old.");
      if (StorageError.is(error, "TooLargeResourceVersion")) {
        const current = await this.currentRevision().catch(() => 0);
        throw new StorageError(
          "TooLargeResourceVersion",
          prefix,
          `Too large resource version: ${revision}, current: ${current}`,
        );
      }
      throw error;
    }
  }

  /**
   * A read, repeated (within the deadline) while the member is unreachable or
   * has no leader, as the Go client repeats reads; another member may answer.
   */
  async #read<T>(key: string, call: (deadline: Date) => Promise<T>): Promise<T> {
    const deadline = new Date(Date.now() + this.#timeoutMs);
    let backoffMs = 25;
    for (;;) {
      try {
        return this.#observe(await call(deadline));
      } catch (error) {
        const text = String((error as Error)?.message);
        if (text.includes(compactedText) || text.includes(futureRevisionText) || !retriableRead(error))
          throw fromEtcdError(error, key);
        // Unreachable until the deadline: the request times out, as kube-apiserver's would (504).
        if (Date.now() + backoffMs >= deadline.getTime()) throw deadlineExceeded(error);
        await new Promise((resolve) => setTimeout(resolve, backoffMs));
        backoffMs = Math.min(backoffMs * 2, 1_000);
      }
    }
  }

  /**
   * A write, repeated only when it provably never left this process (no
   * connection to the member): a write that may have reached etcd is never
   * sent twice, and its unknown outcome is reported as a failure.
   */
  async #write<T>(key: string, call: (deadline: Date) => Promise<T>): Promise<T> {
    const deadline = new Date(Date.now() + this.#timeoutMs);
    let backoffMs = 25;
    for (;;) {
      try {
        return this.#observe(await call(deadline));
      } catch (error) {
        if (!neverSent(error)) throw fromEtcdError(error, key);
        // Never sent, and no member reachable until the deadline: a timeout (504), nothing written.
        if (Date.now() + backoffMs >= deadline.getTime()) throw deadlineExceeded(error);
        await new Promise((resolve) => setTimeout(resolve, backoffMs));
        backoffMs = Math.min(backoffMs * 2, 1_000);
      }
    }
  }

  #observe<T>(response: T): T {
    const revision = Number((response as { header?: { revision?: string } }).header?.revision ?? 0);
    if (revision > this.#knownRevision) this.#knownRevision = revision;
    return response;
  }

  #decode(key: string, value: Buffer, revision: number): KubeObject {
    let object: unknown;
    try {
      object = JSON.parse(value.toString("utf8"));
    } catch (error) {
      throw new Error(`unable to decode the object stored at ${key}: ${(error as Error).message}`);
    }
    if (typeof object !== "object" || object === null || Array.isArray(object))
      throw new Error(`unable to decode the object stored at ${key}: not a JSON object`);
    setResourceVersion(object as KubeObject, revision);
    return object as KubeObject;
  }
}

const zeroByte = Buffer.from([0]);

/** Whether a key has a `.` or `..` segment (which would let a name escape its directory). */
function hasDotSegment(key: string): boolean {
  return key.split("/").some((segment) => segment === "." || segment === "..");
}

/** JSON without `metadata.resourceVersion`, which is the key's mod revision and never stored. */
function encode(object: KubeObject): Buffer {
  const metadata = object.metadata;
  if (metadata?.resourceVersion === undefined) return Buffer.from(JSON.stringify(object));
  const { resourceVersion: _, ...rest } = metadata;
  return Buffer.from(JSON.stringify({ ...object, metadata: rest }));
}

function setResourceVersion(object: KubeObject, revision: number): void {
  const meta = (object.metadata ??= {}) as { resourceVersion?: string };
  meta.resourceVersion = String(revision);
}

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0)
    throw new RangeError(`${name} must be a positive number, got ${value}`);
  return value;
}
