import type { KubeObject } from "@reconcile/api";
import { StorageError, type StorageEvent } from "@reconcile/apiserver";
import type { Clock, TimerHandle } from "@reconcile/clock";
import type { Etcd3, IEvent, IKeyValue, IWatchResponse } from "etcd3";

/** Decodes a stored value and sets its resourceVersion. Throws on bytes that are not an object. */
export type Decoder = (value: Buffer, revision: number) => KubeObject;

/**
 * The watch event one etcd event becomes for a watcher with `predicate`
 * (kube-apiserver's etcd3 watcher): the predicate is applied to the new and the
 * previous state, so an object that enters the selection is ADDED and one that
 * leaves it is DELETED, in its previous state at the revision of the change.
 * Throws when etcd omitted the previous value of an update or
 * delete (it was compacted away), which upstream also treats as fatal.
 */
export function translateEvent(
  event: IEvent,
  decode: Decoder,
  predicate: ((object: KubeObject) => boolean) | undefined,
): StorageEvent | undefined {
  const { kv } = event;
  const revision = Number(kv.mod_revision);
  const isDelete = String(event.type).toUpperCase() === "DELETE";
  if (!isDelete && kv.create_revision === kv.mod_revision) {
    const object = decode(kv.value, revision);
    return predicate === undefined || predicate(object)
      ? { type: "ADDED", object, revision, bytes: kv.value.length }
      : undefined;
  }
  const prev = event.prev_kv as IKeyValue | null | undefined;
  if (isDelete) {
    if (!prev) throw missingPrevious(kv, "DELETE");
    // etcd's delete event carries only the key; the last state comes from prev_kv.
    const object = decode(prev.value, revision);
    return predicate === undefined || predicate(object)
      ? { type: "DELETED", object, revision, bytes: prev.value.length }
      : undefined;
  }
  const object = decode(kv.value, revision);
  if (predicate === undefined) return { type: "MODIFIED", object, revision, bytes: kv.value.length };
  if (!prev) throw missingPrevious(kv, "PUT");
  const matches = predicate(object);
  const previous = decode(prev.value, revision);
  const matched = predicate(previous);
  if (matches && matched) return { type: "MODIFIED", object, revision };
  if (matches) return { type: "ADDED", object, revision };
  if (matched) return { type: "DELETED", object: previous, revision };
  return undefined;
}

function missingPrevious(kv: IKeyValue, type: string): Error {
  return new Error(
    `etcd event received with PrevKv=nil (key=${JSON.stringify(kv.key.toString("utf8"))}, modRevision=${kv.mod_revision}, type=${type})`,
  );
}

export interface EtcdWatchOptions {
  client: Etcd3;
  /** The key, or the start of the range. */
  key: Buffer;
  /** The end of the range (exclusive); undefined watches `key` alone. */
  rangeEnd: Buffer | undefined;
  /** The first revision to deliver. */
  startRevision: number;
  /** Called with each batch of events, in revision order, never twice for one revision. */
  onEvents: (events: IEvent[]) => void;
  /** Called with the revision of an etcd progress notification: nothing at or below it is still to come. */
  onProgress: (revision: number) => void;
  /** Called once when the watch cannot go on (compaction, a cancel by etcd); nothing follows. */
  onError: (error: StorageError | Error) => void;
  clock: Clock;
}

export interface EtcdWatch {
  /** The next revision the watch will deliver. */
  readonly nextRevision: number;
  stop(): void;
}

/** kube-apiserver's message for a watch whose start revision has been compacted. */
const watchTooOldMessage = "The resourceVersion for the provided watch is too old.";

/**
 * One etcd watch with previous values and progress notifications, on its own
 * gRPC stream. When the stream breaks (etcd restarted, a member lost) it opens
 * a new one from the revision after the last one delivered, as the Go client
 * does, so nothing is lost and nothing delivered twice; if that revision has
 * been compacted meanwhile the watch ends with a 410 `Expired` error.
 */
export function openEtcdWatch(options: EtcdWatchOptions): EtcdWatch {
  return new EtcdWatchStream(options);
}

type Stream = Awaited<ReturnType<Etcd3["watchClient"]["watch"]>>;

const minBackoffMs = 50;
const maxBackoffMs = 2_000;

class EtcdWatchStream implements EtcdWatch {
  readonly #options: EtcdWatchOptions;
  #next: number;
  #stream: Stream | undefined;
  #stopped = false;
  #backoffMs = minBackoffMs;
  #retryTimer: TimerHandle | undefined;

  constructor(options: EtcdWatchOptions) {
    this.#options = options;
    this.#next = options.startRevision;
    void this.#connect();
  }

  get nextRevision(): number {
    return this.#next;
  }

  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    if (this.#retryTimer !== undefined) this.#options.clock.clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
    const stream = this.#stream;
    this.#stream = undefined;
    stream?.cancel();
  }

  async #connect(): Promise<void> {
    this.#retryTimer = undefined;
    if (this.#stopped) return;
    let stream: Stream;
    try {
      stream = await this.#options.client.watchClient.watch();
    } catch {
      this.#retry();
      return;
    }
    if (this.#stopped) {
      stream.cancel();
      return;
    }
    this.#stream = stream;
    stream.on("data", (response: IWatchResponse) => this.#onResponse(stream, response));
    stream.on("error", () => this.#onBroken(stream));
    stream.on("end", () => this.#onBroken(stream));
    stream.write({
      create_request: {
        key: this.#options.key,
        ...(this.#options.rangeEnd === undefined ? {} : { range_end: this.#options.rangeEnd }),
        start_revision: this.#next,
        prev_kv: true,
        progress_notify: true,
      },
    });
  }

  #onResponse(stream: Stream, response: IWatchResponse): void {
    if (stream !== this.#stream) return;
    if (response.canceled) {
      this.#finish(stream);
      const compacted = Number(response.compact_revision);
      if (compacted > 0) {
        this.#options.onError(
          new StorageError("Expired", this.#options.key.toString("utf8"), watchTooOldMessage),
        );
      } else {
        const reason = response.cancel_reason || "the watch was cancelled";
        this.#options.onError(new Error(reason.includes("etcd") ? reason : `etcd: ${reason}`));
      }
      return;
    }
    if (response.created) {
      this.#backoffMs = minBackoffMs;
      return;
    }
    const events = response.events;
    if (events.length === 0) {
      // A progress notification: etcd has sent everything up to the header revision.
      const revision = Number(response.header.revision);
      if (revision >= this.#next) this.#next = revision + 1;
      this.#options.onProgress(revision);
      return;
    }
    // After a resume etcd starts at #next; anything older would be a repeat.
    const fresh = events.filter((event) => Number(event.kv.mod_revision) >= this.#next);
    if (fresh.length === 0) return;
    this.#next = Number(fresh[fresh.length - 1]!.kv.mod_revision) + 1;
    this.#options.onEvents(fresh);
  }

  #onBroken(stream: Stream): void {
    if (stream !== this.#stream) return;
    this.#stream = undefined;
    stream.cancel();
    this.#retry();
  }

  #retry(): void {
    if (this.#stopped) return;
    const delay = this.#backoffMs;
    this.#backoffMs = Math.min(this.#backoffMs * 2, maxBackoffMs);
    this.#retryTimer = this.#options.clock.setTimeout(() => void this.#connect(), delay);
  }

  #finish(stream: Stream): void {
    this.#stopped = true;
    this.#stream = undefined;
    stream.cancel();
  }
}
