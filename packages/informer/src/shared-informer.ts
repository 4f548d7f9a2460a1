import {
  type DeepReadonly,
  deepFreeze,
  deletionHandlingMetaNamespaceKeyFunc,
  type KubeObject,
  type ListerWatcher,
  type Logger,
  noopLogger,
  type ResourceDescriptor,
  type RunOptions,
  runSignal,
} from "@reconcile/api";
import { type Clock, realClock } from "@reconcile/clock";
import type { BackoffOptions } from "./backoff.js";
import { DeltaFIFO, type Deltas, FIFOClosedError, type TransformFunc } from "./delta-fifo.js";
import {
  type HandlerMethod,
  type Notification,
  ProcessorListener,
  type ResourceEventHandler,
} from "./processor-listener.js";
import { logWatchErrors, Reflector, type WatchErrorHandler } from "./reflector.js";
import { createIndexer, type Indexer, type Indexers, type Store } from "./store.js";

/** Reports an error thrown (or rejected) by an event handler; the informer carries on. */
export type HandlerErrorHandler = (
  error: unknown,
  context: { informer: string; method: HandlerMethod },
) => void;

export interface SharedIndexInformerOptions<T extends KubeObject> {
  /** Where objects come from. */
  listerWatcher: ListerWatcher<T>;
  /** The resource, for names in errors and for listers. Default: none. */
  resource?: ResourceDescriptor<T> | undefined;
  /** Names the informer in errors. Default: the resource's plural, else "informer". */
  name?: string | undefined;
  /** Default resync period of handlers (each may ask for its own); 0 never. Minimum 1 s. Default: 0. */
  resyncPeriodMs?: number | undefined;
  /** Index functions besides the built-in `namespace` index. Default: none. */
  indexers?: Indexers<T> | undefined;
  /** Label selector sent on list and watch. Default: none. */
  labelSelector?: string | undefined;
  /** Field selector sent on list and watch. Default: none. */
  fieldSelector?: string | undefined;
  /** Rewrites each object before it is cached (e.g. drop `metadata.managedFields`). Default: none. */
  transform?: TransformFunc<T> | undefined;
  /** Called with every list/watch error before the retry. Default: logs it on `logger` at warn (410s are not logged). */
  watchErrorHandler?: WatchErrorHandler | undefined;
  /** Called when a handler throws or rejects. Default: logs it on `logger` at error. */
  handlerErrorHandler?: HandlerErrorHandler | undefined;
  /** Where the default error handlers log. Default: `noopLogger` (nothing). */
  logger?: Logger | undefined;
  /**
   * Deep-freezes every cached object, so that a handler or lister caller
   * mutating one throws a TypeError at the mutation. Default: true if the
   * environment variable `RECONCILE_CACHE_MUTATION_DETECTOR` is "true".
   */
  detectMutations?: boolean | undefined;
  /**
   * Takes the client's objects frozen (`acceptFrozen` on every list and
   * watch): an API server in the same process then hands this informer the
   * objects it holds, deep-frozen and shared, instead of a copy of each, which
   * saves a copy per event and the cache's memory. Handlers and listers get
   * the objects frozen (a mutation throws, as with `detectMutations`), and so
   * does a transform: it must return a changed copy, not change its argument. Default: `detectMutations` without a transform.
   */
  acceptFrozen?: boolean | undefined;
  /** Reflector tuning: page size, watch timeout, idle timeout, backoff. Defaults as in `Reflector`. */
  pageSize?: number | undefined;
  minWatchTimeoutMs?: number | undefined;
  idleTimeoutMs?: number | undefined;
  backoff?: BackoffOptions | undefined;
  /** Sync by watch list instead of LIST (see `Reflector`'s `useWatchList`). Default: false. */
  useWatchList?: boolean | undefined;
  /** Default: `realClock`. */
  clock?: Clock | undefined;
  /** Source of jitter in [0, 1). Default: `Math.random`. */
  random?: (() => number) | undefined;
}

export interface AddEventHandlerOptions {
  /** This handler's resync period; 0 never, minimum 1 s. Default: the informer's `resyncPeriodMs`. */
  resyncPeriodMs?: number | undefined;
}

/** A handler's registration (client-go's `ResourceEventHandlerRegistration`). */
export interface ResourceEventHandlerRegistration {
  /** True once the informer has synced and this handler has handled every object of the initial list. */
  hasSynced(): boolean;
}

const minimumResyncPeriodMs = 1000;
// Yield to the event loop this often while draining a burst (e.g. an initial list of 100k objects).
const yieldEvery = 1024;

/**
 * client-go's `SharedIndexInformer`: one list+watch, one cache (an
 * {@link Indexer}), and any number of handlers, each with its own queue.
 */
export class SharedIndexInformer<T extends KubeObject = KubeObject> {
  readonly name: string;
  readonly resource: ResourceDescriptor<T> | undefined;
  readonly #options: SharedIndexInformerOptions<T>;
  readonly #indexer: Indexer<T>;
  readonly #clock: Clock;
  readonly #listeners: ProcessorListener<T>[] = [];
  readonly #registrations = new WeakMap<ResourceEventHandlerRegistration, ProcessorListener<T>>();
  readonly #defaultResyncPeriodMs: number;
  #resyncCheckPeriodMs: number;
  #transform: TransformFunc<T> | undefined;
  #watchErrorHandler: WatchErrorHandler | undefined;
  readonly #defaultWatchErrorHandler: WatchErrorHandler;
  readonly #handlerErrorHandler: HandlerErrorHandler;
  readonly #detectMutations: boolean;
  readonly #acceptFrozen: boolean | undefined;
  #fifo: DeltaFIFO<T> | undefined;
  #reflector: Reflector<T> | undefined;
  #started = false;
  #stopped = false;
  #lastError: unknown;
  readonly #synced: Promise<void>;
  #markSynced!: () => void;

  constructor(options: SharedIndexInformerOptions<T>) {
    if (options?.listerWatcher === undefined)
      throw new TypeError("SharedIndexInformer: listerWatcher is required");
    this.#options = options;
    this.#synced = new Promise<void>((resolve) => {
      this.#markSynced = resolve;
    });
    this.resource = options.resource;
    this.name = options.name ?? options.resource?.plural ?? "informer";
    this.#clock = options.clock ?? realClock;
    this.#indexer = createIndexer<T>({
      keyFunc: deletionHandlingMetaNamespaceKeyFunc as never,
      indexers: options.indexers,
    });
    const resync = options.resyncPeriodMs ?? 0;
    // Infinity would only fail later, in run(), as the reflector's resync period.
    if (!(resync >= 0) || !Number.isFinite(resync))
      throw new RangeError(
        `SharedIndexInformer: resyncPeriodMs must be a finite non-negative number, got ${resync}`,
      );
    this.#defaultResyncPeriodMs = resync === 0 ? 0 : Math.max(resync, minimumResyncPeriodMs);
    this.#resyncCheckPeriodMs = this.#defaultResyncPeriodMs;
    this.#transform = options.transform;
    this.#watchErrorHandler = options.watchErrorHandler;
    const logger = options.logger ?? noopLogger;
    this.#defaultWatchErrorHandler = logWatchErrors(logger);
    this.#handlerErrorHandler = options.handlerErrorHandler ?? logHandlerErrors(logger);
    this.#detectMutations =
      options.detectMutations ??
      (typeof process !== "undefined" && process.env?.RECONCILE_CACHE_MUTATION_DETECTOR === "true");
    this.#acceptFrozen = options.acceptFrozen;
  }

  /**
   * Registers a handler. Before `run` it simply joins; after, it first gets
   * an `onAdd(obj, true)` for every cached object. Throws once stopped.
   */
  addEventHandler(
    handler: ResourceEventHandler<T>,
    options: AddEventHandlerOptions = {},
  ): ResourceEventHandlerRegistration {
    if (this.#stopped)
      throw new Error(`handler was not added to shared informer ${this.name} because it has stopped already`);
    if (handler === null || typeof handler !== "object")
      throw new TypeError("addEventHandler: handler must be an object with onAdd/onUpdate/onDelete");
    let requested = options.resyncPeriodMs ?? this.#defaultResyncPeriodMs;
    if (!(requested >= 0) || !Number.isFinite(requested))
      throw new RangeError(
        `addEventHandler: resyncPeriodMs must be a finite non-negative number, got ${requested}`,
      );
    if (requested > 0) {
      if (requested < minimumResyncPeriodMs) requested = minimumResyncPeriodMs;
      // Unlike client-go, a handler's period also counts when the informer's default is 0.
      if (this.#resyncCheckPeriodMs === 0 || requested < this.#resyncCheckPeriodMs) {
        if (this.#started) {
          // The resync timer is already running: the handler cannot resync faster than it.
          requested = this.#resyncCheckPeriodMs;
        } else {
          this.#resyncCheckPeriodMs = requested;
          for (const listener of this.#listeners) {
            listener.resyncPeriodMs = determineResyncPeriod(listener.requestedResyncPeriodMs, requested);
          }
        }
      }
    }
    const listener = new ProcessorListener<T>(
      handler,
      requested,
      determineResyncPeriod(requested, this.#resyncCheckPeriodMs),
      this.#clock.now(),
      (error, method) => this.#handlerErrorHandler(error, { informer: this.name, method }),
      this.name,
    );
    const registration: ResourceEventHandlerRegistration = {
      hasSynced: () => this.hasSynced() && listener.initialDelivered(),
    };
    this.#registrations.set(registration, listener);
    this.#listeners.push(listener);
    if (this.#started) {
      for (const obj of this.#indexer.list()) {
        listener.add({ method: "onAdd", oldObj: undefined, obj, isInInitialList: true });
      }
      void listener.start();
    }
    return registration;
  }

  /** Unregisters a handler; unknown or already removed registrations are ignored. Pending notifications are dropped. */
  removeEventHandler(registration: ResourceEventHandlerRegistration): void {
    const listener = this.#registrations.get(registration);
    if (listener === undefined) return;
    this.#registrations.delete(registration);
    const at = this.#listeners.indexOf(listener);
    if (at !== -1) this.#listeners.splice(at, 1);
    void listener.stop();
  }

  /** The cache. Read-only for everyone but the informer. */
  getIndexer(): Indexer<T> {
    return this.#indexer;
  }

  getStore(): Store<T> {
    return this.#indexer;
  }

  /** Adds index functions; allowed at any time, existing objects are indexed at once. */
  addIndexers(indexers: Indexers<T>): void {
    this.#indexer.addIndexers(indexers);
  }

  /** True once the initial list has been put in the cache (handlers may still be catching up). */
  hasSynced(): boolean {
    return this.#fifo?.hasSynced() ?? false;
  }

  /**
   * Resolves once {@link hasSynced} is true (client-go's
   * `HasSyncedChecker().Done()`): waiting for the cache needs no polling. It
   * never rejects; an informer stopped before its first list never resolves it.
   */
  whenSynced(): Promise<void> {
    return this.#synced;
  }

  /**
   * How far behind the watch the informer is: changes received but not yet
   * in the cache (`deltas`, in the DeltaFIFO) and cache changes not yet
   * handled, summed over its handlers (`notifications`).
   */
  backlog(): { deltas: number; notifications: number } {
    let notifications = 0;
    for (const listener of this.#listeners) notifications += listener.pending;
    return { deltas: this.#fifo?.length ?? 0, notifications };
  }

  lastSyncResourceVersion(): string {
    return this.#reflector?.lastSyncResourceVersion() ?? "";
  }

  /** The last list/watch error, if any; kept for reports such as a cache-sync timeout. */
  lastWatchError(): unknown {
    return this.#lastError;
  }

  isStopped(): boolean {
    return this.#stopped;
  }

  /** Sets the transform applied before objects are cached. Only before `run`. */
  setTransform(transform: TransformFunc<T>): void {
    if (this.#started) throw new Error(`informer ${this.name} has already started`);
    this.#transform = transform;
  }

  /** Sets the handler of list/watch errors. Only before `run`. */
  setWatchErrorHandler(handler: WatchErrorHandler): void {
    if (this.#started) throw new Error(`informer ${this.name} has already started`);
    this.#watchErrorHandler = handler;
  }

  /**
   * Lists, watches and delivers until `signal` aborts. Settles once the
   * watch is closed, timers are cleared and every handler call in flight
   * has returned.
   */
  run(options: RunOptions): Promise<void>;
  /** @deprecated Pass `{ signal }`, the one lifecycle shape; a bare signal is read until the next minor release. */
  run(signal: AbortSignal): Promise<void>;
  async run(options: RunOptions | AbortSignal): Promise<void> {
    const signal = runSignal(options);
    if (this.#started) throw new Error(`informer ${this.name} has already started`);
    this.#started = true;
    if (signal.aborted) {
      this.#stopped = true;
      return;
    }
    const transform = this.#transform;
    const freeze = this.#detectMutations;
    const transformer: TransformFunc<T> | undefined =
      freeze && transform ? (obj) => deepFreeze(transform(obj)) : freeze ? deepFreeze : transform;
    const fifo = new DeltaFIFO<T>({
      keyFunction: deletionHandlingMetaNamespaceKeyFunc as never,
      knownObjects: this.#indexer,
      emitDeltaTypeReplaced: true,
      transformer,
      onSynced: () => this.#markSynced(),
    });
    this.#fifo = fifo;
    const userErrorHandler = this.#watchErrorHandler;
    const reflector = new Reflector<T>({
      listerWatcher: this.#options.listerWatcher,
      store: fifo,
      name: this.name,
      labelSelector: this.#options.labelSelector,
      fieldSelector: this.#options.fieldSelector,
      acceptFrozen: this.#acceptFrozen ?? (freeze && transform === undefined),
      resyncPeriodMs: this.#resyncCheckPeriodMs,
      shouldResync: () => this.#shouldResync(),
      pageSize: this.#options.pageSize,
      minWatchTimeoutMs: this.#options.minWatchTimeoutMs,
      idleTimeoutMs: this.#options.idleTimeoutMs,
      backoff: this.#options.backoff,
      useWatchList: this.#options.useWatchList,
      clock: this.#clock,
      random: this.#options.random,
      watchErrorHandler: (error, context) => {
        this.#lastError = error;
        if (userErrorHandler) userErrorHandler(error, context);
        else this.#defaultWatchErrorHandler(error, context);
      },
    });
    this.#reflector = reflector;
    for (const listener of this.#listeners) void listener.start();

    const stopFifo = () => fifo.close();
    signal.addEventListener("abort", stopFifo, { once: true });
    try {
      await Promise.all([reflector.run({ signal }), this.#processLoop(fifo, signal)]);
    } finally {
      signal.removeEventListener("abort", stopFifo);
      this.#stopped = true;
      await Promise.all(this.#listeners.map((listener) => listener.stop()));
    }
  }

  async #processLoop(fifo: DeltaFIFO<T>, signal: AbortSignal): Promise<void> {
    const process = (deltas: Deltas<T>, isInInitialList: boolean, key: string) =>
      this.#processDeltas(deltas, isInInitialList, key);
    while (!signal.aborted) {
      try {
        await fifo.pop(process);
        // Drain what is already queued without a promise per key, yielding now and then.
        let drained = 0;
        while (!signal.aborted && fifo.popReady(process) !== undefined) {
          if (++drained % yieldEvery === 0) await new Promise<void>((resolve) => setImmediate(resolve));
        }
      } catch (error) {
        if (FIFOClosedError.isInstance(error)) return;
        // A failing index function or similar: the deltas of that key are dropped, the informer goes on.
        this.#lastError = error;
        try {
          (this.#watchErrorHandler ?? this.#defaultWatchErrorHandler)(error, { name: this.name });
        } catch {
          // ignore a failing reporter
        }
      }
    }
  }

  // client-go's processDeltas (the delta type aside, existence in the cache decides add vs update).
  #processDeltas(deltas: Deltas<T>, isInInitialList: boolean, key: string): void {
    const indexer = this.#indexer;
    for (const delta of deltas) {
      const obj = delta.object;
      if (delta.type === "Deleted") {
        indexer.delete(obj);
        this.#distribute({ method: "onDelete", oldObj: undefined, obj, isInInitialList: false }, false);
        continue;
      }
      const newObj = obj as DeepReadonly<T>;
      const old = indexer.getByKey(key);
      if (old !== undefined) {
        indexer.update(newObj);
        const isSync = old.metadata?.resourceVersion === newObj.metadata?.resourceVersion;
        this.#distribute({ method: "onUpdate", oldObj: old, obj: newObj, isInInitialList: false }, isSync);
      } else {
        indexer.add(newObj);
        this.#distribute({ method: "onAdd", oldObj: undefined, obj: newObj, isInInitialList }, false);
      }
    }
  }

  #distribute(notification: Notification<T>, isSync: boolean): void {
    const listeners = this.#listeners;
    for (let i = 0; i < listeners.length; i++) {
      const listener = listeners[i]!;
      if (!isSync || listener.syncing) listener.add(notification);
    }
  }

  // client-go's sharedProcessor.shouldResync: marks the listeners due and tells the reflector whether any is.
  #shouldResync(): boolean {
    const now = this.#clock.now();
    let any = false;
    for (const listener of this.#listeners) {
      listener.syncing = listener.shouldResync(now);
      if (listener.syncing) {
        any = true;
        listener.determineNextResync(now);
      }
    }
    return any;
  }
}

/** The period a handler actually resyncs at, given the informer's check period (client-go's `determineResyncPeriod`). */
export function determineResyncPeriod(desiredMs: number, checkMs: number): number {
  if (desiredMs === 0) return 0;
  if (checkMs === 0) return 0;
  return desiredMs < checkMs ? checkMs : desiredMs;
}

function logHandlerErrors(logger: Logger): HandlerErrorHandler {
  return (error, context) =>
    logger.error(
      { informer: context.informer, method: context.method, err: error },
      `informer ${context.informer}: event handler ${context.method} failed`,
    );
}
