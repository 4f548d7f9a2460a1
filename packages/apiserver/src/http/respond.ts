import type * as http from "node:http";
import { newInternalError, newTimeout, type Status, StatusError } from "@reconcile/api";
import type { Clock } from "@reconcile/clock";
import { goQuote } from "../registry/field-validation.js";
import { inGoOrder } from "../registry/go-order.js";
import { auditOf } from "./audit/event.js";
import { wantsYaml, yamlOf } from "./yaml-body.js";

export const jsonContentType = "application/json";
export const yamlContentType = "application/yaml";

/**
 * A Status as Go's encoding/json writes `metav1.Status`: its fields in the
 * struct's order (`kind, apiVersion, metadata, status, message, reason,
 * details, code`), `omitempty` ones left out when empty (no `"group":""` in
 * the details of a core kind), `metadata` always there. Clients compare these
 * texts byte for byte (the Python client's tests do).
 */
export function statusBody(status: Status): Record<string, unknown> {
  const out: Record<string, unknown> = { kind: "Status", apiVersion: "v1", metadata: status.metadata ?? {} };
  if (status.status) out.status = status.status;
  if (status.message) out.message = status.message;
  if (status.reason) out.reason = status.reason;
  const details = status.details;
  if (details !== undefined && details !== null) {
    const d: Record<string, unknown> = {};
    if (details.name) d.name = details.name;
    if (details.group) d.group = details.group;
    if (details.kind) d.kind = details.kind;
    if (details.uid) d.uid = details.uid;
    if (details.causes && details.causes.length > 0)
      d.causes = details.causes.map((cause) => {
        const c: Record<string, unknown> = {};
        if (cause.reason) c.reason = cause.reason;
        if (cause.message) c.message = cause.message;
        if (cause.field) c.field = cause.field;
        return c;
      });
    if (details.retryAfterSeconds) d.retryAfterSeconds = details.retryAfterSeconds;
    out.details = d;
  }
  if (status.code) out.code = status.code;
  return out;
}

/**
 * Sends a body as JSON with the newline Go's `json.Encoder` ends every value
 * with, unless the request was answered already (it timed out) or its client left.
 */
export function send(
  response: http.ServerResponse,
  code: number,
  body: unknown,
  contentType = jsonContentType,
): void {
  if (response.headersSent || response.destroyed) return;
  const answered = body;
  auditOf(response)?.responded(() => answered);
  // A built-in object goes out in the order kube-apiserver writes its members in.
  body = inGoOrder(body);
  if (contentType === jsonContentType && wantsYaml(response.req?.headers.accept)) {
    contentType = yamlContentType;
    body = yamlOf(body);
  }
  const text =
    typeof body === "string" && contentType === yamlContentType ? body : `${JSON.stringify(body)}\n`;
  response.writeHead(code, {
    "Content-Type": contentType,
    "Content-Length": Buffer.byteLength(text),
    "Cache-Control": "no-cache, private",
  });
  response.end(text);
}

/**
 * Sends a list item by item: the envelope, then the items in batches, waiting
 * for the socket to drain and yielding to the event loop between batches. A
 * 100,000-pod list so never holds the server's event loop in one
 * `JSON.stringify`, nor needs one string of the whole body. Each item is
 * written by `encode` (default `JSON.stringify`).
 */
export async function sendList(
  response: http.ServerResponse,
  envelope: object,
  itemsKey: string,
  items: readonly unknown[],
  contentType: string,
  encode: (item: unknown) => string = JSON.stringify,
): Promise<void> {
  if (response.headersSent || response.destroyed) return;
  if (contentType === jsonContentType && wantsYaml(response.req?.headers.accept)) {
    // YAML is one document: the list is converted whole (clients asking for YAML read small lists).
    const list = { ...envelope, [itemsKey]: items.map((item) => JSON.parse(encode(item))) };
    send(response, 200, list);
    return;
  }
  auditOf(response)?.responded(() => ({
    ...envelope,
    [itemsKey]: items.map((item) => JSON.parse(encode(item))),
  }));
  // The envelope in Go's order too (a list's `items` come last, as the slice below needs).
  const head = JSON.stringify(inGoOrder({ ...envelope, [itemsKey]: [] }));
  response.writeHead(200, { "Content-Type": contentType, "Cache-Control": "no-cache, private" });
  let batch = head.slice(0, -2);
  for (let i = 0; i < items.length; i++) {
    batch += (i === 0 ? "" : ",") + encode(items[i]);
    if (batch.length >= listBatchBytes) {
      if (response.destroyed) return;
      if (!response.write(batch)) await drained(response);
      batch = "";
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  response.end(`${batch}]}\n`);
}

/** A 200 with the body, or kube-apiserver's 404 Status when there is none. */
export function sendOrNotFound(response: http.ServerResponse, body: object | undefined): void {
  if (body !== undefined) {
    send(response, 200, body);
    return;
  }
  send(
    response,
    404,
    statusBody({
      status: "Failure",
      message: "the server could not find the requested resource",
      reason: "NotFound",
      details: {},
      code: 404,
    }),
  );
}

/** Answers a failure with its Status (a 500 InternalError for anything that is not a StatusError). */
export function sendFailure(response: http.ServerResponse, error: unknown): void {
  const statusError = StatusError.isInstance(error) ? error : newInternalError(error);
  if (response.writableEnded) return; // answered already: the request timed out
  if (response.headersSent) {
    response.destroy();
    return;
  }
  const code = statusError.status.code || 500;
  // The body of a refused request may be unread (or, after no 100 Continue, unsent): the connection cannot
  // carry another, and a client trickling it must not keep it open.
  if (code === 413 || response.req?.complete === false) response.shouldKeepAlive = false;
  send(response, code, statusBody(statusError.status));
}

/** The 408 of a request body that did not arrive within `timeoutMs`. */
export function bodyTimeout(timeoutMs: number): StatusError {
  return new StatusError({
    code: 408,
    reason: "Timeout",
    message: `Timeout: the request body did not arrive within ${timeoutMs / 1000}s`,
  });
}

/** kube-apiserver's 405 for a verb the path does not serve. */
export function notAllowed(method: string, path: string): StatusError {
  return new StatusError({
    code: 405,
    reason: "MethodNotAllowed",
    message: `the server does not allow this method on the requested resource (${method} ${path})`,
  });
}

/** Answers with a 504 (or closes the connection, the answer begun) a request not answered in `timeoutMs`. */
export function limitTime(response: http.ServerResponse, clock: Clock, timeoutMs: number): void {
  const timer = clock.setTimeout(() => {
    if (response.writableEnded || response.destroyed) return;
    if (response.headersSent) {
      response.destroy();
      return;
    }
    response.shouldKeepAlive = false;
    const error = newTimeout("request did not complete within requested timeout - context deadline exceeded");
    send(response, 504, error.status);
  }, timeoutMs);
  response.once("close", () => clock.clearTimeout(timer));
}

/** A list's items are serialized in batches of this many bytes, each written on its own. */
const listBatchBytes = 256 * 1024;

/** Resolves when the response can take more, or has closed. */
function drained(response: http.ServerResponse): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      response.off("drain", done);
      response.off("close", done);
      resolve();
    };
    response.on("drain", done);
    response.on("close", done);
  });
}

/**
 * Adds one `Warning: 299 - "<text>"` header per warning to those already set,
 * in order and without repeats, as kube-apiserver's warning recorder does.
 */
export function addWarnings(response: http.ServerResponse, warnings: readonly string[]): void {
  if (warnings.length === 0 || response.headersSent) return;
  const existing = response.getHeader("Warning");
  const values = existing === undefined ? [] : Array.isArray(existing) ? existing : [String(existing)];
  for (const text of warnings) {
    // Quoted as Go quotes it: quotes and backslashes escaped, and a control character (never valid in a header) too.
    // Header values are bytes: the UTF-8 of the text, as Go writes it (Node takes a latin1 string for bytes).
    const value = Buffer.from(`299 - ${goQuote(text)}`, "utf8").toString("latin1");
    if (!values.includes(value)) values.push(value);
  }
  response.setHeader("Warning", values);
}
