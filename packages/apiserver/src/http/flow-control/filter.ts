import type * as http from "node:http";
import type { Clock } from "@reconcile/clock";
import { requestAttributes } from "../auth/request-auth.js";
import type { UserInfo } from "../auth/user.js";
import type { ApiServerMetrics } from "../request-metrics.js";
import type { Classification, RequestDigest } from "./classify.js";
import type { Admission, FlowController } from "./controller.js";
import { FlowControlRejection, type SeatRequestDetails } from "./queue-set.js";
import type { WatchTracker } from "./work-estimate.js";

/** What a request that names no resource shows beyond its user, verb and path. */
const noResource = { namespace: "", name: "", apiVersion: "", resource: "", subresource: "" };

// kube-apiserver's WithPriorityAndFairness filter: every request but the
// long-running non-watch ones (exec, attach, port-forward, proxy) is
// classified and answered with the UIDs of its FlowSchema and priority level;
// it then holds a seat of its level while it is served (a watch only while
// it starts), or gets upstream's plain-text 429.

export const flowSchemaUIDHeader = "X-Kubernetes-PF-FlowSchema-UID";
export const priorityLevelUIDHeader = "X-Kubernetes-PF-PriorityLevel-UID";

function setClassificationHeaders(response: http.ServerResponse, classification: Classification): void {
  if (response.headersSent) return;
  response.setHeader(flowSchemaUIDHeader, classification.flowSchema.metadata?.uid ?? "");
  response.setHeader(priorityLevelUIDHeader, classification.priorityLevel.metadata?.uid ?? "");
}

/** `tooManyRequests`: what a request APF refuses is answered with (`http.Error`'s text, Retry-After 1). */
function tooManyRequests(response: http.ServerResponse): void {
  if (response.headersSent) return;
  response.setHeader("Retry-After", "1");
  response.setHeader("Content-Type", "text/plain; charset=utf-8");
  response.setHeader("X-Content-Type-Options", "nosniff");
  response.writeHead(429);
  response.end("Too many requests, please try again later.\n");
}

/** One HTTP request as the handler has read it, for the flow controller to admit. */
export interface FlowRequest {
  readonly user: UserInfo;
  readonly method: string;
  readonly pathname: string;
  readonly query: URLSearchParams;
  readonly watch: boolean;
  readonly request: http.IncomingMessage;
  readonly response: http.ServerResponse;
  readonly metrics?: ApiServerMetrics | undefined;
}

/**
 * One request before the flow controller: what it asks (worked out only if
 * its classification needs it), and its client's going away (watched only
 * while it waits in a queue).
 */
class PendingRequest {
  #onClose: (() => void) | undefined;
  /** When it came to the flow controller, for the wait it is reported with. */
  readonly #arrived: number;
  #attributes: RequestDigest | undefined;

  constructor(
    readonly asked: FlowRequest,
    readonly clock: Clock,
    readonly watches: WatchTracker,
  ) {
    this.#arrived = asked.metrics?.flowControlWait === undefined ? 0 : clock.now();
  }

  attributes(): RequestDigest {
    const { user, method, pathname, query } = this.asked;
    this.#attributes ??= requestAttributes(user, method, pathname, query)[0]!;
    return this.#attributes;
  }

  query(): URLSearchParams {
    return this.asked.query;
  }

  details(): SeatRequestDetails {
    const { user, pathname } = this.asked;
    const attributes = this.attributes();
    if (!attributes.resourceRequest)
      return { ...noResource, userName: user.username, verb: attributes.verb, path: pathname };
    // `/api/v1/…` or `/apis/<group>/<version>/…`: the version the path names.
    const segments = pathname.split("/");
    const version = segments[1] === "api" ? segments[2] : segments[3];
    return {
      userName: user.username,
      verb: attributes.verb,
      path: pathname,
      namespace: attributes.namespace,
      name: attributes.name,
      apiVersion: attributes.apiGroup === "" ? (version ?? "") : `${attributes.apiGroup}/${version ?? ""}`,
      resource: attributes.resource,
      subresource: attributes.subresource,
    };
  }

  cancel(): AbortSignal {
    const gone = new AbortController();
    this.#onClose = () => gone.abort();
    this.asked.response.once("close", this.#onClose);
    return gone.signal;
  }

  #stopWatching(): void {
    if (this.#onClose !== undefined) this.asked.response.off("close", this.#onClose);
  }

  queued(priorityLevel: string, flowSchema: string, length: number): void {
    this.asked.metrics?.flowControlQueueLength?.(priorityLevel, flowSchema, length);
  }

  admitted(admission: Admission): boolean {
    this.#stopWatching();
    const { flowSchema, priorityLevel } = admission.classification;
    const level = priorityLevel.metadata?.name ?? "";
    const schema = flowSchema.metadata?.name ?? "";
    const metrics = this.asked.metrics;
    metrics?.flowControlDispatched?.(level, schema);
    this.#waited(admission.classification, true);
    setClassificationHeaders(this.asked.response, admission.classification);
    const started = metrics?.flowControlExecution === undefined ? 0 : this.clock.now();
    const release = () => {
      admission.release();
      metrics?.flowControlExecution?.(level, schema, this.asked.watch, (this.clock.now() - started) / 1000);
    };
    // A watch holds its seat only while it starts, as upstream's does, and is counted while it lasts.
    if (this.asked.watch) {
      release();
      const forget = this.watches.register(this.attributes());
      if (forget !== undefined) this.asked.response.once("close", forget);
    } else this.asked.response.once("close", release);
    return true;
  }

  #waited({ priorityLevel, flowSchema }: Classification, executed: boolean): void {
    if (this.asked.metrics?.flowControlWait === undefined) return;
    const seconds = (this.clock.now() - this.#arrived) / 1000;
    this.asked.metrics.flowControlWait(
      priorityLevel.metadata?.name ?? "",
      flowSchema.metadata?.name ?? "",
      executed,
      seconds,
    );
  }

  refused(error: unknown): boolean {
    this.#stopWatching();
    if (!(error instanceof FlowControlRejection)) throw error;
    const classification = error.classification;
    if (classification !== undefined) {
      const { flowSchema, priorityLevel } = classification;
      this.asked.metrics?.flowControlRejected?.(
        priorityLevel.metadata?.name ?? "",
        flowSchema.metadata?.name ?? "",
        error.reason,
      );
      this.#waited(classification, false);
      setClassificationHeaders(this.asked.response, classification);
    }
    this.asked.request.resume();
    tooManyRequests(this.asked.response);
    return false;
  }
}

/**
 * Admits `asked` as its user: true once it may be served (at once when a
 * seat is free; its seat is freed when the response closes, or at once for
 * a watch), or false once the 429 has been answered.
 */
export function admitRequest(flow: FlowController, asked: FlowRequest): boolean | Promise<boolean> {
  const pending = new PendingRequest(asked, flow.clock, flow.watches);
  try {
    const admission = flow.admit(asked.user, pending);
    if (!(admission instanceof Promise)) return pending.admitted(admission);
    return admission.then(
      (a) => pending.admitted(a),
      (error: unknown) => pending.refused(error),
    );
  } catch (error) {
    return pending.refused(error);
  }
}
