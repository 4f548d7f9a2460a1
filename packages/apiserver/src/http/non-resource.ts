import type * as http from "node:http";
import { type APIService, apiServices } from "@reconcile/api";
import { openAPIV2ProtobufType } from "../schemas/openapi-v2.js";
import { isAvailable } from "./aggregation/availability.js";
import type { HandlerContext } from "./context.js";
import {
  aggregatedDiscovery,
  aggregatedDiscoveryContentType,
  apiGroup,
  apiGroupList,
  apiResourceList,
  apiVersions,
  versionInfo,
} from "./discovery.js";
import { flowControlDump } from "./flow-control/debug.js";
import { acceptsAggregatedDiscovery } from "./negotiation.js";
import type { ApiServerMetrics } from "./request-metrics.js";
import { send, sendOrNotFound } from "./respond.js";
import type { Route } from "./route.js";

/**
 * Answers the operators' paths: `/metrics`, and API Priority and Fairness's
 * debug dumps; false for any other path.
 */
export function serveOperational(
  context: HandlerContext,
  method: string,
  pathname: string,
  query: URLSearchParams,
  request: http.IncomingMessage,
  response: http.ServerResponse,
): false | undefined | Promise<void> {
  if (pathname === "/metrics" && method === "GET" && context.metrics !== undefined) {
    request.resume();
    return serveMetrics(context, context.metrics, response);
  }
  if (context.flowControl === undefined || !pathname.startsWith("/debug/api_priority_and_fairness/"))
    return false;
  const dump = flowControlDump(context.flowControl, pathname, query);
  if (dump === undefined) return false;
  request.resume();
  response.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
  response.end(dump);
  return undefined;
}

/** Paths that name no resource: version, health, discovery (legacy and aggregated), OpenAPI. */
export function serveNonResource(
  context: HandlerContext,
  route: Route,
  request: http.IncomingMessage,
  response: http.ServerResponse,
): void {
  const resources = context.routableResources();
  const aggregated = context.aggregatedGroupVersions();
  switch (route.kind) {
    case "version":
      send(response, 200, versionInfo());
      return;
    case "health":
      throw new Error("health is served by serveHealth");
    case "api":
    case "apis":
      if (acceptsAggregatedDiscovery(request.headers.accept)) {
        send(
          response,
          200,
          aggregatedDiscovery(context.discoveryDefinitions(), route.kind === "api", aggregated),
          aggregatedDiscoveryContentType,
        );
      } else if (route.kind === "api") {
        send(response, 200, apiVersions(resources, context.serverAddress ?? request.headers.host ?? ""));
      } else {
        send(response, 200, apiGroupList(resources, aggregated));
      }
      return;
    case "group":
      sendOrNotFound(response, apiGroup(resources, route.group, aggregated));
      return;
    case "groupVersion":
      sendOrNotFound(response, apiResourceList(context.discoveryDefinitions(), route.group, route.version));
      return;
    case "openapiIndex":
      send(response, 200, context.openApiDocuments().index);
      return;
    case "openapiDocument":
      sendOrNotFound(response, context.openApiDocuments().byPath.get(route.path));
      return;
    case "openapiV2": {
      // kubectl asks for gnostic's protobuf; anyone else gets JSON.
      const v2 = context.openApiDocuments().v2();
      if ((request.headers.accept ?? "").includes(openAPIV2ProtobufType)) {
        // As kube-openapi answers it: the `@` of the requested type is no valid media type for Go's parser.
        response.writeHead(200, {
          "Content-Type": "application/octet-stream",
          "Content-Length": v2.protobuf.length,
        });
        response.end(v2.protobuf);
      } else send(response, 200, v2.json);
      return;
    }
    default:
      sendOrNotFound(response, undefined);
      return;
  }
}

/** `GET /metrics`: storage object counts as of now (kube-apiserver's `apiserver_storage_objects`), then the exposition. */
export async function serveMetrics(
  context: HandlerContext,
  metrics: ApiServerMetrics,
  response: http.ServerResponse,
): Promise<void> {
  const registry = context.registry;
  for (const resource of registry.resources) {
    const list = await registry.list(resource, undefined, {});
    metrics.storageObjects(
      resource.group ? `${resource.plural}.${resource.group}` : resource.plural,
      list.items.length,
    );
  }
  const flowControl = context.flowControl;
  if (metrics.flowControlLimits !== undefined && flowControl !== undefined) {
    for (const [level, limits] of flowControl.levelLimits())
      metrics.flowControlLimits(level, {
        nominal: limits.nominal,
        lower: limits.lower,
        upper: limits.upper,
        current: limits.current,
        target: limits.target,
        demandHighWatermark: limits.stats.highWatermark,
        demandAverage: limits.stats.average,
        demandStdev: limits.stats.deviation,
        demandSmoothed: limits.stats.smoothed,
      });
    metrics.flowControlFairFrac?.(flowControl.fairFrac);
  } else if (metrics.flowControlSeats !== undefined && flowControl !== undefined)
    for (const [level, set] of flowControl.queueSets()) metrics.flowControlSeats(level, set.concurrencyLimit);
  if (metrics.flowControlRequests !== undefined && context.flowControl !== undefined)
    for (const counts of context.flowControl.requestCounts())
      metrics.flowControlRequests(counts.priorityLevel, counts.flowSchema, counts.executing, counts.waiting, {
        executing: counts.executingSeats,
        waiting: counts.waitingSeats,
      });
  await reportAPIServices(context, metrics);
  const { contentType, body } = await metrics.expose();
  response.writeHead(200, { "content-type": contentType });
  response.end(body);
}

/** kube-aggregator's availability metrics: each APIService's verdict now, and its falls so far. */
async function reportAPIServices(context: HandlerContext, metrics: ApiServerMetrics): Promise<void> {
  if (
    metrics.apiServiceUnavailable !== undefined &&
    context.registry.definitions.get(apiServices) !== undefined
  ) {
    const listed = await context.registry.list(apiServices, undefined, {});
    for (const item of listed.items as APIService[])
      metrics.apiServiceUnavailable(item.metadata?.name ?? "", !isAvailable(item));
  }
  if (metrics.apiServiceUnavailableCount !== undefined && context.aggregator !== undefined)
    for (const [name, reason, count] of context.aggregator.unavailableCounts())
      metrics.apiServiceUnavailableCount(name, reason, count);
}
