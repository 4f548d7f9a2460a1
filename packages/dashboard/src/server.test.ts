import http from "node:http";
import type { AddressInfo } from "node:net";
import { configMaps } from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import { loadKubeConfig } from "@reconcile/client";
import { afterEach, describe, expect, it } from "vitest";
import type { RelayLine } from "./relay.js";
import { Dashboard } from "./server.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

/** An embedded API server that wants a bearer token, and a dashboard reading it through its kubeconfig. */
async function start(
  options: Pick<ConstructorParameters<typeof Dashboard>[0], "machinery" | "machineryUrls" | "metrics"> = {},
) {
  const api = new ApiServer();
  const listening = await api.listen({ port: 0, token: "secret-token" });
  const dashboard = await new Dashboard({
    kubeConfig: await loadKubeConfig({ yaml: listening.kubeconfig() }),
    machinery: options.machinery,
    machineryUrls: options.machineryUrls,
    metrics: options.metrics,
  }).listen();
  cleanups.push(async () => {
    await dashboard.close();
    await listening.close();
    await api.close();
  });
  return { api, apiUrl: listening.url, url: dashboard.url };
}

/** Reads relayed lines from `/watch` until `until` says enough, then closes the stream. */
async function relay(
  url: string,
  query: string,
  until: (lines: RelayLine[]) => boolean,
): Promise<RelayLine[]> {
  const abort = new AbortController();
  const response = await fetch(`${url}/watch?${query}`, { signal: abort.signal });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toBe("application/x-ndjson");
  const lines: RelayLine[] = [];
  let buffered = "";
  const decoder = new TextDecoder();
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffered += decoder.decode(chunk, { stream: true });
    let newline = buffered.indexOf("\n");
    while (newline !== -1) {
      lines.push(JSON.parse(buffered.slice(0, newline)) as RelayLine);
      buffered = buffered.slice(newline + 1);
      newline = buffered.indexOf("\n");
    }
    if (until(lines)) break;
  }
  abort.abort();
  return lines;
}

const nameOf = (line: RelayLine) =>
  "object" in line ? (line.object as { metadata: { name: string } }).metadata.name : undefined;

describe("Dashboard", () => {
  it("relays several collections' lists and watch events on one stream, with the kubeconfig's token", async () => {
    const { api, url } = await start();
    const maps = api.client().resource(configMaps, "default");
    await maps.create({ metadata: { name: "first", namespace: "default" } });
    const query = ["/api/v1/namespaces/default/configmaps", "/api/v1/nodes"]
      .map((p) => `path=${encodeURIComponent(p)}`)
      .join("&");
    // Once both lists are in, the writes arrive as watch events.
    const writes = async () => {
      await maps.create({ metadata: { name: "second", namespace: "default" } });
      await maps.update({ metadata: { name: "second", namespace: "default" }, data: { a: "1" } });
      await maps.delete("first");
    };
    let writing: Promise<void> | undefined;
    const lines = await relay(url, query, (all) => {
      if (writing === undefined && all.filter((l) => l.type === "SYNC").length === 2) writing = writes();
      return all.some((l) => l.type === "DELETED");
    });
    await writing;
    const syncs = lines.filter((l) => l.type === "SYNC");
    expect(syncs.map((l) => l.path).sort()).toEqual([
      "/api/v1/namespaces/default/configmaps",
      "/api/v1/nodes",
    ]);
    const listed = syncs.find((l) => l.path.endsWith("configmaps")) as Extract<RelayLine, { type: "SYNC" }>;
    expect(listed.items.map((i) => (i as { metadata: { name: string } }).metadata.name)).toEqual(["first"]);
    expect(listed.resourceVersion).toMatch(/^\d+$/);
    expect(lines.filter((l) => l.type !== "SYNC").map((l) => [l.type, nameOf(l)])).toEqual([
      ["ADDED", "second"],
      ["MODIFIED", "second"],
      ["DELETED", "first"],
    ]);
  });

  it("relays a collection the API server refuses as an ERROR line and keeps the others going", async () => {
    const { url } = await start();
    const query = ["/apis/example.com/v1/widgets", "/api/v1/nodes"]
      .map((p) => `path=${encodeURIComponent(p)}`)
      .join("&");
    const lines = await relay(
      url,
      query,
      (all) => all.some((l) => l.type === "ERROR") && all.some((l) => l.type === "SYNC"),
    );
    const error = lines.find((l) => l.type === "ERROR") as Extract<RelayLine, { type: "ERROR" }>;
    expect(error.path).toBe("/apis/example.com/v1/widgets");
    expect(error.message).toMatch(/^GET \/apis\/example\.com\/v1\/widgets: 404 /);
    expect(lines.find((l) => l.type === "SYNC")?.path).toBe("/api/v1/nodes");
  });

  it("forwards reads to the API server and refuses everything else with a 4xx that says why", async () => {
    const { url } = await start();
    const list = await fetch(`${url}/k8s/api/v1/namespaces/default/configmaps?limit=5`);
    expect(list.status).toBe(200);
    expect(((await list.json()) as { kind: string }).kind).toBe("ConfigMapList");
    const missing = await fetch(`${url}/k8s/api/v1/namespaces/default/configmaps/nope`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { reason: string }).reason).toBe("NotFound");
    const write = await fetch(`${url}/k8s/api/v1/namespaces/default/configmaps`, {
      method: "POST",
      body: "{}",
    });
    expect([write.status, await write.text()]).toEqual([405, "the dashboard only reads: GET\n"]);
    const other = await fetch(`${url}/k8s/debug/pprof`);
    expect([other.status, await other.text()]).toEqual([
      404,
      "the dashboard does not forward /debug/pprof\n",
    ]);
    const none = await fetch(`${url}/watch`);
    expect([none.status, await none.text()]).toEqual([
      400,
      "/watch needs at least one path=<collection>, e.g. path=/api/v1/pods\n",
    ]);
    const many = await fetch(
      `${url}/watch?${Array.from({ length: 33 }, () => "path=/api/v1/pods").join("&")}`,
    );
    expect([many.status, await many.text()]).toEqual([
      400,
      "/watch follows at most 32 collections, got 33\n",
    ]);
    const outside = await fetch(`${url}/watch?path=/version`);
    expect(outside.status).toBe(400);
    const post = await fetch(`${url}/config`, { method: "POST" });
    expect(post.status).toBe(405);
  });

  it("serves its page, its scripts and Preact with a strict content policy, and nothing beside them", async () => {
    const { url } = await start();
    const page = await fetch(`${url}/`);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("content-security-policy")).toBe(
      "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
    );
    expect(await page.text()).toContain('<script type="module" src="/app/app.js"></script>');
    const app = await fetch(`${url}/app/app.js`);
    expect(app.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(await app.text()).toContain('from "/vendor/preact.js"');
    const vendor = await (await fetch(`${url}/vendor/preact.js`)).text();
    expect(vendor).toMatch(/export\{.*\bas html\b.*\bas render\b/s);
    for (const path of ["/app/missing.js", "/app/../src/server.ts", "/app/App.js", "/package.json"]) {
      expect((await fetch(`${url}${path}`)).status, path).toBe(404);
    }
    expect(await (await fetch(`${url}/config`)).json()).toEqual({
      title: "reconcile",
      machinery: false,
      trace: false,
    });
    const trace = await fetch(`${url}/trace`);
    expect([trace.status, await trace.text()]).toEqual([
      404,
      "this dashboard records no trace (give it a CausalityRecorder)\n",
    ]);
  });

  it("answers only IP literals and localhost as Host on loopback", async () => {
    const { url } = await start();
    const { port } = new URL(url);
    const status = (host: string) =>
      new Promise<number>((resolve, reject) => {
        http
          .get({ host: "127.0.0.1", port, path: "/config", headers: { host } }, (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          })
          .on("error", reject);
      });
    expect(await status(`localhost:${port}`)).toBe(200);
    expect(await status(`127.0.0.1:${port}`)).toBe(200);
    expect(await status(`attacker.example:${port}`)).toBe(403);
  });

  it("gathers the machinery of components in process and in other processes, listing the ones that fail", async () => {
    const remote = http.createServer((req, res) => {
      if (req.url === "/debug/machinery") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            component: "other-manager",
            sources: [{ kind: "controller", name: "x", state: { running: true } }],
          }),
        );
      } else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => remote.listen(0, "127.0.0.1", resolve));
    const remoteUrl = `http://127.0.0.1:${(remote.address() as AddressInfo).port}`;
    cleanups.push(() => new Promise((resolve) => remote.close(() => resolve())));
    const { url } = await start({
      machinery: [
        {
          component: "kube-scheduler",
          snapshot: () => [{ kind: "scheduler", name: "default-scheduler", state: { nodes: 3 } }],
        },
        {
          component: "broken",
          snapshot: () => {
            throw new Error("not running");
          },
        },
      ],
      machineryUrls: [remoteUrl, `${remoteUrl}/elsewhere`],
      metrics: [() => "own_total 1", () => Promise.reject(new Error("registry gone"))],
    });
    expect(await (await fetch(`${url}/config`)).json()).toEqual({
      title: "reconcile",
      machinery: true,
      trace: false,
    });
    const view = (await (await fetch(`${url}/machinery`)).json()) as Record<string, unknown>;
    expect(typeof view.at).toBe("number");
    expect(view.sources).toEqual([
      { component: "kube-scheduler", kind: "scheduler", name: "default-scheduler", state: { nodes: 3 } },
      { component: "other-manager", kind: "controller", name: "x", state: { running: true } },
    ]);
    // The Prometheus text of each source, in order; the remote's /metrics is not served here (404).
    expect(await (await fetch(`${url}/component-metrics`)).text()).toBe(
      `own_total 1\n# metrics source failed: registry gone\n# ${remoteUrl}/metrics answered 404\n# ${remoteUrl}/elsewhere/metrics answered 404\n`,
    );
    expect(view.errors).toEqual([
      { component: "broken", message: "not running" },
      { component: `${remoteUrl}/elsewhere`, message: `${remoteUrl}/elsewhere/debug/machinery answered 404` },
    ]);
  });
});
