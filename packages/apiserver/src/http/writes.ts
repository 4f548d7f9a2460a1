import type * as http from "node:http";
import type { ResourceDescriptor } from "@reconcile/api";
import type { HandlerContext } from "./context.js";
import { servesDeleteCollection } from "./discovery.js";
import {
  deleteOptions,
  isTrue,
  validatePatchOptions,
  validateWriteOptions,
  type WriteOptions,
} from "./parameters.js";
import { decodeObjectBody, decodePatchBody } from "./request-body.js";
import { jsonContentType, notAllowed, send, sendList } from "./respond.js";
import type { ResourceRoute } from "./route.js";
import { patchScale, updateScale } from "./subresources.js";

/**
 * The verbs a collection path serves besides list and watch, as a 405 check:
 * across all namespaces kube-apiserver serves only list and watch (no create,
 * no deletecollection), and deletecollection only where discovery lists it.
 */
export function collectionAllows(
  resource: ResourceDescriptor,
  namespace: string | undefined,
  method: string,
): boolean {
  return !(
    (resource.namespaced && namespace === undefined && method !== "GET") ||
    (method === "DELETE" && !servesDeleteCollection(resource))
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
  const body = decodeObjectBody(
    request.headers["content-type"],
    await context.body(request, response),
    context.protobufMessageOf,
  );
  const created = await context.registry.create(resource, namespace, body, write);
  return send(response, 201, created);
}

/** `DELETE` of a collection: the list of what was deleted (or marked for deletion). */
export async function serveDeleteCollection(
  context: HandlerContext,
  { resource, namespace }: ResourceRoute,
  query: URLSearchParams,
  request: http.IncomingMessage,
  response: http.ServerResponse,
): Promise<void> {
  const options = deleteOptions(await context.body(request, response), query);
  const deleted = await context.registry.deleteCollection(resource, namespace, {
    ...options,
    labelSelector: query.get("labelSelector") ?? undefined,
    fieldSelector: query.get("fieldSelector") ?? undefined,
  });
  const { items, ...envelope } = deleted;
  return sendList(response, envelope, "items", items, jsonContentType);
}

/** `PUT` of an object, its status or its scale. */
export async function serveUpdate(
  context: HandlerContext,
  { resource, namespace, name, subresource }: ResourceRoute & { name: string },
  query: URLSearchParams,
  write: WriteOptions,
  request: http.IncomingMessage,
  response: http.ServerResponse,
): Promise<void> {
  validateWriteOptions("UpdateOptions", query);
  const body = decodeObjectBody(
    request.headers["content-type"],
    await context.body(request, response),
    context.protobufMessageOf,
  );
  if (subresource === "scale") {
    return send(response, 200, await updateScale(context, resource, namespace, name, body, write));
  }
  const updated = await context.registry.update(resource, namespace, name, body, {
    ...write,
    ...(subresource === "status" ? { subresource } : {}),
  });
  return send(response, 200, updated);
}

/** `PATCH` of an object, its status or its scale; a 201 when an apply created the object. */
export async function servePatch(
  context: HandlerContext,
  { resource, namespace, name, subresource }: ResourceRoute & { name: string },
  query: URLSearchParams,
  write: WriteOptions,
  request: http.IncomingMessage,
  response: http.ServerResponse,
): Promise<void> {
  validatePatchOptions(request.headers["content-type"], query);
  const { type, patch } = decodePatchBody(
    request.headers["content-type"],
    await context.body(request, response),
  );
  if (subresource === "scale") {
    return send(response, 200, await patchScale(context, resource, namespace, name, type, patch, write));
  }
  const force = query.get("force");
  const { object, created } = await context.registry.patchWithOutcome(
    resource,
    namespace,
    name,
    type,
    patch,
    {
      ...write,
      ...(subresource === "status" ? { subresource } : {}),
      ...(force !== null ? { force: isTrue(force) } : {}),
    },
  );
  return send(response, created ? 201 : 200, object);
}

/** `DELETE` of an object: 200 when it is gone, 202 when it is only marked (grace period, finalizers). */
export async function serveDelete(
  context: HandlerContext,
  { resource, namespace, name, subresource }: ResourceRoute & { name: string },
  method: string,
  pathname: string,
  query: URLSearchParams,
  request: http.IncomingMessage,
  response: http.ServerResponse,
): Promise<void> {
  if (subresource !== undefined) {
    request.resume();
    throw notAllowed(method, pathname);
  }
  const options = deleteOptions(await context.body(request, response), query);
  const { object, deleted } = await context.registry.deleteWithOutcome(resource, namespace, name, options);
  const pending = object.metadata?.deletionTimestamp !== undefined && !deleted;
  return send(response, pending ? 202 : 200, object);
}
