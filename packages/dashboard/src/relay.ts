import type http from "node:http";
import type { KubeConfigLike } from "@reconcile/client";
import { getFromApiServer } from "./proxy.js";

/**
 * One line of the relayed stream, newline-delimited JSON:
 * - `{ path, type: "SYNC", items, resourceVersion }`: the collection as listed (again, after a 410);
 * - `{ path, type: "ADDED" | "MODIFIED" | "DELETED", object }`: the API server's watch event;
 * - `{ path, type: "ERROR", message }`: listing or watching failed; it is retried in a second.
 */
export type RelayLine =
  | { path: string; type: "SYNC"; items: unknown[]; resourceVersion: string }
  | { path: string; type: "ADDED" | "MODIFIED" | "DELETED"; object: unknown }
  | { path: string; type: "ERROR"; message: string };

/** The collections one relay may follow, and the longest path it takes. */
export const maxRelayPaths = 32;
const retryMs = 1_000;

/**
 * Lists and watches every collection of `paths` on the API server, as a
 * reflector does (list, watch from its resourceVersion with bookmarks,
 * resume a closed watch from the last version seen, list again after
 * 410 Gone), and writes it all to one response: a browser holds at most six
 * connections to a server, fewer than the kinds a view follows. Runs until
 * the response closes.
 */
export async function relayWatches(
  kubeConfig: KubeConfigLike,
  paths: readonly string[],
  res: http.ServerResponse,
): Promise<void> {
  const abort = new AbortController();
  res.on("close", () => abort.abort());
  res.writeHead(200, {
    "content-type": "application/x-ndjson",
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
  });
  res.flushHeaders();
  const emit = (line: RelayLine) => {
    if (!abort.signal.aborted) res.write(`${JSON.stringify(line)}\n`);
  };
  await Promise.all(paths.map((path) => follow(kubeConfig, path, emit, abort.signal)));
  res.end();
}

async function follow(
  kubeConfig: KubeConfigLike,
  path: string,
  emit: (line: RelayLine) => void,
  signal: AbortSignal,
): Promise<void> {
  let resourceVersion = "";
  while (!signal.aborted) {
    try {
      if (resourceVersion === "") {
        const list = (await readJson(kubeConfig, path, signal)) as {
          items?: unknown[];
          metadata?: { resourceVersion?: string };
        };
        resourceVersion = list.metadata?.resourceVersion ?? "";
        emit({ path, type: "SYNC", items: list.items ?? [], resourceVersion });
      }
      resourceVersion = await watch(kubeConfig, path, resourceVersion, emit, signal);
    } catch (error) {
      if (signal.aborted) return;
      emit({ path, type: "ERROR", message: error instanceof Error ? error.message : String(error) });
      resourceVersion = "";
      await new Promise((resolve) => setTimeout(resolve, retryMs));
    }
  }
}

async function readJson(kubeConfig: KubeConfigLike, path: string, signal: AbortSignal): Promise<unknown> {
  const response = await getFromApiServer(kubeConfig, path, { signal });
  if ((response.statusCode ?? 500) >= 400) throw await failed(`GET ${path}`, response);
  return JSON.parse(await readAll(response));
}

async function readAll(response: http.IncomingMessage): Promise<string> {
  let body = "";
  response.setEncoding("utf8");
  for await (const chunk of response) body += chunk;
  return body;
}

/** The error of a refused request: what was asked, the code and the server's answer. */
async function failed(what: string, response: http.IncomingMessage): Promise<Error> {
  return new Error(`${what}: ${response.statusCode} ${(await readAll(response)).trim()}`);
}

/** Follows one watch; resolves with the resourceVersion to resume from, or "" to list again. */
async function watch(
  kubeConfig: KubeConfigLike,
  path: string,
  resourceVersion: string,
  emit: (line: RelayLine) => void,
  signal: AbortSignal,
): Promise<string> {
  const query = `watch=1&allowWatchBookmarks=true&resourceVersion=${encodeURIComponent(resourceVersion)}`;
  const response = await getFromApiServer(kubeConfig, `${path}${path.includes("?") ? "&" : "?"}${query}`, {
    signal,
  });
  if ((response.statusCode ?? 500) === 410) {
    response.resume();
    return "";
  }
  if ((response.statusCode ?? 500) >= 400) throw await failed(`watch ${path}`, response);
  response.setEncoding("utf8");
  let buffered = "";
  let version = resourceVersion;
  for await (const chunk of response) {
    buffered += chunk;
    let newline = buffered.indexOf("\n");
    while (newline !== -1) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      newline = buffered.indexOf("\n");
      if (line.trim() === "") continue;
      const event = JSON.parse(line) as {
        type: string;
        object?: { metadata?: { resourceVersion?: string } };
      };
      // An ERROR is a Status: 410 Gone, or the watch failed; either way, list again.
      if (event.type === "ERROR") {
        response.destroy();
        return "";
      }
      version = event.object?.metadata?.resourceVersion ?? version;
      if (event.type === "ADDED" || event.type === "MODIFIED" || event.type === "DELETED") {
        emit({ path, type: event.type, object: event.object });
      }
    }
  }
  return version;
}
