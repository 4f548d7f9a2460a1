import type * as http from "node:http";
import { requestAttributes } from "../auth/request-auth.js";
import type { UserInfo } from "../auth/user.js";
import type { Classification } from "./classify.js";
import type { FlowController } from "./controller.js";
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
 * Admits one request as `user`: resolves to true once it may be served (its
 * seat freed when the response ends, or at once for a watch), or answers the
 * 429 itself and resolves to false.
 */
export async function admitRequest(
  flow: FlowController,
  user: UserInfo,
  method: string,
  pathname: string,
  query: URLSearchParams,
  watch: boolean,
  request: http.IncomingMessage,
  response: http.ServerResponse,
): Promise<boolean> {
  const digest = requestAttributes(user, method, pathname, query)[0]!;
  // A client that goes away while its request waits takes it out of its queue.
  const gone = new AbortController();
  const onClose = () => gone.abort();
  response.once("close", onClose);
  try {
    const { classification, release } = await flow.admit(digest, gone.signal);
    setClassificationHeaders(response, classification);
    if (watch) release();
    else {
      response.once("finish", release);
      response.once("close", release);
    }
    return true;
  } catch (error) {
    if (!(error instanceof FlowControlRejection)) throw error;
    if (error.classification !== undefined) setClassificationHeaders(response, error.classification);
    request.resume();
    tooManyRequests(response);
    return false;
  } finally {
    response.off("close", onClose);
  }
}
