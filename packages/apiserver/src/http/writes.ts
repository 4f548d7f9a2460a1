import type * as http from "node:http";
import type { KubeObject, ResourceDescriptor } from "@reconcile/api";
import type { ResourceDefinition } from "../kinds/definition.js";
import { largeWriteBytes, yieldTurn } from "../limits.js";
import { duplicateFields, type FieldValidation, parseFieldValidation } from "../registry/field-validation.js";
import { customForWire } from "../registry/go-order.js";
import type { HandlerContext } from "./context.js";
import { listItemEncoder } from "./list-encoding.js";
import { mediaTypeOf } from "./negotiation.js";
import {
  admissionOptions,
  deleteOptions,
  isTrue,
  validatePatchOptions,
  validateWriteOptions,
  type WriteOptions,
} from "./parameters.js";
import { decodeObjectBody, decodePatchBody } from "./request-body.js";
import { addWarnings, jsonContentType, notAllowed, send, sendList } from "./respond.js";
import type { ResourceRoute } from "./route.js";
import { yamlDuplicateFields } from "./yaml-body.js";

/**
 * The verbs a collection path serves besides list and watch, as a 405 check:
 * across all namespaces kube-apiserver serves only list and watch (no create,
 * no deletecollection), and deletecollection only where discovery lists it.
 */
export function collectionAllows(
  { descriptor: resource, verbs }: ResourceDefinition,
  namespace: string | undefined,
  method: string,
): boolean {
  return !(
    (resource.namespaced && namespace === undefined && method !== "GET") ||
    (method === "GET" && !verbs.includes("list")) ||
    (method === "POST" && !verbs.includes("create")) ||
    (method === "DELETE" && !verbs.includes("deletecollection"))
  );
}

/** `POST` to a collection: a 201 with the object created. */
export async function serveCreate(
  context: HandlerContext,
  { resource, namespace }: ResourceRoute,
  query: URLSearchParams,
  write: WriteOptions,
  request: http.IncomingMessage,
  response: http.ServerResponse,
): Promise<void> {
  validateWriteOptions("CreateOptions", query);
  const text = await context.body(request, response);
  const fieldValidation = fieldValidationOf(query, request.headers["content-type"], text);
  const body = decodeObjectBody(request.headers["content-type"], text, context.protobufMessageOf);
  if (text.length > largeWriteBytes) await yieldTurn();
  // Object.assign, not a spread with members added: on Node 20 that costs a new hidden class per request.
  const created = await context.registry.create(
    resource,
    namespace,
    body,
    Object.assign({}, write, { fieldValidation }),
  );
  return sendWithWarnings(response, 201, resource, created, fieldValidation, write);
}

/** `DELETE` of a collection: the list of what was deleted (or marked for deletion). */
export async function serveDeleteCollection(
  context: HandlerContext,
  { resource, namespace }: ResourceRoute,
  query: URLSearchParams,
  write: WriteOptions,
  request: http.IncomingMessage,
  response: http.ServerResponse,
): Promise<void> {
  const options = deleteOptions(await context.body(request, response), query);
  const deleted = await context.registry.deleteCollection(resource, namespace, {
    ...options,
    ...admissionOptions(write),
    labelSelector: query.get("labelSelector") ?? undefined,
    fieldSelector: query.get("fieldSelector") ?? undefined,
  });
  addWarnings(response, write.warnings ?? []);
  const { items, ...envelope } = deleted;
  return sendList(response, envelope, "items", items, jsonContentType, listItemEncoder(resource));
}

/** `PUT` of an object or of a subresource (status, scale, finalize…). */
export async function serveUpdate(
  context: HandlerContext,
  { resource, namespace, name, subresource }: ResourceRoute & { name: string },
  query: URLSearchParams,
  write: WriteOptions,
  request: http.IncomingMessage,
  response: http.ServerResponse,
): Promise<void> {
  validateWriteOptions("UpdateOptions", query);
  const text = await context.body(request, response);
  const fieldValidation = fieldValidationOf(query, request.headers["content-type"], text);
  const body = decodeObjectBody(request.headers["content-type"], text, context.protobufMessageOf);
  if (text.length > largeWriteBytes) await yieldTurn();
  const { object, created } = await context.registry.updateWithOutcome(
    resource,
    namespace,
    name,
    body,
    Object.assign({}, write, { fieldValidation, subresource }),
  );
  return sendWithWarnings(response, created ? 201 : 200, resource, object, fieldValidation, write);
}

/** `PATCH` of an object or of a subresource; a 201 when an apply created the object. */
export async function servePatch(
  context: HandlerContext,
  { resource, namespace, name, subresource }: ResourceRoute & { name: string },
  query: URLSearchParams,
  write: WriteOptions,
  request: http.IncomingMessage,
  response: http.ServerResponse,
): Promise<void> {
  validatePatchOptions(request.headers["content-type"], query);
  const text = await context.body(request, response);
  const { type, patch } = decodePatchBody(request.headers["content-type"], text);
  const fieldValidation = fieldValidationOf(
    query,
    type === "apply" ? undefined : request.headers["content-type"],
    text,
  );
  const force = query.get("force");
  const { object, created } = await context.registry.patchWithOutcome(
    resource,
    namespace,
    name,
    type,
    patch,
    Object.assign(
      {},
      write,
      { fieldValidation, subresource },
      force !== null ? { force: isTrue(force) } : {},
    ),
  );
  return sendWithWarnings(response, created ? 201 : 200, resource, object, fieldValidation, write);
}

/** `DELETE` of an object: 200 with its last state, gone or only marked (grace period, finalizers). */
export async function serveDelete(
  context: HandlerContext,
  { resource, namespace, name, subresource }: ResourceRoute & { name: string },
  method: string,
  pathname: string,
  query: URLSearchParams,
  write: WriteOptions,
  request: http.IncomingMessage,
  response: http.ServerResponse,
): Promise<void> {
  if (subresource !== undefined) {
    request.resume();
    throw notAllowed(method, pathname);
  }
  const options = {
    ...deleteOptions(await context.body(request, response), query),
    ...admissionOptions(write),
  };
  const { object, deleted } = await context.registry.deleteWithOutcome(resource, namespace, name, options);
  addWarnings(response, write.warnings ?? []);
  // kube-apiserver answers 202 only for an object not yet gone whose delete asked for cascading by
  // `orphanDependents: false`; graceful deletion, finalizers and Terminating namespaces get a 200.
  const code = !deleted && options.orphanDependents === false ? 202 : 200;
  return send(response, code, customForWire(resource, object));
}

/**
 * The write's `fieldValidation`, with the keys its JSON body gives twice
 * (unless the directive is Ignore; a protobuf body cannot repeat a field).
 */
function fieldValidationOf(
  query: URLSearchParams,
  contentType: string | undefined,
  body: Buffer,
): FieldValidation {
  const directive = parseFieldValidation(query.get("fieldValidation"));
  const media = contentType === undefined ? "" : mediaTypeOf(contentType);
  // Apply patches come without a content type here: their duplicates are not reported.
  let duplicates: string[] = [];
  if (directive !== "Ignore" && media === "application/yaml") duplicates = yamlDuplicateFields(body);
  else if (directive !== "Ignore" && /json/.test(media)) duplicates = duplicateFields(body.toString("utf8"));
  return { directive, duplicates, warnings: [] };
}

/** Sends the written object (a custom resource's keys sorted) with the write's warnings (see {@link addWarnings}). */
function sendWithWarnings(
  response: http.ServerResponse,
  code: number,
  resource: ResourceDescriptor,
  object: KubeObject,
  fieldValidation: FieldValidation,
  write: WriteOptions,
): void {
  addWarnings(response, [...(fieldValidation.warnings ?? []), ...(write.warnings ?? [])]);
  send(response, code, customForWire(resource, object));
}
