// HttpClient's rest_client metrics seam: one result and one latency per attempt, as client-go reports them.
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { pods } from "@reconcile/api";
import { FakeClock } from "@reconcile/clock";
import { afterEach, describe, expect, it } from "vitest";
import { loadKubeConfig } from "../kubeconfig/load.js";
import { HttpClient, type RestClientMetrics } from "./http-client.js";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function clientFor(url: string, metrics: RestClientMetrics, clock?: FakeClock): Promise<HttpClient> {
  const kubeConfig = await loadKubeConfig({
    yaml: `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "${url}"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: ctx, context: {cluster: c, user: u, namespace: default}}]
current-context: ctx
`,
  });
  const client = new HttpClient({
    kubeConfig,
    qps: Number.POSITIVE_INFINITY,
    maxRetries: 0,
    metrics,
    ...(clock ? { clock } : {}),
  });
  closers.push(async () => client.close());
  return client;
}

function recorder() {
  const results: [string, string, string][] = [];
  const latencies: [string, string, number][] = [];
  const metrics: RestClientMetrics = {
    requestResult: (code, method, host) => results.push([code, method, host]),
    requestLatency: (verb, host, seconds) => latencies.push([verb, host, seconds]),
  };
  return { metrics, results, latencies };
}

describe("HttpClient metrics", () => {
  it("reports each answered request's code, method and host, and its latency on the client's clock", async () => {
    const clock = new FakeClock(0);
    const server = http.createServer((request, response) => {
      clock.advance(250);
      const found = request.url?.endsWith("/pods/web");
      response.writeHead(found ? 200 : 404, { "content-type": "application/json" });
      response.end(
        JSON.stringify(
          found
            ? { apiVersion: "v1", kind: "Pod", metadata: { name: "web", namespace: "default" } }
            : {
                kind: "Status",
                apiVersion: "v1",
                status: "Failure",
                reason: "NotFound",
                code: 404,
                message: "not found",
              },
        ),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    closers.push(() => new Promise((resolve) => server.close(() => resolve())));
    const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    const { metrics, results, latencies } = recorder();
    const client = await clientFor(`http://${host}`, metrics, clock);
    await client.resource(pods, "default").get("web");
    await expect(client.resource(pods, "default").get("absent")).rejects.toMatchObject({ code: 404 });
    expect(results).toEqual([
      ["200", "GET", host],
      ["404", "GET", host],
    ]);
    expect(latencies).toEqual([
      ["GET", host, 0.25],
      ["GET", host, 0.25],
    ]);
  });

  it("reports <error> for a request that got no answer", async () => {
    const server = http.createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const { metrics, results, latencies } = recorder();
    const client = await clientFor(`http://127.0.0.1:${port}`, metrics);
    await expect(
      client.resource(pods, "default").create({ metadata: { name: "web" }, spec: { containers: [] } }),
    ).rejects.toBeDefined();
    expect(results).toEqual([["<error>", "POST", `127.0.0.1:${port}`]]);
    expect(latencies).toEqual([]);
  });
});
