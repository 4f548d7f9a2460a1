import type { JobMetrics } from "@reconcile/job";
import { Counter, Histogram, type Registry } from "prom-client";

/**
 * The Job controller's families on prom-client, with kube-controller-manager's
 * names (subsystem `job_controller`): `job_sync_duration_seconds` (4 ms × 2^k,
 * 15 buckets) and `job_syncs_total` by `completion_mode`, `result`, `action`;
 * `jobs_finished_total` by `completion_mode`, `result`, `reason`;
 * `job_pods_finished_total` by `completion_mode`, `result`;
 * `job_pods_creation_total` by `reason`, `status`;
 * `terminated_pods_tracking_finalizer_total` by `event`. Registered once per
 * registry; a controller built again (a new leader term) reuses them.
 */
export function prometheusJobMetrics(registry: Registry): JobMetrics {
  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
    (registry.getSingleMetric(name) as Counter<L> | undefined) ??
    new Counter({ name, help, labelNames, registers: [registry] });
  const syncDuration =
    (registry.getSingleMetric("job_controller_job_sync_duration_seconds") as
      | Histogram<"completion_mode" | "result" | "action">
      | undefined) ??
    new Histogram({
      name: "job_controller_job_sync_duration_seconds",
      help: "The time it took to sync a job",
      labelNames: ["completion_mode", "result", "action"] as const,
      buckets: Array.from({ length: 15 }, (_, k) => 0.004 * 2 ** k),
      registers: [registry],
    });
  const syncs = counter("job_controller_job_syncs_total", "The number of job syncs", [
    "completion_mode",
    "result",
    "action",
  ]);
  const finished = counter("job_controller_jobs_finished_total", "The number of finished jobs", [
    "completion_mode",
    "result",
    "reason",
  ]);
  const podsFinished = counter(
    "job_controller_job_pods_finished_total",
    "The number of finished Pods that are fully tracked",
    ["completion_mode", "result"],
  );
  const podsCreated = counter(
    "job_controller_job_pods_creation_total",
    "The number of Pods created by the Job controller labelled with a reason for the Pod creation.",
    ["reason", "status"],
  );
  const finalizers = counter(
    "job_controller_terminated_pods_tracking_finalizer_total",
    'The number of terminated pods (phase=Failed|Succeeded) that have the finalizer batch.kubernetes.io/job-tracking. The event label can be "add" or "delete".',
    ["event"],
  );
  return {
    jobSync(mode, result, action, seconds) {
      syncDuration.labels(mode, result, action).observe(seconds);
      syncs.labels(mode, result, action).inc();
    },
    jobFinished(mode, result, reason) {
      finished.labels(mode, result, reason).inc();
    },
    podsFinished(mode, result, count) {
      podsFinished.labels(mode, result).inc(count);
    },
    podsCreated(reason, status, count) {
      podsCreated.labels(reason, status).inc(count);
    },
    trackingFinalizer(event, count) {
      finalizers.labels(event).inc(count);
    },
  };
}
