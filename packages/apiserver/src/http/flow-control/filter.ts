import type * as http from "node:http";
import type { Clock } from "@reconcile/clock";
import { requestAttributes } from "../auth/request-auth.js";
import type { UserInfo } from "../auth/user.js";
import type { ApiServerMetrics } from "../request-metrics.js";
import type { Classification, RequestDigest } from "./classify.js";
import type { Admission, FlowController } from "./controller.js";
import { FlowControlRejection } from "./queue-set.js";

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

/**
 * One request before the flow controller: what it asks (worked out only if
 * its classification needs it), and its client's going away (watched only
 * while it waits in a queue).
 */
class PendingRequest {
  #onClose: (() => void) | undefined;
  /** When it came to the flow controller, for the wait it is reported with. */
  readonly #arrived: number;

  constructor(
    readonly user: UserInfo,
    readonly method: string,
    readonly pathname: string,
    readonly query: URLSearchParams,
    readonly watch: boolean,
    readonly request: http.IncomingMessage,
    readonly response: http.ServerResponse,
    readonly metrics: ApiServerMetrics | undefined,
    readonly clock: Clock,
  ) {
    this.#arrived = metrics?.flowControlWait === undefined ? 0 : clock.now();
  }

  attributes(): RequestDigest {
    return requestAttributes(this.user, this.method, this.pathname, this.query)[0]!;
  }

  cancel(): AbortSignal {
    const gone = new AbortController();
    this.#onClose = () => gone.abort();
    this.response.once("close", this.#onClose);
    return gone.signal;
  }

  #stopWatching(): void {
    if (this.#onClose !== undefined) this.response.off("close", this.#onClose);
  }

  admitted(admission: Admission): boolean {
    this.#stopWatching();
    const { flowSchema, priorityLevel } = admission.classification;
    this.metrics?.flowControlDispatched?.(
      priorityLevel.metadata?.name ?? "",
      flowSchema.metadata?.name ?? "",
    );
    this.#waited(admission.classification, true);
    setClassificationHeaders(this.response, admission.classification);
    if (this.watch) admission.release();
    else this.response.once("close", admission.release);
    return true;
  }

  #waited({ priorityLevel, flowSchema }: Classification, executed: boolean): void {
    if (this.metrics?.flowControlWait === undefined) return;
    const seconds = (this.clock.now() - this.#arrived) / 1000;
    this.metrics.flowControlWait(
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
      this.metrics?.flowControlRejected?.(
        priorityLevel.metadata?.name ?? "",
        flowSchema.metadata?.name ?? "",
        error.reason,
      );
      this.#waited(classification, false);
      setClassificationHeaders(this.response, classification);
    }
    this.request.resume();
    tooManyRequests(this.response);
    return false;
  }
}

/**
 * Admits one request as `user`: true once it may be served (at once when a
 * seat is free; its seat is freed when the response closes, or at once for
 * a watch), or false once the 429 has been answered.
 */
export function admitRequest(
  flow: FlowController,
  user: UserInfo,
  method: string,
  pathname: string,
  query: URLSearchParams,
  watch: boolean,
  request: http.IncomingMessage,
  response: http.ServerResponse,
  metrics?: ApiServerMetrics | undefined,
): boolean | Promise<boolean> {
  const pending = new PendingRequest(
    user,
    method,
    pathname,
    query,
    watch,
    request,
    response,
    metrics,
    flow.clock,
  );
  try {
    const admission = flow.admit(user, pending);
    if (!(admission instanceof Promise)) return pending.admitted(admission);
    return admission.then(
      (a) => pending.admitted(a),
      (error: unknown) => pending.refused(error),
    );
  } catch (error) {
    return pending.refused(error);
  }
}
