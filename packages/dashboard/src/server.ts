import { readFile } from "node:fs/promises";
import http from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import { type KubeConfigLike, loopbackHostAllowed } from "@reconcile/client";
import type { CausalityRecorder } from "./causality.js";
import { gatherMachinery, gatherMetrics, type MachineryProvider } from "./machinery.js";
import { proxyToApiServer } from "./proxy.js";
import { maxRelayPaths, relayWatches } from "./relay.js";

export interface DashboardOptions {
  /**
   * The API server the page shows, and how to reach it: a kubeconfig
   * (`loadKubeConfig`, or any `KubeConfigLike`) whose current context's
   * credentials the dashboard adds to the page's reads, as `kubectl proxy`
   * does. Required.
   */
  kubeConfig: KubeConfigLike;
  /**
   * Components running in this process that can say what they hold (a
   * runtime `Manager`'s `machinery()`, an `Introspection`'s `snapshot()`),
   * each under a component name. Default none.
   */
  machinery?: readonly MachineryProvider[] | undefined;
  /**
   * Components in other processes: base URLs of servers answering
   * `/debug/machinery` (a runtime `Manager`'s or the controller manager's
   * health and metrics port). Default none.
   */
  machineryUrls?: readonly string[] | undefined;
  /**
   * The live cluster's causality, served as `/trace` (a sim trace file):
   * the page steps through it and follows a write back to the user's.
   * Default none (the page can still open a trace file).
   */
  causality?: CausalityRecorder | undefined;
  /**
   * The components' own Prometheus metrics, as text: in-process registries
   * (a `Manager`'s `registry.metrics()`). The `/metrics` of `machineryUrls`
   * are read too. The page charts pod startup latency from them. Default none.
   */
  metrics?: readonly (() => string | Promise<string>)[] | undefined;
  /** The page's title. Default "reconcile". */
  title?: string | undefined;
}

/** What the page may ask the API server for: reads of the API, its version, health and metrics. */
const apiPrefixes = ["/api", "/apis", "/version", "/metrics", "/healthz", "/readyz", "/livez"];
/** A collection the relay follows: an API path of lower-case segments. */
const collectionPath = /^\/apis?(\/[a-z0-9.-]+)+$/;
/** The page's own files: lower-case names of scripts and style sheets, no folders. */
const pageFile = /^\/app\/([a-z0-9-]+\.(?:js|css))$/;
const contentTypes: Record<string, string> = {
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  html: "text/html; charset=utf-8",
};

/**
 * A live web view of a cluster and of the machinery inside its components:
 * serves the page (plain ES modules, Preact through htm, no build step), a
 * read-only proxy to the API server under `/k8s/` (the page lists and
 * watches through it with the kubeconfig's credentials), and `/machinery`,
 * every component's queues, reconciles, scheduling decisions and pod
 * workers at once.
 */
export class Dashboard {
  readonly #options: DashboardOptions;
  readonly #pageDir: URL;
  readonly #vendor: string;
  readonly #files = new Map<string, Buffer>();

  constructor(options: DashboardOptions) {
    if (options?.kubeConfig === undefined) throw new TypeError("Dashboard: kubeConfig is required");
    this.#options = options;
    this.#pageDir = new URL("../page/", import.meta.url);
    // htm's standalone build: Preact, its hooks and htm in one ES module (found beside htm's main
    // file: the package exports no path to it that both module systems resolve).
    const htmMain = createRequire(import.meta.url).resolve("htm");
    this.#vendor = join(dirname(dirname(htmMain)), "preact", "standalone.mjs");
  }

  /**
   * Answers one request: the page and its files; `/config`; `/machinery`;
   * `/watch?path=…` (the collections named, listed and watched on one
   * stream, see {@link relayWatches}); `/trace` (the recorded causality);
   * `/component-metrics` (the components' Prometheus text, concatenated);
   * `/k8s/…` (a GET forwarded to the API
   * server). Anything else is a 404.
   */
  async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://localhost");
    const path = url.pathname;
    if (path.startsWith("/k8s/")) {
      const target = path.slice("/k8s".length);
      if (!apiPrefixes.some((prefix) => target === prefix || target.startsWith(`${prefix}/`))) {
        return text(res, 404, `the dashboard does not forward ${target}\n`);
      }
      if (req.method !== "GET") return text(res, 405, "the dashboard only reads: GET\n");
      return proxyToApiServer(this.#options.kubeConfig, req, res, `${target}${url.search}`);
    }
    if (req.method !== "GET" && req.method !== "HEAD") return text(res, 405, "method not allowed\n");
    if (path === "/" || path === "/index.html")
      return this.#file(res, new URL("index.html", this.#pageDir), "html");
    const file = pageFile.exec(path);
    if (file !== null)
      return this.#file(res, new URL(file[1]!, this.#pageDir), file[1]!.endsWith(".js") ? "js" : "css");
    if (path === "/vendor/preact.js") return this.#file(res, this.#vendor, "js");
    if (path === "/favicon.ico") {
      res.writeHead(204).end();
      return;
    }
    if (path === "/config") {
      const body = {
        title: this.#options.title ?? "reconcile",
        machinery: (this.#options.machinery?.length ?? 0) + (this.#options.machineryUrls?.length ?? 0) > 0,
        trace: this.#options.causality !== undefined,
      };
      return json(res, 200, body);
    }
    if (path === "/watch") {
      const paths = url.searchParams.getAll("path");
      const problem = relayProblem(paths);
      if (problem !== undefined) return text(res, 400, `${problem}\n`);
      return relayWatches(this.#options.kubeConfig, paths, res);
    }
    if (path === "/trace") {
      const recorder = this.#options.causality;
      if (recorder === undefined)
        return text(res, 404, "this dashboard records no trace (give it a CausalityRecorder)\n");
      return json(res, 200, recorder.traceFile());
    }
    if (path === "/component-metrics") {
      res.writeHead(200, {
        "content-type": "text/plain; version=0.0.4; charset=utf-8",
        "cache-control": "no-store",
      });
      res.end(await gatherMetrics(this.#options.metrics ?? [], this.#options.machineryUrls ?? []));
      return;
    }
    if (path === "/machinery") {
      return json(
        res,
        200,
        await gatherMachinery(this.#options.machinery ?? [], this.#options.machineryUrls ?? []),
      );
    }
    return text(res, 404, "404 page not found\n");
  }

  /**
   * Serves {@link handle} on `host` (default 127.0.0.1) and `port` (default
   * 0: a free one). On a loopback address only IP literals and `localhost`
   * are answered as `Host`, so no other site can reach it by DNS rebinding.
   */
  listen(options: { host?: string; port?: number } = {}): Promise<{ url: string; close(): Promise<void> }> {
    const host = options.host ?? "127.0.0.1";
    const loopback = host === "127.0.0.1" || host === "::1" || host === "localhost";
    const server = http.createServer((req, res) => {
      if (loopback && !loopbackHostAllowed(req.headers.host)) {
        text(res, 403, `the dashboard answers ${req.headers.host} only by IP address or localhost\n`);
        return;
      }
      this.handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) text(res, 500, `${error instanceof Error ? error.message : String(error)}\n`);
        else res.destroy();
      });
    });
    return new Promise((resolve, reject) => {
      server.once("error", reject);
      server.listen(options.port ?? 0, host, () => {
        const address = server.address() as AddressInfo;
        const shown = address.family === "IPv6" ? `[${address.address}]` : address.address;
        resolve({
          url: `http://${shown}:${address.port}`,
          close: () =>
            new Promise<void>((done) => {
              server.close(() => done());
              // Watches the page holds open would keep the server up.
              server.closeAllConnections();
            }),
        });
      });
    });
  }

  /** Serves a file of the page (a name) or the vendored module (a path), read once; a missing one is a 404. */
  async #file(res: http.ServerResponse, file: string | URL, type: string): Promise<void> {
    const key = String(file);
    let body = this.#files.get(key);
    if (body === undefined) {
      try {
        body = await readFile(file);
      } catch {
        return text(res, 404, "404 page not found\n");
      }
      this.#files.set(key, body);
    }
    res.writeHead(200, headers(type)).end(body);
  }
}

/** What is wrong with the collections a `/watch` asks for, if anything. */
function relayProblem(paths: readonly string[]): string | undefined {
  if (paths.length === 0) return "/watch needs at least one path=<collection>, e.g. path=/api/v1/pods";
  if (paths.length > maxRelayPaths)
    return `/watch follows at most ${maxRelayPaths} collections, got ${paths.length}`;
  const bad = paths.find((p) => p.length > 256 || !collectionPath.test(p));
  if (bad !== undefined) {
    return `/watch path ${JSON.stringify(bad.slice(0, 256))} is not a collection of the API (like /api/v1/pods or /apis/apps/v1/namespaces/default/deployments)`;
  }
  return undefined;
}

function headers(type: string): http.OutgoingHttpHeaders {
  return {
    "content-type": contentTypes[type],
    "x-content-type-options": "nosniff",
    // The page runs only its own scripts and talks only to this server.
    "content-security-policy": "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
    "cache-control": "no-cache",
  };
}

function text(res: http.ServerResponse, status: number, body: string): void {
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8", "x-content-type-options": "nosniff" });
  res.end(body);
}

function json(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
  res.end(`${JSON.stringify(body)}\n`);
}
