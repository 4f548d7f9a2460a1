import type * as http from "node:http";
import {
  apiVersionOf,
  type KubeObject,
  type ResourceDescriptor,
  type Status,
  type WatchEvent,
} from "@reconcile/api";
import type { Clock } from "@reconcile/clock";
import { customForWire, inGoOrder } from "../registry/go-order.js";
import type { HandlerContext } from "./context.js";
import { requestedMetadataForm, requestedTableVersion } from "./negotiation.js";
import { isTrue, parseIncludeObjectParam, parseNumber, watchListOptions } from "./parameters.js";
import { metadataContentType, metadataFormMismatch, partialObjectMetadata } from "./partial-metadata.js";
import { jsonContentType, statusBody } from "./respond.js";
import { tableContentType, toTable } from "./table.js";

/**
 * `GET ...?watch=true`: a chunked stream of watch events, one JSON object a
 * line (Tables of one row when the client asks for them), until the client
 * leaves, `timeoutSeconds` passes, or the client stops reading for
 * `watchWriteTimeoutMs`.
 */
export async function serveWatch(
  context: HandlerContext,
  resource: ResourceDescriptor,
  namespace: string | undefined,
  query: URLSearchParams,
  request: http.IncomingMessage,
  response: http.ServerResponse,
): Promise<void> {
  const tableVersion = requestedTableVersion(request.headers.accept);
  const includeObject = tableVersion === undefined ? undefined : parseIncludeObjectParam(query);
  const metadataForm = tableVersion === undefined ? requestedMetadataForm(request.headers.accept) : undefined;
  // Each event's object is one object: a watch takes the singular form.
  if (metadataForm !== undefined && metadataForm.kind !== "PartialObjectMetadata")
    throw metadataFormMismatch(metadataForm, resource.kind);
  const timeout = query.get("timeoutSeconds");
  const timeoutSeconds = timeout === null ? undefined : parseNumber("timeoutSeconds", timeout);
  const stop = new AbortController();
  const onClose = () => stop.abort();
  response.on("close", onClose);
  const watchList = watchListOptions(query);
  const watch = await context.registry.watch(resource, namespace, {
    ...watchList,
    resourceVersion: query.get("resourceVersion") ?? undefined,
    labelSelector: query.get("labelSelector") ?? undefined,
    fieldSelector: query.get("fieldSelector") ?? undefined,
    allowWatchBookmarks: isTrue(query.get("allowWatchBookmarks")),
    timeoutSeconds,
    signal: stop.signal,
  });
  // The registry ends the event stream at timeoutSeconds; this ends it here too, where the
  // server may be waiting on a client that reads nothing.
  const { clock, watchWriteTimeoutMs } = context;
  const timer = timeoutSeconds
    ? clock.setTimeout(() => stop.abort(), Math.min(timeoutSeconds * 1000, 2_147_483_647))
    : undefined;
  try {
    response.writeHead(200, {
      "Content-Type":
        tableVersion !== undefined
          ? tableContentType(tableVersion)
          : metadataForm !== undefined
            ? metadataContentType(metadataForm)
            : jsonContentType,
      "Cache-Control": "no-cache, private",
      "Transfer-Encoding": "chunked",
    });
    // node:http holds headers back until the first write; a quiet watch must still open at once.
    response.flushHeaders();
    let headersSent = false;
    let corked = false;
    const uncork = () => {
      corked = false;
      response.uncork();
    };
    for await (const event of watch) {
      if (stop.signal.aborted) break;
      let line: string;
      if (tableVersion !== undefined && event.type !== "ERROR" && event.type !== "BOOKMARK") {
        const table = toTable(
          resource,
          [event.object],
          {},
          {
            now: clock.now(),
            version: tableVersion,
            printer: context.printerOf(resource),
            includeObject,
            noHeaders: headersSent,
          },
        );
        headersSent = true;
        line = JSON.stringify({ type: event.type, object: table });
      } else if (metadataForm !== undefined && event.type !== "ERROR") {
        line = JSON.stringify({
          type: event.type,
          object: partialObjectMetadata(event.object, metadataForm),
        });
      } else {
        line = JSON.stringify(typedEvent(resource, event));
      }
      // Events that arrive in one tick go out in one socket write.
      if (!corked) {
        corked = true;
        response.cork();
        process.nextTick(uncork);
      }
      if (
        !response.write(`${line}\n`) &&
        !(await drainedInTime(response, stop.signal, clock, watchWriteTimeoutMs))
      ) {
        // The client took nothing for watchWriteTimeoutMs, or the watch ended while it was not reading.
        response.destroy();
        break;
      }
    }
  } finally {
    if (timer !== undefined) clock.clearTimeout(timer);
    watch.stop();
    response.off("close", onClose);
    if (!response.writableEnded && !response.destroyed) endInTime(response, clock, watchWriteTimeoutMs);
  }
}

/** Watch events carry `apiVersion` and `kind` on their objects, as kube-apiserver's do. */
function typedEvent(resource: ResourceDescriptor, event: WatchEvent): WatchEvent {
  if (event.type === "ERROR")
    return { type: "ERROR", object: statusBody(event.object as Status) as KubeObject };
  if (event.type === "BOOKMARK") return event;
  const object = event.object;
  const typed =
    object.apiVersion !== undefined && object.kind !== undefined
      ? object
      : { ...object, apiVersion: apiVersionOf(resource), kind: resource.kind };
  // A built-in object goes out in the order kube-apiserver writes its members in, a custom one sorted.
  const ordered = customForWire(resource, inGoOrder(typed));
  return ordered === object ? event : { type: event.type, object: ordered };
}

/**
 * Resolves true when the response can take more, false when it closed, the
 * watch was stopped, or the client took nothing for `timeoutMs`.
 */
function drainedInTime(
  response: http.ServerResponse,
  stopped: AbortSignal,
  clock: Clock,
  timeoutMs: number,
): Promise<boolean> {
  if (stopped.aborted || response.destroyed) return Promise.resolve(false);
  return new Promise<boolean>((resolve) => {
    const done = (drained: boolean) => {
      clock.clearTimeout(timer);
      response.off("drain", onDrain);
      response.off("close", onClose);
      stopped.removeEventListener("abort", onClose);
      resolve(drained);
    };
    const onDrain = () => done(true);
    const onClose = () => done(false);
    const timer = clock.setTimeout(onClose, timeoutMs);
    response.on("drain", onDrain);
    response.on("close", onClose);
    stopped.addEventListener("abort", onClose, { once: true });
  });
}

/** Ends a watch's response; one its client does not read to the end in `timeoutMs` is closed. */
function endInTime(response: http.ServerResponse, clock: Clock, timeoutMs: number): void {
  response.end();
  if (response.writableFinished) return;
  const timer = clock.setTimeout(() => response.destroy(), timeoutMs);
  response.once("close", () => clock.clearTimeout(timer));
}
