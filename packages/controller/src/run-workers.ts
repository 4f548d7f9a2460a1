import { splitMetaNamespaceKey } from "@reconcile/api";
import { type Clock, type Random, realClock, uuidFrom } from "@reconcile/clock";
import type { Delivery } from "@reconcile/informer";
import type { RateLimitingInterface } from "@reconcile/workqueue";
import { type Logger, noopLogger } from "./logger.js";
import {
  noopSyncMetrics,
  type ReconcileObserver,
  type SyncMetrics,
  type SyncOutcome,
  type SyncResult,
  TerminalError,
} from "./sync-result.js";

/** The queue operations the worker loop uses: any `RateLimitingInterface` from `@reconcile/workqueue` has them. */
export type WorkerQueue<T> = Pick<
  RateLimitingInterface<T>,
  "get" | "done" | "forget" | "addRateLimited" | "addAfter" | "numRequeues" | "shutDown"
>;

/** What each sync receives besides its key. */
export interface SyncContext {
  /** A child logger bound to controller, namespace, name and reconcileID. */
  logger: Logger;
  /** Unique per sync call, for correlating its log lines. */
  reconcileID: string;
  /**
   * Aborts when the workers are asked to stop. Pass it to every API call
   * (PodControl, status writes) so a stop does not wait on requests in flight.
   */
  signal: AbortSignal;
  /**
   * Why the key was queued, as its last enqueue said (kube-rs's
   * `ReconcileReason`): "object updated", "owned Pod changed", "requeue
   * requested", "retry after error", …; undefined when the queue was fed
   * without a reason.
   */
  reason?: string | undefined;
}

/**
 * The latest reason each queued key was added for. The harness notes one on
 * every enqueue; the worker takes it when it takes the key, and notes the
 * reason of its own requeues.
 */
export class EnqueueReasons<T> {
  readonly #reasons = new Map<T, string>();
  // Kept apart, so that noting a reason alone (nobody reads triggers) allocates nothing.
  readonly #triggers = new Map<T, Delivery>();

  /** Why `key` was queued, and the informer delivery that queued it (when a handler did). */
  note(key: T, reason: string, trigger?: Delivery): void {
    this.#reasons.set(key, reason);
    if (trigger !== undefined) this.#triggers.set(key, trigger);
    else if (this.#triggers.size > 0) this.#triggers.delete(key);
  }

  /** The reason noted for `key`, forgotten as it is read. */
  take(key: T): string | undefined {
    const reason = this.#reasons.get(key);
    if (reason !== undefined) this.#reasons.delete(key);
    return reason;
  }

  /** The delivery noted for `key`, forgotten as it is read. */
  takeTrigger(key: T): Delivery | undefined {
    if (this.#triggers.size === 0) return undefined;
    const trigger = this.#triggers.get(key);
    if (trigger !== undefined) this.#triggers.delete(key);
    return trigger;
  }
}

export interface RunWorkersOptions<T> {
  /** The queue to drain. It is shut down when `signal` aborts. Required. */
  queue: WorkerQueue<T>;
  /**
   * Reconciles one key. Resolving with `{ requeueAfterMs }` adds the key
   * again after that delay (its backoff reset); rejecting requeues it through
   * the rate limiter, except with a {@link TerminalError}, which is logged,
   * counted and not retried. Required.
   */
  sync: (key: T, context: SyncContext) => Promise<SyncResult>;
  /** Stops the workers. Required. */
  signal: AbortSignal;
  /** How many syncs may run at once (the queue never hands one key to two workers). Default 1. */
  workers?: number | undefined;
  /**
   * After this many requeues of a failing key it is dropped (forgotten and
   * logged) until something adds it again. Default: retry forever, as the ReplicaSet controller does.
   */
  maxRetries?: number | undefined;
  /** Where syncs and their failures are logged. Default: no logging. */
  logger?: Logger | undefined;
  /** The `controller` value in log records and metrics. Default "controller". */
  name?: string | undefined;
  /** Counts syncs by outcome and times them. Default: no metrics. */
  metrics?: SyncMetrics | undefined;
  /** Times syncs for `metrics`. Default `realClock`. */
  clock?: Clock | undefined;
  /** Where reconcile IDs draw from. Default: `crypto.randomUUID`. */
  random?: Random | undefined;
  /** Told of every finished sync. Default: nobody. */
  observer?: ReconcileObserver | undefined;
  /** Where the reasons of enqueues are kept; a sync's context and log lines get its key's. Default: no reasons. */
  reasons?: EnqueueReasons<T> | undefined;
}

/**
 * Runs `workers` concurrent loops of client-go's `processNextWorkItem`: take
 * a key, sync it, `forget` it on success (and `addAfter` it when the sync
 * asked for `requeueAfterMs`) or `addRateLimited` it on failure (dropping it
 * after `maxRetries`, or at once for a {@link TerminalError}), and always
 * mark it `done`. When `signal`
 * aborts, the queue is shut down, workers finish the sync they are in and
 * take no new key; the promise resolves once every worker has returned. If a
 * worker fails (only a throwing logger can make it), the queue is shut down
 * the same way and the promise rejects with that error once all have returned.
 */
export async function runWorkers<T>(options: RunWorkersOptions<T>): Promise<void> {
  const workers = options.workers ?? 1;
  if (!Number.isInteger(workers) || workers < 1) {
    throw new RangeError(`runWorkers: workers must be a positive integer, got ${workers}`);
  }
  const maxRetries = options.maxRetries;
  if (maxRetries !== undefined && (!Number.isInteger(maxRetries) || maxRetries < 0)) {
    throw new RangeError(`runWorkers: maxRetries must be a non-negative integer, got ${maxRetries}`);
  }
  const { queue, signal } = options;
  const logger = (options.logger ?? noopLogger).child({ controller: options.name ?? "controller" });
  const stop = () => queue.shutDown();
  if (signal.aborted) {
    stop();
    return;
  }
  signal.addEventListener("abort", stop, { once: true });
  try {
    const loops: Promise<void>[] = [];
    for (let i = 0; i < workers; i++) {
      // A worker that fails stops the others, and the promise settles only once all have returned.
      loops.push(
        worker(options, logger, maxRetries).catch((error: unknown) => {
          stop();
          throw error;
        }),
      );
    }
    const outcomes = await Promise.allSettled(loops);
    const failed = outcomes.find((outcome) => outcome.status === "rejected");
    if (failed !== undefined) throw failed.reason;
  } finally {
    signal.removeEventListener("abort", stop);
  }
}

async function worker<T>(options: RunWorkersOptions<T>, logger: Logger, maxRetries: number | undefined) {
  const { queue, signal, sync, reasons } = options;
  const clock = options.clock ?? realClock;
  const metrics = options.metrics ?? noopSyncMetrics;
  const name = options.name ?? "controller";
  for (;;) {
    const next = await queue.get();
    if (next.shutdown) return;
    // Let pending I/O and informer deliveries run first (goroutines are
    // preempted; async loops are not): a sync then sees a fresher cache and a
    // burst of events for one key costs one sync, not one per event.
    await new Promise<void>((resolve) => setImmediate(resolve));
    const key = next.item;
    if (signal.aborted) {
      // Stopping: leave the key unprocessed, but release it.
      queue.done(key);
      return;
    }
    const reconcileID = uuidFrom(options.random);
    const reason = reasons?.take(key);
    const trigger = reasons?.takeTrigger(key);
    // namespaceAndName answers a new object; members are added to it rather than to a spread's copy.
    const fields: Record<string, unknown> = namespaceAndName(key);
    fields.reconcileID = reconcileID;
    if (reason !== undefined) fields.reason = reason;
    const syncLogger = logger.child(fields);
    const startedAt = clock.now();
    let outcome: SyncOutcome;
    let failure: unknown;
    let requeueAfterMs: number | undefined;
    try {
      const result = await sync(key, { logger: syncLogger, reconcileID, signal, reason });
      queue.forget(key);
      requeueAfterMs = result?.requeueAfterMs;
      if (requeueAfterMs !== undefined && requeueAfterMs > 0) {
        reasons?.note(key, "requeue requested");
        queue.addAfter(key, requeueAfterMs);
        outcome = "requeue_after";
      } else {
        outcome = "success";
      }
    } catch (error) {
      // Requeue before logging: a logger that throws must neither lose the key nor end the worker.
      failure = error;
      const terminal = TerminalError.isTerminal(error);
      const retry = !terminal && (maxRetries === undefined || queue.numRequeues(key) < maxRetries);
      if (retry) {
        reasons?.note(key, "retry after error");
        queue.addRateLimited(key);
      } else queue.forget(key);
      outcome = terminal ? "terminal_error" : "error";
      try {
        if (terminal) syncLogger.error({ err: error }, "Reconciler error (terminal, not retried)");
        else if (retry) syncLogger.error({ err: error }, "Reconciler error");
        else {
          syncLogger.error(
            { err: error, retries: maxRetries },
            "Dropping key out of the queue after too many retries",
          );
        }
      } catch {
        // Nowhere left to report it.
      }
    } finally {
      queue.done(key);
    }
    const endedAt = clock.now();
    try {
      metrics.observeSync(name, outcome, (endedAt - startedAt) / 1000);
      options.observer?.({
        controller: name,
        key,
        reason,
        ...(trigger === undefined ? {} : { trigger }),
        reconcileID,
        outcome,
        error: failure,
        requeueAfterMs: outcome === "requeue_after" ? requeueAfterMs : undefined,
        startedAt,
        endedAt,
      });
    } catch {
      // A failing metrics sink or observer must not end the worker.
    }
  }
}

function namespaceAndName(key: unknown): { namespace?: string; name: string } {
  if (typeof key !== "string") return { name: String(key) };
  try {
    const { namespace, name } = splitMetaNamespaceKey(key);
    return namespace ? { namespace, name } : { name };
  } catch {
    return { name: key };
  }
}
