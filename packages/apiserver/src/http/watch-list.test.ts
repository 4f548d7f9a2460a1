import { configMaps } from "@reconcile/api";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";
import type { ListeningApiServer } from "./server.js";

// Watch lists (client-go's WatchList, `sendInitialEvents`), as kube-apiserver
// serves them with the feature on: the state as ADDED events, a bookmark
// annotated k8s.io/initial-events-end, then the changes; and upstream's
// validateWatchOptions refusals.

const servers: ApiServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

async function start(): Promise<{ api: ApiServer; http: ListeningApiServer }> {
  const api = new ApiServer();
  servers.push(api);
  return { api, http: await api.listen() };
}

const path = "/api/v1/namespaces/default/configmaps";

/** The watch's events as they arrive, one parsed line each. */
async function openWatch(http: ListeningApiServer, query: string) {
  const stop = new AbortController();
  const response = await fetch(`${http.url}${path}?${query}`, { signal: stop.signal });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  // biome-ignore lint/suspicious/noExplicitAny: watch events read loosely, asserted exactly
  const next = async (): Promise<any> => {
    for (;;) {
      const newline = buffered.indexOf("\n");
      if (newline >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        return JSON.parse(line);
      }
      const { value, done } = await reader.read();
      if (done) throw new Error("the watch ended");
      buffered += decoder.decode(value, { stream: true });
    }
  };
  return { status: response.status, next, close: () => stop.abort() };
}

describe("sendInitialEvents", () => {
  it("sends the state as ADDED events, the bookmark that ends them at the state's resourceVersion, then changes", async () => {
    const { api, http } = await start();
    const client = api.client().resource(configMaps, "default");
    await client.create({ metadata: { name: "a" } });
    const b = await client.create({ metadata: { name: "b" } });
    const watch = await openWatch(
      http,
      "watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true",
    );
    expect(watch.status).toBe(200);
    const first = await watch.next();
    const second = await watch.next();
    expect([first.type, first.object.metadata.name, second.type, second.object.metadata.name]).toEqual([
      "ADDED",
      "a",
      "ADDED",
      "b",
    ]);
    expect(await watch.next()).toEqual({
      type: "BOOKMARK",
      object: {
        kind: "ConfigMap",
        apiVersion: "v1",
        metadata: {
          resourceVersion: b.metadata?.resourceVersion,
          annotations: { "k8s.io/initial-events-end": "true" },
        },
      },
    });
    await client.create({ metadata: { name: "c" } });
    const third = await watch.next();
    expect([third.type, third.object.metadata.name]).toEqual(["ADDED", "c"]);
    watch.close();
  });

  it("with false starts at the newest revision, with no state, even from resourceVersion 0", async () => {
    const { api, http } = await start();
    const client = api.client().resource(configMaps, "default");
    await client.create({ metadata: { name: "old" } });
    const watch = await openWatch(
      http,
      "watch=true&resourceVersion=0&sendInitialEvents=false&resourceVersionMatch=NotOlderThan",
    );
    await client.create({ metadata: { name: "new" } });
    const event = await watch.next();
    expect([event.type, event.object.metadata.name]).toEqual(["ADDED", "new"]);
    watch.close();
  });

  it("is refused with upstream's 422s where validateWatchOptions and ValidateListOptions refuse it", async () => {
    const { http } = await start();
    const refusal = async (query: string) => {
      const response = await fetch(`${http.url}${path}?${query}`);
      const body = (await response.json()) as { message: string };
      return [response.status, body.message];
    };
    const invalid = 'ListOptions.meta.k8s.io "" is invalid: ';
    expect(await refusal("watch=true&sendInitialEvents=true")).toEqual([
      422,
      `${invalid}resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan`,
    ]);
    expect(await refusal("watch=true&resourceVersionMatch=NotOlderThan")).toEqual([
      422,
      `${invalid}resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided`,
    ]);
    expect(await refusal("watch=true&sendInitialEvents=true&resourceVersionMatch=Exact")).toEqual([
      422,
      `${invalid}[resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan, resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"]`,
    ]);
    expect(await refusal("sendInitialEvents=true")).toEqual([
      422,
      `${invalid}sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list`,
    ]);
  });
});
