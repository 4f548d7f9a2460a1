import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import {
  prometheusApiServerMetrics,
  prometheusKubeletMetrics,
  prometheusRestClientMetrics,
  prometheusSchedulerMetrics,
  prometheusWorkqueueMetrics,
} from "./prometheus.js";

describe("prometheus adapters", () => {
  it("workqueue metrics carry client-go's names with the queue's name label", async () => {
    const registry = new Registry();
    const provider = prometheusWorkqueueMetrics(registry);
    provider.newAddsMetric("deployment").inc();
    provider.newDepthMetric("deployment").inc();
    provider.newLatencyMetric("deployment").observe(0.002);
    provider.newRetriesMetric("deployment").inc();
    const text = await registry.metrics();
    expect(text).toContain('workqueue_adds_total{name="deployment"} 1');
    expect(text).toContain('workqueue_depth{name="deployment"} 1');
    expect(text).toContain('workqueue_retries_total{name="deployment"} 1');
    expect(text).toContain('workqueue_queue_duration_seconds_bucket{le="0.01",name="deployment"} 1');
    expect(text).toContain('workqueue_queue_duration_seconds_bucket{le="0.001",name="deployment"} 0');
  });

  it("scheduler metrics carry kube-scheduler's names, labels and buckets", async () => {
    const registry = new Registry();
    const metrics = prometheusSchedulerMetrics(registry);
    metrics.scheduleAttempt("scheduled", "default-scheduler", 0.003);
    metrics.scheduleAttempt("unschedulable", "default-scheduler", 0.001);
    metrics.podScheduled(2, 0.05);
    const text = await registry.metrics();
    expect(text).toContain(
      'scheduler_schedule_attempts_total{result="scheduled",profile="default-scheduler"} 1',
    );
    expect(text).toContain(
      'scheduler_schedule_attempts_total{result="unschedulable",profile="default-scheduler"} 1',
    );
    expect(text).toContain(
      'scheduler_scheduling_attempt_duration_seconds_bucket{le="0.004",result="scheduled",profile="default-scheduler"} 1',
    );
    expect(text).toContain('scheduler_pod_scheduling_sli_duration_seconds_bucket{le="0.08",attempts="2"} 1');
    expect(text).toContain('scheduler_pod_scheduling_sli_duration_seconds_bucket{le="0.04",attempts="2"} 0');
    expect(text).toContain('scheduler_pod_scheduling_attempts_bucket{le="2"} 1');
  });

  it("API server metrics carry kube-apiserver's names, labels and buckets", async () => {
    const registry = new Registry();
    const metrics = prometheusApiServerMetrics(registry);
    const labels = {
      verb: "LIST",
      dry_run: "",
      group: "apps",
      version: "v1",
      resource: "deployments",
      subresource: "",
      scope: "namespace",
      component: "apiserver",
      code: "200",
    };
    metrics.request(labels, 0.03);
    metrics.request({ ...labels, code: "404" }, 0.001);
    metrics.storageObjects("pods", 7);
    metrics.flowControlDispatched("workload-low", "service-accounts");
    metrics.flowControlRejected("global-default", "global-default", "queue-full");
    metrics.flowControlSeats("global-default", 49);
    metrics.flowControlLimits("workload-low", {
      nominal: 245,
      lower: 24,
      upper: 845,
      current: 56,
      target: 24,
      demandHighWatermark: 3,
      demandAverage: 1.5,
      demandStdev: 0.5,
      demandSmoothed: 2,
    });
    metrics.flowControlFairFrac(602 / 258);
    metrics.flowControlRequests("workload-low", "service-accounts", 3, 2);
    metrics.flowControlWait("workload-low", "service-accounts", true, 0.03);
    metrics.flowControlExecution("workload-low", "service-accounts", false, 0.004);
    metrics.flowControlExecution("workload-low", "service-accounts", true, 0);
    metrics.flowControlQueueLength("workload-low", "service-accounts", 12);
    const { contentType, body } = await metrics.expose();
    expect(body).toContain('apiserver_flowcontrol_current_limit_seats{priority_level="global-default"} 49');
    for (const line of [
      'apiserver_flowcontrol_nominal_limit_seats{priority_level="workload-low"} 245',
      'apiserver_flowcontrol_lower_limit_seats{priority_level="workload-low"} 24',
      'apiserver_flowcontrol_upper_limit_seats{priority_level="workload-low"} 845',
      'apiserver_flowcontrol_current_limit_seats{priority_level="workload-low"} 56',
      'apiserver_flowcontrol_target_seats{priority_level="workload-low"} 24',
      'apiserver_flowcontrol_demand_seats_high_watermark{priority_level="workload-low"} 3',
      'apiserver_flowcontrol_demand_seats_average{priority_level="workload-low"} 1.5',
      'apiserver_flowcontrol_demand_seats_stdev{priority_level="workload-low"} 0.5',
      'apiserver_flowcontrol_demand_seats_smoothed{priority_level="workload-low"} 2',
      "apiserver_flowcontrol_seat_fair_frac 2.3333333333333335",
    ])
      expect(body.split("\n")).toContain(line);
    expect(body).toContain(
      'apiserver_flowcontrol_current_executing_requests{priority_level="workload-low",flow_schema="service-accounts"} 3',
    );
    expect(body).toContain(
      'apiserver_flowcontrol_current_inqueue_requests{priority_level="workload-low",flow_schema="service-accounts"} 2',
    );
    expect(body).toContain(
      'apiserver_flowcontrol_request_wait_duration_seconds_bucket{le="0.05",priority_level="workload-low",flow_schema="service-accounts",execute="true"} 1',
    );
    expect(body).toContain(
      'apiserver_flowcontrol_request_wait_duration_seconds_bucket{le="0.02",priority_level="workload-low",flow_schema="service-accounts",execute="true"} 0',
    );
    expect(body).toContain(
      'apiserver_flowcontrol_dispatched_requests_total{priority_level="workload-low",flow_schema="service-accounts"} 1',
    );
    expect(body).toContain(
      'apiserver_flowcontrol_rejected_requests_total{priority_level="global-default",flow_schema="global-default",reason="queue-full"} 1',
    );
    expect(body).toContain('apiserver_flowcontrol_nominal_limit_seats{priority_level="global-default"} 49');
    expect(body).toContain(
      'apiserver_flowcontrol_request_execution_seconds_bucket{le="0.005",priority_level="workload-low",flow_schema="service-accounts",type="regular"} 1',
    );
    expect(body).toContain(
      'apiserver_flowcontrol_request_execution_seconds_bucket{le="0",priority_level="workload-low",flow_schema="service-accounts",type="watch"} 1',
    );
    expect(body).toContain(
      'apiserver_flowcontrol_request_queue_length_after_enqueue_bucket{le="10",priority_level="workload-low",flow_schema="service-accounts"} 0',
    );
    expect(body).toContain(
      'apiserver_flowcontrol_request_queue_length_after_enqueue_bucket{le="25",priority_level="workload-low",flow_schema="service-accounts"} 1',
    );
    expect(body).toContain(
      'apiserver_flowcontrol_current_executing_seats{priority_level="workload-low",flow_schema="service-accounts"} 3',
    );
    expect(body).toContain(
      'apiserver_flowcontrol_current_inqueue_seats{priority_level="workload-low",flow_schema="service-accounts"} 2',
    );
    expect(contentType).toBe(registry.contentType);
    expect(body).toContain(
      'apiserver_request_total{verb="LIST",dry_run="",group="apps",version="v1",resource="deployments",subresource="",scope="namespace",component="apiserver",code="200"} 1',
    );
    expect(body).toContain('code="404"} 1');
    expect(body).toContain(
      'apiserver_request_duration_seconds_bucket{le="0.005",verb="LIST",dry_run="",group="apps",version="v1",resource="deployments",subresource="",scope="namespace",component="apiserver"} 1',
    );
    expect(body).toContain(
      'apiserver_request_duration_seconds_bucket{le="0.05",verb="LIST",dry_run="",group="apps",version="v1",resource="deployments",subresource="",scope="namespace",component="apiserver"} 2',
    );
    expect(body).toContain('apiserver_storage_objects{resource="pods"} 7');
  });

  it("counts APIServices' falls from Available under kube-aggregator's names, from the counts reported", async () => {
    const metrics = prometheusApiServerMetrics(new Registry());
    metrics.apiServiceUnavailable("v1.apps", false);
    metrics.apiServiceUnavailable("v1beta1.metrics.k8s.io", true);
    metrics.apiServiceUnavailableCount("v1beta1.metrics.k8s.io", "MissingEndpoints", 2);
    // Each scrape reports the count so far: only what is new is added.
    metrics.apiServiceUnavailableCount("v1beta1.metrics.k8s.io", "MissingEndpoints", 3);
    metrics.apiServiceUnavailableCount("v1beta1.metrics.k8s.io", "MissingEndpoints", 3);
    const { body } = await metrics.expose();
    expect(body).toContain('aggregator_unavailable_apiservice{name="v1.apps"} 0');
    expect(body).toContain('aggregator_unavailable_apiservice{name="v1beta1.metrics.k8s.io"} 1');
    expect(body).toContain(
      'aggregator_unavailable_apiservice_total{name="v1beta1.metrics.k8s.io",reason="MissingEndpoints"} 3',
    );
  });

  it("an API server's admission chain is timed under kube-apiserver's stable admission names", async () => {
    const { ApiServer } = await import("@reconcile/apiserver");
    const { configMaps } = await import("@reconcile/api");
    const server = new ApiServer();
    const metrics = prometheusApiServerMetrics(new Registry());
    const listening = await server.listen({ metrics });
    try {
      await server
        .client()
        .resource(configMaps, "default")
        .create({ metadata: { name: "good" } });
      const refused = server
        .client()
        .resource(configMaps, "missing")
        .create({ metadata: { name: "lost" } });
      await expect(refused).rejects.toThrow('namespaces "missing" not found');
      const { body } = await metrics.expose();
      const count = (labels: string) =>
        body.match(new RegExp(`^${labels.replace(/[{}]/g, "\\$&")} (\\d+)$`, "m"))?.[1];
      const controller = "apiserver_admission_controller_admission_duration_seconds_count";
      const step = "apiserver_admission_step_admission_duration_seconds_count";
      expect(
        count(`${controller}{name="NamespaceLifecycle",type="admit",operation="CREATE",rejected="false"}`),
      ).toBe("1");
      expect(
        count(`${controller}{name="NamespaceLifecycle",type="admit",operation="CREATE",rejected="true"}`),
      ).toBe("1");
      expect(
        count(`${controller}{name="ResourceQuota",type="validate",operation="CREATE",rejected="false"}`),
      ).toBe("1");
      expect(count(`${step}{type="admit",operation="CREATE",rejected="false"}`)).toBe("1");
      expect(count(`${step}{type="admit",operation="CREATE",rejected="true"}`)).toBe("1");
      // The refused write never reached its validating phase.
      expect(count(`${step}{type="validate",operation="CREATE",rejected="false"}`)).toBe("1");
      expect(body).not.toContain(`${step}{type="validate",operation="CREATE",rejected="true"}`);
      expect(body).toContain("# TYPE apiserver_admission_controller_admission_duration_seconds histogram");
      expect(body).toContain(
        'apiserver_admission_step_admission_duration_seconds_bucket{le="0.005",type="admit",operation="CREATE",rejected="false"}',
      );
    } finally {
      await listening.close();
      await server.close();
    }
  });

  it("an API server's webhook calls are counted under kube-apiserver's admission webhook names", async () => {
    const { ApiServer } = await import("@reconcile/apiserver");
    const { configMaps, validatingWebhookConfigurations } = await import("@reconcile/api");
    const server = new ApiServer();
    const metrics = prometheusApiServerMetrics(new Registry());
    const listening = await server.listen({ metrics });
    try {
      server.admissionWebhooks.serve("https://hooks.local/", (review) => {
        const request = review.request as { uid: string; name: string };
        const allowed = request.name !== "bad";
        return {
          apiVersion: "admission.k8s.io/v1",
          kind: "AdmissionReview",
          response: {
            uid: request.uid,
            allowed,
            ...(allowed ? {} : { status: { code: 403, message: "no" } }),
          },
        };
      });
      await server
        .client()
        .resource(validatingWebhookConfigurations)
        .create({
          metadata: { name: "hooks" },
          webhooks: [
            {
              name: "hooks.example.com",
              clientConfig: { url: "https://hooks.local/" },
              rules: [
                { operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["configmaps"] },
              ],
              sideEffects: "None",
              admissionReviewVersions: ["v1"],
            },
          ],
        } as never);
      const configs = server.client().resource(configMaps, "default");
      await configs.create({ metadata: { name: "good" } });
      await configs.create({ metadata: { name: "bad" } }).catch(() => {});
      const { body } = await metrics.expose();
      expect(body).toContain(
        'apiserver_admission_webhook_admission_duration_seconds_count{name="hooks.example.com",operation="CREATE",rejected="false",type="validating"} 1',
      );
      expect(body).toContain(
        'apiserver_admission_webhook_admission_duration_seconds_count{name="hooks.example.com",operation="CREATE",rejected="true",type="validating"} 1',
      );
      expect(body).toContain(
        'apiserver_admission_webhook_rejection_count{name="hooks.example.com",type="validating",operation="CREATE",error_type="no_error",rejection_code="403"} 1',
      );
    } finally {
      await listening.close();
      await server.close();
    }
  });

  it("REST client metrics carry client-go's names and labels", async () => {
    const registry = new Registry();
    const metrics = prometheusRestClientMetrics(registry);
    metrics.requestResult("200", "GET", "127.0.0.1:6443");
    metrics.requestResult("<error>", "POST", "127.0.0.1:6443");
    metrics.requestLatency("GET", "127.0.0.1:6443", 0.02);
    const body = await registry.metrics();
    expect(body).toContain('rest_client_requests_total{code="200",method="GET",host="127.0.0.1:6443"} 1');
    expect(body).toContain(
      'rest_client_requests_total{code="<error>",method="POST",host="127.0.0.1:6443"} 1',
    );
    expect(body).toContain(
      'rest_client_request_duration_seconds_bucket{le="0.025",verb="GET",host="127.0.0.1:6443"} 1',
    );
    expect(body).toContain(
      'rest_client_request_duration_seconds_bucket{le="0.005",verb="GET",host="127.0.0.1:6443"} 0',
    );
  });

  it("kubelet metrics carry the kubelet's names, labels and buckets", async () => {
    const registry = new Registry();
    const metrics = prometheusKubeletMetrics(registry);
    metrics.observePodWorkerDuration("create", 0.02);
    metrics.observePodStartSLIDuration(1.5);
    const body = await registry.metrics();
    expect(body).toContain(
      'kubelet_pod_worker_duration_seconds_bucket{le="0.025",operation_type="create"} 1',
    );
    expect(body).toContain('kubelet_pod_worker_duration_seconds_bucket{le="0.01",operation_type="create"} 0');
    expect(body).toContain('kubelet_pod_start_sli_duration_seconds_bucket{le="1"} 0');
    expect(body).toContain('kubelet_pod_start_sli_duration_seconds_bucket{le="2"} 1');
  });
});
