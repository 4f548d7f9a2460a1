import type { Clock } from "@reconcile/clock";
import type { RateLimitingInterface } from "@reconcile/workqueue";
import type { SyncedInformer } from "./cache-sync.js";
import { ControllerHarness } from "./define-controller.js";
import type { Logger } from "./logger.js";
import type { SyncContext, WorkerQueue } from "./run-workers.js";
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
  const harness = new ControllerHarness<T>({
    name: options.name,
    context: {
      clock: options.clock,
      logger: options.logger,
      syncMetrics: options.metrics,
      cacheSyncTimeoutMs: options.cacheSyncTimeoutMs,
      cacheSyncPollMs: options.cacheSyncPollMs,
    },
    informers: options.informers,
    queues: [
      {
        name: options.name,
        // The harness only drains and shuts down a queue given to it; enqueue is never called here.
        queue: options.queue as RateLimitingInterface<T>,
        sync: options.sync,
        maxRetries: options.maxRetries,
      },
    ],
    onStop: options.onStop,
  });
  await harness.run({ signal: options.signal, workers: options.workers ?? 1 });
}
