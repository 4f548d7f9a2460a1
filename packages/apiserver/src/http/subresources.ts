import type * as http from "node:http";
import type { SubresourceHandler } from "../kinds/definition.js";
import type { HandlerContext } from "./context.js";
import { admissionOptions, parseDryRun, validateWriteOptions, type WriteOptions } from "./parameters.js";
import { decodeObjectBody } from "./request-body.js";
import { addWarnings, send } from "./respond.js";
import type { ResourceRoute } from "./route.js";

/** The verbs of an object itself; its subresources serve what their handlers implement. */
const objectMethods: ReadonlySet<string> = new Set(["GET", "PUT", "PATCH", "DELETE"]);

/** Which handler member serves each method on a subresource (`GET` of a status: its `get`). */
const handlerMember: Readonly<Record<string, keyof SubresourceHandler>> = {
  GET: "get",
  PUT: "update",
  PATCH: "patch",
  POST: "create",
};

/** Whether the object (or its subresource) serves `method`; otherwise the answer is a 405. */
export function objectServes(context: HandlerContext, route: ResourceRoute, method: string): boolean {
  if (route.subresource === undefined) {
    // A verb the kind does not serve has no route upstream (ComponentStatus, the metrics kinds: get only).
    const verbs = context.registry.definitions.get(route.resource)?.verbs;
    const verb = objectVerbs[method];
    return objectMethods.has(method) && (verbs === undefined || verb === undefined || verbs.includes(verb));
  }
  const member = Object.hasOwn(handlerMember, method) ? handlerMember[method] : undefined;
  const handlers = context.subresourcesOf(route.resource);
  const handler = Object.hasOwn(handlers, route.subresource) ? handlers[route.subresource] : undefined;
  return member !== undefined && typeof handler?.[member] === "function";
}

/** The verb each method on an object asks for. */
const objectVerbs: Readonly<Record<string, string>> = {
  GET: "get",
  PUT: "update",
  PATCH: "patch",
  DELETE: "delete",
};

/**
 * `POST` to a subresource a kind's definition handles (`pods/{name}/binding`,
 * `pods/{name}/eviction`): a 201 Success Status, as kube-apiserver answers.
 */
export async function serveSubresourceCreate(
  context: HandlerContext,
  route: ResourceRoute & { name: string },
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
  await context.registry.createSubresource(
    route.resource,
    route.namespace,
    route.name,
    route.subresource ?? "",
    body,
    { dryRun: parseDryRun(query), ...admissionOptions(write) },
  );
  addWarnings(response, write.warnings ?? []);
  return send(response, 201, {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Success",
    code: 201,
  });
}
