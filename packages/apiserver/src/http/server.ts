import { timingSafeEqual } from "node:crypto";
import * as http from "node:http";
import * as https from "node:https";
import { type AddressInfo, isIPv4, isIPv6, type Socket } from "node:net";
import {
  apiVersionOf,
  type ListOptions,
  newBadRequest,
  newInternalError,
  newInvalid,
  newTimeout,
  newUnauthorized,
  type ResourceDescriptor,
  StatusError,
  type WatchEvent,
} from "@reconcile/api";
import { type Clock, realClock } from "@reconcile/clock";
import { isJsonObject } from "../json.js";
import { FieldErrors } from "../registry/field-errors.js";
import { applyPatch } from "../registry/patch.js";
import type { Registry, RegistryDeleteOptions } from "../registry/registry.js";
import {
  aggregatedDiscovery,
  aggregatedDiscoveryContentType,
  apiGroup,
  apiGroupList,
  apiResourceList,
  apiVersions,
  servesDeleteCollection,
  versionInfo,
} from "./discovery.js";
import { kubeconfigFor } from "./kubeconfig.js";
import { acceptsAggregatedDiscovery, requestedTableVersion } from "./negotiation.js";
import { openApiDocuments } from "./openapi.js";
import { type KubeletConnection, servePodConnect } from "./pod-connect.js";
import type { Printer } from "./printers.js";
import {
  decodeObjectBody,
  decodePatchBody,
  defaultMaxRequestBytes,
  parseJson,
  readRequestBody,
} from "./request-body.js";
import { type ApiServerMetrics, observeRequest, type RequestLogger } from "./request-metrics.js";
import { parseRoute, type Route } from "./route.js";
import {
  requestUser,
  selfSubjectAccessReview,
  selfSubjectAccessReviewPath,
  selfSubjectReview,
  selfSubjectReviewPath,
} from "./self-reviews.js";
import { parseIncludeObject, tableContentType, toTable } from "./table.js";
import { generateServingCertificates } from "./tls.js";

export interface HttpHandlerOptions {
  /** The registry every request runs through (the one the in-process client uses). */
  registry: Registry;
  /** Serves `GET /metrics` from it, after reporting the storage object counts. */
  metrics?: ApiServerMetrics | undefined;
  /** Ages in Tables are computed with it. Default `realClock`. */
  clock?: Clock | undefined;
  /** The largest request body accepted, in bytes. Default 3 MiB (kube-apiserver's). */
  maxRequestBytes?: number | undefined;
  /**
   * When set, every request but `/healthz`, `/livez`, `/readyz` and `/version`
   * needs `Authorization: Bearer <token>`; others get a 401 Status. Default: no
   * auth, and then only requests whose `Host` is a loopback name or address
   * are answered (others get a 403), so a web page cannot reach the server
   * through DNS rebinding.
   */
  token?: string | undefined;
  /** `host:port` advertised in `/api`. Default: the request's Host header. */
  serverAddress?: string | undefined;
  /**
   * A request other than a watch that has not been answered in this time gets
   * a 504 Timeout (or, with its answer under way, its connection closed), as
   * kube-apiserver's `--request-timeout`. Measured on `clock`. Default 60,000 ms.
   */
  requestTimeoutMs?: number | undefined;
  /**
   * A watch whose client has taken nothing of what the server wrote for this
   * long is closed: a client that stops reading must not hold a watch (and its
   * buffered events) forever. Measured on `clock`. Default 30,000 ms.
   */
  watchWriteTimeoutMs?: number | undefined;
  /** How `pods/log` reaches the pod's kubelet. Default: none (logs of a pod on a node are a 500). */
  kubeletConnection?: KubeletConnection | undefined;
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

/** kube-apiserver's `--request-timeout` default. */
const defaultRequestTimeoutMs = 60_000;
const defaultWatchWriteTimeoutMs = 30_000;

export interface ListenOptions {
  /**
   * Where request and storage metrics go, and what `GET /metrics` serves
   * (`prometheusApiServerMetrics` of @reconcile/controller-manager is one).
   * Default: none, and `/metrics` is 404.
   */
  metrics?: ApiServerMetrics | undefined;
  /** A request log line per request (verb, URI, resource, status, latency) in pino's shape. Default: none. */
  requestLog?: RequestLogger | undefined;
  /** Default `127.0.0.1`. */
  host?: string | undefined;
  /** How `pods/log` reaches the pod's kubelet. Default: none. */
  kubeletConnection?: KubeletConnection | undefined;
  /** Default 0: a free port. */
  port?: number | undefined;
  /** Require this bearer token (see {@link HttpHandlerOptions.token}). Default: none. */
  token?: string | undefined;
  /**
   * Serve HTTPS: `true` generates a CA and a serving certificate for
   * `localhost`, `127.0.0.1`, `::1` and the host at start (as kube-apiserver
   * does without `--tls-cert-file`); or give the PEM certificate and key, and
   * the CA that signed it for the kubeconfig. kubectl sends a bearer token only
   * over HTTPS. Default `false`: plain HTTP.
   */
  tls?: boolean | { cert: string; key: string; ca?: string | undefined } | undefined;
  /** Default 3 MiB. */
  maxRequestBytes?: number | undefined;
  /**
   * The most connections held open at once. A connection beyond it displaces
   * the oldest idle one, preferring connections that never carried an
   * authorized request, so a flood of idle connections cannot lock clients
   * out; when none is idle, the new connection is closed. Default 4,096.
   */
  maxConnections?: number | undefined;
  /**
   * Time to receive a request's headers, from connection or keep-alive reuse
   * (kube's `ReadHeaderTimeout`); at most `requestTimeoutMs`. Default 32,000 ms.
   */
  headersTimeoutMs?: number | undefined;
  /**
   * Time to receive a whole request, and to answer one that is not a watch
   * (see {@link HttpHandlerOptions.requestTimeoutMs}). Default 60,000 ms.
   */
  requestTimeoutMs?: number | undefined;
  /** How long an idle keep-alive connection stays open (kube's `IdleTimeout`). Default 90,000 ms. */
  keepAliveTimeoutMs?: number | undefined;
  /** See {@link HttpHandlerOptions.watchWriteTimeoutMs}. Default 30,000 ms. */
  watchWriteTimeoutMs?: number | undefined;
  /** Aborting closes the server, as {@link ListeningApiServer.close} does. */
  signal?: AbortSignal | undefined;
}

/**
 * What {@link listen} serves: an `ApiServer` is one, and so is any pair of a
 * registry and its clock (the parts {@link createRequestHandler} takes too).
 */
export interface Servable {
  readonly registry: Registry;
  readonly clock?: Clock | undefined;
}

/** A listening HTTP server for an `ApiServer`. */
export interface ListeningApiServer {
  /** `http://host:port`, or `https://host:port` with `tls`. */
  readonly url: string;
  /** The CA (PEM) clients verify the server with, when it serves HTTPS and one is known. */
  readonly certificateAuthority: string | undefined;
  readonly host: string;
  readonly port: number;
  readonly server: http.Server;
  /** A kubeconfig (YAML) for this server, with the token if one is required and the CA if known. */
  kubeconfig(options?: { namespace?: string | undefined; name?: string | undefined }): string;
  /** Stops accepting connections, ends open watches and closes every socket. */
  close(): Promise<void>;
}

/** Serves a registry over HTTP (`apiServer.listen` in spirit). Resolves once it listens. */
export async function listen(
  { registry, clock }: Servable,
  options: ListenOptions = {},
): Promise<ListeningApiServer> {
  const host = options.host ?? "127.0.0.1";
  const requestTimeoutMs = options.requestTimeoutMs ?? defaultRequestTimeoutMs;
  const headersTimeoutMs = options.headersTimeoutMs ?? 32_000;
  const handler = createRequestHandler({
    registry,
    clock,
    maxRequestBytes: options.maxRequestBytes,
    token: options.token,
    requestTimeoutMs,
    watchWriteTimeoutMs: options.watchWriteTimeoutMs,
    kubeletConnection: options.kubeletConnection,
    metrics: options.metrics,
  });
  const limiter = new ConnectionLimiter(options.maxConnections ?? 4096);
  const serve: RequestHandler = (request, response) => {
    limiter.busy(request.socket, response);
    if (options.metrics !== undefined || options.requestLog !== undefined)
      observeRequest(request, response, options.metrics, options.requestLog);
    handler(request, response);
  };
  const serverOptions: http.ServerOptions = {
    keepAliveTimeout: options.keepAliveTimeoutMs ?? 90_000,
    headersTimeout: headersTimeoutMs,
    requestTimeout: requestTimeoutMs,
    // Node checks those two timeouts on this interval (default 30 s, which would double them).
    connectionsCheckingInterval: Math.max(10, Math.min(headersTimeoutMs, requestTimeoutMs) / 4),
  };
  const tls = await servingCertificateFor(options.tls, host);
  const server: http.Server =
    tls === undefined
      ? http.createServer(serverOptions, serve)
      : https.createServer({ ...serverOptions, cert: tls.cert, key: tls.key }, serve);
  // Requests arrive on the TLS socket, so that is the one the limiter must know.
  server.on(tls === undefined ? "connection" : "secureConnection", (socket: Socket) =>
    limiter.accept(socket),
  );
  // What node:http cannot parse, or does not receive in time, is answered with a Status too.
  server.on("clientError", (error: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    const timedOut = error.code === "ERR_HTTP_REQUEST_TIMEOUT";
    const status = timedOut
      ? { code: 408, reason: "Timeout", message: "the request was not received in time" }
      : {
          code: 400,
          reason: "BadRequest",
          message: `the request could not be parsed (${error.code ?? error.message})`,
        };
    const text = JSON.stringify({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      ...status,
    });
    socket.end(
      `HTTP/1.1 ${status.code} ${timedOut ? "Request Timeout" : "Bad Request"}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`,
    );
  });
  // Answered by the handler, which sends 100 Continue only when it is about to read the body:
  // an over-limit body is refused with a 413 the client need not send.
  server.on("checkContinue", serve);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const url = `${tls === undefined ? "http" : "https"}://${host.includes(":") ? `[${host}]` : host}:${port}`;
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
    certificateAuthority: tls?.ca,
    host,
    port,
    server,
    kubeconfig: (kubeconfigOptions = {}) =>
      kubeconfigFor({
        server: url,
        token: options.token,
        certificateAuthority: tls?.ca,
        ...kubeconfigOptions,
      }),
    close,
  };
}

/** The certificate and key to serve HTTPS with, generated when `tls` is `true`; undefined for plain HTTP. */
async function servingCertificateFor(
  tls: ListenOptions["tls"],
  host: string,
): Promise<{ cert: string; key: string; ca: string | undefined } | undefined> {
  if (tls === undefined || tls === false) return undefined;
  if (tls !== true) return { cert: tls.cert, key: tls.key, ca: tls.ca };
  const loopback = ["127.0.0.1", "::1"];
  const isAddress = isIPv4(host) || isIPv6(host);
  const { ca, serving } = await generateServingCertificates({
    dnsNames: isAddress || host === "localhost" ? ["localhost"] : ["localhost", host],
    ipAddresses: isAddress && !loopback.includes(host) ? [...loopback, host] : loopback,
  });
  return { cert: serving.cert, key: serving.key, ca: ca.cert };
}

const jsonContentType = "application/json";

class RestHandler {
  readonly #registry: Registry;
  readonly #clock: Clock;
  readonly #maxRequestBytes: number;
  readonly #token: Buffer | undefined;
  readonly #serverAddress: string | undefined;
  /** OpenAPI of the definitions' generation it was computed at, recomputed when that changes. */
  #openApi: { generation: number; documents: ReturnType<typeof openApiDocuments> } | undefined;
  readonly #requestTimeoutMs: number;
  readonly #watchWriteTimeoutMs: number;
  readonly #kubeletConnection: KubeletConnection | undefined;
  readonly #metrics: ApiServerMetrics | undefined;

  constructor(options: HttpHandlerOptions) {
    this.#registry = options.registry;
    this.#clock = options.clock ?? realClock;
    this.#maxRequestBytes = options.maxRequestBytes ?? defaultMaxRequestBytes;
    this.#token = options.token === undefined ? undefined : Buffer.from(options.token);
    this.#serverAddress = options.serverAddress;
    this.#requestTimeoutMs = options.requestTimeoutMs ?? defaultRequestTimeoutMs;
    this.#watchWriteTimeoutMs = options.watchWriteTimeoutMs ?? defaultWatchWriteTimeoutMs;
    this.#kubeletConnection = options.kubeletConnection;
    this.#metrics = options.metrics;
  }

  async handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const { pathname, search } = splitTarget(request.url ?? "");
    const query = new URLSearchParams(search);
    const method = request.method ?? "GET";
    if (this.#token === undefined) {
      const host = request.headers.host;
      if (!isLoopbackHost(host)) {
        request.resume();
        throw new StatusError({
          code: 403,
          reason: "Forbidden",
          message: `the Host ${JSON.stringify(host ?? "")} is not a loopback name or address; a server without a token answers only requests addressed to localhost`,
        });
      }
    }
    let route: Route;
    try {
      route = parseRoute(pathname, this.#registry.resources, this.#postSubresources);
    } catch {
      throw newBadRequest(`the request path ${JSON.stringify(pathname)} is not properly escaped`);
    }
    // Long-running requests (watch, and log, exec, attach, portforward) have no deadline, as kube-apiserver's.
    if (!((method === "GET" && isTrue(query.get("watch"))) || route.kind === "podConnect"))
      this.#limitTime(response);
    if (route.kind === "invalid") {
      request.resume();
      throw newBadRequest(route.message);
    }
    const isPublic = route.kind === "health" || route.kind === "version";
    if (this.#token !== undefined && !isPublic && !this.#authorized(request)) {
      request.resume();
      throw newUnauthorized();
    }
    if (this.#token === undefined || !isPublic) authorizedSockets.add(request.socket);
    if (
      method === "POST" &&
      (pathname === selfSubjectReviewPath || pathname === selfSubjectAccessReviewPath)
    ) {
      const raw = await this.#body(request, response);
      const json = (request.headers["content-type"] ?? "application/json").startsWith("application/json");
      const user = requestUser(this.#token !== undefined);
      const review =
        pathname === selfSubjectReviewPath
          ? selfSubjectReview(user)
          : selfSubjectAccessReview(json ? parseJson(raw) : undefined);
      return send(response, 201, review);
    }
    if (pathname === "/metrics" && method === "GET" && this.#metrics !== undefined) {
      request.resume();
      return this.#serveMetrics(this.#metrics, response);
    }
    if (route.kind === "subresourceCreate") {
      if (method !== "POST") {
        request.resume();
        throw notAllowed(method, pathname);
      }
      validateWriteOptions("CreateOptions", query);
      const body = decodeObjectBody(
        request.headers["content-type"],
        await this.#body(request, response),
        this.#protobufMessageOf,
      );
      await this.#registry.createSubresource(
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
    if (route.kind === "podConnect") {
      const { namespace, name, action } = route;
      return servePodConnect(
        this.#registry,
        this.#kubeletConnection,
        action,
        namespace,
        name,
        method,
        query,
        request,
        response,
      );
    }
    if (route.kind !== "resource") {
      request.resume();
      if (method !== "GET" && method !== "HEAD" && route.kind !== "notFound")
        throw notAllowed(method, pathname);
      return this.#serveStatic(route, request, response);
    }
    const { resource, namespace, name, subresource } = route;
    const dryRun = parseDryRun(query);
    // Whom managedFields credit: fieldManager, else the User-Agent's product (the registry derives it).
    const fieldManager = query.get("fieldManager") || undefined;
    const userAgent = request.headers["user-agent"];
    if (name === undefined) {
      // Across all namespaces kube-apiserver serves only list and watch (no create, no deletecollection).
      if (
        (resource.namespaced && namespace === undefined && method !== "GET") ||
        (method === "DELETE" && !servesDeleteCollection(resource))
      ) {
        request.resume();
        throw notAllowed(method, pathname);
      }
      switch (method) {
        case "GET":
          request.resume();
          if (isTrue(query.get("watch"))) return this.#watch(resource, namespace, query, request, response);
          return this.#list(resource, namespace, query, request, response);
        case "POST": {
          validateWriteOptions("CreateOptions", query);
          const body = decodeObjectBody(
            request.headers["content-type"],
            await this.#body(request, response),
            this.#protobufMessageOf,
          );
          const created = await this.#registry.create(resource, namespace, body, {
            dryRun,
            fieldManager,
            userAgent,
          });
          return send(response, 201, created);
        }
        case "DELETE": {
          const options = await this.#deleteOptions(request, response, query);
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
          throw notAllowed(method, pathname);
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
              printer: this.#printerOf(resource),
              includeObject: parseIncludeObjectParam(query),
            },
          );
          return send(response, 200, table, tableContentType(tableVersion));
        }
        return send(response, 200, object);
      }
      case "PUT": {
        validateWriteOptions("UpdateOptions", query);
        const body = decodeObjectBody(
          request.headers["content-type"],
          await this.#body(request, response),
          this.#protobufMessageOf,
        );
        if (subresource === "scale") {
          return send(
            response,
            200,
            await this.#registry.updateScale(resource, namespace, name, body, {
              dryRun,
              fieldManager,
              userAgent,
            }),
          );
        }
        const updated = await this.#registry.update(resource, namespace, name, body, {
          dryRun,
          fieldManager,
          userAgent,
          ...(subresource === "status" ? { subresource } : {}),
        });
        return send(response, 200, updated);
      }
      case "PATCH": {
        validatePatchOptions(request.headers["content-type"], query);
        const { type, patch } = decodePatchBody(
          request.headers["content-type"],
          await this.#body(request, response),
        );
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
            await this.#registry.updateScale(resource, namespace, name, patched, {
              dryRun,
              fieldManager,
              userAgent,
            }),
          );
        }
        const force = query.get("force");
        const { object, created } = await this.#registry.patchWithOutcome(
          resource,
          namespace,
          name,
          type,
          patch,
          {
            dryRun,
            fieldManager,
            userAgent,
            ...(subresource === "status" ? { subresource } : {}),
            ...(force !== null ? { force: isTrue(force) } : {}),
          },
        );
        return send(response, created ? 201 : 200, object);
      }
      case "DELETE": {
        if (subresource !== undefined) {
          request.resume();
          throw notAllowed(method, pathname);
        }
        const options = await this.#deleteOptions(request, response, query);
        const { object, deleted } = await this.#registry.deleteWithOutcome(
          resource,
          namespace,
          name,
          options,
        );
        // 202 Accepted: the object is marked (graceful deletion, finalizers) and stays for now.
        const pending = object.metadata?.deletionTimestamp !== undefined && !deleted;
        return send(response, pending ? 202 : 200, object);
      }
      default:
        request.resume();
        throw notAllowed(method, pathname);
    }
  }

  /** Answers a failure with its Status (a 500 InternalError for anything that is not a StatusError). */
  fail(response: http.ServerResponse, error: unknown): void {
    const statusError = StatusError.isInstance(error) ? error : newInternalError(error);
    if (response.writableEnded) return; // answered already: the request timed out
    if (response.headersSent) {
      response.destroy();
      return;
    }
    const code = statusError.status.code || 500;
    // The body of a refused request may be unread (or, after no 100 Continue, unsent): the connection cannot carry another.
    if (code === 413) response.shouldKeepAlive = false;
    send(response, code, statusError.status);
  }

  /**
   * kube-apiserver's bearer token authenticator: the scheme in any case, one
   * space, a non-empty token (anything after a further space is ignored).
   */
  /** OpenAPI of the kinds served now; computed once per change of the served set. */
  #openApiDocuments(): ReturnType<typeof openApiDocuments> {
    const generation = this.#registry.definitions.generation;
    if (this.#openApi?.generation !== generation)
      this.#openApi = { generation, documents: openApiDocuments(this.#registry.resources) };
    return this.#openApi.documents;
  }

  /** The protobuf message of a served kind, for kubectl's protobuf bodies. */
  readonly #protobufMessageOf = (apiVersion: string, kind: string): string | undefined =>
    this.#registry.definitions.forKind(apiVersion, kind)?.protobufMessage;

  /** The subresources a served resource's definition answers POSTs on. */
  readonly #postSubresources = (resource: ResourceDescriptor): readonly string[] =>
    Object.keys(this.#registry.definitions.get(resource)?.subresources ?? {});

  /** The columns a served resource prints with. */
  #printerOf(resource: ResourceDescriptor): Printer | undefined {
    return this.#registry.definitions.get(resource)?.printer;
  }

  #authorized(request: http.IncomingMessage): boolean {
    const header = request.headers.authorization;
    if (header === undefined || this.#token === undefined) return false;
    const [scheme, token] = header.trim().split(" ", 2);
    if (scheme?.toLowerCase() !== "bearer" || !token) return false;
    const given = Buffer.from(token);
    return given.length === this.#token.length && timingSafeEqual(given, this.#token);
  }

  /** Reads the body, telling a client that waits for it (`Expect: 100-continue`) to send it only if it may. */
  #body(request: http.IncomingMessage, response: http.ServerResponse): Promise<Buffer> {
    const declared = Number(request.headers["content-length"]);
    if (/\b100-continue\b/i.test(request.headers.expect ?? "") && !(declared > this.#maxRequestBytes))
      response.writeContinue();
    return readRequestBody(request, this.#maxRequestBytes);
  }

  /** Answers with a 504 (or closes the connection, the answer begun) a request not answered in time. */
  #limitTime(response: http.ServerResponse): void {
    const timer = this.#clock.setTimeout(() => {
      if (response.writableEnded || response.destroyed) return;
      if (response.headersSent) {
        response.destroy();
        return;
      }
      response.shouldKeepAlive = false;
      const error = newTimeout(
        "request did not complete within requested timeout - context deadline exceeded",
      );
      send(response, 504, error.status);
    }, this.#requestTimeoutMs);
    response.once("close", () => this.#clock.clearTimeout(timer));
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
        send(response, 200, this.#openApiDocuments().index);
        return;
      case "openapiDocument":
        sendOrNotFound(response, this.#openApiDocuments().byPath.get(route.path));
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
        printer: this.#printerOf(resource),
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
    const timeoutSeconds = timeout === null ? undefined : parseNumber("timeoutSeconds", timeout);
    const stop = new AbortController();
    const onClose = () => stop.abort();
    response.on("close", onClose);
    const watch = await this.#registry.watch(resource, namespace, {
      resourceVersion: query.get("resourceVersion") ?? undefined,
      labelSelector: query.get("labelSelector") ?? undefined,
      fieldSelector: query.get("fieldSelector") ?? undefined,
      allowWatchBookmarks: isTrue(query.get("allowWatchBookmarks")),
      timeoutSeconds,
      signal: stop.signal,
    });
    // The registry ends the event stream at timeoutSeconds; this ends it here too, where the
    // server may be waiting on a client that reads nothing.
    const clock = this.#clock;
    const timer = timeoutSeconds
      ? clock.setTimeout(() => stop.abort(), Math.min(timeoutSeconds * 1000, 2_147_483_647))
      : undefined;
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
              printer: this.#printerOf(resource),
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
        if (!response.write(`${line}\n`) && !(await this.#drainedInTime(response, stop.signal))) {
          // The client took nothing for watchWriteTimeoutMs, or the watch ended while it was not reading.
          response.destroy();
          break;
        }
      }
    } finally {
      if (timer !== undefined) clock.clearTimeout(timer);
      watch.stop();
      response.off("close", onClose);
      if (!response.writableEnded && !response.destroyed) this.#endInTime(response);
    }
  }

  /**
   * Resolves true when the response can take more, false when it closed, the
   * watch was stopped, or the client took nothing for watchWriteTimeoutMs.
   */
  #drainedInTime(response: http.ServerResponse, stopped: AbortSignal): Promise<boolean> {
    if (stopped.aborted || response.destroyed) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const done = (drained: boolean) => {
        this.#clock.clearTimeout(timer);
        response.off("drain", onDrain);
        response.off("close", onClose);
        stopped.removeEventListener("abort", onClose);
        resolve(drained);
      };
      const onDrain = () => done(true);
      const onClose = () => done(false);
      const timer = this.#clock.setTimeout(onClose, this.#watchWriteTimeoutMs);
      response.on("drain", onDrain);
      response.on("close", onClose);
      stopped.addEventListener("abort", onClose, { once: true });
    });
  }

  /** Ends a watch's response; one its client does not read to the end in watchWriteTimeoutMs is closed. */
  #endInTime(response: http.ServerResponse): void {
    response.end();
    if (response.writableFinished) return;
    const timer = this.#clock.setTimeout(() => response.destroy(), this.#watchWriteTimeoutMs);
    response.once("close", () => this.#clock.clearTimeout(timer));
  }

  /** `GET /metrics`: storage object counts as of now (kube-apiserver's `apiserver_storage_objects`), then the exposition. */
  async #serveMetrics(metrics: ApiServerMetrics, response: http.ServerResponse): Promise<void> {
    for (const resource of this.#registry.resources) {
      const list = await this.#registry.list(resource, undefined, {});
      metrics.storageObjects(
        resource.group ? `${resource.plural}.${resource.group}` : resource.plural,
        list.items.length,
      );
    }
    const { contentType, body } = await metrics.expose();
    response.writeHead(200, { "content-type": contentType });
    response.end(body);
  }

  async #deleteOptions(
    request: http.IncomingMessage,
    response: http.ServerResponse,
    query: URLSearchParams,
  ): Promise<RegistryDeleteOptions> {
    const body = await this.#body(request, response);
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
}

function send(
  response: http.ServerResponse,
  code: number,
  body: unknown,
  contentType = jsonContentType,
): void {
  // A request answered already (it timed out) or whose client left gets nothing more.
  if (response.headersSent || response.destroyed) return;
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
  if (response.headersSent || response.destroyed) return;
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

/**
 * The path and query of a request target, the path exactly as sent. Only the
 * origin form (`/path?query`) and the absolute form (`http://host/path`) name
 * a resource; anything else (`//x`, `*`, `http://[`) is a 400.
 */
function splitTarget(target: string): { pathname: string; search: string } {
  let rest = target;
  const absolute = /^https?:\/\/[^/?#]*/i.exec(target);
  if (absolute !== null) {
    if (!URL.canParse(absolute[0]))
      throw newBadRequest(`the request target ${JSON.stringify(target)} is malformed`);
    rest = target.slice(absolute[0].length) || "/";
  }
  if (!rest.startsWith("/") || rest.startsWith("//"))
    throw newBadRequest(`the request target ${JSON.stringify(target)} is not a path`);
  const question = rest.indexOf("?");
  return question === -1
    ? { pathname: rest, search: "" }
    : { pathname: rest.slice(0, question), search: rest.slice(question + 1) };
}

/**
 * Whether a Host header names this machine: `localhost` (and `*.localhost`,
 * which browsers resolve to loopback themselves), 127.0.0.0/8 or ::1. A page
 * that rebinds its own name to 127.0.0.1 still sends its own name.
 */
function isLoopbackHost(header: string | undefined): boolean {
  if (header === undefined) return false;
  let host = header.trim().toLowerCase();
  if (host.startsWith("[")) {
    const end = host.indexOf("]");
    if (end === -1) return false;
    host = host.slice(1, end);
    return (
      isIPv6(host) && (host === "::1" || /^::ffff:127\.[0-9.]+$/.test(host) || host === "0:0:0:0:0:0:0:1")
    );
  }
  const colon = host.lastIndexOf(":");
  if (colon !== -1) host = host.slice(0, colon);
  if (host.endsWith(".")) host = host.slice(0, -1);
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  return isIPv4(host) && host.startsWith("127.");
}

/** Sockets that have carried an authorized request; the connection limit spares them longest. */
const authorizedSockets = new WeakSet<Socket>();

/**
 * Holds the number of open connections at a cap. A connection beyond it
 * displaces the oldest idle one (no request in flight), first among those
 * that never carried an authorized request; with none idle it is refused. A
 * flood of idle connections so cannot lock out clients, nor exhaust file
 * descriptors, while connections busy with requests or watches are never cut.
 */
class ConnectionLimiter {
  readonly #max: number;
  /** Idle connections in the order they became idle (a Map keeps insertion order). */
  readonly #idle = new Map<Socket, true>();
  readonly #inFlight = new Map<Socket, number>();
  #open = 0;

  constructor(max: number) {
    if (!(Number.isInteger(max) && max >= 1))
      throw new RangeError(`maxConnections must be a positive integer, got ${max}`);
    this.#max = max;
  }

  accept(socket: Socket): void {
    if (this.#open >= this.#max) {
      const victim = this.#oldestIdle();
      if (victim === undefined) {
        socket.destroy();
        return;
      }
      this.#forget(victim);
      victim.destroy();
    }
    this.#open++;
    this.#idle.set(socket, true);
    socket.once("close", () => this.#forget(socket));
  }

  /** A request on `socket` runs until `response` closes. */
  busy(socket: Socket, response: http.ServerResponse): void {
    if (!this.#idle.delete(socket) && !this.#inFlight.has(socket)) return; // already displaced
    this.#inFlight.set(socket, (this.#inFlight.get(socket) ?? 0) + 1);
    response.once("close", () => {
      const left = (this.#inFlight.get(socket) ?? 1) - 1;
      if (left > 0) {
        this.#inFlight.set(socket, left);
        return;
      }
      if (!this.#inFlight.delete(socket) || socket.destroyed) return;
      this.#idle.set(socket, true);
    });
  }

  #oldestIdle(): Socket | undefined {
    let oldest: Socket | undefined;
    for (const socket of this.#idle.keys()) {
      if (!authorizedSockets.has(socket)) return socket;
      oldest ??= socket;
    }
    return oldest;
  }

  #forget(socket: Socket): void {
    if (this.#idle.delete(socket) || this.#inFlight.delete(socket)) this.#open--;
  }
}

/** kube-apiserver's `ValidateFieldManager` and `ValidateDryRun` for create and update. */
function validateWriteOptions(kind: "CreateOptions" | "UpdateOptions", query: URLSearchParams): void {
  const errors = new FieldErrors();
  validateFieldManager(query.get("fieldManager") ?? "", errors);
  if (!errors.empty) throw newInvalid({ group: "meta.k8s.io", kind }, "", errors.list);
}

/**
 * kube-apiserver's `ValidatePatchOptions`: an apply names its field manager;
 * only an apply may force.
 */
function validatePatchOptions(contentType: string | undefined, query: URLSearchParams): void {
  const errors = new FieldErrors();
  const apply = /^application\/apply-patch\+(yaml|json)\b/i.test(contentType?.trim() ?? "");
  const fieldManager = query.get("fieldManager") ?? "";
  if (!apply && query.has("force")) errors.forbidden("force", "may not be specified for non-apply patch");
  if (apply && fieldManager === "") errors.required("fieldManager", "is required for apply patch");
  validateFieldManager(fieldManager, errors);
  if (!errors.empty) throw newInvalid({ group: "meta.k8s.io", kind: "PatchOptions" }, "", errors.list);
}

const fieldManagerMaxLength = 128;

function validateFieldManager(fieldManager: string, errors: FieldErrors): void {
  if (Buffer.byteLength(fieldManager) > fieldManagerMaxLength)
    errors.tooLong("fieldManager", fieldManagerMaxLength);
  // Go's unicode.IsPrint: no control, format, private-use or unassigned characters, no separator but the space.
  let position = 0;
  for (const character of fieldManager) {
    if (character !== " " && /[\p{C}\p{Z}]/u.test(character)) {
      const code = character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0");
      errors.invalid("fieldManager", fieldManager, `invalid character U+${code} (at position ${position})`);
    }
    position += Buffer.byteLength(character);
  }
}
