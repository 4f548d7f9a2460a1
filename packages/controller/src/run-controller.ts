import { type Clock, realClock } from "@reconcile/clock";
import { type SyncedInformer, waitForInformersSynced } from "./cache-sync.js";
import { type Logger, noopLogger } from "./logger.js";
import { runWorkers, type SyncContext, type WorkerQueue } from "./run-workers.js";
import type { SyncMetrics, SyncResult } from "./sync-result.js";

export interface RunControllerOptions<T> {
  /** The controller's name: the `controller` value in logs and metrics. Required. */
  name: string;
  /** Stops the controller. Required. */
  signal: AbortSignal;
  /** The informers whose caches must have synced before the first sync, by name. Required. */
  informers: Readonly<Record<string, SyncedInformer>>;
  /** The work queue; it is shut down when the controller stops. Required. */
  queue: WorkerQueue<T>;
  /** Reconciles one key; see `runWorkers` for results, errors and terminal errors. Required. */
  sync: (key: T, context: SyncContext) => Promise<SyncResult>;
  /** Concurrent workers. Default 1. */
  workers?: number | undefined;
  /** Give up waiting for the caches after this long: `run` rejects with a `CacheSyncTimeoutError`. 0 waits for ever, as kube-controller-manager does. Default 0. */
  cacheSyncTimeoutMs?: number | undefined;
  /** How often an informer without `whenSynced` (a test fake) is polled. Default 100 ms. */
  cacheSyncPollMs?: number | undefined;
  /** Requeues of a failing key before it is dropped. Default: retry for ever. */
  maxRetries?: number | undefined;
  /** Time for the cache-sync timeout and sync durations. Default `realClock`. */
  clock?: Clock | undefined;
  /** Default: no logging. */
  logger?: Logger | undefined;
  /** Default: no metrics. */
  metrics?: SyncMetrics | undefined;
  /** Awaited after the workers have stopped, before `run` settles (flush pending Events, …). */
  onStop?: (() => unknown) | undefined;
}

/**
 * The lifecycle every controller shares (a controller's `Run` in
 * kube-controller-manager, controller-runtime's `Controller.Start`): wait for
 * the informers' caches, run the workers until `signal` aborts, then wait for
 * the running syncs and `onStop`. Settles only after a full stop. Aborted
 * before the caches sync, it shuts the queue down and resolves without a
 * sync; a cache-sync timeout rejects, after the same shutdown.
 */
export async function runController<T>(options: RunControllerOptions<T>): Promise<void> {
  const { name, signal, queue } = options;
  const workers = options.workers ?? 1;
  if (!Number.isInteger(workers) || workers < 1) {
    throw new RangeError(`${name}: workers must be a positive integer, got ${workers}`);
  }
  const clock = options.clock ?? realClock;
  const baseLogger = options.logger ?? noopLogger;
  const logger = baseLogger.child({ controller: name });
  logger.info({ workers }, "Starting controller");
  try {
    let synced: boolean;
    try {
      synced = await waitForInformersSynced({
        informers: options.informers,
        signal,
        timeoutMs: options.cacheSyncTimeoutMs,
        pollIntervalMs: options.cacheSyncPollMs,
        clock,
      });
    } catch (error) {
      queue.shutDown();
      throw error;
    }
    if (!synced) {
      queue.shutDown();
      return;
    }
    logger.info({}, "Caches are synced");
    await runWorkers({
      queue,
      workers,
      signal,
      logger: baseLogger,
      name,
      sync: options.sync,
      maxRetries: options.maxRetries,
      metrics: options.metrics,
      clock,
    });
  } finally {
    await options.onStop?.();
    logger.info({}, "Shutting down controller");
  }
}
