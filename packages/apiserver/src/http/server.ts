import * as http from "node:http";
import * as https from "node:https";
import { type AddressInfo, isIPv4, isIPv6, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import { type Clock, realClock } from "@reconcile/clock";
import { InProcessClient } from "../registry/in-process-client.js";
import type { Registry } from "../registry/registry.js";
import { Aggregator } from "./aggregation/aggregator.js";
import { type AuditOptions, Auditor } from "./audit/event.js";
import { ClusterAuth } from "./auth/authenticate.js";
import {
  frontProxyClientName,
  RequestHeaderAuthenticator,
  type RequestHeaderOptions,
} from "./auth/request-header.js";
import { ConnectionLimiter } from "./connection-limiter.js";
import { defaultRequestTimeoutMs, HandlerContext } from "./context.js";
import { FlowController } from "./flow-control/controller.js";
import { createRequestHandler, type HttpHandlerOptions, type RequestHandler } from "./handler.js";
import { kubeconfigFor } from "./kubeconfig.js";
import type { KubeletConnection } from "./pod-connect.js";
import { execSocketServer, handleUpgrade } from "./pod-exec.js";
import { type ApiServerMetrics, observeRequest, type RequestLogger } from "./request-metrics.js";
import { statusBody } from "./respond.js";
import {
  type CertificateAndKey,
  type ClientCertificateSubject,
  type FrontProxyCertificates,
  generateServingCertificates,
  issueClientCertificate,
} from "./tls.js";

export { createRequestHandler, type HttpHandlerOptions };

export interface ListenOptions {
  /**
   * Where request and storage metrics go, and what `GET /metrics` serves
   * (`prometheusApiServerMetrics` of @reconcile/controller-manager is one).
   * Default: none, and `/metrics` is 404.
   */
  metrics?: ApiServerMetrics | undefined;
  /** A request log line per request (verb, URI, resource, status, latency) in pino's shape. Default: none. */
  requestLog?: RequestLogger | undefined;
  /**
   * Audit requests as kube-apiserver's `--audit-policy-file` and
   * `--audit-log-path` do: `{ policy, backend: auditLogBackend(path) }`. The
   * backend is closed with the server. Default: none.
   */
  audit?: AuditOptions | undefined;
  /** Default `127.0.0.1`. */
  host?: string | undefined;
  /** How `pods/log` reaches the pod's kubelet. Default: none. */
  kubeletConnection?: KubeletConnection | undefined;
  /** Default 0: a free port. */
  port?: number | undefined;
  /**
   * Require authentication, with this bearer token as the admin's (user
   * `reconcile-admin` in `system:masters`), and authorize every request with
   * RBAC (see {@link HttpHandlerOptions.token}). Default: none.
   */
  token?: string | undefined;
  /** More users by bearer token (see {@link HttpHandlerOptions.users}); only with `token`. */
  users?: HttpHandlerOptions["users"];
  /**
   * Serve HTTPS: `true` generates a CA and a serving certificate for
   * `localhost`, `127.0.0.1`, `::1` and the host at start (as kube-apiserver
   * does without `--tls-cert-file`); or give the PEM certificate and key, and
   * the CA that signed it for the kubeconfig (and its key, to sign client
   * certificates with `clientCertificate`). kubectl sends a bearer token only
   * over HTTPS. Default `false`: plain HTTP.
   */
  tls?:
    | boolean
    | { cert: string; key: string; ca?: string | undefined; caKey?: string | undefined }
    | undefined;
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
   * Of `maxConnections`, how many may be connections that have not carried
   * an authorized request yet (fresh ones, and ones only refused): past it a
   * new connection displaces the oldest of them. Default: half of `maxConnections`.
   */
  maxUnauthenticatedConnections?: number | undefined;
  /** The same cap for one client address. Default: an eighth of `maxConnections`. */
  maxUnauthenticatedConnectionsPerAddress?: number | undefined;
  /** See {@link HttpHandlerOptions.bodyTimeoutMs}. Default 15,000 ms. */
  bodyTimeoutMs?: number | undefined;
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
  /**
   * `false`: this listener's requests are not classified or limited by API
   * Priority and Fairness. Default: they are, by the server's FlowSchemas.
   */
  flowControl?: false | undefined;
  /** `false`: this listener does not pass requests on to aggregated servers. Default: it does. */
  aggregation?: false | undefined;
  /**
   * Trust a front proxy (kube-apiserver's `--requestheader-*` flags; with
   * `tls` and `token`): a request whose client certificate chains to
   * `clientCA` is the user its `X-Remote-User`, `X-Remote-Group` and
   * `X-Remote-Extra-*` headers name. What an aggregated server reads from
   * the aggregating cluster's `kube-system/extension-apiserver-authentication`
   * (`requestHeaderFromData` reads it). Default: the servable's own front
   * proxy, if it has one (`new ApiServer({ frontProxy: true })`).
   */
  requestHeader?: RequestHeaderOptions | undefined;
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
  /** The server's authentication and authorization; made per registry when absent. */
  readonly auth?: ClusterAuth | undefined;
  /** The server's API Priority and Fairness; made per registry when absent, none when null. */
  readonly flowControl?: FlowController | null | undefined;
  /** The server's API aggregation; made for the listener when absent, none when null. */
  readonly aggregator?: Aggregator | null | undefined;
  /** The server's front proxy: its listeners trust the requests its certificate makes. */
  readonly frontProxy?: Promise<FrontProxyCertificates> | undefined;
}

/** The ClusterAuth of registries served without one of their own. */
const registryAuth = new WeakMap<Registry, ClusterAuth>();

function authOf({ registry, clock, auth }: Servable): ClusterAuth {
  if (auth !== undefined) return auth;
  let made = registryAuth.get(registry);
  if (made === undefined) {
    made = new ClusterAuth({ client: new InProcessClient(registry), clock: clock ?? realClock });
    registryAuth.set(registry, made);
  }
  return made;
}

/** The flow control of registries served without one of their own. */
const registryFlowControl = new WeakMap<Registry, FlowController>();

function flowControlOf({ registry, clock, flowControl }: Servable): FlowController | undefined {
  if (flowControl !== undefined) return flowControl ?? undefined;
  let made = registryFlowControl.get(registry);
  if (made === undefined) {
    made = new FlowController({ client: new InProcessClient(registry), clock: clock ?? realClock });
    registryFlowControl.set(registry, made);
  }
  return made;
}

/**
 * The aggregation a listener serves with, started (APIServices are checked
 * whether or not requests come): the servable's own, or, for a registry
 * served without one, one of the listener's own, closed with it.
 */
function aggregatorOf(
  { registry, clock, aggregator }: Servable,
  options: ListenOptions,
): { aggregator: Aggregator | undefined; ownAggregator: Aggregator | undefined } {
  if (options.aggregation === false || aggregator === null)
    return { aggregator: undefined, ownAggregator: undefined };
  const own =
    aggregator === undefined
      ? new Aggregator({ client: new InProcessClient(registry), clock: clock ?? realClock })
      : undefined;
  const serving = aggregator ?? own!;
  void serving.start();
  return { aggregator: serving, ownAggregator: own };
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
  /**
   * A kubeconfig (YAML) for this server, with the CA if known, and the token
   * if one is required — or, given one, a client certificate instead.
   */
  kubeconfig(options?: {
    namespace?: string | undefined;
    name?: string | undefined;
    clientCertificate?: CertificateAndKey | undefined;
  }): string;
  /**
   * A client certificate signed by the CA this server generated (`tls: true`
   * with a `token`): its CN is the user, each group an O, as with kind or
   * kubeadm. Rejects for a server that did not generate its CA.
   */
  clientCertificate(subject: ClientCertificateSubject): Promise<CertificateAndKey>;
  /** Stops accepting connections, ends open watches and closes every socket. */
  close(): Promise<void>;
}

/** Serves a registry over HTTP (`apiServer.listen` in spirit). Resolves once it listens. */
export async function listen(servable: Servable, options: ListenOptions = {}): Promise<ListeningApiServer> {
  const { registry, clock } = servable;
  const auth = options.token === undefined ? undefined : authOf(servable);
  const host = options.host ?? "127.0.0.1";
  const requestTimeoutMs = options.requestTimeoutMs ?? defaultRequestTimeoutMs;
  const headersTimeoutMs = options.headersTimeoutMs ?? 32_000;
  // A policy that does not load fails here, before the server listens.
  const auditor = options.audit === undefined ? undefined : new Auditor(options.audit, clock ?? realClock);
  const { aggregator, ownAggregator } = aggregatorOf(servable, options);
  const { trusted, requestHeader } = await frontProxyTrust(servable, options);
  // What the request handler and the upgrade handler (exec, attach, port-forward) share.
  const shared = {
    requestHeader,
    audit: auditor,
    registry,
    clock,
    token: options.token,
    users: options.users,
    auth,
    kubeletConnection: options.kubeletConnection,
  };
  const handler = createRequestHandler({
    ...shared,
    aggregator,
    maxRequestBytes: options.maxRequestBytes,
    requestTimeoutMs,
    bodyTimeoutMs: options.bodyTimeoutMs,
    watchWriteTimeoutMs: options.watchWriteTimeoutMs,
    metrics: options.metrics,
    flowControl: options.flowControl === false ? undefined : flowControlOf(servable),
  });
  const limiter = new ConnectionLimiter({
    max: options.maxConnections ?? 4096,
    unauthenticated: options.maxUnauthenticatedConnections,
    unauthenticatedPerAddress: options.maxUnauthenticatedConnectionsPerAddress,
  });
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
  const server = createServer(serverOptions, serve, tls, auth !== undefined, trusted?.clientCA);
  // Requests arrive on the TLS socket, so that is the one the limiter must know.
  server.on(tls === undefined ? "connection" : "secureConnection", (socket: Socket) =>
    limiter.accept(socket),
  );
  answerOutsideTheHandler(server);
  // exec over WebSocket (and the refusals kubectl's SPDY fallback meets).
  const sockets = execSocketServer();
  const upgradeContext = new HandlerContext({ ...shared, aggregator });
  server.on("upgrade", (request: http.IncomingMessage, socket: Duplex, head: Buffer) =>
    handleUpgrade(upgradeContext, sockets, request, socket, head),
  );
  // Answered by the handler, which sends 100 Continue only when it is about to read the body:
  // an over-limit body is refused with a 413 the client need not send.
  server.on("checkContinue", serve);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  }).catch(async (error: unknown) => {
    await ownAggregator?.close();
    throw error;
  });
  const port = (server.address() as AddressInfo).port;
  const url = `${tls === undefined ? "http" : "https"}://${host.includes(":") ? `[${host}]` : host}:${port}`;
  const closed = new Promise<void>((resolve) => server.once("close", () => resolve())).then(() =>
    Promise.all([auditor?.backend.close?.(), ownAggregator?.close()]).then(() => undefined),
  );
  const close = (): Promise<void> => {
    options.signal?.removeEventListener("abort", onAbort);
    if (server.listening) {
      server.close();
      server.closeAllConnections();
      for (const client of sockets.clients) client.terminate();
      sockets.close();
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
    kubeconfig: ({ clientCertificate, ...kubeconfigOptions } = {}) =>
      kubeconfigFor({
        server: url,
        certificateAuthority: tls?.ca,
        ...(clientCertificate === undefined ? { token: options.token } : { clientCertificate }),
        ...kubeconfigOptions,
      }),
    async clientCertificate(subject) {
      if (tls?.ca === undefined || tls.caKey === undefined || auth === undefined)
        throw new Error(
          "ListeningApiServer.clientCertificate: only a server listening with `tls: true` and a `token` signs client certificates",
        );
      return issueClientCertificate({ cert: tls.ca, key: tls.caKey }, subject);
    },
    close,
  };
}

/** A plain HTTP server, or HTTPS with `tls`, asking for client certificates where they authenticate. */
function createServer(
  serverOptions: http.ServerOptions,
  serve: RequestHandler,
  tls: { cert: string; key: string; ca: string | undefined } | undefined,
  authenticates: boolean,
  frontProxyCA: string | undefined,
): http.Server {
  if (tls === undefined) return http.createServer(serverOptions, serve);
  const authorities = [tls.ca, frontProxyCA].filter((ca) => ca !== undefined);
  return https.createServer(
    {
      ...serverOptions,
      cert: tls.cert,
      key: tls.key,
      // Client certificates signed by the cluster CA authenticate their CN, and a front proxy's
      // pass its user on; others are not refused at the handshake (the request is then anonymous,
      // or carries a token).
      ...(authenticates && authorities.length > 0
        ? { requestCert: true, rejectUnauthorized: false, ca: authorities }
        : {}),
    },
    serve,
  );
}

/**
 * The front proxy a listener trusts: the one its options name, or the
 * servable's own (its CA, for its `front-proxy-client` certificate alone).
 */
async function frontProxyTrust(
  servable: Servable,
  options: ListenOptions,
): Promise<{
  trusted: RequestHeaderOptions | undefined;
  requestHeader: RequestHeaderAuthenticator | undefined;
}> {
  const own = await servable.frontProxy;
  const trusted =
    options.requestHeader ??
    (own === undefined ? undefined : { clientCA: own.ca.cert, allowedNames: [frontProxyClientName] });
  return {
    trusted,
    requestHeader: trusted === undefined ? undefined : new RequestHeaderAuthenticator(trusted),
  };
}

/** The certificate and key to serve HTTPS with, generated when `tls` is `true`; undefined for plain HTTP. */
async function servingCertificateFor(
  tls: ListenOptions["tls"],
  host: string,
): Promise<{ cert: string; key: string; ca: string | undefined; caKey: string | undefined } | undefined> {
  if (tls === undefined || tls === false) return undefined;
  if (tls !== true) return { cert: tls.cert, key: tls.key, ca: tls.ca, caKey: tls.caKey };
  const loopback = ["127.0.0.1", "::1"];
  const isAddress = isIPv4(host) || isIPv6(host);
  const { ca, serving } = await generateServingCertificates({
    dnsNames: isAddress || host === "localhost" ? ["localhost"] : ["localhost", host],
    ipAddresses: isAddress && !loopback.includes(host) ? [...loopback, host] : loopback,
  });
  return { cert: serving.cert, key: serving.key, ca: ca.cert, caKey: ca.key };
}

/**
 * What node:http answers without the handler: a request it cannot parse or
 * did not receive in time, and a raw CONNECT. Each gets a Status too.
 */
function answerOutsideTheHandler(server: http.Server): void {
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
    const text = `${JSON.stringify(statusBody({ status: "Failure", ...status }))}\n`;
    socket.end(
      `HTTP/1.1 ${status.code} ${timedOut ? "Request Timeout" : "Bad Request"}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`,
    );
  });
  // A raw CONNECT (a proxy request) names nothing this server serves: 404, as for any unknown path.
  server.on("connect", (_request: http.IncomingMessage, socket: Duplex) => {
    const text = `${JSON.stringify(
      statusBody({
        status: "Failure",
        code: 404,
        reason: "NotFound",
        message: "the server could not find the requested resource",
      }),
    )}\n`;
    socket.end(
      `HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`,
    );
  });
}
