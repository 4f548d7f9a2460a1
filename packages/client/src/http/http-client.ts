import * as http from "node:http";
import * as https from "node:https";
import { TLSSocket } from "node:tls";
import {
  errorMessage,
  type KubeObject,
  type Logger,
  newTimeout,
  type ResourceDescriptor,
  StatusError,
  type WatchEvent,
} from "@reconcile/api";
import { type Clock, listenAbort, realClock } from "@reconcile/clock";
import type { Client, ResourceClient } from "../client.js";
import { ListDecoder } from "./list-decoder.js";
import { type HttpRequest, HttpResourceClient, type RestTransport } from "./resource-client.js";

export type { HttpRequest } from "./resource-client.js";

import { connectionError, statusErrorFromResponse } from "./status.js";
import { TokenBucketRateLimiter } from "./token-bucket.js";
import { parseWatchStream } from "./watch-stream.js";

/**
 * The part of `@kubernetes/client-node`'s `KubeConfig` the client uses: the
 * current cluster and context, and the TLS material and credentials (tokens,
 * token files, client certificates, exec plugins) it applies to a request.
 */
export interface KubeConfigLike {
  getCurrentCluster(): { server: string; name?: string } | null;
  getCurrentContext(): string;
  getContextObject(name: string): { namespace?: string | undefined } | null;
  applyToHTTPSOptions(options: https.RequestOptions): Promise<void>;
  /** Called when the server answers 401: drop cached credentials (an exec plugin's) so the next request gets fresh ones. */
  invalidateCredentials?(): void;
}

/** Something that paces requests; the default is a {@link TokenBucketRateLimiter}. */
export interface RequestRateLimiter {
  wait(signal?: AbortSignal): Promise<void>;
}

export interface HttpClientOptions {
  /** Where the server is and how to authenticate; see `loadKubeConfig`. Required. */
  kubeConfig: KubeConfigLike;
  /** Requests per second of the client-side token bucket. Default 5 (client-go's). `Infinity` switches it off. */
  qps?: number | undefined;
  /** Burst of the token bucket. Default 10 (client-go's). */
  burst?: number | undefined;
  /** Replaces the token bucket built from `qps`/`burst`. */
  rateLimiter?: RequestRateLimiter | undefined;
  /** Per-request timeout in ms (for a watch: until the server answers). Default 60,000; 0 disables. */
  timeoutMs?: number | undefined;
  /**
   * Retries of a request the server asked to retry (429 or 5xx with a `Retry-After`
   * of whole seconds, as client-go's `checkWait`) and of reads whose connection
   * failed. Default 10 (client-go's).
   */
  maxRetries?: number | undefined;
  /** First back-off of a read retried after a connection error, doubled each time. Default 200 ms. */
  retryBackoffMs?: number | undefined;
  /** Sent as `User-Agent`. Default `reconcile-client/0.1 (node)`. */
  userAgent?: string | undefined;
  /** A watch line longer than this fails the watch. Default 256 MiB. */
  maxWatchLineBytes?: number | undefined;
  /**
   * Called with the text of each `Warning` header the server sends (deprecated
   * APIs, ignored fields), as client-go's `WarningHandler`. Default: logged on
   * `logger` at warn.
   */
  onWarning?: ((message: string) => void) | undefined;
  /** Where the default `onWarning` logs. Default `noopLogger` (nothing). */
  logger?: Logger | undefined;
  /** Default `realClock`. */
  clock?: Clock | undefined;
  /** Where each attempt's result and latency go (client-go's `rest_client_*` metrics). Default: nowhere. */
  metrics?: RestClientMetrics | undefined;
}

/**
 * client-go's REST client metrics seam (`k8s.io/client-go/tools/metrics`),
 * called once per attempt: `rest_client_requests_total{code,method,host}` and
 * `rest_client_request_duration_seconds{verb,host}`. `host` is the server's
 * `host:port`; a request that got no answer reports code `<error>`.
 */
export interface RestClientMetrics {
  requestResult(code: string, method: string, host: string): void;
  requestLatency(verb: string, host: string, seconds: number): void;
}

/**
 * A `Client` for any Kubernetes API server over HTTP(S), configured by a
 * kubeconfig. Requests pass a client-side token bucket (5 QPS, burst 10 by
 * default, as client-go), time out, retry reads whose connection failed, and
 * retry anything the server answered 429 or 5xx with `Retry-After`; a write
 * whose bytes may have reached the server is never sent again. Watches
 * stream newline-delimited JSON without blocking the event loop. Every
 * failure is a `StatusError`.
 */
export class HttpClient implements Client, RestTransport {
  /** The namespace of the kubeconfig's current context, `default` if it names none. */
  readonly defaultNamespace: string;
  /** The server URL of the current cluster. */
  readonly server: string;
  private readonly kubeConfig: KubeConfigLike;
  private readonly limiter: RequestRateLimiter;
  private readonly timeoutMs: number;
  private readonly maxRetries: number;
  private readonly retryBackoffMs: number;
  private readonly userAgent: string;
  private readonly maxWatchLineBytes: number | undefined;
  private readonly clock: Clock;
  private readonly agent: http.Agent;
  private readonly onWarning: ((message: string) => void) | undefined;
  private readonly metrics: RestClientMetrics | undefined;

  constructor(options: HttpClientOptions) {
    const cluster = options.kubeConfig.getCurrentCluster();
    if (cluster === null || !cluster.server) {
      throw new TypeError("the kubeconfig has no current cluster with a server URL");
    }
    const url = new URL(cluster.server);
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new TypeError(`the cluster's server URL must be http or https, not ${cluster.server}`);
    }
    this.kubeConfig = options.kubeConfig;
    this.server = cluster.server.replace(/\/+$/, "");
    const context = options.kubeConfig.getContextObject(options.kubeConfig.getCurrentContext());
    this.defaultNamespace = context?.namespace || "default";
    this.clock = options.clock ?? realClock;
    this.limiter =
      options.rateLimiter ??
      new TokenBucketRateLimiter({ qps: options.qps, burst: options.burst, clock: this.clock });
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.maxRetries = options.maxRetries ?? 10;
    this.retryBackoffMs = options.retryBackoffMs ?? 200;
    this.userAgent = options.userAgent ?? "reconcile-client/0.1 (node)";
    this.maxWatchLineBytes = options.maxWatchLineBytes;
    const logger = options.logger;
    this.onWarning =
      options.onWarning ??
      (logger === undefined
        ? undefined
        : (warning) => logger.warn({ warning }, "the API server sent a warning"));
    this.metrics = options.metrics;
    // No cap on sockets: each open watch holds one (HTTP/1.1), and a cap would starve
    // other requests behind long-lived watches. The token bucket bounds the rest.
    this.agent =
      url.protocol === "https:" ? new https.Agent({ keepAlive: true }) : new http.Agent({ keepAlive: true });
  }

  resource<T extends KubeObject>(resource: ResourceDescriptor<T>, namespace?: string): ResourceClient<T> {
    return new HttpResourceClient<T>(this, resource, resource.namespaced ? namespace : undefined);
  }

  /** Closes idle keep-alive sockets. Open watches end when their signals abort. */
  close(): void {
    this.agent.destroy();
  }

  /** Sends a request and parses a JSON answer; every failure becomes a `StatusError`. */
  async requestJson<R>(spec: HttpRequest): Promise<R> {
    const response = await this.send(spec);
    let body: string;
    try {
      body = await readBody(response, spec.signal);
    } catch (error) {
      throw this.bodyError(response, error, spec.signal);
    }
    try {
      return JSON.parse(body) as R;
    } catch (error) {
      throw notJson(error);
    }
  }

  /**
   * Sends a list request and decodes the answer item by item as it arrives
   * (see {@link ListDecoder}), so a huge list never blocks the event loop in
   * one `JSON.parse`.
   */
  async requestList<R>(spec: HttpRequest): Promise<R> {
    const response = await this.send(spec);
    const decoder = new ListDecoder();
    const signal = spec.signal;
    return new Promise<R>((resolve, reject) => {
      const off = listenAbort(signal, () => response.destroy(signal?.reason));
      const fail = (error: unknown) => {
        off();
        response.destroy();
        reject(this.bodyError(response, error, signal));
      };
      response.on("data", (chunk: Buffer) => {
        try {
          decoder.push(chunk);
        } catch (error) {
          fail(error);
        }
      });
      response.on("end", () => {
        off();
        try {
          resolve(decoder.end() as R);
        } catch (error) {
          fail(error);
        }
      });
      response.on("error", fail);
      response.on("close", () => {
        if (!response.complete) fail(new Error("the connection closed before the response ended"));
      });
    });
  }

  /** What a failure while reading a response body becomes: the abort reason, a Timeout, or a StatusError. */
  private bodyError(
    response: http.IncomingMessage,
    error: unknown,
    signal: AbortSignal | undefined,
  ): unknown {
    if (signal?.aborted) return signal.reason;
    if (StatusError.isInstance(error)) return error;
    const request = requestOf.get(response);
    const timeout = request === undefined ? undefined : timeoutErrors.get(request);
    if (timeout !== undefined) return timeout;
    if (error instanceof SyntaxError) return notJson(error);
    return connectionError(this.server, error);
  }

  /** Opens a watch; resolves once the server has answered 200. */
  async openWatch<T extends KubeObject>(spec: HttpRequest): Promise<AsyncIterable<WatchEvent<T>>> {
    const response = await this.send({ ...spec, watch: true });
    const signal = spec.signal;
    const off = listenAbort(signal, () => response.destroy());
    const maxLineBytes = this.maxWatchLineBytes;
    async function* events(): AsyncGenerator<WatchEvent<T>> {
      try {
        yield* parseWatchStream<T>(response, { maxLineBytes });
      } catch (error) {
        // An abort, or the connection going away, ends the watch as a server close would.
        if (StatusError.isInstance(error)) throw error;
      } finally {
        off();
        response.destroy();
      }
    }
    return events();
  }

  private async send(spec: HttpRequest): Promise<http.IncomingMessage> {
    for (let attempt = 0; ; attempt++) {
      await this.limiter.wait(spec.signal);
      let response: http.IncomingMessage;
      try {
        response = await this.once(spec);
      } catch (error) {
        if (spec.signal?.aborted) throw spec.signal.reason;
        if (StatusError.isInstance(error)) throw error;
        if (!spec.idempotent) {
          // The bytes may have reached the server, which may have applied the write:
          // only the caller can tell whether sending it again is right (net/http and
          // client-go resend a non-idempotent request only when nothing was processed).
          throw writtenRequests.has(error as Error)
            ? unknownOutcomeError(this.server, spec, error)
            : connectionError(this.server, error);
        }
        // A kept-alive socket the server closed while it sat idle: resend at once, once,
        // as net/http does for replayable requests.
        if (staleSocketErrors.has(error as Error) && attempt === 0) continue;
        if (attempt < this.maxRetries) {
          await this.clock.sleep(this.retryBackoffMs * 2 ** attempt, { signal: spec.signal });
          continue;
        }
        throw connectionError(this.server, error);
      }
      if (this.onWarning !== undefined) reportWarnings(response.headers.warning, this.onWarning);
      const code = response.statusCode ?? 0;
      if (code >= 200 && code < 300) return response;
      const retryAfter = parseRetryAfter(response.headers["retry-after"]);
      let body: string;
      try {
        body = await readBody(response, spec.signal);
      } catch (error) {
        throw this.bodyError(response, error, spec.signal);
      }
      // client-go's checkWait: 429 and 5xx are retried, whatever the verb, only when the
      // server says when (it did not process the request), after exactly that long.
      if ((code === 429 || code >= 500) && retryAfter !== undefined && attempt < this.maxRetries) {
        if (retryAfter > 0) await this.clock.sleep(retryAfter * 1000, { signal: spec.signal });
        else if (spec.signal?.aborted) throw spec.signal.reason;
        continue;
      }
      throw statusErrorFromResponse(code, body, retryAfter);
    }
  }

  private async once(spec: HttpRequest): Promise<http.IncomingMessage> {
    const url = new URL(this.server + spec.path);
    for (const [key, value] of Object.entries(spec.query ?? {})) {
      if (value !== undefined && value !== "") url.searchParams.set(key, String(value));
    }
    const headers: Record<string, string> = {
      Accept: spec.accept ?? "application/json",
      "User-Agent": this.userAgent,
    };
    let payload: Buffer | undefined;
    if (spec.body !== undefined) {
      payload = Buffer.from(JSON.stringify(spec.body));
      headers["Content-Type"] = spec.contentType ?? "application/json";
      headers["Content-Length"] = String(payload.length);
    }
    const options: https.RequestOptions = { method: spec.method, headers };
    try {
      await applyCredentials(this.kubeConfig, options);
    } catch (error) {
      throw new StatusError(
        {
          code: 401,
          reason: "Unauthorized",
          message: `getting credentials from the kubeconfig failed: ${errorMessage(error)}`,
        },
        { cause: error },
      );
    }
    // A kubeconfig with a proxy brings its own (tunnelling) agent.
    options.agent ??= this.agent;
    const transport = url.protocol === "https:" ? https : http;
    const metrics = this.metrics;
    const started = this.clock.now();
    let answered = false;
    return new Promise<http.IncomingMessage>((resolve, reject) => {
      let timer: unknown;
      const request = transport.request(url, options, (response) => {
        answered = true;
        if (response.statusCode === 401) this.kubeConfig.invalidateCredentials?.();
        if (metrics !== undefined) {
          metrics.requestLatency(spec.method, url.host, (this.clock.now() - started) / 1000);
          metrics.requestResult(String(response.statusCode ?? 0), spec.method, url.host);
        }
        requestOf.set(response, request);
        if (spec.watch && timer !== undefined) this.clock.clearTimeout(timer);
        resolve(response);
      });
      const off = listenAbort(spec.signal, () => request.destroy(spec.signal?.reason));
      const cleanup = () => {
        off();
        if (timer !== undefined) this.clock.clearTimeout(timer);
      };
      if (this.timeoutMs > 0) {
        timer = this.clock.setTimeout(() => {
          const error = newTimeout(
            `the request ${spec.method} ${spec.path} did not complete within ${this.timeoutMs}ms`,
          );
          timeoutErrors.set(request, error);
          request.destroy(error);
        }, this.timeoutMs);
      }
      // Once the request has a connected socket its bytes go out at once and may reach
      // the server; before that (refused, DNS, TLS handshake) nothing was sent.
      let written = false;
      request.on("socket", (socket) => {
        if (!socket.connecting) written = true;
        else socket.once(socket instanceof TLSSocket ? "secureConnect" : "connect", () => (written = true));
      });
      request.on("error", (error) => {
        cleanup();
        if (!answered) metrics?.requestResult("<error>", spec.method, url.host);
        if (written) writtenRequests.add(error);
        // A kept-alive socket the server closed while it sat idle fails with a reset.
        if (request.reusedSocket && (error as NodeJS.ErrnoException).code === "ECONNRESET") {
          staleSocketErrors.add(error);
        }
        reject(error);
      });
      request.on("close", () => {
        if (!spec.watch) cleanup();
        else off();
      });
      request.end(payload);
    });
  }
}

/**
 * Applies the kubeconfig's TLS material and credentials. `KubeConfig.applyToHTTPSOptions`
 * also builds a fresh agent per call and refuses `http://` servers without
 * `insecure-skip-tls-verify`; its `applyOptions` step does only the part we need, so
 * it is used when present.
 */
async function applyCredentials(kubeConfig: KubeConfigLike, options: https.RequestOptions): Promise<void> {
  const applyOptions = (kubeConfig as { applyOptions?: (o: https.RequestOptions) => Promise<void> })
    .applyOptions;
  if (typeof applyOptions === "function") {
    await applyOptions.call(kubeConfig, options);
    const user = (
      kubeConfig as { getCurrentUser?: () => { username?: string; password?: string } | null }
    ).getCurrentUser?.();
    if (user?.username) options.auth = `${user.username}:${user.password ?? ""}`;
  } else {
    await kubeConfig.applyToHTTPSOptions(options);
  }
}

function notJson(error: unknown): StatusError {
  return new StatusError(
    {
      code: 500,
      reason: "InternalError",
      message: `the server sent a response that is not JSON (${errorMessage(error)})`,
    },
    { cause: error },
  );
}

/**
 * Hands on the text of `Warning: 299 - "text"` headers (RFC 7234 warn-code 299,
 * as kube-apiserver sends them); several may arrive joined by commas.
 */
function reportWarnings(raw: string | undefined, onWarning: (message: string) => void): void {
  if (!raw) return;
  // Node hands header bytes over as latin1; the server wrote UTF-8.
  const header = Buffer.from(raw, "latin1").toString("utf8");
  const pattern = /299\s+\S+\s+"((?:[^"\\]|\\.)*)"/g;
  for (let match = pattern.exec(header); match !== null; match = pattern.exec(header)) {
    onWarning(match[1]!.replace(/\\(.)/g, "$1"));
  }
}

/**
 * Whole seconds, as client-go's `retryAfterSeconds` (`strconv.Atoi`) reads the
 * header: an HTTP date or a fraction is not a retry hint; a negative count waits 0.
 */
function parseRetryAfter(header: string | string[] | undefined): number | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (value === undefined || !/^[+-]?\d{1,10}$/.test(value)) return undefined;
  return Math.max(0, Number.parseInt(value, 10));
}

/** A non-idempotent request whose connection failed after it was written: it may have been applied. */
function unknownOutcomeError(server: string, spec: HttpRequest, cause: unknown): StatusError {
  const text = errorMessage(cause);
  return new StatusError(
    {
      code: 503,
      reason: "ServiceUnavailable",
      message: `the connection to the API server at ${server} failed after ${spec.method} ${spec.path} was sent (${text}); the server may have processed it, so it was not sent again`,
    },
    { cause },
  );
}

function readBody(response: http.IncomingMessage, signal: AbortSignal | undefined): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const off = listenAbort(signal, () => response.destroy(signal?.reason));
    response.on("data", (chunk: Buffer) => chunks.push(chunk));
    response.on("end", () => {
      off();
      resolve(Buffer.concat(chunks).toString("utf8"));
    });
    response.on("error", (error) => {
      off();
      reject(error);
    });
    response.on("close", () => {
      off();
      if (!response.complete) reject(new Error("the connection closed before the response ended"));
    });
  });
}

/** The Timeout error of each request the client timed out, for the body reader to report. */
const timeoutErrors = new WeakMap<http.ClientRequest, StatusError>();
const requestOf = new WeakMap<http.IncomingMessage, http.ClientRequest>();
/** Connection resets of requests sent on a reused keep-alive socket. */
const staleSocketErrors = new WeakSet<Error>();
/** Failures of requests that had a connected socket, so their bytes may have reached the server. */
const writtenRequests = new WeakSet<Error>();
