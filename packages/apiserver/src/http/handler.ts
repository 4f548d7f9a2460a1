import type * as http from "node:http";
import { newBadRequest } from "@reconcile/api";
import { checkHost, splitTarget } from "./access.js";
import { auditIdOf, type RequestAudit } from "./audit/event.js";
import { rbacEscalationCheck } from "./auth/escalation.js";
import { authorizeRequest, createAuthorization } from "./auth/request-auth.js";
import { answerReview, reviewMessageOf, reviewRoute } from "./auth/reviews.js";
import type { UserInfo } from "./auth/user.js";
import { markAuthorized } from "./connection-limiter.js";
import { HandlerContext, type HttpHandlerOptions } from "./context.js";
import { admitRequest } from "./flow-control/filter.js";
import { serveHealth } from "./health.js";
import { serveNonResource, serveOperational } from "./non-resource.js";
import { isTrue, parseDryRun, type WriteOptions } from "./parameters.js";
import { servePodConnect } from "./pod-connect.js";
import { serveProxy } from "./proxy.js";
import { serveGet, serveList } from "./reads.js";
import { decodeObjectBody, patchTypeOf } from "./request-body.js";
import { addWarnings, limitTime, notAllowed, send, sendFailure } from "./respond.js";
import { parseRoute, type ResourceRoute, type Route } from "./route.js";
import { objectServes, serveSubresourceCreate } from "./subresources.js";
import { serveWatch } from "./watch.js";
import {
  collectionAllows,
  serveCreate,
  serveDelete,
  serveDeleteCollection,
  servePatch,
  serveUpdate,
} from "./writes.js";

export type { HttpHandlerOptions } from "./context.js";

export type RequestHandler = (request: http.IncomingMessage, response: http.ServerResponse) => void;

/**
 * The Kubernetes REST API as a `node:http` request handler: discovery,
 * OpenAPI, health, and every verb on the registry's resources (list, watch,
 * get, create, update, patch in four kinds, delete, deletecollection, the
 * status and scale subresources), with Table output for kubectl. Failures are
 * answered with Status objects; nothing a client sends throws out of it.
 */
export function createRequestHandler(options: HttpHandlerOptions): RequestHandler {
  const context = new HandlerContext(options);
  return (request, response) => {
    const auditID = auditIdOf(request, response);
    const audit = context.auditor?.begin(request, response, auditID);
    handle(context, request, response, audit).catch((error: unknown) => sendFailure(response, error));
  };
}

/**
 * Routes one request: who may ask (Host, token), its deadline, then the
 * non-resource paths, subresource POSTs, pod connections, and the verbs on a
 * resource collection or object.
 */
async function handle(
  context: HandlerContext,
  request: http.IncomingMessage,
  response: http.ServerResponse,
  audit: RequestAudit | undefined,
): Promise<void> {
  const { pathname, search } = splitTarget(request.url ?? "");
  const query = new URLSearchParams(search);
  const method = request.method ?? "GET";
  const admitted = await admit(context, request, response, audit, method, pathname, query);
  if (admitted === undefined) return;
  const { route, user } = admitted;
  // Until the APIServices are listed, discovery and routing could miss an aggregated group.
  if (context.aggregator !== undefined && !context.aggregator.synced) await context.aggregator.start();
  const aggregated = context.aggregator?.remoteFor(pathname);
  if (aggregated !== undefined)
    return context.aggregator!.proxy(
      aggregated,
      user,
      search === "" ? pathname : `${pathname}?${search}`,
      request,
      response,
    );
  const review = method === "POST" ? reviewRoute(pathname) : undefined;
  if (review !== undefined) {
    const body = decodeObjectBody(
      request.headers["content-type"],
      await context.body(request, response),
      reviewMessageOf,
    );
    return send(response, 201, await answerReview(review, body, user, context.reviewContext()));
  }
  if (method === "GET" && context.authn !== undefined) {
    const issuer = context.authn.auth.tokens;
    if (pathname === "/.well-known/openid-configuration")
      return send(response, 200, issuer.openIdConfiguration());
    if (pathname === "/openid/v1/jwks") return send(response, 200, issuer.jwks(), "application/jwk-set+json");
  }
  const operational = serveOperational(context, method, pathname, query, request, response);
  if (operational !== false) return operational;
  if (route.kind === "podConnect") {
    const { namespace, name, action } = route;
    return servePodConnect(
      context.registry,
      context.kubeletConnection,
      action,
      namespace,
      name,
      method,
      query,
      request,
      response,
    );
  }
  if (route.kind === "proxy")
    return serveProxy(context, route, pathname, search === "" ? "" : `?${search}`, request, response);
  if (route.kind === "health" && (method === "GET" || method === "HEAD")) {
    request.resume();
    return serveHealth(context, route.check, route.name, query.has("verbose"), response);
  }
  if (route.kind !== "resource") {
    request.resume();
    if (method !== "GET" && method !== "HEAD" && route.kind !== "notFound")
      throw notAllowed(method, pathname);
    return serveNonResource(context, route, request, response);
  }
  const warning = context.warningOf(route.resource);
  // A deprecated version's warning goes with every answer about it, errors included (as upstream's filter).
  if (warning !== undefined) addWarnings(response, [warning]);
  const write: WriteOptions = {
    dryRun: parseDryRun(query),
    fieldManager: query.get("fieldManager") || undefined,
    userAgent: request.headers["user-agent"],
    admit: context.authn && rbacEscalationCheck(context.authn.auth, user, route.resource),
    user,
    warnings: [],
    annotate: audit === undefined ? undefined : (key, value, level) => audit.annotate(key, value, level),
  };
  if (route.name === undefined)
    return serveCollection(context, route, method, pathname, query, write, request, response);
  const object = route as ResourceRoute & { name: string };
  // Only a PUT of a kind that creates on update, or an apply, can turn into a create.
  const mayCreate =
    method === "PUT"
      ? context.registry.definitions.get(route.resource)?.allowsCreateOnUpdate === true
      : method === "PATCH" && patchTypeOf(request.headers["content-type"]) === "apply";
  if (mayCreate)
    write.mayCreate = createAuthorization(
      context.authn?.auth,
      user,
      route.resource,
      route.namespace,
      route.name,
    );
  if (!objectServes(context, object, method)) {
    // A verb the object or its subresource does not implement (kube-apiserver registers none for it).
    request.resume();
    throw notAllowed(method, pathname);
  }
  switch (method) {
    case "GET": {
      request.resume();
      const { resource, namespace, name, subresource } = object;
      return serveGet(context, resource, namespace, name, subresource, query, request, response);
    }
    case "POST":
      return serveSubresourceCreate(context, object, query, write, request, response);
    case "PUT":
      return serveUpdate(context, object, query, write, request, response);
    case "PATCH":
      return servePatch(context, object, query, write, request, response);
    case "DELETE":
      return serveDelete(context, object, method, pathname, query, write, request, response);
    default:
      request.resume();
      throw notAllowed(method, pathname);
  }
}

/**
 * Who may ask and when: the Host and token, the route, the deadline, the
 * user (authenticated, impersonated, authorized), then API Priority and
 * Fairness. Undefined when the request has been answered already (a 429).
 */
async function admit(
  context: HandlerContext,
  request: http.IncomingMessage,
  response: http.ServerResponse,
  audit: RequestAudit | undefined,
  method: string,
  pathname: string,
  query: URLSearchParams,
): Promise<{ route: Exclude<Route, { kind: "invalid" }>; user: UserInfo } | undefined> {
  checkHost(request, context.token);
  let route: Route;
  try {
    route = parseRoute(pathname, context.routableResources(), context.subresourceNamesOf);
  } catch {
    throw newBadRequest(`the request path ${JSON.stringify(pathname)} is not properly escaped`);
  }
  const watch = method === "GET" && isTrue(query.get("watch"));
  // Long-running requests (watch, and log, exec, attach, portforward, proxy) have no deadline, as
  // kube-apiserver's; those but watches are not flow-controlled either.
  const longRunning = route.kind === "podConnect" || route.kind === "proxy";
  if (!watch && !longRunning) limitTime(response, context.clock, context.requestTimeoutMs);
  if (route.kind === "invalid") {
    request.resume();
    throw newBadRequest(route.message);
  }
  const user = await authorizeRequest(context.authn, request, pathname, query, audit);
  if (context.authn === undefined || user.groups.includes("system:authenticated"))
    markAuthorized(request.socket);
  if (context.flowControl === undefined || longRunning) return { route, user };
  const flow = context.flowControl;
  const admitted = admitRequest(flow, {
    user,
    method,
    pathname,
    query,
    watch,
    request,
    response,
    metrics: context.metrics,
  });
  return (admitted instanceof Promise ? await admitted : admitted) ? { route, user } : undefined;
}

/** The verbs on a collection: list or watch, create, deletecollection. */
async function serveCollection(
  context: HandlerContext,
  route: ResourceRoute,
  method: string,
  pathname: string,
  query: URLSearchParams,
  write: WriteOptions,
  request: http.IncomingMessage,
  response: http.ServerResponse,
): Promise<void> {
  const { resource, namespace } = route;
  const definition = context.registry.definitions.get(resource);
  if (definition === undefined || !collectionAllows(definition, namespace, method)) {
    request.resume();
    throw notAllowed(method, pathname);
  }
  switch (method) {
    case "GET":
      request.resume();
      if (isTrue(query.get("watch")))
        return serveWatch(context, resource, namespace, query, request, response);
      return serveList(context, resource, namespace, query, request, response);
    case "POST":
      return serveCreate(context, route, query, write, request, response);
    case "DELETE":
      return serveDeleteCollection(context, route, query, write, request, response);
    default:
      request.resume();
      throw notAllowed(method, pathname);
  }
}
