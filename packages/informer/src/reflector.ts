import {
  errorMessage,
  isGone,
  isResourceExpired,
  isTooManyRequests,
  type KubeObject,
  type ListerWatcher,
  type Logger,
  noopLogger,
  ReconcileError,
  type RunOptions,
  runSignal,
  type Status,
  StatusError,
  type WatchEvent,
} from "@reconcile/api";
import { type Clock, realClock, sleepUnlessAborted } from "@reconcile/clock";
import { Backoff, type BackoffOptions } from "./backoff.js";

/** Where a reflector writes what it lists and watches: a DeltaFIFO, or any store. */
export interface ReflectorStore<T> {
  add(obj: T): void;
  update(obj: T): void;
  delete(obj: T): void;
  replace(list: T[], resourceVersion: string): void;
  resync(): void;
}

/** Receives every error a reflector meets; it then retries (client-go's `WatchErrorHandler`). */
export type WatchErrorHandler = (error: unknown, context: { name: string }) => void;

export interface ReflectorOptions<T extends KubeObject> {
  listerWatcher: ListerWatcher<T>;
  store: ReflectorStore<T>;
  /** Names the reflector in errors. Default: "reflector". */
  name?: string | undefined;
  /** Label selector sent on every list and watch. Default: none. */
  labelSelector?: string | undefined;
  /** Field selector sent on every list and watch. Default: none. */
  fieldSelector?: string | undefined;
  /** Asks every list and watch for objects that may come frozen and shared (`acceptFrozen`). Default: false. */
  acceptFrozen?: boolean | undefined;
  /** Calls `store.resync()` this often while watching; 0 never. Default: 0. */
  resyncPeriodMs?: number | undefined;
  /** Asked before each periodic resync; false skips it. Default: always resync. */
  shouldResync?: (() => boolean) | undefined;
  /** Items per list page. Default: 500. */
  pageSize?: number | undefined;
  /** Each watch asks the server to close it after a random time in [min, 2×min]. Default: 5 minutes. */
  minWatchTimeoutMs?: number | undefined;
  /**
   * Restart a watch that has delivered no event and no bookmark for this
   * long (a stalled connection). Default: the watch's own timeout plus 30 s,
   * since a healthy server closes the watch by then. 0 turns the detector off.
   */
  idleTimeoutMs?: number | undefined;
  /** Backoff between failed attempts. Default: 800 ms doubling to 30 s, reset after 2 minutes quiet. */
  backoff?: BackoffOptions | undefined;
  /** Called with every error before the reflector retries. Default: logs it on `logger` at warn (routine 410s are not logged). */
  watchErrorHandler?: WatchErrorHandler | undefined;
  /** Where the default `watchErrorHandler` logs. Default: `noopLogger` (nothing). */
  logger?: Logger | undefined;
  /** Default: `realClock`. */
  clock?: Clock | undefined;
  /** Source of jitter, in [0, 1). Default: `Math.random`. */
  random?: (() => number) | undefined;
  /**
   * Sync by watch list instead of LIST (client-go's `WatchListClient`): one
   * watch with `sendInitialEvents` streams the state, replaced into the store
   * at the bookmark that ends it, and goes on as the watch, so no list is
   * held whole. A server that refuses it, or a stream that ends before the
   * state does, falls back to LIST for that round. Default: false.
   */
  useWatchList?: boolean | undefined;
}

/** The annotation of the bookmark that ends a watch list's state. */
const initialEventsEnd = "k8s.io/initial-events-end";

/** A watch list ended before the bookmark that ends its state: the reflector LISTs this round. */
export class WatchListEndedError extends ReconcileError {
  constructor(name: string) {
    super("informer.watch-list-ended", `${name}: the watch list ended before its initial events did`);
    this.name = "WatchListEndedError";
  }
}

/** A watch closed within a second without any event: something is wrong; relist. */
const veryShortWatchErrorMarker = Symbol.for("reconcile.very-short-watch-error");

export class VeryShortWatchError extends ReconcileError {
  readonly [veryShortWatchErrorMarker] = true;

  constructor(name: string) {
    super(
      "informer.very-short-watch",
      `${name}: very short watch: the watch closed within 1s without events`,
      { legacyCode: "reflector.very-short-watch" },
    );
    this.name = "VeryShortWatchError";
  }

  static override isInstance(error: unknown): error is VeryShortWatchError {
    return ReconcileError.hasMarker(error, veryShortWatchErrorMarker);
  }
}

/** A watch that went quiet for longer than `idleTimeoutMs` was restarted. */
const idleWatchErrorMarker = Symbol.for("reconcile.idle-watch-error");

export class IdleWatchError extends ReconcileError {
  readonly [idleWatchErrorMarker] = true;

  constructor(name: string, idleMs: number) {
    super(
      "informer.idle-watch",
      `${name}: no watch event or bookmark for ${idleMs}ms; restarting the watch`,
      { legacyCode: "reflector.idle-watch" },
    );
    this.name = "IdleWatchError";
  }

  static override isInstance(error: unknown): error is IdleWatchError {
    return ReconcileError.hasMarker(error, idleWatchErrorMarker);
  }
}

/** A watch stream broke (connection reset, bad data) and was restarted from the last resourceVersion. */
const watchStreamErrorMarker = Symbol.for("reconcile.watch-stream-error");

export class WatchStreamError extends ReconcileError {
  readonly [watchStreamErrorMarker] = true;

  constructor(name: string, cause: unknown) {
    super("informer.watch-stream", `${name}: watch stream failed: ${errorMessage(cause)}`, {
      cause,
      legacyCode: "reflector.watch-stream",
    });
    this.name = "WatchStreamError";
  }

  static override isInstance(error: unknown): error is WatchStreamError {
    return ReconcileError.hasMarker(error, watchStreamErrorMarker);
  }
}

type WatchOutcome = "closed" | "expired" | "idle" | "aborted" | "retry";

/**
 * client-go's `Reflector`: lists a resource into a store, then watches it
 * from the listed resourceVersion, re-watching after a normal close,
 * relisting after a 410 or any other failure, with backoff, forever — until
 * its signal aborts. Every error goes to the watch-error handler.
 */
export class Reflector<T extends KubeObject = KubeObject> {
  readonly name: string;
  readonly #lw: ListerWatcher<T>;
  readonly #store: ReflectorStore<T>;
  readonly #labelSelector: string | undefined;
  readonly #fieldSelector: string | undefined;
  readonly #acceptFrozen: boolean;
  readonly #resyncPeriodMs: number;
  readonly #shouldResync: (() => boolean) | undefined;
  readonly #pageSize: number;
  readonly #minWatchTimeoutMs: number;
  readonly #idleTimeoutMs: number | undefined;
  readonly #backoff: Backoff;
  readonly #clock: Clock;
  readonly #random: () => number;
  #watchErrorHandler: WatchErrorHandler;
  #lastSyncResourceVersion = "";
  #lastSyncResourceVersionUnavailable = false;
  #paginatedResult = false;
  #running = false;
  readonly #useWatchList: boolean;
  /** While a watch list streams the state: what it has sent so far. */
  #streamed: T[] | undefined;

  constructor(options: ReflectorOptions<T>) {
    if (options.listerWatcher === undefined) throw new TypeError("Reflector: listerWatcher is required");
    if (options.store === undefined) throw new TypeError("Reflector: store is required");
    this.name = options.name ?? "reflector";
    this.#lw = options.listerWatcher;
    this.#store = options.store;
    this.#labelSelector = options.labelSelector;
    this.#fieldSelector = options.fieldSelector;
    this.#acceptFrozen = options.acceptFrozen ?? false;
    this.#resyncPeriodMs = nonNegative("resyncPeriodMs", options.resyncPeriodMs ?? 0);
    this.#shouldResync = options.shouldResync;
    this.#pageSize = nonNegative("pageSize", options.pageSize ?? 500);
    this.#minWatchTimeoutMs = nonNegative("minWatchTimeoutMs", options.minWatchTimeoutMs ?? 5 * 60_000);
    this.#idleTimeoutMs =
      options.idleTimeoutMs === undefined ? undefined : nonNegative("idleTimeoutMs", options.idleTimeoutMs);
    this.#clock = options.clock ?? realClock;
    this.#random = options.random ?? Math.random;
    this.#useWatchList = options.useWatchList ?? false;
    this.#backoff = new Backoff(options.backoff ?? {}, this.#clock, this.#random);
    this.#watchErrorHandler = options.watchErrorHandler ?? logWatchErrors(options.logger ?? noopLogger);
  }

  /** The resourceVersion of the last list or watch event seen; "" before the first list. */
  lastSyncResourceVersion(): string {
    return this.#lastSyncResourceVersion;
  }

  /** Replaces the watch-error handler. */
  setWatchErrorHandler(handler: WatchErrorHandler): void {
    this.#watchErrorHandler = handler;
  }

  /**
   * Lists and watches until `signal` aborts; every failure is reported and
   * retried after a backoff. Settles once the current watch is closed and no
   * timer is left.
   */
  run(options: RunOptions): Promise<void>;
  /** @deprecated Pass `{ signal }`, the one lifecycle shape; a bare signal is read until the next minor release. */
  run(signal: AbortSignal): Promise<void>;
  async run(options: RunOptions | AbortSignal): Promise<void> {
    const signal = runSignal(options);
    if (this.#running) throw new Error(`${this.name}: already running`);
    this.#running = true;
    try {
      while (!signal.aborted) {
        try {
          await this.listAndWatch(signal);
        } catch (error) {
          if (signal.aborted) break;
          this.#report(error);
        }
        if (signal.aborted) break;
        if (!(await sleepUnlessAborted(this.#clock, this.#backoff.next(), signal))) break;
      }
    } finally {
      this.#running = false;
    }
  }

  /**
   * One list, then watches until an error (thrown), a 410 (returns: the
   * caller relists), or `signal` aborts (returns).
   */
  async listAndWatch(signal: AbortSignal): Promise<void> {
    if (this.#useWatchList) this.#streamed = [];
    else await this.#list(signal);
    if (signal.aborted) return;
    const watching = new AbortController();
    const stopWatching = () => watching.abort();
    signal.addEventListener("abort", stopWatching, { once: true });
    let resyncError: { error: unknown } | undefined;
    let resyncTimer: unknown;
    const scheduleResync = () => {
      resyncTimer = this.#clock.setTimeout(() => {
        try {
          if (this.#shouldResync === undefined || this.#shouldResync()) this.#store.resync();
          scheduleResync();
        } catch (error) {
          resyncError = { error };
          watching.abort();
        }
      }, this.#resyncPeriodMs);
    };
    if (this.#resyncPeriodMs > 0) scheduleResync();
    try {
      try {
        await this.#watchLoop(watching.signal);
      } catch (error) {
        if (this.#streamed === undefined || signal.aborted) throw error;
        // The watch list failed before the state was whole: LIST this round, as client-go falls back.
        this.#report(error);
        this.#streamed = undefined;
        await this.#list(signal);
        await this.#watchLoop(watching.signal);
      }
      if (resyncError !== undefined) throw resyncError.error;
      if (this.#streamed !== undefined && !signal.aborted) throw new WatchListEndedError(this.name);
    } finally {
      this.#streamed = undefined;
      if (resyncTimer !== undefined) this.#clock.clearTimeout(resyncTimer);
      signal.removeEventListener("abort", stopWatching);
    }
  }

  #relistResourceVersion(): string {
    if (this.#lastSyncResourceVersionUnavailable) return "";
    if (this.#lastSyncResourceVersion === "") return "0";
    return this.#lastSyncResourceVersion;
  }

  async #list(signal: AbortSignal): Promise<void> {
    const resourceVersion = this.#relistResourceVersion();
    let result: { items: T[]; resourceVersion: string };
    try {
      result = await this.#listPages(resourceVersion, signal);
    } catch (error) {
      if (signal.aborted || !(isResourceExpired(error) || isGone(error) || isTooLargeResourceVersion(error)))
        throw error;
      // The version left the server's window (or is ahead of it): one consistent list from "now".
      this.#lastSyncResourceVersionUnavailable = true;
      result = await this.#listPages("", signal);
    }
    if (signal.aborted) return;
    this.#lastSyncResourceVersionUnavailable = false;
    this.#store.replace(result.items, result.resourceVersion);
    this.#lastSyncResourceVersion = result.resourceVersion;
  }

  // client-go's pager: pages of `pageSize`, except for a list at a specific
  // version that the watch cache can serve whole; a continuation that
  // expires falls back to one full list at the requested version.
  async #listPages(
    resourceVersion: string,
    signal: AbortSignal,
  ): Promise<{ items: T[]; resourceVersion: string }> {
    const paged =
      this.#pageSize > 0 && (resourceVersion === "" || resourceVersion === "0" || this.#paginatedResult);
    const selectors = this.#selectors();
    const first = await this.#lw.list({
      resourceVersion,
      ...(paged ? { limit: this.#pageSize } : {}),
      ...selectors,
      signal,
    });
    if (resourceVersion === "0" && first.metadata?.continue) this.#paginatedResult = true;
    let items = first.items ?? [];
    let listRV = first.metadata?.resourceVersion ?? "";
    let token = first.metadata?.continue;
    while (token) {
      let page: Awaited<ReturnType<ListerWatcher<T>["list"]>>;
      try {
        page = await this.#lw.list({ limit: this.#pageSize, continue: token, ...selectors, signal });
      } catch (error) {
        if (signal.aborted || !(isResourceExpired(error) || isGone(error))) throw error;
        const full = await this.#lw.list({ resourceVersion, ...selectors, signal });
        return { items: full.items ?? [], resourceVersion: full.metadata?.resourceVersion ?? "" };
      }
      items = items.concat(page.items ?? []);
      listRV = page.metadata?.resourceVersion ?? listRV;
      token = page.metadata?.continue;
    }
    return { items, resourceVersion: listRV };
  }

  async #watchLoop(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const timeoutSeconds = Math.floor((this.#minWatchTimeoutMs / 1000) * (1 + this.#random()));
      const watching = new AbortController();
      const stopWatching = () => watching.abort();
      signal.addEventListener("abort", stopWatching, { once: true });
      try {
        let stream: AsyncIterable<WatchEvent<T>>;
        try {
          stream = await this.#lw.watch({
            ...(this.#streamed === undefined
              ? { resourceVersion: this.#lastSyncResourceVersion }
              : {
                  // "": the newest state, read consistently; else not older than what this reflector saw.
                  resourceVersion: this.#lastSyncResourceVersionUnavailable
                    ? ""
                    : this.#lastSyncResourceVersion,
                  sendInitialEvents: true,
                  resourceVersionMatch: "NotOlderThan" as const,
                }),
            timeoutSeconds,
            allowWatchBookmarks: true,
            ...this.#selectors(),
            signal: watching.signal,
          });
        } catch (error) {
          if (signal.aborted) return;
          if (!isTooManyRequests(error) && !isConnectionRefused(error)) throw error;
          // The server is there but busy (or restarting): back off and watch again; no relist.
          this.#report(error);
          if (!(await sleepUnlessAborted(this.#clock, this.#backoff.next(), signal))) return;
          continue;
        }
        const startedAt = this.#clock.now();
        const { outcome, events } = await this.#handleWatch(
          stream,
          watching,
          this.#idleTimeoutMs ?? timeoutSeconds * 1000 + 30_000,
        );
        // A watch list that ends before its state does is retried as a LIST (see listAndWatch).
        if (this.#streamed !== undefined && outcome !== "aborted") throw new WatchListEndedError(this.name);
        switch (outcome) {
          case "aborted":
            return;
          case "expired":
            return;
          case "idle":
            continue;
          case "retry":
            if (!(await sleepUnlessAborted(this.#clock, this.#backoff.next(), signal))) return;
            continue;
          case "closed":
            if (events === 0 && this.#clock.now() - startedAt < 1000)
              throw new VeryShortWatchError(this.name);
            continue;
        }
      } finally {
        signal.removeEventListener("abort", stopWatching);
        watching.abort();
      }
    }
  }

  // Callback-driven rather than `for await`: one `then` per event, and an
  // abort (or the idle detector) settles the watch at once even if the
  // iterator ignores its signal and never answers again.
  #handleWatch(
    stream: AsyncIterable<WatchEvent<T>>,
    watching: AbortController,
    idleTimeoutMs: number,
  ): Promise<{ outcome: WatchOutcome; events: number }> {
    return new Promise((resolve, reject) => {
      const iterator = stream[Symbol.asyncIterator]();
      let events = 0;
      let idle = false;
      let finished = false;
      let lastEventAt = this.#clock.now();
      let idleTimer: unknown;
      const finish = (outcome: WatchOutcome | { error: unknown }) => {
        if (finished) return;
        finished = true;
        this.#clock.clearTimeout(idleTimer);
        watching.signal.removeEventListener("abort", onStop);
        try {
          // A failing cleanup of a stream being dropped must not keep the watch from settling.
          Promise.resolve(iterator.return?.()).catch(() => {});
        } catch {}
        if (typeof outcome === "string") resolve({ outcome, events });
        else reject(outcome.error);
      };
      const onStatus = (error: StatusError) => {
        try {
          finish(this.#onWatchStatus(error));
        } catch (thrown) {
          finish({ error: thrown });
        }
      };
      const onStop = () => {
        if (!idle) return finish("aborted");
        this.#report(new IdleWatchError(this.name, idleTimeoutMs));
        finish("idle");
      };
      const checkIdle = () => {
        const quietFor = this.#clock.now() - lastEventAt;
        if (quietFor < idleTimeoutMs) {
          idleTimer = this.#clock.setTimeout(checkIdle, idleTimeoutMs - quietFor);
          return;
        }
        idle = true;
        watching.abort();
      };
      const onNext = (next: IteratorResult<WatchEvent<T>>) => {
        if (finished) return;
        if (next.done) return finish("closed");
        lastEventAt = this.#clock.now();
        events++;
        const event = next.value;
        if (event.type === "ERROR") return onStatus(new StatusError(event.object as Status));
        this.#apply(event);
        pull();
      };
      const onError = (error: unknown) => {
        if (finished) return;
        if (StatusError.isInstance(error)) return onStatus(error);
        // A cut connection: report it and watch again from the last version, after a backoff.
        this.#report(new WatchStreamError(this.name, error));
        finish("retry");
      };
      const pull = () => {
        let next: Promise<IteratorResult<WatchEvent<T>>>;
        try {
          next = iterator.next();
        } catch (error) {
          onError(error);
          return;
        }
        // A malformed event (an ERROR without a Status, no event at all) throws in onNext: a stream error.
        next.then(onNext, onError).catch(onError);
      };
      watching.signal.addEventListener("abort", onStop, { once: true });
      if (watching.signal.aborted) return onStop();
      if (idleTimeoutMs > 0) idleTimer = this.#clock.setTimeout(checkIdle, idleTimeoutMs);
      pull();
    });
  }

  #onWatchStatus(error: StatusError): WatchOutcome {
    // 410: the version left the server's history; relist (at the last version first, as client-go does).
    if (isResourceExpired(error) || isGone(error)) {
      this.#report(error);
      return "expired";
    }
    if (isTooManyRequests(error)) {
      this.#report(error);
      return "retry";
    }
    throw error;
  }

  #apply(event: WatchEvent<T>): void {
    const obj = event.object as T;
    if (this.#streamed !== undefined) {
      this.#collect(event);
      return;
    }
    try {
      switch (event.type) {
        case "ADDED":
          this.#store.add(obj);
          break;
        case "MODIFIED":
          this.#store.update(obj);
          break;
        case "DELETED":
          this.#store.delete(obj);
          break;
        case "BOOKMARK":
          break;
        default:
          throw new TypeError(`${this.name}: unexpected watch event type ${JSON.stringify(event.type)}`);
      }
    } catch (error) {
      // A malformed object is reported and skipped; the watch goes on, as in client-go.
      this.#report(error);
      return;
    }
    const resourceVersion = obj?.metadata?.resourceVersion;
    if (resourceVersion) this.#lastSyncResourceVersion = resourceVersion;
  }

  /** A watch list's state, event by event, into the store whole at the bookmark that ends it. */
  #collect(event: WatchEvent<T>): void {
    const obj = event.object as T;
    if (event.type === "ADDED") {
      this.#streamed!.push(obj);
      return;
    }
    if (event.type !== "BOOKMARK" || obj.metadata?.annotations?.[initialEventsEnd] !== "true") return;
    const resourceVersion = obj.metadata?.resourceVersion ?? "";
    this.#store.replace(this.#streamed!, resourceVersion);
    this.#streamed = undefined;
    this.#lastSyncResourceVersion = resourceVersion;
    this.#lastSyncResourceVersionUnavailable = false;
  }

  /** What every list and watch asks: the selectors, and whether objects may come frozen. */
  #selectors(): { labelSelector?: string; fieldSelector?: string; acceptFrozen?: true } {
    return {
      ...(this.#labelSelector ? { labelSelector: this.#labelSelector } : {}),
      ...(this.#fieldSelector ? { fieldSelector: this.#fieldSelector } : {}),
      ...(this.#acceptFrozen ? { acceptFrozen: true } : {}),
    };
  }

  #report(error: unknown): void {
    try {
      this.#watchErrorHandler(error, { name: this.name });
    } catch {
      // A failing error handler must not stop the reflector.
    }
  }
}

/** The default watch error handler: logs each error on `logger` at warn, except 410s (routine relists). */
export function logWatchErrors(logger: Logger): WatchErrorHandler {
  return (error, context) => {
    if (isResourceExpired(error) || isGone(error)) return;
    logger.warn({ reflector: context.name, err: error }, `watch of ${context.name} failed; retrying`);
  };
}

function isTooLargeResourceVersion(error: unknown): boolean {
  if (!StatusError.isInstance(error)) return false;
  if (error.status.details?.causes?.some((cause) => cause.reason === "ResourceVersionTooLarge")) return true;
  return /too large resource version/i.test(error.message);
}

function isConnectionRefused(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    if ((e as { code?: unknown }).code === "ECONNREFUSED") return true;
  }
  return false;
}

function nonNegative(name: string, value: number): number {
  if (!(value >= 0) || !Number.isFinite(value))
    throw new RangeError(`Reflector: ${name} must be a non-negative number, got ${value}`);
  return value;
}
