import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { prometheusJobMetrics } from "./job-metrics.js";

describe("prometheusJobMetrics", () => {
  it("writes kube-controller-manager's job_controller families, once per registry", async () => {
    const registry = new Registry();
    const metrics = prometheusJobMetrics(registry);
    metrics.jobSync("Indexed", "success", "pods_created", 0.01);
    metrics.jobFinished("NonIndexed", "failed", "BackoffLimitExceeded");
    metrics.podsFinished("NonIndexed", "succeeded", 3);
    metrics.podsCreated("recreate_terminating_or_failed", "succeeded", 2);
    metrics.trackingFinalizer("delete", 3);
    // A controller built again (a new leader term) adds to the same families.
    prometheusJobMetrics(registry).podsFinished("NonIndexed", "succeeded", 1);
    const text = await registry.metrics();
    expect(text).toContain(
      'job_controller_job_sync_duration_seconds_bucket{le="0.016",completion_mode="Indexed",result="success",action="pods_created"} 1',
    );
    expect(text).toContain(
      'job_controller_job_syncs_total{completion_mode="Indexed",result="success",action="pods_created"} 1',
    );
    expect(text).toContain(
      'job_controller_jobs_finished_total{completion_mode="NonIndexed",result="failed",reason="BackoffLimitExceeded"} 1',
    );
    expect(text).toContain(
      'job_controller_job_pods_finished_total{completion_mode="NonIndexed",result="succeeded"} 4',
    );
    expect(text).toContain(
      'job_controller_job_pods_creation_total{reason="recreate_terminating_or_failed",status="succeeded"} 2',
    );
    expect(text).toContain('job_controller_terminated_pods_tracking_finalizer_total{event="delete"} 3');
  });
});
