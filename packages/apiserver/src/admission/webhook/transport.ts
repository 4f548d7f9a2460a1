import * as https from "node:https";
import { errorMessage } from "@reconcile/api";
import { copyJson } from "../../json.js";

/** An `admission.k8s.io/v1` AdmissionReview (or ConversionReview), as JSON. */
export type Review = Record<string, unknown>;

/** Answers reviews in process: what `serve` registers for a URL instead of a server behind it. */
export type ReviewHandler = (review: Review) => Promise<Review> | Review;

/** Where a webhook is called: its URL, and how its certificate is checked. */
export interface WebhookEndpoint {
  /** `https://host:port/path`, without the `timeout` query the call adds. */
  readonly url: string;
  /** PEM bundle the server's certificate must chain to; default: the system's roots. */
  readonly caBundle?: string | undefined;
  /** The name its certificate must carry, when it is not the URL's host (`<svc>.<ns>.svc`). */
  readonly serverName?: string | undefined;
  /** Where to connect, when it is not the URL's host (a Service's endpoint). */
  readonly address?: { host: string; port: number } | undefined;
}

/** A call that did not produce a review: upstream's `ErrCallingWebhook`. */
export class WebhookCallError extends Error {}

/** Largest review body read back, as upstream caps a webhook's response. */
const maxResponseBytes = 3 * 1024 * 1024;

/**
 * How the API server reaches webhooks: over HTTPS, or, for a URL with a
 * handler registered through `serve`, by calling the handler in process —
 * the same configuration objects and matching, no TLS and no socket.
 */
export class WebhookTransport {
  readonly #inProcess = new Map<string, ReviewHandler>();
  /** One keep-alive agent per server and trust, so calls after the first skip the TLS handshake. */
  readonly #agents = new Map<string, https.Agent>();

  /**
   * Answers reviews sent to `url` with `handler`, in process; the returned
   * function takes it back. A configuration's `clientConfig.url`, or its
   * Service as `https://<name>.<namespace>.svc:<port><path>`, names it.
   */
  serve(url: string, handler: ReviewHandler): () => void {
    const key = normalize(url);
    this.#inProcess.set(key, handler);
    return () => {
      if (this.#inProcess.get(key) === handler) this.#inProcess.delete(key);
    };
  }

  /**
   * Sends `review` and resolves with the answer; rejects with a
   * {@link WebhookCallError} saying why none came. A handler served in process
   * that answers at once is answered at once (no promise), or throws the
   * error.
   */
  call(endpoint: WebhookEndpoint, review: Review, timeoutMs: number): Review | Promise<Review> {
    const handler = this.#inProcess.get(normalize(endpoint.url));
    const shown = () => `Post "${endpoint.url}?timeout=${timeoutMs / 1000}s"`;
    if (handler !== undefined) {
      // The handler gets its own copy, as it would over the wire.
      const sent = copyJson(review) as Review;
      let answered: Review | Promise<Review>;
      try {
        answered = handler(sent);
      } catch (error) {
        throw new WebhookCallError(`failed to call webhook: ${shown()}: ${errorMessage(error)}`);
      }
      // A handler that answers at once needs no timer; one that waits is held to the timeout.
      return answered instanceof Promise ? withTimeout(answered, timeoutMs, shown()) : answered;
    }
    return post(endpoint, review, timeoutMs, shown(), this.#agentFor(endpoint));
  }

  #agentFor(endpoint: WebhookEndpoint): https.Agent {
    const url = new URL(endpoint.url);
    const key = JSON.stringify([endpoint.address, url.host, endpoint.serverName, endpoint.caBundle]);
    let agent = this.#agents.get(key);
    if (agent === undefined) {
      if (this.#agents.size >= 256) this.close();
      agent = new https.Agent({ keepAlive: true, maxSockets: 64 });
      this.#agents.set(key, agent);
    }
    return agent;
  }

  /** Closes the idle connections to webhooks (the server's `close()` does). */
  close(): void {
    for (const agent of this.#agents.values()) agent.destroy();
    this.#agents.clear();
  }
}

/** URLs as keys, parsed once each (a webhook's URL is asked for on every call). */
const normalized = new Map<string, string>();

function normalize(url: string): string {
  let key = normalized.get(url);
  if (key === undefined) {
    const parsed = new URL(url);
    parsed.search = "";
    if (parsed.port === "443") parsed.port = "";
    key = parsed.toString();
    if (normalized.size >= 1024) normalized.clear();
    normalized.set(url, key);
  }
  return key;
}

async function withTimeout<T>(work: Promise<T>, timeoutMs: number, shown: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new WebhookCallError(`failed to call webhook: ${shown}: context deadline exceeded`)),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([work, timeout]);
  } catch (error) {
    if (error instanceof WebhookCallError) throw error;
    throw new WebhookCallError(`failed to call webhook: ${shown}: ${errorMessage(error)}`);
  } finally {
    clearTimeout(timer);
  }
}

function post(
  endpoint: WebhookEndpoint,
  review: Review,
  timeoutMs: number,
  shown: string,
  agent: https.Agent,
): Promise<Review> {
  const url = new URL(endpoint.url);
  url.searchParams.set("timeout", `${timeoutMs / 1000}s`);
  const body = Buffer.from(JSON.stringify(review));
  return new Promise<Review>((resolve, reject) => {
    const fail = (message: string) => reject(new WebhookCallError(`failed to call webhook: ${message}`));
    const request = https.request(
      {
        method: "POST",
        protocol: "https:",
        host: endpoint.address?.host ?? url.hostname,
        port: endpoint.address?.port ?? (url.port === "" ? 443 : Number(url.port)),
        path: `${url.pathname}${url.search}`,
        servername: endpoint.serverName ?? url.hostname,
        ca: endpoint.caBundle,
        headers: {
          "Content-Type": "application/json",
          Accept: "application/json",
          "Content-Length": body.length,
        },
        timeout: timeoutMs,
        agent,
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxResponseBytes) {
            response.destroy();
            fail(`${shown}: the response is larger than ${maxResponseBytes} bytes`);
          } else chunks.push(chunk);
        });
        response.on("error", (error) => fail(`${shown}: ${error.message}`));
        response.on("end", () => {
          const code = response.statusCode ?? 0;
          if (code < 200 || code >= 300) {
            fail(`the server responded with the status code ${code} but did not return more information`);
            return;
          }
          try {
            const parsed = JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown;
            if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed))
              throw new Error("the response is not a JSON object");
            resolve(parsed as Review);
          } catch (error) {
            fail(`${shown}: ${errorMessage(error)}`);
          }
        });
      },
    );
    request.on("timeout", () => {
      request.destroy();
      fail(`${shown}: context deadline exceeded`);
    });
    request.on("error", (error) => fail(`${shown}: ${error.message}`));
    request.end(body);
  });
}
