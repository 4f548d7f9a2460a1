import type { SyncMetrics } from "@reconcile/controller";
import type { LeaderMetricsProvider } from "@reconcile/leader-election";
import type { MetricsProvider } from "@reconcile/workqueue";
import { Counter, exponentialBuckets, Gauge, Histogram, Registry } from "prom-client";
import { type FlowControlMetrics, flowControlMetrics } from "./prometheus-flow-control.js";

/** client-go's workqueue histogram buckets: 10 buckets from 1 µs, ×10 each. */
const queueBuckets = Array.from({ length: 10 }, (_, i) => 10 ** (i - 6));

/**
 * The workqueue `MetricsProvider` on prom-client, with client-go's metric
 * names (`workqueue_depth`, `workqueue_adds_total`,
 * `workqueue_queue_duration_seconds`, `workqueue_work_duration_seconds`,
 * `workqueue_unfinished_work_seconds`,
 * `workqueue_longest_running_processor_seconds`, `workqueue_retries_total`),
 * each labelled with the queue's `name`. Registers the families in
 * `registry` once; call it once per registry.
 */
export function prometheusWorkqueueMetrics(registry: Registry): MetricsProvider {
  const registers = [registry];
  const labelNames = ["name"] as const;
  const depth = new Gauge({
    name: "workqueue_depth",
    help: "Current depth of workqueue",
    labelNames,
    registers,
  });
  const adds = new Counter({
    name: "workqueue_adds_total",
    help: "Total number of adds handled by workqueue",
    labelNames,
    registers,
  });
  const latency = new Histogram({
    name: "workqueue_queue_duration_seconds",
    help: "How long in seconds an item stays in workqueue before being requested.",
    labelNames,
    buckets: queueBuckets,
    registers,
  });
  const workDuration = new Histogram({
    name: "workqueue_work_duration_seconds",
    help: "How long in seconds processing an item from workqueue takes.",
    labelNames,
    buckets: queueBuckets,
    registers,
  });
  const unfinished = new Gauge({
    name: "workqueue_unfinished_work_seconds",
    help: "How many seconds of work has done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
    labelNames,
    registers,
  });
  const longest = new Gauge({
    name: "workqueue_longest_running_processor_seconds",
    help: "How many seconds has the longest running processor for workqueue been running.",
    labelNames,
    registers,
  });
  const retries = new Counter({
    name: "workqueue_retries_total",
    help: "Total number of retries handled by workqueue",
    labelNames,
    registers,
  });
  return {
    newDepthMetric: (name) => {
      const child = depth.labels(name);
      return { inc: () => child.inc(), dec: () => child.dec() };
    },
    newAddsMetric: (name) => {
      const child = adds.labels(name);
      return { inc: () => child.inc() };
    },
    newLatencyMetric: (name) => {
      const child = latency.labels(name);
      return { observe: (value) => child.observe(value) };
    },
    newWorkDurationMetric: (name) => {
      const child = workDuration.labels(name);
      return { observe: (value) => child.observe(value) };
    },
    newUnfinishedWorkSecondsMetric: (name) => {
      const child = unfinished.labels(name);
      return { set: (value) => child.set(value) };
    },
    newLongestRunningProcessorSecondsMetric: (name) => {
      const child = longest.labels(name);
      return { set: (value) => child.set(value) };
    },
    newRetriesMetric: (name) => {
      const child = retries.labels(name);
      return { inc: () => child.inc() };
    },
  };
}

/**
 * The leader-election `LeaderMetricsProvider` on prom-client:
 * `leader_election_master_status{name}` (1 while leading, else 0) and
 * `leader_election_slowpath_total{name}`.
 */
export function prometheusLeaderElectionMetrics(registry: Registry): LeaderMetricsProvider {
  const registers = [registry];
  const status = new Gauge({
    name: "leader_election_master_status",
    help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
    labelNames: ["name"] as const,
    registers,
  });
  const slowpath = new Counter({
    name: "leader_election_slowpath_total",
    help: "Total number of slow path exercised in renewing leader leases. 'name' is the string used to identify the lease. Please make sure to group by name.",
    labelNames: ["name"] as const,
    registers,
  });
  return {
    newLeaderMetric: () => ({
      on: (name) => status.labels(name).set(1),
      off: (name) => status.labels(name).set(0),
      slowpathExercised: (name) => slowpath.labels(name).inc(),
    }),
  };
}

/** `running_managed_controllers{name,manager}`: 1 while a controller runs. */
export function runningManagedControllersGauge(registry: Registry): Gauge<"name" | "manager"> {
  return new Gauge({
    name: "running_managed_controllers",
    help: "Indicates where instances of a controller are currently running",
    labelNames: ["name", "manager"] as const,
    registers: [registry],
  });
}

/** The scheduler's metrics seam (`SchedulerMetrics` of `@reconcile/scheduler`), by shape. */
export interface SchedulerMetricsSeam {
  scheduleAttempt(
    result: "scheduled" | "unschedulable" | "error",
    profile: string,
    durationSeconds: number,
  ): void;
  podScheduled(attempts: number, sliDurationSeconds: number): void;
}

/**
 * `@reconcile/scheduler`'s metrics on prom-client with kube-scheduler's
 * names, labels and buckets: `scheduler_schedule_attempts_total{result,profile}`,
 * `scheduler_scheduling_attempt_duration_seconds{result,profile}`,
 * `scheduler_pod_scheduling_sli_duration_seconds{attempts}` and
 * `scheduler_pod_scheduling_attempts`. For a process that runs a scheduler
 * next to this manager and serves one `/metrics`.
 */
export function prometheusSchedulerMetrics(registry: Registry): SchedulerMetricsSeam {
  const registers = [registry];
  const attempts = new Counter({
    name: "scheduler_schedule_attempts_total",
    help: "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be scheduled, while 'error' means an internal scheduler problem.",
    labelNames: ["result", "profile"] as const,
    registers,
  });
  const attemptDuration = new Histogram({
    name: "scheduler_scheduling_attempt_duration_seconds",
    help: "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
    labelNames: ["result", "profile"] as const,
    buckets: exponentialBuckets(0.001, 2, 15),
    registers,
  });
  const sli = new Histogram({
    name: "scheduler_pod_scheduling_sli_duration_seconds",
    help: "E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue and might involve multiple scheduling attempts.",
    labelNames: ["attempts"] as const,
    buckets: exponentialBuckets(0.01, 2, 20),
    registers,
  });
  const podAttempts = new Histogram({
    name: "scheduler_pod_scheduling_attempts",
    help: "Number of attempts to successfully schedule a pod.",
    buckets: exponentialBuckets(1, 2, 5),
    registers,
  });
  return {
    scheduleAttempt(result, profile, durationSeconds) {
      attempts.labels(result, profile).inc();
      attemptDuration.labels(result, profile).observe(durationSeconds);
    },
    podScheduled(count, sliDurationSeconds) {
      sli.labels(String(count)).observe(sliDurationSeconds);
      podAttempts.observe(count);
    },
  };
}

/** The API server's metrics seam (`ApiServerMetrics` of `@reconcile/apiserver`), by shape. */
export interface ApiServerMetricsSeam extends FlowControlMetrics {
  request(
    labels: {
      verb: string;
      dry_run: string;
      group: string;
      version: string;
      resource: string;
      subresource: string;
      scope: string;
      component: string;
      code: string;
    },
    durationSeconds: number,
  ): void;
  storageObjects(resource: string, count: number): void;
  expose(): Promise<{ contentType: string; body: string }>;
  admission(
    name: string,
    operation: string,
    rejected: boolean,
    type: "admit" | "validating",
    seconds: number,
  ): void;
  /** One admission plugin's phase of one write (`apiserver_admission_controller_admission_duration_seconds`). */
  admissionController(
    name: string,
    operation: string,
    rejected: boolean,
    type: "admit" | "validate",
    seconds: number,
  ): void;
  /** One whole admission phase of one write (`apiserver_admission_step_admission_duration_seconds`). */
  admissionStep(operation: string, rejected: boolean, type: "admit" | "validate", seconds: number): void;
  rejection(
    name: string,
    operation: string,
    type: "admit" | "validating",
    errorType: string,
    code: number,
  ): void;
  apiServiceUnavailable(name: string, unavailable: boolean): void;
  apiServiceUnavailableCount(name: string, reason: string, count: number): void;
}

/** kube-apiserver's `apiserver_request_duration_seconds` buckets. */
const apiServerRequestBuckets = [
  0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60,
];

/**
 * `@reconcile/apiserver`'s metrics on prom-client with kube-apiserver's names,
 * labels and buckets: `apiserver_request_total{verb,dry_run,group,version,resource,subresource,scope,component,code}`,
 * `apiserver_request_duration_seconds{verb,dry_run,group,version,resource,subresource,scope,component}`,
 * `apiserver_storage_objects{resource}`, the admission chain's
 * `apiserver_admission_controller_admission_duration_seconds{name,type,operation,rejected}` and
 * `apiserver_admission_step_admission_duration_seconds{type,operation,rejected}`, the
 * admission webhook metrics and API Priority and
 * Fairness' `apiserver_flowcontrol_dispatched_requests_total{priority_level,flow_schema}`,
 * `…_rejected_requests_total{priority_level,flow_schema,reason}` and
 * `…_nominal_limit_seats{priority_level}`; `expose()` serves the whole
 * `registry` (default: a new one of its own), so pass it as the API server's
 * `metrics` listen option.
 */
export function prometheusApiServerMetrics(registry: Registry = new Registry()): ApiServerMetricsSeam {
  const registers = [registry];
  const requestLabelNames = [
    "verb",
    "dry_run",
    "group",
    "version",
    "resource",
    "subresource",
    "scope",
    "component",
  ] as const;
  const total = new Counter({
    name: "apiserver_request_total",
    help: "Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.",
    labelNames: [...requestLabelNames, "code"] as const,
    registers,
  });
  const duration = new Histogram({
    name: "apiserver_request_duration_seconds",
    help: "Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.",
    labelNames: requestLabelNames,
    buckets: apiServerRequestBuckets,
    registers,
  });
  // kube-apiserver's admission webhook metrics (staging/src/k8s.io/apiserver/pkg/admission/metrics).
  const webhookDuration = new Histogram({
    name: "apiserver_admission_webhook_admission_duration_seconds",
    help: "Admission webhook latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).",
    labelNames: ["name", "operation", "rejected", "type"] as const,
    buckets: [0.005, 0.025, 0.1, 0.5, 1, 2.5, 10, 25],
    registers,
  });
  const webhookRejections = new Counter({
    name: "apiserver_admission_webhook_rejection_count",
    help: "Admission webhook rejection count, identified by name and broken out for each admission type (validating or admit) and operation. Additional labels specify an error type (calling_webhook_error or apiserver_internal_error if an error occurred; no_error otherwise) and optionally a non-zero rejection code if the webhook rejects the request with an HTTP status code (honored by the apiserver when the code is greater or equal to 400). Codes greater than 600 are truncated to 600, to keep the metrics cardinality bounded.",
    labelNames: ["name", "type", "operation", "error_type", "rejection_code"] as const,
    registers,
  });
  // The admission chain's plugins and phases (stable in kube-apiserver).
  const controllerDuration = new Histogram({
    name: "apiserver_admission_controller_admission_duration_seconds",
    help: "Admission controller latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).",
    labelNames: ["name", "type", "operation", "rejected"] as const,
    buckets: [0.005, 0.025, 0.1, 0.5, 1, 2.5],
    registers,
  });
  const stepDuration = new Histogram({
    name: "apiserver_admission_step_admission_duration_seconds",
    help: "Admission sub-step latency histogram in seconds, broken out for each operation and API resource and step type (validate or admit).",
    labelNames: ["type", "operation", "rejected"] as const,
    buckets: [0.005, 0.025, 0.1, 0.5, 1, 2.5],
    registers,
  });
  const objects = new Gauge({
    name: "apiserver_storage_objects",
    help: "Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.",
    labelNames: ["resource"] as const,
    registers,
  });
  return {
    ...flowControlMetrics(registers),
    ...aggregatorMetrics(registers),
    request(labels, durationSeconds) {
      total.inc(labels);
      const { code: _code, ...withoutCode } = labels;
      duration.observe(withoutCode, durationSeconds);
    },
    storageObjects(resource, count) {
      objects.set({ resource }, count);
    },
    async expose() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
    admission(name, operation, rejected, type, seconds) {
      webhookDuration.observe({ name, operation, rejected: String(rejected), type }, seconds);
    },
    admissionController(name, operation, rejected, type, seconds) {
      controllerDuration.observe({ name, type, operation, rejected: String(rejected) }, seconds);
    },
    admissionStep(operation, rejected, type, seconds) {
      stepDuration.observe({ type, operation, rejected: String(rejected) }, seconds);
    },
    rejection(name, operation, type, errorType, code) {
      const rejection_code = String(Math.min(code, 600));
      webhookRejections.inc({ name, type, operation, error_type: errorType, rejection_code });
    },
  };
}

/** client-go's `rest_client_request_duration_seconds` buckets. */
const restClientBuckets = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];

/**
 * HttpClient's `metrics` option (`RestClientMetrics` of `@reconcile/client`)
 * on prom-client with client-go's names: `rest_client_requests_total{code,method,host}`
 * and `rest_client_request_duration_seconds{verb,host}`.
 */
export function prometheusRestClientMetrics(registry: Registry): {
  requestResult(code: string, method: string, host: string): void;
  requestLatency(verb: string, host: string, seconds: number): void;
} {
  const registers = [registry];
  const requests = new Counter({
    name: "rest_client_requests_total",
    help: "Number of HTTP requests, partitioned by status code, method, and host.",
    labelNames: ["code", "method", "host"] as const,
    registers,
  });
  const latency = new Histogram({
    name: "rest_client_request_duration_seconds",
    help: "Request latency in seconds. Broken down by verb, and host.",
    labelNames: ["verb", "host"] as const,
    buckets: restClientBuckets,
    registers,
  });
  return {
    requestResult(code, method, host) {
      requests.inc({ code, method, host });
    },
    requestLatency(verb, host, seconds) {
      latency.observe({ verb, host }, seconds);
    },
  };
}

/** The kubelet's metrics seam (`KubeletMetrics` of `@reconcile/kubelet`), by shape. */
export interface KubeletMetricsSeam {
  observePodWorkerDuration(operationType: string, seconds: number): void;
  observePodStartSLIDuration(seconds: number): void;
}

/**
 * `@reconcile/kubelet`'s metrics on prom-client with the kubelet's names and
 * buckets: `kubelet_pod_worker_duration_seconds{operation_type}` and
 * `kubelet_pod_start_sli_duration_seconds`. One adapter may serve every
 * simulated kubelet of a process (the series are then summed over them).
 */
export function prometheusKubeletMetrics(registry: Registry): KubeletMetricsSeam {
  const registers = [registry];
  const worker = new Histogram({
    name: "kubelet_pod_worker_duration_seconds",
    help: "Duration in seconds to sync a single pod. Broken down by operation type: create, update, or sync",
    labelNames: ["operation_type"] as const,
    // Prometheus' DefBuckets, as the kubelet's.
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers,
  });
  const start = new Histogram({
    name: "kubelet_pod_start_sli_duration_seconds",
    help: "Duration in seconds to start a pod, excluding time to pull images and run init containers, measured from pod creation timestamp to when all its containers are reported as started and observed via watch",
    buckets: [
      0.5, 1, 2, 3, 4, 5, 6, 8, 10, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700,
      3600,
    ],
    registers,
  });
  return {
    observePodWorkerDuration(operationType, seconds) {
      worker.observe({ operation_type: operationType }, seconds);
    },
    observePodStartSLIDuration(seconds) {
      start.observe(seconds);
    },
  };
}

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

type Registers = Registry[];

/** kube-aggregator's availability metrics (k8s.io/kube-aggregator's controllers/status/metrics). */
function aggregatorMetrics(
  registers: Registers,
): Pick<ApiServerMetricsSeam, "apiServiceUnavailable" | "apiServiceUnavailableCount"> {
  const unavailableGauge = new Gauge({
    name: "aggregator_unavailable_apiservice",
    help: "[STABLE] Gauge of APIServices which are marked as unavailable broken down by APIService name.",
    labelNames: ["name"] as const,
    registers,
  });
  const unavailableTotal = new Counter({
    name: "aggregator_unavailable_apiservice_total",
    help: "[STABLE] Counter of APIServices which are marked as unavailable broken down by APIService name and reason.",
    labelNames: ["name", "reason"] as const,
    registers,
  });
  // The aggregator reports counts so far; the counter takes what is new since the last report.
  const unavailableReported = new Map<string, number>();
  return {
    apiServiceUnavailable(name, unavailable) {
      unavailableGauge.set({ name }, unavailable ? 1 : 0);
    },
    apiServiceUnavailableCount(name, reason, count) {
      const key = `${name}\u0000${reason}`;
      const added = count - (unavailableReported.get(key) ?? 0);
      if (added > 0) unavailableTotal.inc({ name, reason }, added);
      unavailableReported.set(key, Math.max(count, unavailableReported.get(key) ?? 0));
    },
  };
}
