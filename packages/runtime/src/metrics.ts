import type { SyncMetrics } from "@reconcile/controller";
import { Counter, Gauge, Histogram, type Registry } from "prom-client";

/** controller-runtime's reconcile-time buckets (seconds). */
const reconcileBuckets = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5,
  1.75, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];

/** The reconcile metric families of controller-runtime, registered on one prom-client registry. */
export interface ReconcileMetrics {
  /** The harness's seam, feeding the counters and the histogram. */
  readonly syncMetrics: SyncMetrics;
  readonly activeWorkers: Gauge<"controller">;
  readonly maxConcurrentReconciles: Gauge<"controller">;
}

/**
 * `controller_runtime_reconcile_total{controller,result}` (result `success`,
 * `requeue_after` or `error`; a terminal error counts as `error`),
 * `controller_runtime_reconcile_errors_total{controller}`,
 * `controller_runtime_terminal_reconcile_errors_total{controller}`,
 * `controller_runtime_reconcile_time_seconds{controller}`,
 * `controller_runtime_active_workers{controller}` and
 * `controller_runtime_max_concurrent_reconciles{controller}`.
 */
export function prometheusReconcileMetrics(registry: Registry): ReconcileMetrics {
  const registers = [registry];
  const total = new Counter({
    name: "controller_runtime_reconcile_total",
    help: "Total number of reconciliations per controller",
    labelNames: ["controller", "result"] as const,
    registers,
  });
  const errors = new Counter({
    name: "controller_runtime_reconcile_errors_total",
    help: "Total number of reconciliation errors per controller",
    labelNames: ["controller"] as const,
    registers,
  });
  const terminal = new Counter({
    name: "controller_runtime_terminal_reconcile_errors_total",
    help: "Total number of terminal reconciliation errors per controller",
    labelNames: ["controller"] as const,
    registers,
  });
  const time = new Histogram({
    name: "controller_runtime_reconcile_time_seconds",
    help: "Length of time per reconciliation per controller",
    labelNames: ["controller"] as const,
    buckets: reconcileBuckets,
    registers,
  });
  const activeWorkers = new Gauge({
    name: "controller_runtime_active_workers",
    help: "Number of currently used workers per controller",
    labelNames: ["controller"] as const,
    registers,
  });
  const maxConcurrentReconciles = new Gauge({
    name: "controller_runtime_max_concurrent_reconciles",
    help: "Maximum number of concurrent reconciles per controller",
    labelNames: ["controller"] as const,
    registers,
  });
  // Label children are looked up once per controller: a lookup per reconcile costs more than the observation.
  const children = new Map<
    string,
    { time: { observe(v: number): void }; success: { inc(): void }; requeue: { inc(): void } }
  >();
  const childrenOf = (controller: string) => {
    let found = children.get(controller);
    if (found === undefined) {
      found = {
        time: time.labels(controller),
        success: total.labels(controller, "success"),
        requeue: total.labels(controller, "requeue_after"),
      };
      children.set(controller, found);
    }
    return found;
  };
  return {
    activeWorkers,
    maxConcurrentReconciles,
    syncMetrics: {
      observeSync(controller, outcome, seconds) {
        const child = childrenOf(controller);
        child.time.observe(seconds);
        if (outcome === "success") return child.success.inc();
        if (outcome === "requeue_after") return child.requeue.inc();
        total.labels(controller, "error").inc();
        errors.labels(controller).inc();
        if (outcome === "terminal_error") terminal.labels(controller).inc();
      },
    },
  };
}
