import * as http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { type Clock, realClock, type TimerHandle } from "@reconcile/clock";

/**
 * How often each fault strikes, as a probability per request in [0, 1]; the
 * rates together may not exceed 1. A request meets at most one fault.
 */
export interface FaultRates {
  /** Reset the connection (TCP RST) before forwarding: nothing reached the server. */
  reset?: number | undefined;
  /** Answer 500 InternalError without forwarding and without `Retry-After`. */
  serverError?: number | undefined;
  /** Answer 503 ServiceUnavailable with `Retry-After` without forwarding. */
  unavailable?: number | undefined;
  /** Answer 429 TooManyRequests with `Retry-After` without forwarding. */
  tooManyRequests?: number | undefined;
  /**
   * Forward; once the server has answered, reset the connection instead of
   * passing the answer on (a write applied whose answer is lost). A watch is
   * reset as soon as the server accepts it.
   */
  dropResponse?: number | undefined;
  /** Forward; pass the headers and part of the body, then reset the connection (cut mid-chunk). */
  truncate?: number | undefined;
  /**
   * Forward; pass the headers and part of the body, then hold the rest for up
   * to `maxStallMs` before passing it on (a watch holds its events, a
   * request may run into the client's timeout).
   */
  stall?: number | undefined;
  /** Watches only: pass the stream through, then reset it after up to `maxWatchLifeMs`. */
  cutWatch?: number | undefined;
}

export type FaultKind = keyof FaultRates;

export interface FaultProxyOptions {
  /** The server to forward to, `http://host:port`. Required. */
  target: string;
  /** Seeds the choice of faults, so a run's mix of faults can be repeated. Default 1. */
  seed?: number | undefined;
  /** The faults to inject from the start. Default: none (a plain proxy). */
  faults?: FaultRates | undefined;
  /** `Retry-After` of the 429 and 503 answers, in seconds. Default 1. */
  retryAfterSeconds?: number | undefined;
  /** Longest stall. Default 2,000 ms. */
  maxStallMs?: number | undefined;
  /** Longest life of a watch that `cutWatch` picks. Default 5,000 ms. */
  maxWatchLifeMs?: number | undefined;
  /** Default `127.0.0.1`. */
  host?: string | undefined;
  /** Default 0: a free port. */
  port?: number | undefined;
  /** Times stalls and watch cuts. Default `realClock`. */
  clock?: Clock | undefined;
}

/**
 * An HTTP proxy for tests that stands between clients and an API server and
 * injects the faults of a flaky network and an overloaded server: resets
 * before and after the server applied a request, 5xx and 429 answers,
 * responses and watch streams cut mid-chunk, stalls. Which request meets which
 * fault is drawn from a seeded generator in arrival order. `heal()` stops
 * injecting (and cancels pending cuts and stalls) so a test can check that
 * everything behind the proxy converges afterwards.
 */
export class FaultProxy {
  /** `http://host:port` of the proxy. */
  readonly url: string;
  /** How many requests met each fault, and how many passed untouched. */
  readonly counts: Record<FaultKind | "none", number>;
  readonly #server: http.Server;
  readonly #agent: http.Agent;
  readonly #target: URL;
  readonly #clock: Clock;
  readonly #retryAfterSeconds: number;
  readonly #maxStallMs: number;
  readonly #maxWatchLifeMs: number;
  readonly #random: () => number;
  readonly #sockets = new Set<Socket>();
  readonly #timers = new Map<TimerHandle, () => void>();
  #rates: Required<{ [K in FaultKind]: number }>;

  /** Starts a proxy listening on a free port (or `options.port`). */
  static async start(options: FaultProxyOptions): Promise<FaultProxy> {
    checkRates(options.faults ?? {});
    const target = new URL(options.target);
    if (target.protocol !== "http:")
      throw new TypeError(`FaultProxy: target must be http, not ${options.target}`);
    const server = http.createServer();
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => {
        server.off("error", reject);
        resolve();
      });
    });
    return new FaultProxy(server, options);
  }

  private constructor(server: http.Server, options: FaultProxyOptions) {
    this.#server = server;
    this.#target = new URL(options.target);
    if (this.#target.protocol !== "http:")
      throw new TypeError(`FaultProxy: target must be http, not ${options.target}`);
    this.#clock = options.clock ?? realClock;
    this.#retryAfterSeconds = options.retryAfterSeconds ?? 1;
    this.#maxStallMs = options.maxStallMs ?? 2000;
    this.#maxWatchLifeMs = options.maxWatchLifeMs ?? 5000;
    this.#random = seededRandom(options.seed ?? 1);
    this.#rates = checkRates(options.faults ?? {});
    this.counts = {
      reset: 0,
      serverError: 0,
      unavailable: 0,
      tooManyRequests: 0,
      dropResponse: 0,
      truncate: 0,
      stall: 0,
      cutWatch: 0,
      none: 0,
    };
    this.#agent = new http.Agent({ keepAlive: true });
    const address = server.address() as AddressInfo;
    const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
    this.url = `http://${host}:${address.port}`;
    server.on("connection", (socket: Socket) => {
      this.#sockets.add(socket);
      socket.on("close", () => this.#sockets.delete(socket));
    });
    server.on("request", (request: http.IncomingMessage, response: http.ServerResponse) => {
      this.#handle(request, response);
    });
  }

  /** Replaces the fault rates; requests already in flight keep their fault. */
  setFaults(faults: FaultRates): void {
    this.#rates = checkRates(faults);
  }

  /** Stops injecting faults: new requests pass untouched, pending stalls end and pending watch cuts are cancelled. */
  heal(): void {
    this.#rates = checkRates({});
    for (const [handle, onHeal] of this.#timers) {
      this.#clock.clearTimeout(handle);
      onHeal();
    }
    this.#timers.clear();
  }

  /** Closes the proxy and every connection through it, both sides. */
  async close(): Promise<void> {
    for (const handle of this.#timers.keys()) this.#clock.clearTimeout(handle);
    this.#timers.clear();
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    for (const socket of this.#sockets) socket.destroy();
    this.#agent.destroy();
    await closed;
  }

  #handle(request: http.IncomingMessage, response: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("error", () => undefined);
    request.on("end", () => {
      const watch = /[?&]watch=(true|1)(&|$)/.test(request.url ?? "");
      const fault = this.#draw(watch);
      this.counts[fault ?? "none"]++;
      const socket = request.socket;
      switch (fault) {
        case "reset":
          socket.resetAndDestroy();
          return;
        case "serverError":
          answer(response, 500, "InternalError", "injected: an internal error");
          return;
        case "unavailable":
          answer(response, 503, "ServiceUnavailable", "injected: unavailable", this.#retryAfterSeconds);
          return;
        case "tooManyRequests":
          answer(response, 429, "TooManyRequests", "injected: too many requests", this.#retryAfterSeconds);
          return;
        default:
          this.#forward(request, Buffer.concat(chunks), response, fault, watch);
      }
    });
  }

  #forward(
    request: http.IncomingMessage,
    body: Buffer,
    response: http.ServerResponse,
    fault: FaultKind | undefined,
    watch: boolean,
  ): void {
    const socket = request.socket;
    const headers: http.OutgoingHttpHeaders = { ...request.headers, host: this.#target.host };
    delete headers.connection;
    delete headers["keep-alive"];
    const upstream = http.request(this.#target, {
      method: request.method,
      path: request.url,
      headers,
      agent: this.#agent,
    });
    // The client going away ends the upstream request too (a watch would leak otherwise).
    const onClientGone = () => upstream.destroy();
    socket.once("close", onClientGone);
    response.once("close", () => socket.off("close", onClientGone));
    upstream.on("error", () => {
      if (!response.headersSent)
        answer(response, 502, "InternalError", "the proxy could not reach the server");
      else socket.destroy();
    });
    upstream.on("response", (answerFromServer) => {
      answerFromServer.on("error", () => socket.destroy());
      answerFromServer.on("close", () => {
        if (!answerFromServer.complete) socket.destroy();
      });
      if (fault === "dropResponse") {
        if (watch) socket.resetAndDestroy();
        else {
          answerFromServer.resume();
          answerFromServer.on("end", () => socket.resetAndDestroy());
        }
        return;
      }
      const responseHeaders = { ...answerFromServer.headers };
      for (const hopByHop of ["connection", "keep-alive", "transfer-encoding"])
        delete responseHeaders[hopByHop];
      response.writeHead(answerFromServer.statusCode ?? 502, responseHeaders);
      response.flushHeaders();
      if (fault === "truncate") this.#truncate(answerFromServer, response, socket);
      else if (fault === "stall") this.#stall(answerFromServer, response);
      else {
        if (fault === "cutWatch")
          this.#later(this.#random() * this.#maxWatchLifeMs, () => socket.resetAndDestroy());
        answerFromServer.pipe(response);
      }
    });
    upstream.end(body);
  }

  /** Passes a random part of the first chunk on, then resets the connection. */
  #truncate(from: http.IncomingMessage, to: http.ServerResponse, socket: Socket): void {
    from.once("end", () => socket.resetAndDestroy());
    from.once("data", (chunk: Buffer) => {
      from.pause();
      const part = chunk.subarray(0, Math.floor(this.#random() * chunk.length));
      if (part.length === 0) {
        socket.resetAndDestroy();
        return;
      }
      // Reset once the part is on the wire, so the client sees it before the cut.
      to.write(part, () => socket.resetAndDestroy());
    });
  }

  /** Passes a part of the first chunk on, then holds everything for a while. */
  #stall(from: http.IncomingMessage, to: http.ServerResponse): void {
    const endEmpty = () => to.end();
    from.once("end", endEmpty);
    from.once("data", (chunk: Buffer) => {
      from.off("end", endEmpty);
      from.pause();
      const cut = Math.floor(this.#random() * chunk.length);
      to.write(chunk.subarray(0, cut));
      const resume = () => {
        to.write(chunk.subarray(cut));
        from.pipe(to);
        from.resume();
      };
      this.#later(this.#random() * this.#maxStallMs, resume, resume);
    });
  }

  /** Runs `action` after `ms` on the clock; `heal()` cancels it and runs `onHeal` instead. */
  #later(ms: number, action: () => void, onHeal: () => void = () => undefined): void {
    const handle = this.#clock.setTimeout(() => {
      this.#timers.delete(handle);
      action();
    }, ms);
    this.#timers.set(handle, onHeal);
  }

  #draw(watch: boolean): FaultKind | undefined {
    let roll = this.#random();
    for (const kind of faultKinds) {
      const rate = this.#rates[kind];
      if (roll < rate) return kind === "cutWatch" && !watch ? undefined : kind;
      roll -= rate;
    }
    return undefined;
  }
}

const faultKinds: readonly FaultKind[] = [
  "reset",
  "serverError",
  "unavailable",
  "tooManyRequests",
  "dropResponse",
  "truncate",
  "stall",
  "cutWatch",
];

function checkRates(faults: FaultRates): Required<{ [K in FaultKind]: number }> {
  let total = 0;
  const rates = {} as Required<{ [K in FaultKind]: number }>;
  for (const kind of faultKinds) {
    const rate = faults[kind] ?? 0;
    if (!(rate >= 0 && rate <= 1))
      throw new RangeError(`FaultProxy: the rate of ${kind} must be in [0, 1], got ${rate}`);
    rates[kind] = rate;
    total += rate;
  }
  if (total > 1 + 1e-9) throw new RangeError(`FaultProxy: the fault rates add up to ${total}, more than 1`);
  return rates;
}

function answer(
  response: http.ServerResponse,
  code: number,
  reason: string,
  message: string,
  retryAfterSeconds?: number,
): void {
  const status = {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message,
    reason,
    code,
    ...(retryAfterSeconds !== undefined ? { details: { retryAfterSeconds } } : {}),
  };
  response.writeHead(code, {
    "content-type": "application/json",
    ...(retryAfterSeconds !== undefined ? { "retry-after": String(retryAfterSeconds) } : {}),
  });
  response.end(JSON.stringify(status));
}

/** mulberry32: a small, fast generator whose sequence a seed fixes. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
