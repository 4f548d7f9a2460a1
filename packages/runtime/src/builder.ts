import type { DeepReadonly, KubeObject, ResourceDescriptor } from "@reconcile/api";
import type { Client } from "@reconcile/client";
import type { Clock } from "@reconcile/clock";
import {
  type ControllerEventHandler,
  type ControllerHarness,
  defineController,
  type EventRecorder,
  type Logger,
  objectFromTombstone,
  ownerEventHandler,
  type SyncResult,
  TerminalError,
} from "@reconcile/controller";
import type { SharedIndexInformer } from "@reconcile/informer";
import type { RateLimiter, RateLimitingInterface } from "@reconcile/workqueue";
import type { Manager } from "./manager.js";
import { type Predicate, passes } from "./predicates.js";

/**
 * The object a reconcile is about (controller-runtime's `reconcile.Request`);
 * `namespace` is "" for cluster-scoped kinds. Import it as `ReconcileRequest`
 * (or `Request`, which is the same type): a reconcile annotated with a
 * `Request` that was not imported silently takes fetch's global `Request`.
 */
export interface ReconcileRequest {
  readonly namespace: string;
  readonly name: string;
}

/** The same as {@link ReconcileRequest}, under controller-runtime's name. */
export type Request = ReconcileRequest;

/** What a reconcile gets besides the request. */
export interface ReconcileContext {
  /** Aborts when the controller stops: pass it to every API call. */
  readonly signal: AbortSignal;
  /** Bound to controller, namespace, name and reconcileID. */
  readonly logger: Logger;
  readonly reconcileID: string;
  /** Why the request was queued ("Website updated", "owned Deployment changed", "retry after error", …). */
  readonly reason: string | undefined;
  /** The manager's client. */
  readonly client: Client;
  /** The manager's clock: read the time here, so tests on a `FakeClock` see fake time. */
  readonly clock: Clock;
  /** Events as this controller. */
  readonly recorder: EventRecorder;
  /**
   * The cached object of `resource` named by `request` from the manager's
   * shared informers (controller-runtime's cache-backed `client.Get`), or
   * undefined when it is not there (deleted, or not created yet).
   */
  get<T extends KubeObject>(resource: ResourceDescriptor<T>, request: Request): DeepReadonly<T> | undefined;
}

/**
 * What a reconcile resolves: nothing when done, or `{ requeueAfterMs }` to
 * look again after that long without counting a failure. A rejection requeues
 * the request with the rate limiter's backoff; a `TerminalError` is counted
 * and not retried. The same type as every controller's `SyncResult`.
 */
export type ReconcileResult = SyncResult;

export type Reconciler = (request: Request, context: ReconcileContext) => Promise<ReconcileResult>;

/** Maps an object of a watched kind to the requests it should trigger (`handler.EnqueueRequestsFromMapFunc`). */
export type MapFunc<T extends KubeObject> = (obj: DeepReadonly<T>) => readonly Request[];

export interface ControllerOptions {
  /** Reconciles at once (`MaxConcurrentReconciles`). Default 1. */
  workers?: number | undefined;
  /** Backoff of failed requests. Default: the workqueue's controller rate limiter (5 ms doubling to 1000 s per item, 10 qps overall). */
  rateLimiter?: RateLimiter<string> | undefined;
  /** Wait this long for the caches before the controller fails. Default: the manager's (2 minutes). */
  cacheSyncTimeoutMs?: number | undefined;
}

/** A controller the builder made, registered with its manager. */
export interface BuiltController {
  readonly name: string;
  /** The controller's queue of `namespace/name` keys (to inspect in tests). */
  readonly queue: RateLimitingInterface<string>;
}

/** Starts a controller builder on `manager` (controller-runtime's `ctrl.NewControllerManagedBy`). */
export function newControllerManagedBy(manager: Manager): ControllerBuilder {
  return new ControllerBuilder(manager);
}

/** How the builder watches one kind. */
export interface WatchedKindOptions<T extends KubeObject> {
  predicates?: readonly Predicate<T>[] | undefined;
  /**
   * Cache and watch only the objects' metadata (controller-runtime's
   * `builder.OnlyMetadata`): the handlers and predicates see
   * PartialObjectMetadata, from the manager's `informers.forMetadata(kind)`.
   * For kinds whose objects are large when only owners, labels or
   * finalizers matter. Default false.
   */
  onlyMetadata?: boolean | undefined;
}

interface Watch {
  resource: ResourceDescriptor;
  onlyMetadata: boolean;
  /** The handler that turns this kind's events into enqueues (a map, or the owner handler). */
  handler: (enqueue: (key: string, reason: string) => void) => ControllerEventHandler<KubeObject>;
  predicates: readonly Predicate[];
}

/**
 * Composes a controller from the kind it reconciles, the kinds it owns and
 * anything else it watches, on the manager's shared informers.
 */
export class ControllerBuilder {
  readonly #manager: Manager;
  #for: ResourceDescriptor | undefined;
  #forMetadataOnly = false;
  #name: string | undefined;
  #watches: Watch[] = [];
  #globalPredicates: Predicate[] = [];
  #options: ControllerOptions = {};

  constructor(manager: Manager) {
    this.#manager = manager;
  }

  /** The kind reconciled: each event of one of its objects requests that object. Required, once. */
  for<T extends KubeObject>(resource: ResourceDescriptor<T>, options: WatchedKindOptions<T> = {}): this {
    if (this.#for !== undefined)
      throw new Error(`controller builder: for() was already called with ${this.#for.kind}`);
    this.#for = resource;
    this.#forMetadataOnly = options.onlyMetadata === true;
    this.#watches.unshift({
      resource,
      onlyMetadata: this.#forMetadataOnly,
      handler: (enqueue) => mapHandler(resource.kind, (obj) => [requestOf(obj)], enqueue),
      predicates: (options.predicates ?? []) as readonly Predicate[],
    });
    return this;
  }

  /**
   * A kind this controller creates and controls: an event of one of its
   * objects requests the object's controlling owner when that owner is of the
   * `for` kind (`handler.EnqueueRequestForOwner` with `OnlyControllerOwner`).
   * An update whose controller reference moved requests the old owner too.
   */
  owns<T extends KubeObject>(resource: ResourceDescriptor<T>, options: WatchedKindOptions<T> = {}): this {
    this.#watches.push({
      resource,
      onlyMetadata: options.onlyMetadata === true,
      handler: (enqueue) => {
        const owner = this.#for!;
        const informers = this.#manager.informers;
        return ownerEventHandler<KubeObject, KubeObject>({
          ownerKind: { kind: owner.kind, group: owner.group },
          // The owners are looked up in the cache the `for` kind is watched through.
          owners: (this.#forMetadataOnly
            ? informers.forMetadata(owner)
            : informers.forResource(owner)
          ).getIndexer(),
          clusterScopedOwners: !owner.namespaced,
          childKind: resource.kind,
          enqueue: (key, _owner, reason) => enqueue(key, reason),
        });
      },
      predicates: (options.predicates ?? []) as readonly Predicate[],
    });
    return this;
  }

  /** Any other kind: `map` says which requests an event of one of its objects triggers. */
  watches<T extends KubeObject>(
    resource: ResourceDescriptor<T>,
    map: MapFunc<T>,
    options: WatchedKindOptions<T> = {},
  ): this {
    this.#watches.push({
      resource,
      onlyMetadata: options.onlyMetadata === true,
      handler: (enqueue) => mapHandler(`watched ${resource.kind}`, map as MapFunc<KubeObject>, enqueue),
      predicates: (options.predicates ?? []) as readonly Predicate[],
    });
    return this;
  }

  /** Predicates applied to the events of every watched kind (`WithEventFilter`). */
  withEventFilter(...predicates: Predicate[]): this {
    this.#globalPredicates.push(...predicates);
    return this;
  }

  withOptions(options: ControllerOptions): this {
    this.#options = { ...this.#options, ...options };
    return this;
  }

  /** The name in logs, metrics and Events. Default: the `for` kind in lower case. */
  named(name: string): this {
    this.#name = name;
    return this;
  }

  /**
   * Registers the controller with the manager: event handlers on the shared
   * informers now, the workers once the manager runs (and, with leader
   * election, leads).
   */
  complete(reconcile: Reconciler): BuiltController {
    const primary = this.#for;
    if (primary === undefined) throw new Error("controller builder: call for(kind) before complete()");
    const manager = this.#manager;
    const name = this.#name ?? primary.kind.toLowerCase();
    const workers = this.#options.workers ?? 1;
    if (!Number.isInteger(workers) || workers < 1) {
      throw new RangeError(`controller ${name}: workers must be a positive integer, got ${workers}`);
    }
    const watched = this.#watches.map((watch) => ({
      watch,
      informer: watch.onlyMetadata
        ? (manager.informers.forMetadata(watch.resource) as unknown as SharedIndexInformer<KubeObject>)
        : manager.informers.forResource(watch.resource),
    }));
    const informers = Object.fromEntries(
      watched.map(({ watch: { resource, onlyMetadata }, informer }) => [
        `${onlyMetadata ? "metadata:" : ""}${resource.group ? `${resource.plural}.${resource.group}` : resource.plural}`,
        informer,
      ]),
    );
    const metrics = manager.reconcileMetrics;
    metrics.maxConcurrentReconciles.labels(name).set(workers);
    metrics.activeWorkers.labels(name).set(0);
    const active = metrics.activeWorkers.labels(name);
    const rateLimiter = this.#options.rateLimiter;
    const recorder = manager.eventRecorderFor(name);
    const harness: ControllerHarness<string> = defineController({
      name,
      context: {
        ...manager.controllerContext(),
        syncMetrics: metrics.syncMetrics,
        eventRecorder: recorder,
        cacheSyncTimeoutMs: this.#options.cacheSyncTimeoutMs ?? manager.cacheSyncTimeoutMs,
      },
      informers,
      queues: [
        {
          name,
          workers,
          rateLimiter: rateLimiter === undefined ? undefined : () => rateLimiter,
          sync: async (key, { logger, reconcileID, signal, reason }) => {
            active.inc();
            try {
              return await reconcile(splitKey(key), {
                signal,
                logger,
                reconcileID,
                reason,
                client: manager.client,
                clock: manager.clock,
                recorder,
                get: (resource, request) => manager.getCached(resource, request),
              });
            } finally {
              active.dec();
            }
          },
        },
      ],
    });
    const enqueue = (key: string, reason: string) => harness.enqueue(key, reason);
    for (const { watch, informer } of watched) {
      informer.addEventHandler(
        filtered(watch.handler(enqueue), [...this.#globalPredicates, ...watch.predicates]),
      );
    }
    manager.add({ name, needLeaderElection: true, run: (options) => harness.run(options) });
    return { name, queue: harness.queue };
  }
}

/** A handler that enqueues what `map` says an event's object requests; an update also requests where the old object mapped. */
function mapHandler(
  what: string,
  map: MapFunc<KubeObject>,
  enqueue: (key: string, reason: string) => void,
): ControllerEventHandler<KubeObject> {
  const [added, updated, deleted] = [`${what} added`, `${what} updated`, `${what} deleted`];
  return {
    onAdd: (obj) => {
      for (const request of map(obj)) enqueue(keyOf(request), added);
    },
    onUpdate: (oldObj, newObj) => {
      // A child whose controller moved (or any object that now maps elsewhere) also requests where it was.
      const keys = map(newObj).map(keyOf);
      for (const key of keys) enqueue(key, updated);
      for (const request of map(oldObj)) {
        const key = keyOf(request);
        if (!keys.includes(key)) enqueue(key, updated);
      }
    },
    onDelete: (obj) => {
      for (const request of map(objectFromTombstone(obj))) enqueue(keyOf(request), deleted);
    },
  };
}

/** `handler` behind the predicates: an event any of them refuses is dropped. */
function filtered(
  handler: ControllerEventHandler<KubeObject>,
  predicates: readonly Predicate[],
): ControllerEventHandler<KubeObject> {
  return {
    onAdd: (obj, initial) => {
      if (passes(predicates, "create", obj)) handler.onAdd?.(obj, initial);
    },
    onUpdate: (oldObj, newObj) => {
      if (passes(predicates, "update", newObj, oldObj)) handler.onUpdate?.(oldObj, newObj);
    },
    onDelete: (obj) => {
      if (passes(predicates, "delete", objectFromTombstone(obj))) handler.onDelete?.(obj);
    },
  };
}

/** The request of an object. */
export function requestOf(obj: DeepReadonly<KubeObject> | KubeObject): Request {
  return { namespace: obj.metadata?.namespace ?? "", name: obj.metadata?.name ?? "" };
}

function keyOf(request: Request): string {
  return request.namespace ? `${request.namespace}/${request.name}` : request.name;
}

function splitKey(key: string): Request {
  const slash = key.indexOf("/");
  return slash < 0
    ? { namespace: "", name: key }
    : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

// Re-exported so a reconcile can throw one without importing the harness.
export { TerminalError };
