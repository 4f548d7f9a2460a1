import type * as http from "node:http";
import { newBadRequest, type ResourceDescriptor, type Scale } from "@reconcile/api";
import { isJsonObject } from "../json.js";
import { applyPatch, type PatchType } from "../registry/patch.js";
import type { HandlerContext } from "./context.js";
import { parseDryRun, validateWriteOptions, type WriteOptions } from "./parameters.js";
import { decodeObjectBody } from "./request-body.js";
import { notAllowed, send } from "./respond.js";
import type { Route } from "./route.js";

/**
 * `POST` to a subresource a kind's definition handles (`pods/{name}/binding`,
 * `pods/{name}/eviction`): a 201 Success Status, as kube-apiserver answers.
 */
export async function serveSubresourceCreate(
  context: HandlerContext,
  route: Extract<Route, { kind: "subresourceCreate" }>,
  method: string,
  pathname: string,
  query: URLSearchParams,
  request: http.IncomingMessage,
  response: http.ServerResponse,
): Promise<void> {
  if (method !== "POST") {
    request.resume();
    throw notAllowed(method, pathname);
  }
  validateWriteOptions("CreateOptions", query);
  const body = decodeObjectBody(
    request.headers["content-type"],
    await context.body(request, response),
    context.protobufMessageOf,
  );
  await context.registry.createSubresource(
    route.resource,
    route.namespace,
    route.name,
    route.subresource,
    body,
    {
      dryRun: parseDryRun(query),
    },
  );
  return send(response, 201, {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Success",
    code: 201,
  });
}

/** `PUT` of a scale subresource. */
export function updateScale(
  context: HandlerContext,
  resource: ResourceDescriptor,
  namespace: string | undefined,
  name: string,
  body: unknown,
  write: WriteOptions,
): Promise<Scale> {
  return context.registry.updateScale(resource, namespace, name, body, write);
}

/**
 * `PATCH` of a scale subresource: the patch applies to the current Scale,
 * whose resourceVersion is the base of the patch, not a precondition (unless
 * the patch set one). An apply patch is a 400 here.
 */
export async function patchScale(
  context: HandlerContext,
  resource: ResourceDescriptor,
  namespace: string | undefined,
  name: string,
  type: PatchType,
  patch: unknown,
  write: WriteOptions,
): Promise<Scale> {
  if (type === "apply") throw newBadRequest("apply patches are not supported on the scale subresource");
  const current = await context.registry.getScale(resource, namespace, name);
  const patched = applyPatch(type, current, patch);
  if (!isJsonObject(patched)) throw newBadRequest("the patch made the Scale something other than an object");
  const patchedMeta = patched.metadata as { resourceVersion?: string } | undefined;
  if (patchedMeta !== undefined && patchedMeta.resourceVersion === current.metadata?.resourceVersion) {
    delete patchedMeta.resourceVersion;
  }
  return context.registry.updateScale(resource, namespace, name, patched, write);
}
