import { setMaxListeners } from "node:events";
import {
  type KubeObject,
  type ListerWatcher,
  type Logger,
  noopLogger,
  type PartialObjectMetadata,
  type ResourceDescriptor,
  type RunOptions,
} from "@reconcile/api";
import {
  type Client,
  type ListerWatcherOptions,
  listerWatcher,
  metadataListerWatcher,
} from "@reconcile/client";
import { type Clock, realClock } from "@reconcile/clock";
import type { TransformFunc } from "./delta-fifo.js";
import { createLister, type Lister } from "./lister.js";
import type { WatchErrorHandler } from "./reflector.js";
import { type HandlerErrorHandler, SharedIndexInformer } from "./shared-informer.js";
import type { Indexers } from "./store.js";
import { waitForNamedCacheSync } from "./wait-for-cache-sync.js";

export interface SharedInformerFactoryOptions {
  /** The client informers list and watch through. */
  client: Client;
  /** Default resync period of every informer; 0 never. Default: 0. */
  resyncPeriodMs?: number | undefined;
  /** Watch only this namespace (namespaced resources only). Default: all namespaces. */
  namespace?: string | undefined;
  /** Label selector for every informer's list and watch. Default: none. */
  labelSelector?: string | undefined;
  /** Field selector for every informer's list and watch. Default: none. */
  fieldSelector?: string | undefined;
  /** Transform applied by every informer (e.g. drop `metadata.managedFields`). Default: none. */
  transform?: TransformFunc<KubeObject> | undefined;
  /** Passed to every informer. Default: each informer logs on `logger` (410s are not logged). */
  watchErrorHandler?: WatchErrorHandler | undefined;
  /** Passed to every informer. Default: each informer logs on `logger`. */
  handlerErrorHandler?: HandlerErrorHandler | undefined;
  /** Deep-freeze cached objects (see `SharedIndexInformer`). Default: `RECONCILE_CACHE_MUTATION_DETECTOR`. */
  detectMutations?: boolean | undefined;
  /** Every informer takes the client's objects frozen and shared (see `SharedIndexInformer`). Default: as there. */
  acceptFrozen?: boolean | undefined;
  /**
   * Every informer syncs by watch list (`sendInitialEvents`) instead of LIST,
   * as client-go's `WatchListClient` feature does. Default: false.
   */
  useWatchList?: boolean | undefined;
  /** Default: `realClock`. */
  clock?: Clock | undefined;
  /** The jitter of every informer's watch timeouts and backoff, in [0, 1). Default: `Math.random`. */
  random?: (() => number) | undefined;
  /** Given to every informer, and where an informer that fails outright is reported. Default: `noopLogger` (nothing). */
  logger?: Logger | undefined;
}

export interface ForResourceOptions<T extends KubeObject> {
  /** This informer's resync period, instead of the factory's. Only used when the informer is created. */
  resyncPeriodMs?: number | undefined;
  /** Index functions besides `namespace`. Added to the informer if it already exists. */
  indexers?: Indexers<T> | undefined;
}

export interface FactoryWaitOptions {
  /** Fail with {@link CacheSyncTimeoutError} after this long; 0 or absent waits until the signal aborts. */
  timeoutMs?: number | undefined;
}

/**
 * client-go's `SharedInformerFactory`: one informer per resource, shared by
 * every controller of the process. Ask for informers (or listers) first, then
 * `start`; `start` again after asking for more.
 */
export class SharedInformerFactory {
  readonly #options: SharedInformerFactoryOptions;
  readonly #clock: Clock;
  readonly #informers = new Map<string, SharedIndexInformer<KubeObject>>();
  readonly #running = new Map<string, Promise<void>>();
  readonly #stop = new AbortController();
  #shuttingDown = false;

  constructor(options: SharedInformerFactoryOptions) {
    if (options?.client === undefined) throw new TypeError("SharedInformerFactory: client is required");
    this.#options = options;
    this.#clock = options.clock ?? realClock;
  }

  /** The informer of `resource`, created on first use. */
  forResource<T extends KubeObject>(
    resource: ResourceDescriptor<T>,
    options: ForResourceOptions<T> = {},
  ): SharedIndexInformer<T> {
    const key = resourceKey(resource);
    const existing = this.#informers.get(key) as SharedIndexInformer<T> | undefined;
    if (existing !== undefined) {
      if (options.indexers) existing.addIndexers(options.indexers);
      return existing;
    }
    const informer = this.#informer(
      key,
      resource,
      listerWatcher(this.#options.client, resource, this.#selection(resource)),
      options,
    );
    this.#informers.set(key, informer as unknown as SharedIndexInformer<KubeObject>);
    return informer;
  }

  /** What every informer of `resource` lists and watches: the factory's namespace and selectors. */
  #selection(resource: ResourceDescriptor): ListerWatcherOptions {
    const o = this.#options;
    return {
      namespace: resource.namespaced ? o.namespace : undefined,
      labelSelector: o.labelSelector,
      fieldSelector: o.fieldSelector,
    };
  }

  #informer<T extends KubeObject>(
    key: string,
    resource: ResourceDescriptor<T>,
    source: ListerWatcher<T>,
    options: ForResourceOptions<T>,
  ): SharedIndexInformer<T> {
    const o = this.#options;
    return new SharedIndexInformer<T>({
      listerWatcher: source,
      resource,
      name: key,
      resyncPeriodMs: options.resyncPeriodMs ?? o.resyncPeriodMs,
      indexers: options.indexers,
      transform: o.transform as TransformFunc<T> | undefined,
      watchErrorHandler: o.watchErrorHandler,
      handlerErrorHandler: o.handlerErrorHandler,
      logger: o.logger,
      detectMutations: o.detectMutations,
      acceptFrozen: o.acceptFrozen,
      useWatchList: o.useWatchList,
      clock: this.#clock,
      random: o.random,
    });
  }

  /**
   * The metadata-only informer of `resource`, created on first use: its
   * cache holds each object's metadata alone, as PartialObjectMetadata
   * (client-go's `metadatainformer`, controller-runtime's `OnlyMetadata`) —
   * for controllers that read only owners, labels and finalizers of kinds
   * whose objects are large. It is an informer of its own beside
   * {@link forResource}'s, keyed `metadata:group/plural`.
   */
  forMetadata(
    resource: ResourceDescriptor,
    options: ForResourceOptions<PartialObjectMetadata> = {},
  ): SharedIndexInformer<PartialObjectMetadata> {
    const key = `metadata:${resourceKey(resource)}`;
    const existing = this.#informers.get(key) as SharedIndexInformer<PartialObjectMetadata> | undefined;
    if (existing !== undefined) {
      if (options.indexers) existing.addIndexers(options.indexers);
      return existing;
    }
    const informer = this.#informer<PartialObjectMetadata>(
      key,
      resource as ResourceDescriptor<PartialObjectMetadata>,
      metadataListerWatcher(this.#options.client, resource, this.#selection(resource)),
      options,
    );
    this.#informers.set(key, informer as unknown as SharedIndexInformer<KubeObject>);
    return informer;
  }

  /**
   * Every informer made so far, by `group/plural` key, in the order they were
   * made; with `running`, only those started and not yet stopped.
   */
  informers(options: { running?: boolean } = {}): [key: string, informer: SharedIndexInformer<KubeObject>][] {
    const all = [...this.#informers];
    return options.running ? all.filter(([key]) => this.#running.has(key)) : all;
  }

  /** A lister over the informer of `resource` (created on first use). */
  lister<T extends KubeObject>(resource: ResourceDescriptor<T>): Lister<T> {
    return createLister(this.forResource(resource).getIndexer(), resource);
  }

  /**
   * The one lifecycle shape: starts every informer asked for so far, and
   * settles once `signal` has aborted and every informer has fully stopped
   * (client-go's `Start` and `Shutdown` in one call). Informers asked for
   * later need a `start` of their own, as in client-go.
   */
  async run({ signal }: RunOptions): Promise<void> {
    this.start(signal);
    if (!signal.aborted) {
      await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
    }
    await this.shutdown();
  }

  /**
   * Starts every informer not started yet; they run until `signal` aborts or
   * `shutdown()`. A no-op after `shutdown()`.
   */
  start(signal: AbortSignal): void {
    if (this.#shuttingDown) return;
    const stop = AbortSignal.any([signal, this.#stop.signal]);
    // Every informer (and its reflector) listens to this one signal; a factory may hold more than
    // Node's default of 10 without any leak.
    setMaxListeners(0, stop);
    for (const [key, informer] of this.#informers) {
      if (this.#running.has(key)) continue;
      this.#running.set(
        key,
        informer
          .run({ signal: stop })
          .catch((error) =>
            (this.#options.logger ?? noopLogger).error({ informer: key, err: error }, "informer failed"),
          ),
      );
    }
  }

  /**
   * Waits until every started informer has synced. Resolves with each
   * informer's state (all true, or false where the signal aborted the wait);
   * rejects with {@link CacheSyncTimeoutError} naming the laggards after
   * `timeoutMs`. Waits on the informers' `whenSynced`, so no timer runs
   * unless there is a timeout.
   */
  async waitForCacheSync(
    signal: AbortSignal,
    options: FactoryWaitOptions = {},
  ): Promise<Record<string, boolean>> {
    const started = Array.from(this.#informers).filter(([key]) => this.#running.has(key));
    await waitForNamedCacheSync({
      informers: Object.fromEntries(started),
      signal,
      timeoutMs: options.timeoutMs,
      clock: this.#clock,
    });
    return Object.fromEntries(started.map(([key, informer]) => [key, informer.hasSynced()]));
  }

  /** Stops every informer and resolves once all have fully stopped. Later `start` calls do nothing. */
  async shutdown(): Promise<void> {
    this.#shuttingDown = true;
    this.#stop.abort();
    await Promise.all(this.#running.values());
  }
}

function resourceKey(resource: Pick<ResourceDescriptor, "group" | "plural">): string {
  return resource.group ? `${resource.plural}.${resource.group}` : resource.plural;
}
