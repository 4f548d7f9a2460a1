import {
  type KubeObject,
  type ListerWatcher,
  type ListOptions,
  metaNamespaceKeyFunc,
  type ObjectList,
  parseSelector,
  type Status,
  StatusError,
  type WatchEvent,
  type WatchOptions,
} from "@reconcile/api";

export interface FakeListerWatcherOptions<T extends KubeObject> {
  /** Objects present from the start (each gets a resourceVersion). Default: none. */
  objects?: readonly T[] | undefined;
  /**
   * How many events a watch can replay. A watch from a version older than
   * that gets an ERROR event with a 410 Expired status, as kube-apiserver
   * sends. Default: unlimited.
   */
  historySize?: number | undefined;
  /** Whether list and watch apply `labelSelector`. Default: true. */
  applySelectors?: boolean | undefined;
}

/**
 * An in-memory `ListerWatcher` whose content a test drives (client-go's
 * `FakeControllerSource`): `add`, `modify`, `delete` bump a global
 * resourceVersion and reach every open watch; lists paginate with `limit` and
 * `continue`; watches replay history from a resourceVersion. Failures are
 * injected with `failNextList`, `failNextWatch`, `sendError`, `breakWatches`;
 * every call is recorded in `listCalls` / `watchCalls`.
 */
export class FakeListerWatcher<T extends KubeObject = KubeObject> implements ListerWatcher<T> {
  /** The options of every list call, in order. */
  readonly listCalls: ListOptions[] = [];
  /** The options of every watch call, in order. */
  readonly watchCalls: WatchOptions[] = [];
  /** Called with each list call's options before it is answered; may change the content or throw. */
  onList: ((options: ListOptions) => void | Promise<void>) | undefined;

  readonly #objects = new Map<string, T>();
  readonly #history: { rv: number; event: WatchEvent<T> }[] = [];
  readonly #historySize: number;
  readonly #applySelectors: boolean;
  readonly #streams = new Set<FakeWatchStream<T>>();
  readonly #listFailures: unknown[] = [];
  readonly #watchFailures: unknown[] = [];
  #rv = 0;
  #oldestReplayable = 0;
  #expiredContinueBefore = 0;

  constructor(options: FakeListerWatcherOptions<T> = {}) {
    this.#historySize = options.historySize ?? Number.POSITIVE_INFINITY;
    this.#applySelectors = options.applySelectors ?? true;
    for (const obj of options.objects ?? []) this.add(obj);
  }

  /** The current resourceVersion. */
  get resourceVersion(): string {
    return String(this.#rv);
  }

  /** How many watches are open right now. */
  get openWatches(): number {
    return this.#streams.size;
  }

  /** The stored objects (copies). */
  objects(): T[] {
    return Array.from(this.#objects.values(), (o) => structuredClone(o));
  }

  /** Stores a new object and sends ADDED. Returns the stored copy (with its resourceVersion). */
  add(obj: T): T {
    const key = metaNamespaceKeyFunc(obj);
    if (this.#objects.has(key)) throw new Error(`FakeListerWatcher.add: ${key} already exists`);
    return this.#record("ADDED", key, obj);
  }

  /** Replaces a stored object and sends MODIFIED. */
  modify(obj: T): T {
    const key = metaNamespaceKeyFunc(obj);
    if (!this.#objects.has(key)) throw new Error(`FakeListerWatcher.modify: ${key} does not exist`);
    return this.#record("MODIFIED", key, obj);
  }

  /** Removes a stored object and sends DELETED (with the object at its deletion resourceVersion). */
  delete(objOrKey: T | string): T {
    const key = typeof objOrKey === "string" ? objOrKey : metaNamespaceKeyFunc(objOrKey);
    const current = this.#objects.get(key);
    if (current === undefined) throw new Error(`FakeListerWatcher.delete: ${key} does not exist`);
    return this.#record("DELETED", key, current);
  }

  /** Sends a BOOKMARK at the current resourceVersion to every open watch that allowed bookmarks. */
  bookmark(): void {
    const event = {
      type: "BOOKMARK",
      object: { metadata: { resourceVersion: this.resourceVersion } } as T,
    } as const;
    for (const stream of this.#streams) if (stream.allowBookmarks) stream.push(event);
  }

  /** Forgets all history: every watch from an older resourceVersion now gets 410 Expired. */
  compact(): void {
    this.#history.length = 0;
    this.#oldestReplayable = this.#rv;
  }

  /** Makes every continue token issued so far expire (410 on the next page). */
  expireContinueTokens(): void {
    this.#expiredContinueBefore = this.#rv + 1;
  }

  /** The next list call rejects with `error` (queue several to fail several calls). */
  failNextList(error: unknown): void {
    this.#listFailures.push(error);
  }

  /** The next watch call rejects with `error` (queue several to fail several calls). */
  failNextWatch(error: unknown): void {
    this.#watchFailures.push(error);
  }

  /** Ends every open watch normally, as a server does at `timeoutSeconds`. */
  closeWatches(): void {
    for (const stream of this.#streams) stream.end();
  }

  /** Cuts every open watch mid-stream: its iteration throws `error`. */
  breakWatches(error: unknown = new Error("connection reset")): void {
    for (const stream of this.#streams) stream.fail(error);
  }

  /** Sends an ERROR event with `status` to every open watch and ends it. */
  sendError(status: Status): void {
    for (const stream of this.#streams) {
      stream.push({
        type: "ERROR",
        object: { apiVersion: "v1", kind: "Status", status: "Failure", ...status },
      });
      stream.end();
    }
  }

  async list(options: ListOptions): Promise<ObjectList<T>> {
    this.listCalls.push({ ...options });
    await this.onList?.(options);
    const failure = this.#listFailures.shift();
    if (failure !== undefined) throw failure;
    const matches = this.#selector(options.labelSelector);
    let offset = 0;
    let rv = this.#rv;
    if (options.continue) {
      const [tokenRv, tokenOffset] = options.continue.split(":").map(Number) as [number, number];
      if (tokenRv < this.#expiredContinueBefore) {
        throw new StatusError({
          code: 410,
          reason: "Expired",
          message: "The provided continue parameter is too old to display a consistent list result.",
        });
      }
      rv = tokenRv;
      offset = tokenOffset;
    }
    const all = Array.from(this.#objects.values()).filter(matches);
    const limit = options.limit && options.limit > 0 ? options.limit : all.length;
    const page = all.slice(offset, offset + limit);
    const more = offset + limit < all.length;
    return {
      apiVersion: "v1",
      kind: "List",
      metadata: { resourceVersion: String(rv), ...(more ? { continue: `${rv}:${offset + limit}` } : {}) },
      items: page.map((o) => structuredClone(o)),
    };
  }

  async watch(options: WatchOptions): Promise<AsyncIterable<WatchEvent<T>>> {
    this.watchCalls.push({ ...options });
    const failure = this.#watchFailures.shift();
    if (failure !== undefined) throw failure;
    const matches = this.#selector(options.labelSelector);
    const stream = new FakeWatchStream<T>(matches, options.allowWatchBookmarks === true, () =>
      this.#streams.delete(stream),
    );
    const from = options.resourceVersion ?? "";
    if (from === "" || from === "0") {
      for (const obj of this.#objects.values()) stream.push({ type: "ADDED", object: structuredClone(obj) });
    } else {
      const since = Number(from);
      if (since < this.#oldestReplayable) {
        stream.push({
          type: "ERROR",
          object: {
            apiVersion: "v1",
            kind: "Status",
            status: "Failure",
            code: 410,
            reason: "Expired",
            message: `too old resource version: ${since} (${this.#oldestReplayable + 1})`,
          },
        });
        stream.end();
        return stream;
      }
      for (const entry of this.#history) if (entry.rv > since) stream.push(entry.event);
    }
    options.signal?.addEventListener("abort", () => stream.end(), { once: true });
    if (options.signal?.aborted) stream.end();
    this.#streams.add(stream);
    return stream;
  }

  #record(type: "ADDED" | "MODIFIED" | "DELETED", key: string, obj: T): T {
    this.#rv++;
    const stored = structuredClone(obj);
    stored.metadata = { ...stored.metadata, resourceVersion: String(this.#rv) };
    if (type === "DELETED") this.#objects.delete(key);
    else this.#objects.set(key, stored);
    const event = { type, object: stored } as WatchEvent<T>;
    this.#history.push({ rv: this.#rv, event });
    while (this.#history.length > this.#historySize) {
      this.#oldestReplayable = this.#history.shift()!.rv;
    }
    for (const stream of this.#streams) stream.push(event);
    return structuredClone(stored);
  }

  #selector(labelSelector: string | undefined): (obj: T) => boolean {
    if (!this.#applySelectors || !labelSelector) return () => true;
    const selector = parseSelector(labelSelector);
    return (obj) => selector.matches(obj.metadata?.labels);
  }
}

class FakeWatchStream<T extends KubeObject> implements AsyncIterable<WatchEvent<T>> {
  readonly #events: WatchEvent<T>[] = [];
  readonly #matches: (obj: T) => boolean;
  readonly allowBookmarks: boolean;
  readonly #onEnd: () => void;
  #wake: (() => void) | undefined;
  #ended = false;
  #error: { value: unknown } | undefined;

  constructor(matches: (obj: T) => boolean, allowBookmarks: boolean, onEnd: () => void) {
    this.#matches = matches;
    this.allowBookmarks = allowBookmarks;
    this.#onEnd = onEnd;
  }

  push(event: WatchEvent<T>): void {
    if (this.#ended) return;
    if (event.type !== "ERROR" && event.type !== "BOOKMARK" && !this.#matches(event.object)) return;
    this.#events.push(event);
    this.#notify();
  }

  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#onEnd();
    this.#notify();
  }

  fail(error: unknown): void {
    if (this.#ended) return;
    this.#error = { value: error };
    this.#events.length = 0;
    this.end();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<WatchEvent<T>> {
    let next = 0;
    try {
      for (;;) {
        if (next < this.#events.length) {
          yield this.#events[next++]!;
          continue;
        }
        if (this.#error) throw this.#error.value;
        if (this.#ended) return;
        await new Promise<void>((resolve) => (this.#wake = resolve));
      }
    } finally {
      this.end();
    }
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}
