// A minimal HTTP ListerWatcher for the benchmark (node:http and a streaming
// newline splitter): enough to put the informer on a real socket until the
// HTTP client of @reconcile/client is used here instead. (fetch's web
// streams cost more than the JSON parsing here, so node:http it is.)
import { Agent, get, type IncomingMessage } from "node:http";
import type {
  KubeObject,
  ListerWatcher,
  ListOptions,
  ObjectList,
  WatchEvent,
  WatchOptions,
} from "@reconcile/api";
import { StatusError } from "@reconcile/api";

const agent = new Agent({ keepAlive: true });

export function httpListerWatcher<T extends KubeObject>(baseUrl: string, path: string): ListerWatcher<T> {
  return {
    async list(options: ListOptions): Promise<ObjectList<T>> {
      const url = new URL(path, baseUrl);
      setParams(url, {
        resourceVersion: options.resourceVersion,
        limit: options.limit,
        continue: options.continue,
        labelSelector: options.labelSelector,
        fieldSelector: options.fieldSelector,
      });
      const res = await request(url, options.signal);
      const text = await readAll(res);
      if (res.statusCode !== 200) throw new StatusError(JSON.parse(text));
      return JSON.parse(text) as ObjectList<T>;
    },
    async watch(options: WatchOptions): Promise<AsyncIterable<WatchEvent<T>>> {
      const url = new URL(path, baseUrl);
      setParams(url, {
        watch: "true",
        resourceVersion: options.resourceVersion,
        timeoutSeconds: options.timeoutSeconds,
        allowWatchBookmarks: options.allowWatchBookmarks,
        sendInitialEvents: options.sendInitialEvents,
        resourceVersionMatch: options.resourceVersionMatch,
        labelSelector: options.labelSelector,
        fieldSelector: options.fieldSelector,
      });
      const res = await request(url, options.signal);
      if (res.statusCode !== 200) throw new StatusError(JSON.parse(await readAll(res)));
      return splitLines<WatchEvent<T>>(res);
    },
  };
}

/** GET `url`; resolves with the response once its headers are in. */
export function request(url: URL, signal?: AbortSignal): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = get(url, { agent, signal }, resolve);
    req.on("error", reject);
  });
}

export async function readAll(res: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** Parses newline-delimited JSON as it streams in; ends quietly when the request is aborted. */
export async function* splitLines<E>(res: IncomingMessage): AsyncGenerator<E> {
  res.setEncoding("utf8");
  let pending = "";
  try {
    for await (const chunk of res) {
      const text = pending === "" ? (chunk as string) : pending + (chunk as string);
      let start = 0;
      for (let end = text.indexOf("\n"); end !== -1; end = text.indexOf("\n", start)) {
        if (end > start) yield JSON.parse(text.slice(start, end)) as E;
        start = end + 1;
      }
      pending = start === text.length ? "" : text.slice(start);
    }
  } catch (error) {
    if ((error as Error)?.name === "AbortError" || (error as { code?: string })?.code === "ECONNRESET")
      return;
    throw error;
  } finally {
    res.destroy();
  }
}

function setParams(url: URL, params: Record<string, string | number | boolean | undefined>): void {
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== "") url.searchParams.set(key, String(value));
  }
}
