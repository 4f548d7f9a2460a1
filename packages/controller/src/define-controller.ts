import { setMaxListeners } from "node:events";
import type { RunOptions } from "@reconcile/api";
import type { Client } from "@reconcile/client";
import { type Clock, type Random, realClock } from "@reconcile/clock";
import { currentDelivery } from "@reconcile/informer";
import {
  type MetricsProvider,
  type RateLimiter,
  type RateLimitingInterface,
  RateLimitingQueue,
} from "@reconcile/workqueue";
import { type SyncedInformer, waitForInformersSynced } from "./cache-sync.js";
import { ClientEventRecorder, type EventRecorder, noopEventRecorder } from "./event-recorder.js";
import { type Introspection, ReconcileHistory, type ReconcileSummary } from "./introspection.js";
import { type Logger, noopLogger } from "./logger.js";
import { EnqueueReasons, runWorkers, type SyncContext } from "./run-workers.js";
import type { ReconcileObserver, ReconcileRecord, SyncMetrics, SyncResult } from "./sync-result.js";

/**
 * The parts every controller shares, each optional and defaulted by
 * {@link defineController} (controller-runtime's `controller.Options`,
 * defaulted from the manager by `NewUnmanaged`). A controller's options
 * type extends it; a manager hands one to every controller it builds.
 */
export interface ControllerContext {
  /** Time for the queues, rate limits, cache-sync timeout and sync durations. Default `realClock`. */
  clock?: Clock | undefined;
  /** Where reconcile IDs draw from. Default: `crypto.randomUUID`. */
  random?: Random | undefined;
  /** pino-shaped; the controller binds its own `controller` key. Default: silent. */
  logger?: Logger | undefined;
  /** Where Events go. Default: the controller's own `ClientEventRecorder`, flushed when it stops. */
  eventRecorder?: EventRecorder | undefined;
  /** Metrics of the controller's named work queues (`workqueue_*{name}`). Default: none. */
  queueMetricsProvider?: MetricsProvider | undefined;
  /** Sync counts and durations (`controller_runtime_reconcile_*`). Default: none. */
  syncMetrics?: SyncMetrics | undefined;
  /** Told of every finished sync, with its key, reason and outcome. Default: nobody. */
  reconcileObserver?: ReconcileObserver | undefined;
  /** How often an informer without a synced signal (a test fake) is polled, in ms. Default 100. */
  cacheSyncPollMs?: number | undefined;
  /** Give up waiting for the caches after this long (`run` rejects); 0 waits for ever. Default 0. */
  cacheSyncTimeoutMs?: number | undefined;
  /**
   * Where the controller shows its queues and last reconciles (a `controller` source named after
   * it), for a debugging view. Default: nowhere, and no reconcile is remembered.
   */
  introspection?: Introspection | undefined;
}

/** One work queue of a controller and the sync that drains it. */
export interface ControllerQueueSpec<K> {
  /** The queue's name: `workqueue_*{name}` and the `controller` of its log lines and sync metrics. Required. */
  name: string;
  /** Reconciles one key; see `runWorkers` for results, errors and terminal errors. Required. */
  sync: (key: K, context: SyncContext) => Promise<SyncResult>;
  /** A queue made by the caller, used as it is (named, rate-limited and metered by the caller). */
  queue?: RateLimitingInterface<K> | undefined;
  /** The rate limiter of a queue made here. Default: the default controller rate limiter on the clock. */
  rateLimiter?: ((clock: Clock) => RateLimiter<K>) | undefined;
  /**
   * Workers when `run` names none (the first queue) or always (the others);
   * `"run"` gives another queue as many as the first. Default 1.
   */
  workers?: number | "run" | undefined;
  /** Requeues of a failing key before it is dropped. Default: retry for ever. */
  maxRetries?: number | undefined;
}

/** A pass run every `periodMs` while the controller runs (upstream's `wait.Until` loops). */
export interface PeriodicTask {
  /** Names the pass in the log line of a failure. Required. */
  name: string;
  /** Time between the end of a pass and the start of the next. Required. */
  periodMs: number;
  /** One pass; an error is logged and the next pass runs on time. */
  run: (signal: AbortSignal) => Promise<void>;
}

export interface ControllerSpec<K> {
  /** The controller's name in logs (`controller`) and in the error of a missing option. Required. */
  name: string;
  /** The caller's options: the shared parts ({@link ControllerContext}) are read from here. Required. */
  context: ControllerContext;
  /** Options that must be present, by name: a missing one throws `TypeError("<owner>: <name> is required")`. */
  required?: Readonly<Record<string, unknown>> | undefined;
  /** Names the constructor in that error. Default `name`. */
  owner?: string | undefined;
  /** Records Events as this component (upstream's `EventSource.Component`) over `client` unless the context gives a recorder. Default: no Events. */
  events?: { component: string; client: Client } | undefined;
  /** The informers whose caches must sync before the first sync, by name. Required. */
  informers: Readonly<Record<string, SyncedInformer>>;
  /** The work queues: the first is the controller's main queue, and `run`'s `workers` are its workers. At least one. */
  queues: readonly [ControllerQueueSpec<K>, ...ControllerQueueSpec<K>[]];
  /** Passes run on a period once the caches synced (node health, eviction). Default none. */
  periodic?: readonly PeriodicTask[] | undefined;
  /** Awaited after the workers have stopped, before `run` settles. */
  onStop?: (() => unknown) | undefined;
  /** More of the controller's state for its introspection snapshot (its expectations, say), as JSON. */
  inspect?: (() => Record<string, unknown>) | undefined;
}

/** One queue of a controller as its introspection snapshot shows it. */
export interface QueueView {
  name: string;
  depth: number;
  /** Keys being reconciled now (at most 50). */
  processing?: string[];
  processingCount?: number;
  /** Keys waiting for a time (a retry's backoff, a requeue-after), due soonest first (at most 50). */
  waiting?: { key: string; dueInMs: number; requeues: number }[];
  waitingCount?: number;
}

/** A controller's introspection snapshot. */
export interface ControllerView {
  running: boolean;
  queues: QueueView[];
  /** Reconciles finished since the start, and the last 20 of them, oldest first. */
  reconciles: { total: number; recent: ReconcileSummary[] };
  [more: string]: unknown;
}

/**
 * A controller's moving parts, built once from its spec and its options'
 * shared {@link ControllerContext}: a clock, a logger bound to the
 * controller's name, an Event recorder (borrowed, or owned and flushed on
 * stop), named rate-limited queues, and one `run({ signal, workers })` that
 * waits for the caches, runs every queue's workers and periodic pass, and
 * settles after a full stop. A controller's constructor is then its event
 * handlers.
 */
export class ControllerHarness<K = string> {
  readonly name: string;
  readonly clock: Clock;
  /** The context's logger, bound to `controller: name`. */
  readonly logger: Logger;
  /** Where Events go: the context's recorder, the owned one, or nowhere. */
  readonly recorder: EventRecorder;
  /** The main queue (the first of the spec's). */
  readonly queue: RateLimitingInterface<K>;
  /** Every queue, by name. */
  readonly queues: ReadonlyMap<string, RateLimitingInterface<K>>;
  readonly #spec: ControllerSpec<K>;
  readonly #context: ControllerContext;
  readonly #baseLogger: Logger;
  readonly #ownedRecorder: ClientEventRecorder | undefined;
  readonly #reasons = new EnqueueReasons<K>();
  readonly #history: ReconcileHistory | undefined;
  /** Someone reads the reconciles (a history or an observer): each enqueue notes the delivery behind it. */
  readonly #tracing: boolean;
  #running = false;

  constructor(spec: ControllerSpec<K>) {
    const owner = spec.owner ?? spec.name;
    for (const [option, value] of Object.entries(spec.required ?? {})) {
      if (value === undefined || value === null) throw new TypeError(`${owner}: ${option} is required`);
    }
    const context = spec.context;
    this.#spec = spec;
    this.#context = context;
    this.name = spec.name;
    this.clock = context.clock ?? realClock;
    this.#baseLogger = context.logger ?? noopLogger;
    this.logger = this.#baseLogger.child({ controller: spec.name });
    if (context.eventRecorder === undefined && spec.events !== undefined) {
      this.#ownedRecorder = new ClientEventRecorder({
        client: spec.events.client,
        component: spec.events.component,
        clock: this.clock,
        logger: this.logger,
      });
    }
    this.recorder = context.eventRecorder ?? this.#ownedRecorder ?? noopEventRecorder;
    const queues = new Map<string, RateLimitingInterface<K>>();
    for (const queueSpec of spec.queues) {
      const queue =
        queueSpec.queue ??
        new RateLimitingQueue<K>({
          name: queueSpec.name,
          clock: this.clock,
          metricsProvider: context.queueMetricsProvider,
          rateLimiter: queueSpec.rateLimiter?.(this.clock),
        });
      queues.set(queueSpec.name, queue);
    }
    this.queues = queues;
    this.queue = queues.get(spec.queues[0].name)!;
    this.#tracing = context.introspection !== undefined || context.reconcileObserver !== undefined;
    if (context.introspection !== undefined) {
      this.#history = new ReconcileHistory();
      context.introspection.register({ kind: "controller", name: spec.name, snapshot: () => this.inspect() });
    }
  }

  /**
   * The controller now: whether it runs, each queue's depth with the keys in
   * flight and those waiting to retry, and (with an introspection in its
   * context) its last reconciles.
   */
  inspect(): ControllerView {
    const now = this.clock.now();
    const queues = [...this.queues].map(([name, queue]) => queueView(name, queue, now));
    const history = this.#history;
    return {
      running: this.#running,
      queues,
      reconciles: { total: history?.total ?? 0, recent: history?.list() ?? [] },
      ...this.#spec.inspect?.(),
    };
  }

  /**
   * Adds `key` to the main queue, remembering why (kube-rs's
   * `ReconcileReason`): the sync it leads to gets the latest reason in its
   * context and log lines.
   */
  enqueue(key: K, reason: string): void {
    this.#reasons.note(key, reason, this.#tracing ? currentDelivery() : undefined);
    this.queue.add(key);
  }

  /** Adds `key` to the main queue after `delayMs`, remembering why. */
  enqueueAfter(key: K, delayMs: number, reason: string): void {
    this.#reasons.note(key, reason, this.#tracing ? currentDelivery() : undefined);
    this.queue.addAfter(key, delayMs);
  }

  /**
   * Waits for the caches to sync, then runs every queue's workers (`workers`
   * for the main queue, default its spec's) and the periodic passes until
   * `signal` aborts. Settles after the workers and passes have stopped and
   * the owned recorder is flushed. Aborted before the caches sync it resolves
   * without a sync; a cache-sync timeout rejects after the same stop.
   */
  async run(options: RunOptions & { workers?: number | undefined }): Promise<void> {
    if (this.#running) throw new Error(`${this.name}: run is already running`);
    const spec = this.#spec;
    const first = spec.queues[0].workers;
    const workers = options.workers ?? (typeof first === "number" ? first : 1);
    if (!Number.isInteger(workers) || workers < 1) {
      throw new RangeError(`${this.name}: workers must be a positive integer, got ${workers}`);
    }
    this.#running = true;
    const shutDownQueues = () => {
      for (const queue of this.queues.values()) queue.shutDown();
    };
    // One listener on the caller's signal (a manager runs many controllers on one); the
    // cache-sync wait, workers, passes and sleeps listen to this one.
    const { signal, release } = childSignal(options.signal);
    this.logger.info({ workers }, "Starting controller");
    try {
      let synced: boolean;
      try {
        synced = await waitForInformersSynced({
          informers: spec.informers,
          signal,
          timeoutMs: this.#context.cacheSyncTimeoutMs,
          pollIntervalMs: this.#context.cacheSyncPollMs,
          clock: this.clock,
        });
      } catch (error) {
        shutDownQueues();
        throw error;
      }
      if (!synced) {
        shutDownQueues();
        return;
      }
      this.logger.info({}, "Caches are synced");
      await Promise.all([
        ...spec.queues.map((queueSpec, i) =>
          runWorkers({
            queue: this.queues.get(queueSpec.name)!,
            workers: i === 0 || queueSpec.workers === "run" ? workers : (queueSpec.workers ?? 1),
            signal,
            logger: this.#baseLogger,
            name: queueSpec.name,
            sync: queueSpec.sync,
            maxRetries: queueSpec.maxRetries,
            metrics: this.#context.syncMetrics,
            clock: this.clock,
            random: this.#context.random,
            observer: this.#observer(),
            reasons: i === 0 ? this.#reasons : undefined,
          }),
        ),
        ...(spec.periodic ?? []).map((task) => this.#every(task, signal)),
      ]);
    } finally {
      shutDownQueues();
      await spec.onStop?.();
      await this.#ownedRecorder?.flush();
      release();
      this.logger.info({}, "Shutting down controller");
      this.#running = false;
    }
  }

  /** The context's observer, and the history's when one is kept. */
  #observer(): ((record: ReconcileRecord) => void) | undefined {
    const history = this.#history;
    const outer = this.#context.reconcileObserver;
    if (history === undefined) return outer;
    if (outer === undefined) return (record) => history.record(record);
    return (record) => {
      history.record(record);
      outer(record);
    };
  }

  async #every(task: PeriodicTask, signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await task.run(signal);
      } catch (error) {
        this.logger.error({ err: error, pass: task.name }, "Periodic pass failed");
      }
      try {
        await this.clock.sleep(task.periodMs, { signal });
      } catch {
        return;
      }
    }
  }
}

function keyText(key: unknown): string {
  return typeof key === "string" ? key : JSON.stringify(key);
}

/** A queue's view: the full one from a queue that can inspect itself, else its depth. */
function queueView(name: string, queue: RateLimitingInterface<unknown>, now: number): QueueView {
  const inspectable = queue as RateLimitingInterface<unknown> & {
    inspect?: RateLimitingQueue<unknown>["inspect"];
  };
  if (typeof inspectable.inspect !== "function") return { name, depth: queue.len() };
  const snapshot = inspectable.inspect(50);
  const requeues = new Map((snapshot.requeues ?? []).map((r) => [r.item, r.requeues]));
  return {
    name,
    depth: snapshot.depth,
    processing: snapshot.processing.map(keyText),
    processingCount: snapshot.processingCount,
    waiting: snapshot.waiting.map((w) => ({
      key: keyText(w.item),
      dueInMs: Math.max(0, w.readyAt - now),
      requeues: requeues.get(w.item) ?? 0,
    })),
    waitingCount: snapshot.waitingCount,
  };
}

/** A signal that aborts with `parent`, with no listener limit, and `release` to take its one listener off `parent`. */
function childSignal(parent: AbortSignal): { signal: AbortSignal; release: () => void } {
  const child = new AbortController();
  setMaxListeners(0, child.signal);
  const forward = () => child.abort(parent.reason);
  if (parent.aborted) child.abort(parent.reason);
  else parent.addEventListener("abort", forward, { once: true });
  return { signal: child.signal, release: () => parent.removeEventListener("abort", forward) };
}

/**
 * Builds a controller's harness from its spec (controller-runtime's
 * `NewUnmanaged`): see {@link ControllerHarness}.
 */
export function defineController<K = string>(spec: ControllerSpec<K>): ControllerHarness<K> {
  return new ControllerHarness(spec);
}
