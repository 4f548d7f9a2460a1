import { readFile } from "node:fs/promises";
import * as https from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { errorMessage, type Runnable } from "@reconcile/api";
import type { Logger } from "@reconcile/controller";
import type { AdmissionHandler, AdmissionReview } from "./admission.js";
import { type Conversion, convertReview } from "./conversion.js";

export interface WebhookServerOptions {
  /** Where to listen. Default 9443, as controller-runtime; 0 picks a free port. */
  port?: number | undefined;
  /** Default: every address. */
  host?: string | undefined;
  /** The serving certificate and key (PEM). Default: `tls.crt` and `tls.key` read from `certDir` at start. */
  certificate?: { cert: string; key: string } | undefined;
  /** Where `tls.crt` and `tls.key` are when no certificate is given. Default `<tmp>/k8s-webhook-server/serving-certs`, as controller-runtime. */
  certDir?: string | undefined;
  logger?: Logger | undefined;
}

/** Largest review accepted, as kube-apiserver caps what it sends. */
const maxReviewBytes = 7 * 1024 * 1024;

/**
 * controller-runtime's `webhook.Server`: HTTPS, one handler per path
 * (`/mutate-…`, `/validate-…`), AdmissionReview v1 in and out. A Runnable
 * that serves on every replica (no leader election). `handle` answers a
 * review in process, which is what envtest's in-process webhooks call.
 */
export class WebhookServer implements Runnable {
  readonly name = "webhook-server";
  readonly needLeaderElection = false;
  readonly #handlers = new Map<string, AdmissionHandler>();
  readonly #conversions = new Map<string, Conversion>();
  readonly #options: WebhookServerOptions;
  #port: number | undefined;
  #started = false;

  constructor(options: WebhookServerOptions = {}) {
    this.#options = options;
  }

  /** Serves `handler` at `path` (controller-runtime's `Register`); a path registered twice is an error. */
  register(path: string, handler: AdmissionHandler): void {
    if (!path.startsWith("/"))
      throw new TypeError(`WebhookServer.register: path ${JSON.stringify(path)} must start with /`);
    if (this.#handlers.has(path)) throw new Error(`WebhookServer.register: ${path} is already registered`);
    this.#handlers.set(path, handler);
  }

  /**
   * Converts a kind's objects (`group/Kind`) at `/convert`, which the first
   * conversion registered makes the server serve.
   */
  registerConversion(groupKind: string, conversion: Conversion): void {
    if (this.#conversions.has(groupKind))
      throw new Error(`WebhookServer: a conversion for ${groupKind} is already registered`);
    this.#conversions.set(groupKind, conversion);
    if (!this.#handlers.has("/convert"))
      this.register("/convert", async (review) => convertReview(review as never, this.#conversions) as never);
  }

  /** The paths served. */
  get paths(): readonly string[] {
    return [...this.#handlers.keys()];
  }

  /** The port listened on once started. */
  get port(): number | undefined {
    return this.#port;
  }

  /** Whether the server listens: its readiness (`StartedChecker`). */
  get started(): boolean {
    return this.#started;
  }

  /** Answers one review for `path` in process: no TLS, no socket. */
  async handle(path: string, review: AdmissionReview): Promise<AdmissionReview> {
    const handler = this.#handlers.get(path);
    if (handler === undefined) throw new Error(`no webhook is registered at ${path}`);
    return handler(review);
  }

  async run({ signal }: { signal: AbortSignal }): Promise<void> {
    if (signal.aborted) return;
    const certificate = this.#options.certificate ?? (await this.#readCertificate());
    const server = https.createServer(
      { cert: certificate.cert, key: certificate.key },
      (request, response) => {
        void this.#serve(request, response);
      },
    );
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.#options.port ?? 9443, this.#options.host, () => {
        server.off("error", reject);
        resolve();
      });
    });
    this.#port = (server.address() as AddressInfo).port;
    this.#started = true;
    this.#options.logger?.info({ port: this.#port, paths: this.paths }, "Serving webhook server");
    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener("abort", () => resolve(), { once: true });
    });
    this.#started = false;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  async #readCertificate(): Promise<{ cert: string; key: string }> {
    const dir = this.#options.certDir ?? join(tmpdir(), "k8s-webhook-server", "serving-certs");
    try {
      const [cert, key] = await Promise.all([
        readFile(join(dir, "tls.crt"), "utf8"),
        readFile(join(dir, "tls.key"), "utf8"),
      ]);
      return { cert, key };
    } catch (error) {
      throw new Error(`WebhookServer: no serving certificate: ${errorMessage(error)}`);
    }
  }

  async #serve(
    request: import("node:http").IncomingMessage,
    response: import("node:http").ServerResponse,
  ): Promise<void> {
    const reply = (code: number, body: unknown) => {
      response.writeHead(code, { "Content-Type": "application/json" });
      response.end(JSON.stringify(body));
    };
    const path = new URL(request.url ?? "/", "https://localhost").pathname;
    const handler = this.#handlers.get(path);
    if (handler === undefined || request.method !== "POST") {
      request.resume();
      reply(404, { message: `no webhook at ${request.method} ${path}` });
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of request) {
      size += (chunk as Buffer).length;
      if (size > maxReviewBytes) {
        reply(413, { message: "request body too large" });
        request.destroy();
        return;
      }
      chunks.push(chunk as Buffer);
    }
    let review: AdmissionReview;
    try {
      review = JSON.parse(Buffer.concat(chunks).toString("utf8")) as AdmissionReview;
      const kind = (review as { kind?: string } | null)?.kind;
      if (
        (kind !== "AdmissionReview" && kind !== "ConversionReview") ||
        typeof review.request?.uid !== "string"
      )
        throw new Error("the body is not an AdmissionReview or ConversionReview with a request");
    } catch (error) {
      reply(400, { message: errorMessage(error) });
      return;
    }
    try {
      reply(200, await handler(review));
    } catch (error) {
      this.#options.logger?.error({ err: error, path }, "webhook handler failed");
      reply(200, {
        apiVersion: "admission.k8s.io/v1",
        kind: "AdmissionReview",
        response: {
          uid: review.request!.uid,
          allowed: false,
          status: { code: 500, message: errorMessage(error) },
        },
      });
    }
  }
}
