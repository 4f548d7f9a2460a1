import http from "node:http";
import https from "node:https";
import type { KubeConfigLike } from "@reconcile/client";

/**
 * Sends one GET to the API server of `kubeConfig`'s current context with
 * its credentials; resolves with the answer as it starts to arrive (a
 * watch's body keeps coming). `signal` destroys the request.
 */
export async function getFromApiServer(
  kubeConfig: KubeConfigLike,
  pathAndQuery: string,
  options: { accept?: string | undefined; signal?: AbortSignal | undefined } = {},
): Promise<http.IncomingMessage> {
  const cluster = kubeConfig.getCurrentCluster();
  if (cluster === null) throw new Error("the kubeconfig has no current cluster");
  const base = new URL(cluster.server);
  const target = new URL(`${base.pathname.replace(/\/$/, "")}${pathAndQuery}`, base);
  const request: https.RequestOptions = {
    method: "GET",
    protocol: target.protocol,
    hostname: target.hostname.replace(/^\[|\]$/g, ""),
    port: target.port,
    path: `${target.pathname}${target.search}`,
    headers: { accept: options.accept ?? "application/json" },
    signal: options.signal,
  };
  await kubeConfig.applyToHTTPSOptions(request);
  return new Promise((resolve, reject) => {
    const req = (target.protocol === "https:" ? https : http).request(request, resolve);
    req.on("error", (error) =>
      reject(
        new Error(`the API server at ${base.origin} did not answer: ${error.message}`, { cause: error }),
      ),
    );
    req.end();
  });
}

/**
 * Forwards one GET to the API server (as `kubectl proxy`), streaming the
 * answer back as it comes. The client's `Accept` passes through; its
 * cookies and credentials do not.
 */
export async function proxyToApiServer(
  kubeConfig: KubeConfigLike,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  pathAndQuery: string,
): Promise<void> {
  const abort = new AbortController();
  // The page went away: so does the request.
  res.on("close", () => abort.abort());
  let upstream: http.IncomingMessage;
  try {
    upstream = await getFromApiServer(kubeConfig, pathAndQuery, {
      accept: req.headers.accept,
      signal: abort.signal,
    });
  } catch (error) {
    if (!res.headersSent && !abort.signal.aborted) {
      res
        .writeHead(502, { "content-type": "text/plain; charset=utf-8" })
        .end(`${error instanceof Error ? error.message : String(error)}\n`);
    }
    return;
  }
  res.writeHead(upstream.statusCode ?? 502, {
    "content-type": upstream.headers["content-type"] ?? "application/json",
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
  });
  upstream.pipe(res);
  upstream.on("error", () => res.destroy());
}
