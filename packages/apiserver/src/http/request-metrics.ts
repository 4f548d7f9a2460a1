import type { AdmissionObserver } from "../admission/chain.js";
import type { WebhookObserver } from "../admission/webhook/dispatcher.js";
import { isTrue } from "./parameters.js";

/**
 * The API server's metrics seam: what it reports about each request and its
 * storage, with kube-apiserver's names in mind (`apiserver_request_total`,
 * `apiserver_request_duration_seconds`, `apiserver_storage_objects`). The
 * package records through this interface only; a prom-client adapter lives
 * where a Prometheus registry does (`prometheusApiServerMetrics` of
 * @reconcile/controller-manager), so prom-client is no dependency here. Its
 * optional `admission` and `rejection` (a {@link WebhookObserver}'s) count the
 * admission webhook calls of every request, and `admissionController` and
 * `admissionStep` (an {@link AdmissionObserver}'s) time the admission chain's
 * plugins and phases.
 */
export interface ApiServerMetrics extends Partial<WebhookObserver>, Partial<AdmissionObserver> {
  /** One finished request, with its labels and how long it took. */
  request(labels: RequestLabels, durationSeconds: number): void;
  /** How many objects of `resource` (`pods`, `deployments.apps`) storage holds; reported at each scrape. */
  storageObjects(resource: string, count: number): void;
  /** The exposition served at `GET /metrics`. */
  expose(): Promise<{ contentType: string; body: string }>;
  /** API Priority and Fairness gave a request its seat (`apiserver_flowcontrol_dispatched_requests_total`). */
  flowControlDispatched?(priorityLevel: string, flowSchema: string): void;
  /**
   * API Priority and Fairness refused a request (`apiserver_flowcontrol_rejected_requests_total`):
   * `queue-full`, `concurrency-limit`, `time-out` or `cancelled`.
   */
  flowControlRejected?(priorityLevel: string, flowSchema: string, reason: string): void;
  /**
   * A limited priority level's seats, reported at each scrape
   * (`apiserver_flowcontrol_nominal_limit_seats` and `…_current_limit_seats`),
   * for a seam without `flowControlLimits`.
   */
  flowControlSeats?(priorityLevel: string, seats: number): void;
  /**
   * Every priority level's limits and seat demand as the last adjustment left
   * them, reported at each scrape (`apiserver_flowcontrol_nominal_limit_seats`,
   * `…_lower_limit_seats`, `…_upper_limit_seats`, `…_current_limit_seats`,
   * `…_target_seats` and the `…_demand_seats_*` gauges).
   */
  flowControlLimits?(priorityLevel: string, limits: FlowControlLimits): void;
  /** The fair fraction of the last adjustment (`apiserver_flowcontrol_seat_fair_frac`). */
  flowControlFairFrac?(fairFrac: number): void;
  /**
   * Requests of a priority level and FlowSchema executing and waiting in a
   * queue, reported at each scrape (`apiserver_flowcontrol_current_executing_requests`,
   * `…_current_inqueue_requests`), and the seats they hold and wait for
   * (`…_current_executing_seats`, `…_current_inqueue_seats`).
   */
  flowControlRequests?(
    priorityLevel: string,
    flowSchema: string,
    executing: number,
    waiting: number,
    seats?: { executing: number; waiting: number },
  ): void;
  /**
   * How long a request waited for its seat, and whether it then executed
   * (`apiserver_flowcontrol_request_wait_duration_seconds`).
   */
  flowControlWait?(priorityLevel: string, flowSchema: string, executed: boolean, seconds: number): void;
  /**
   * How long a request held its seat, a watch only while it started
   * (`apiserver_flowcontrol_request_execution_seconds`, type `regular` or `watch`).
   */
  flowControlExecution?(priorityLevel: string, flowSchema: string, watch: boolean, seconds: number): void;
  /** The length of the queue a request joined, itself counted (`apiserver_flowcontrol_request_queue_length_after_enqueue`). */
  flowControlQueueLength?(priorityLevel: string, flowSchema: string, length: number): void;
  /** Whether an APIService is not Available, reported at each scrape (`aggregator_unavailable_apiservice`). */
  apiServiceUnavailable?(name: string, unavailable: boolean): void;
  /**
   * How many times an APIService has gone from Available to not, by the
   * reason it gave, reported at each scrape as the count so far
   * (`aggregator_unavailable_apiservice_total`).
   */
  apiServiceUnavailableCount?(name: string, reason: string, count: number): void;
}

/** `apiserver_request_total`'s labels (upstream `MonitorRequest`). */
export interface RequestLabels {
  verb: string;
  /** upstream's `cleanDryRun`: "" without `dryRun`, its values deduplicated and sorted, or `invalid`. */
  dry_run: string;
  group: string;
  version: string;
  resource: string;
  subresource: string;
  scope: string;
  component: "apiserver";
  code: string;
}

/** The request log's shape: pino's `(obj, msg)` (the Logger of @reconcile/controller fits). */
export interface RequestLogger {
  info(obj: Record<string, unknown>, msg?: string): void;
}

/** Non-resource paths reported by name in the `subresource` label, as kube-apiserver does; others as `other`. */
const namedPaths = new Set([
  "/healthz",
  "/livez",
  "/readyz",
  "/version",
  "/metrics",
  "/api",
  "/apis",
  "/openapi/v2",
  "/openapi/v3",
]);

/** upstream's `cleanDryRun`: each `dryRun` value must be `All`; the values deduplicated, sorted and joined. */
function dryRunLabel(query: URLSearchParams): string {
  const values = query.getAll("dryRun");
  if (values.length === 0) return "";
  if (values.some((value) => value !== "All")) return "invalid";
  return [...new Set(values)].sort().join(",");
}

/**
 * The labels of a request (upstream `RequestInfoFactory` and the metrics'
 * `cleanVerb`): `LIST` for a GET without a name, `WATCH` with `watch=true`,
 * `APPLY` for an apply patch, `CONNECT` for exec/attach/portforward/proxy;
 * scope `cluster`, `namespace` or `resource` (a named object); a
 * non-resource request has its path as subresource.
 */
export function requestLabels(
  method: string,
  pathname: string,
  query: URLSearchParams,
  contentType: string | undefined,
  code: number,
): RequestLabels {
  const labels: RequestLabels = {
    verb: method.toUpperCase(),
    dry_run: dryRunLabel(query),
    group: "",
    version: "",
    resource: "",
    subresource: "",
    scope: "",
    component: "apiserver",
    code: String(code),
  };
  const parts = pathname.split("/").filter((part) => part !== "");
  let rest: string[];
  if (parts[0] === "api" && parts.length >= 3) {
    labels.version = parts[1] ?? "";
    rest = parts.slice(2);
  } else if (parts[0] === "apis" && parts.length >= 4) {
    labels.group = parts[1] ?? "";
    labels.version = parts[2] ?? "";
    rest = parts.slice(3);
  } else {
    const path = `/${parts.join("/")}`;
    labels.subresource = path.startsWith("/openapi/v3/")
      ? "/openapi/v3"
      : namedPaths.has(path) || /^\/apis?(\/[^/]+){0,2}$/.test(path)
        ? path
        : "other";
    return labels;
  }
  let namespaced = false;
  if (rest[0] === "namespaces" && rest.length >= 3) {
    namespaced = true;
    rest = rest.slice(2);
  }
  const [resource = "", name, subresource = ""] = rest;
  labels.resource = resource;
  labels.subresource = subresource;
  labels.scope = name !== undefined ? "resource" : namespaced ? "namespace" : "cluster";
  const watch = query.get("watch");
  if (labels.verb === "GET" && isTrue(watch)) labels.verb = "WATCH";
  else if (labels.verb === "GET" && name === undefined) labels.verb = "LIST";
  else if (labels.verb === "PATCH" && (contentType ?? "").startsWith("application/apply-patch"))
    labels.verb = "APPLY";
  if (["exec", "attach", "portforward", "proxy"].includes(subresource)) labels.verb = "CONNECT";
  return labels;
}

/**
 * Reports `request` to `metrics` and `log` once its response is done (or the
 * connection closed under it), timed from now.
 */
export function observeRequest(
  request: { method?: string | undefined; url?: string | undefined; headers: Record<string, unknown> },
  response: { statusCode: number; once(event: "close", listener: () => void): unknown },
  metrics: ApiServerMetrics | undefined,
  log: RequestLogger | undefined,
): void {
  const started = performance.now();
  response.once("close", () => {
    const seconds = (performance.now() - started) / 1000;
    const target = request.url ?? "";
    const at = target.indexOf("?");
    const pathname = at === -1 ? target : target.slice(0, at);
    const query = new URLSearchParams(at === -1 ? "" : target.slice(at + 1));
    const contentType = request.headers["content-type"];
    const labels = requestLabels(
      request.method ?? "GET",
      pathname,
      query,
      typeof contentType === "string" ? contentType : undefined,
      response.statusCode,
    );
    metrics?.request(labels, seconds);
    const userAgent = request.headers["user-agent"];
    // The shape of kube-apiserver's httplog line ("HTTP" verb, URI, latency, userAgent, resp), as pino fields.
    log?.info(
      {
        verb: labels.verb,
        URI: target,
        resource: labels.resource,
        subresource: labels.subresource,
        status: response.statusCode,
        latency: `${(seconds * 1000).toFixed(3)}ms`,
        ...(typeof userAgent === "string" ? { userAgent } : {}),
      },
      "HTTP",
    );
  });
}

/** A priority level's seat limits and demand, as the metrics seam reports them. */
export interface FlowControlLimits {
  readonly nominal: number;
  readonly lower: number;
  readonly upper: number;
  readonly current: number;
  readonly target: number;
  readonly demandHighWatermark: number;
  readonly demandAverage: number;
  readonly demandStdev: number;
  readonly demandSmoothed: number;
}
