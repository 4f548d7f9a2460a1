import { timingSafeEqual } from "node:crypto";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import {
  apiVersionOf,
  type KubeObject,
  type ListOptions,
  newBadRequest,
  newInternalError,
  newUnauthorized,
  type ResourceDescriptor,
  StatusError,
  type WatchEvent,
} from "@reconcile/api";
import { type Clock, realClock } from "@reconcile/clock";
import type { ApiServer } from "../api-server.js";
import { isJsonObject } from "../json.js";
import { applyPatch } from "../patch.js";
import type { Registry, RegistryDeleteOptions } from "../registry.js";
import {
  aggregatedDiscovery,
  aggregatedDiscoveryContentType,
  apiGroup,
  apiGroupList,
  apiResourceList,
  apiVersions,
  versionInfo,
} from "./discovery.js";
import { kubeconfigFor } from "./kubeconfig.js";
import { acceptsAggregatedDiscovery, requestedTableVersion } from "./negotiation.js";
import { openApiDocuments } from "./openapi.js";
import {
  decodeObjectBody,
  decodePatchBody,
  defaultMaxRequestBytes,
  parseJson,
  readRequestBody,
} from "./request-body.js";
import { parseRoute, type Route } from "./route.js";
import { parseIncludeObject, tableContentType, toTable } from "./table.js";

export interface HttpHandlerOptions {
  /** The registry every request runs through (the one the in-process client uses). */
  registry: Registry;
  /** Ages in Tables are computed with it. Default `realClock`. */
  clock?: Clock | undefined;
  /** The largest request body accepted, in bytes. Default 3 MiB (kube-apiserver's). */
  maxRequestBytes?: number | undefined;
  /**
   * When set, every request but `/healthz`, `/livez`, `/readyz` and `/version`
   * needs `Authorization: Bearer <token>`; others get a 401 Status. Default: no auth.
   */
  token?: string | undefined;
  /** `host:port` advertised in `/api`. Default: the request's Host header. */
  serverAddress?: string | undefined;
}

type RequestHandler = (request: http.IncomingMessage, response: http.ServerResponse) => void;

/**
 * The Kubernetes REST API as a `node:http` request handler: discovery,
 * OpenAPI, health, and every verb on the registry's resources (list, watch,
 * get, create, update, patch in four kinds, delete, deletecollection, the
 * status and scale subresources), with Table output for kubectl. Failures are
 * answered with Status objects; nothing a client sends throws out of it.
 */
export function createRequestHandler(options: HttpHandlerOptions): RequestHandler {
  const server = new RestHandler(options);
  return (request, response) => {
    server.handle(request, response).catch((error: unknown) => server.fail(response, error));
  };
}

export interface ListenOptions {
  /** Default `127.0.0.1`. */
  host?: string | undefined;
  /** Default 0: a free port. */
  port?: number | undefined;
  /** Require this bearer token (see {@link HttpHandlerOptions.token}). Default: none. */
  token?: string | undefined;
  /** Default 3 MiB. */
  maxRequestBytes?: number | undefined;
  /** Aborting closes the server, as {@link ListeningApiServer.close} does. */
  signal?: AbortSignal | undefined;
}

/** A listening HTTP server for an {@link ApiServer}. */
export interface ListeningApiServer {
  /** `http://host:port`. */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly server: http.Server;
  /** A kubeconfig (YAML) for this server, with the token if one is required. */
  kubeconfig(options?: { namespace?: string | undefined; name?: string | undefined }): string;
  /** Stops accepting connections, ends open watches and closes every socket. */
  close(): Promise<void>;
}

/** Serves `apiServer` over HTTP (`apiServer.listen` in spirit). Resolves once it listens. */
export async function listen(apiServer: ApiServer, options: ListenOptions = {}): Promise<ListeningApiServer> {
  const host = options.host ?? "127.0.0.1";
  const handler = createRequestHandler({
    registry: apiServer.registry,
    clock: apiServer.clock,
    maxRequestBytes: options.maxRequestBytes,
    token: options.token,
  });
  const server = http.createServer({ keepAliveTimeout: 65_000 }, handler);
  server.on("clientError", (_error, socket) => {
    if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
    else socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  const closed = new Promise<void>((resolve) => server.once("close", () => resolve()));
  const close = (): Promise<void> => {
    options.signal?.removeEventListener("abort", onAbort);
    if (server.listening) {
      server.close();
      server.closeAllConnections();
    }
    return closed;
  };
  const onAbort = () => void close();
  if (options.signal?.aborted) await close();
  else options.signal?.addEventListener("abort", onAbort, { once: true });
  return {
    url,
    host,
    port,
    server,
    kubeconfig: (kubeconfigOptions = {}) =>
      kubeconfigFor({ server: url, token: options.token, ...kubeconfigOptions }),
    close,
  };
}

const jsonContentType = "application/json";

class RestHandler {
  readonly #registry: Registry;
  readonly #clock: Clock;
  readonly #maxRequestBytes: number;
  readonly #token: Buffer | undefined;
  readonly #serverAddress: string | undefined;
  readonly #openApi: ReturnType<typeof openApiDocuments>;

  constructor(options: HttpHandlerOptions) {
    this.#registry = options.registry;
    this.#clock = options.clock ?? realClock;
    this.#maxRequestBytes = options.maxRequestBytes ?? defaultMaxRequestBytes;
    this.#token = options.token === undefined ? undefined : Buffer.from(`Bearer ${options.token}`);
    this.#serverAddress = options.serverAddress;
    this.#openApi = openApiDocuments(this.#registry.resources);
  }

  async handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const url = new URL(request.url ?? "/", "http://localhost");
    let route: Route;
    try {
      route = parseRoute(url.pathname, this.#registry.resources);
    } catch {
      throw newBadRequest(`the request path ${JSON.stringify(url.pathname)} is not properly escaped`);
    }
    const isPublic = route.kind === "health" || route.kind === "version";
    if (this.#token !== undefined && !isPublic && !this.#authorized(request)) {
      request.resume();
      throw newUnauthorized();
    }
    const method = request.method ?? "GET";
    if (route.kind !== "resource") {
      request.resume();
      if (method !== "GET" && method !== "HEAD" && route.kind !== "notFound")
        throw notAllowed(method, url.pathname);
      return this.#serveStatic(route, request, response);
    }
    const { resource, namespace, name, subresource } = route;
    const query = url.searchParams;
    const dryRun = parseDryRun(query);
    if (name === undefined) {
      switch (method) {
        case "GET":
          request.resume();
          if (isTrue(query.get("watch"))) return this.#watch(resource, namespace, query, request, response);
          return this.#list(resource, namespace, query, request, response);
        case "POST": {
          const body = decodeObjectBody(request.headers["content-type"], await this.#body(request));
          const created = await this.#registry.create(resource, namespace, body, { dryRun });
          return send(response, 201, created);
        }
        case "DELETE": {
          const options = await this.#deleteOptions(request, query);
          const deleted = await this.#registry.deleteCollection(resource, namespace, {
            ...options,
            labelSelector: query.get("labelSelector") ?? undefined,
            fieldSelector: query.get("fieldSelector") ?? undefined,
          });
          const { items, ...envelope } = deleted;
          return sendList(response, envelope, "items", items, jsonContentType);
        }
        default:
          request.resume();
          throw notAllowed(method, url.pathname);
      }
    }
    switch (method) {
      case "GET": {
        request.resume();
        if (subresource === "scale")
          return send(response, 200, await this.#registry.getScale(resource, namespace, name));
        const object = await this.#registry.get(resource, namespace, name);
        const tableVersion = requestedTableVersion(request.headers.accept);
        if (tableVersion !== undefined) {
          const table = toTable(
            resource,
            [object],
            {},
            {
              now: this.#clock.now(),
              version: tableVersion,
              includeObject: parseIncludeObjectParam(query),
            },
          );
          return send(response, 200, table, tableContentType(tableVersion));
        }
        return send(response, 200, object);
      }
      case "PUT": {
        const body = decodeObjectBody(request.headers["content-type"], await this.#body(request));
        if (subresource === "scale") {
          return send(
            response,
            200,
            await this.#registry.updateScale(resource, namespace, name, body, { dryRun }),
          );
        }
        const updated = await this.#registry.update(resource, namespace, name, body, {
          dryRun,
          ...(subresource === "status" ? { subresource } : {}),
        });
        return send(response, 200, updated);
      }
      case "PATCH": {
        const { type, patch } = decodePatchBody(request.headers["content-type"], await this.#body(request));
        if (subresource === "scale") {
          if (type === "apply")
            throw newBadRequest("apply patches are not supported on the scale subresource");
          const current = await this.#registry.getScale(resource, namespace, name);
          const patched = applyPatch(type, current, patch);
          if (!isJsonObject(patched))
            throw newBadRequest("the patch made the Scale something other than an object");
          // The scale read above is the base of the patch, not a precondition, unless the patch set one.
          const patchedMeta = patched.metadata as { resourceVersion?: string } | undefined;
          if (
            patchedMeta !== undefined &&
            patchedMeta.resourceVersion === current.metadata?.resourceVersion
          ) {
            delete patchedMeta.resourceVersion;
          }
          return send(
            response,
            200,
            await this.#registry.updateScale(resource, namespace, name, patched, { dryRun }),
          );
        }
        const force = query.get("force");
        const existed =
          type === "apply"
            ? await this.#registry.get(resource, namespace, name).then(
                () => true,
                () => false,
              )
            : true;
        const patched = await this.#registry.patch(resource, namespace, name, type, patch, {
          dryRun,
          ...(subresource === "status" ? { subresource } : {}),
          ...(force !== null ? { force: isTrue(force) } : {}),
        });
        return send(response, existed ? 200 : 201, patched);
      }
      case "DELETE": {
        if (subresource !== undefined) {
          request.resume();
          throw notAllowed(method, url.pathname);
        }
        const options = await this.#deleteOptions(request, query);
        const result = await this.#registry.delete(resource, namespace, name, options);
        const pending =
          result.metadata?.deletionTimestamp !== undefined &&
          !(await this.#gone(resource, namespace, result));
        return send(response, pending ? 202 : 200, result);
      }
      default:
        request.resume();
        throw notAllowed(method, url.pathname);
    }
  }

  /** Answers a failure with its Status (a 500 InternalError for anything that is not a StatusError). */
  fail(response: http.ServerResponse, error: unknown): void {
    const statusError = StatusError.isInstance(error) ? error : newInternalError(error);
    if (response.headersSent) {
      response.destroy();
      return;
    }
    send(response, statusError.status.code || 500, statusError.status);
  }

  #authorized(request: http.IncomingMessage): boolean {
    const header = request.headers.authorization;
    if (header === undefined || this.#token === undefined) return false;
    const given = Buffer.from(header);
    return given.length === this.#token.length && timingSafeEqual(given, this.#token);
  }

  #body(request: http.IncomingMessage): Promise<Buffer> {
    return readRequestBody(request, this.#maxRequestBytes);
  }

  #serveStatic(route: Route, request: http.IncomingMessage, response: http.ServerResponse): void {
    const resources = this.#registry.resources;
    switch (route.kind) {
      case "version":
        send(response, 200, versionInfo());
        return;
      case "health":
        response.writeHead(200, {
          "Content-Type": "text/plain; charset=utf-8",
          "X-Content-Type-Options": "nosniff",
        });
        response.end("ok");
        return;
      case "api":
      case "apis":
        if (acceptsAggregatedDiscovery(request.headers.accept)) {
          send(
            response,
            200,
            aggregatedDiscovery(resources, route.kind === "api"),
            aggregatedDiscoveryContentType,
          );
        } else if (route.kind === "api") {
          send(response, 200, apiVersions(resources, this.#serverAddress ?? request.headers.host ?? ""));
        } else {
          send(response, 200, apiGroupList(resources));
        }
        return;
      case "group":
        sendOrNotFound(response, apiGroup(resources, route.group));
        return;
      case "groupVersion":
        sendOrNotFound(response, apiResourceList(resources, route.group, route.version));
        return;
      case "openapiIndex":
        send(response, 200, this.#openApi.index);
        return;
      case "openapiDocument":
        sendOrNotFound(response, this.#openApi.byPath.get(route.path));
        return;
      default:
        sendOrNotFound(response, undefined);
        return;
    }
  }

  async #list(
    resource: ResourceDescriptor,
    namespace: string | undefined,
    query: URLSearchParams,
    request: http.IncomingMessage,
    response: http.ServerResponse,
  ): Promise<void> {
    const tableVersion = requestedTableVersion(request.headers.accept);
    const includeObject = tableVersion === undefined ? undefined : parseIncludeObjectParam(query);
    const list = await this.#registry.list(resource, namespace, listOptions(query));
    if (tableVersion !== undefined) {
      const table = toTable(resource, list.items, list.metadata, {
        now: this.#clock.now(),
        version: tableVersion,
        includeObject,
      });
      const { rows, ...rest } = table;
      return sendList(response, rest, "rows", rows, tableContentType(tableVersion));
    }
    const { items, ...envelope } = list;
    return sendList(response, envelope, "items", items, jsonContentType);
  }

  async #watch(
    resource: ResourceDescriptor,
    namespace: string | undefined,
    query: URLSearchParams,
    request: http.IncomingMessage,
    response: http.ServerResponse,
  ): Promise<void> {
    const tableVersion = requestedTableVersion(request.headers.accept);
    const includeObject = tableVersion === undefined ? undefined : parseIncludeObjectParam(query);
    const timeout = query.get("timeoutSeconds");
    const stop = new AbortController();
    const onClose = () => stop.abort();
    response.on("close", onClose);
    const watch = await this.#registry.watch(resource, namespace, {
      resourceVersion: query.get("resourceVersion") ?? undefined,
      labelSelector: query.get("labelSelector") ?? undefined,
      fieldSelector: query.get("fieldSelector") ?? undefined,
      allowWatchBookmarks: isTrue(query.get("allowWatchBookmarks")),
      timeoutSeconds: timeout === null ? undefined : parseNumber("timeoutSeconds", timeout),
      signal: stop.signal,
    });
    try {
      response.writeHead(200, {
        "Content-Type": tableVersion === undefined ? jsonContentType : tableContentType(tableVersion),
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
              now: this.#clock.now(),
              version: tableVersion,
              includeObject,
              noHeaders: headersSent,
            },
          );
          headersSent = true;
          line = JSON.stringify({ type: event.type, object: table });
        } else {
          line = JSON.stringify(typedEvent(resource, event));
        }
        // Events that arrive in one tick go out in one socket write.
        if (!corked) {
          corked = true;
          response.cork();
          process.nextTick(uncork);
        }
        if (!response.write(`${line}\n`)) await drained(response);
      }
    } finally {
      watch.stop();
      response.off("close", onClose);
      if (!response.writableEnded && !response.destroyed) response.end();
    }
  }

  async #deleteOptions(
    request: http.IncomingMessage,
    query: URLSearchParams,
  ): Promise<RegistryDeleteOptions> {
    const body = await this.#body(request);
    const options: RegistryDeleteOptions = {};
    const fromBody = body.length === 0 ? {} : parseJson(body);
    if (!isJsonObject(fromBody)) throw newBadRequest("the DeleteOptions body must be a JSON object");
    const grace = fromBody.gracePeriodSeconds ?? query.get("gracePeriodSeconds") ?? undefined;
    if (grace !== undefined) {
      const seconds = typeof grace === "number" ? grace : parseNumber("gracePeriodSeconds", String(grace));
      options.gracePeriodSeconds = seconds;
    }
    const policy = fromBody.propagationPolicy ?? query.get("propagationPolicy") ?? undefined;
    if (policy !== undefined) {
      if (typeof policy !== "string") throw newBadRequest("propagationPolicy must be a string");
      options.propagationPolicy = policy;
    } else {
      const orphan = fromBody.orphanDependents ?? query.get("orphanDependents") ?? undefined;
      if (orphan !== undefined)
        options.propagationPolicy = orphan === true || orphan === "true" ? "Orphan" : "Background";
    }
    const preconditions = fromBody.preconditions;
    if (preconditions !== undefined && preconditions !== null) {
      if (!isJsonObject(preconditions)) throw newBadRequest("preconditions must be an object");
      const { uid, resourceVersion } = preconditions;
      if (
        (uid !== undefined && typeof uid !== "string") ||
        (resourceVersion !== undefined && typeof resourceVersion !== "string")
      ) {
        throw newBadRequest("preconditions.uid and preconditions.resourceVersion must be strings");
      }
      options.preconditions = {
        ...(uid !== undefined ? { uid } : {}),
        ...(resourceVersion !== undefined ? { resourceVersion } : {}),
      };
    }
    const dryRun = fromBody.dryRun;
    if (Array.isArray(dryRun) && dryRun.includes("All")) options.dryRun = "All";
    else if (parseDryRun(query) === "All") options.dryRun = "All";
    return options;
  }

  /** Whether the object a delete returned is gone from storage (deleted at once) rather than marked. */
  async #gone(
    resource: ResourceDescriptor,
    namespace: string | undefined,
    object: KubeObject,
  ): Promise<boolean> {
    try {
      const current = await this.#registry.get(resource, namespace, object.metadata?.name ?? "");
      return current.metadata?.uid !== object.metadata?.uid;
    } catch {
      return true;
    }
  }
}

function send(
  response: http.ServerResponse,
  code: number,
  body: unknown,
  contentType = jsonContentType,
): void {
  const text = JSON.stringify(body);
  response.writeHead(code, {
    "Content-Type": contentType,
    "Content-Length": Buffer.byteLength(text),
    "Cache-Control": "no-cache, private",
  });
  response.end(text);
}

/** A list's items are serialized in batches of this many bytes, each written on its own. */
const listBatchBytes = 256 * 1024;

/**
 * Sends a list item by item: the envelope, then the items in batches, waiting
 * for the socket to drain and yielding to the event loop between batches. A
 * 100,000-pod list so never holds the server's event loop in one
 * `JSON.stringify`, nor needs one string of the whole body.
 */
async function sendList(
  response: http.ServerResponse,
  envelope: object,
  itemsKey: string,
  items: readonly unknown[],
  contentType: string,
): Promise<void> {
  const head = JSON.stringify({ ...envelope, [itemsKey]: [] });
  response.writeHead(200, { "Content-Type": contentType, "Cache-Control": "no-cache, private" });
  let batch = head.slice(0, -2);
  for (let i = 0; i < items.length; i++) {
    batch += (i === 0 ? "" : ",") + JSON.stringify(items[i]);
    if (batch.length >= listBatchBytes) {
      if (response.destroyed) return;
      if (!response.write(batch)) await drained(response);
      batch = "";
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  response.end(`${batch}]}`);
}

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

function sendOrNotFound(response: http.ServerResponse, body: object | undefined): void {
  if (body !== undefined) {
    send(response, 200, body);
    return;
  }
  send(response, 404, {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message: "the server could not find the requested resource",
    reason: "NotFound",
    details: {},
    code: 404,
  });
}

function notAllowed(method: string, path: string): StatusError {
  return new StatusError({
    code: 405,
    reason: "MethodNotAllowed",
    message: `the server does not allow this method on the requested resource (${method} ${path})`,
  });
}

/** Watch events carry `apiVersion` and `kind` on their objects, as kube-apiserver's do. */
function typedEvent(resource: ResourceDescriptor, event: WatchEvent): WatchEvent {
  if (event.type === "ERROR" || event.type === "BOOKMARK") return event;
  const object = event.object;
  if (object.apiVersion !== undefined && object.kind !== undefined) return event;
  return { type: event.type, object: { ...object, apiVersion: apiVersionOf(resource), kind: resource.kind } };
}

function listOptions(query: URLSearchParams): ListOptions {
  const limit = query.get("limit");
  const match = query.get("resourceVersionMatch");
  if (match !== null && match !== "" && match !== "NotOlderThan" && match !== "Exact") {
    throw newBadRequest(
      `resourceVersionMatch: Unsupported value: "${match}": supported values: "Exact", "NotOlderThan"`,
    );
  }
  return {
    labelSelector: query.get("labelSelector") ?? undefined,
    fieldSelector: query.get("fieldSelector") ?? undefined,
    limit: limit === null || limit === "" ? undefined : parseNumber("limit", limit),
    continue: query.get("continue") ?? undefined,
    resourceVersion: query.get("resourceVersion") ?? undefined,
    resourceVersionMatch: match === null || match === "" ? undefined : match,
  };
}

function parseIncludeObjectParam(query: URLSearchParams) {
  try {
    return parseIncludeObject(query.get("includeObject"));
  } catch (error) {
    throw newBadRequest((error as Error).message);
  }
}

function parseDryRun(query: URLSearchParams): "All" | undefined {
  const values = query.getAll("dryRun");
  if (values.length === 0) return undefined;
  for (const value of values) {
    if (value !== "All")
      throw newBadRequest(`dryRun: Unsupported value: "${value}": supported values: "All"`);
  }
  return "All";
}

function parseNumber(name: string, value: string): number {
  if (!/^-?[0-9]+$/.test(value))
    throw newBadRequest(`${name}: Invalid value: "${value}": must be an integer`);
  return Number(value);
}

function isTrue(value: string | null): boolean {
  return value === "true" || value === "1";
}
