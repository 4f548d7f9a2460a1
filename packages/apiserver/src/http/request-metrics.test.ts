// The API server's request metrics and request log (kube-apiserver's MonitorRequest labels, httplog).
import { pods } from "@reconcile/api";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";
import { type ApiServerMetrics, type RequestLabels, requestLabels } from "./request-metrics.js";
import type { ListeningApiServer } from "./server.js";

const running: { api: ApiServer; http: ListeningApiServer }[] = [];
afterEach(async () => {
  for (const { api, http } of running.splice(0)) {
    await http.close();
    await api.close();
  }
});

const q = (text = "") => new URLSearchParams(text);

describe("requestLabels", () => {
  it.each([
    ["GET", "/api/v1/namespaces/default/pods", "", undefined, ["LIST", "", "v1", "pods", "", "namespace"]],
    ["GET", "/api/v1/pods", "watch=true", undefined, ["WATCH", "", "v1", "pods", "", "cluster"]],
    ["GET", "/api/v1/namespaces/default/pods/web", "", undefined, ["GET", "", "v1", "pods", "", "resource"]],
    ["GET", "/api/v1/namespaces/default", "", undefined, ["GET", "", "v1", "namespaces", "", "resource"]],
    ["GET", "/api/v1/namespaces", "", undefined, ["LIST", "", "v1", "namespaces", "", "cluster"]],
    [
      "PUT",
      "/apis/apps/v1/namespaces/d/deployments/web/scale",
      "",
      undefined,
      ["PUT", "apps", "v1", "deployments", "scale", "resource"],
    ],
    [
      "PATCH",
      "/apis/apps/v1/namespaces/d/deployments/web",
      "",
      "application/apply-patch+yaml",
      ["APPLY", "apps", "v1", "deployments", "", "resource"],
    ],
    [
      "POST",
      "/api/v1/namespaces/d/pods/web/eviction",
      "",
      "application/json",
      ["POST", "", "v1", "pods", "eviction", "resource"],
    ],
    [
      "POST",
      "/api/v1/namespaces/d/pods/web/exec",
      "",
      undefined,
      ["CONNECT", "", "v1", "pods", "exec", "resource"],
    ],
    ["GET", "/healthz", "", undefined, ["GET", "", "", "", "/healthz", ""]],
    ["GET", "/apis/apps/v1", "", undefined, ["GET", "", "", "", "/apis/apps/v1", ""]],
    ["GET", "/no/such/path/at/all", "", undefined, ["GET", "", "", "", "other", ""]],
  ] as const)("%s %s?%s", (method, path, query, contentType, [
    verb,
    group,
    version,
    resource,
    subresource,
    scope,
  ]) => {
    expect(requestLabels(method, path, q(query), contentType, 200)).toEqual({
      verb,
      dry_run: "",
      group,
      version,
      resource,
      subresource,
      scope,
      component: "apiserver",
      code: "200",
    });
  });

  it.each([
    ["", ""],
    ["dryRun=All", "All"],
    ["dryRun=All&dryRun=All", "All"],
    ["dryRun=true", "invalid"],
    ["dryRun=All&dryRun=", "invalid"],
  ])("dry_run of ?%s is %j, as upstream's cleanDryRun", (query, label) => {
    expect(requestLabels("POST", "/api/v1/namespaces/d/pods", q(query), undefined, 201).dry_run).toBe(label);
  });
});

describe("metrics and the request log over HTTP", () => {
  it("reports each request with its code, serves GET /metrics after counting stored objects, logs verb, URI, status and latency", async () => {
    const requests: { labels: RequestLabels; seconds: number }[] = [];
    const counts = new Map<string, number>();
    const metrics: ApiServerMetrics = {
      request: (labels, seconds) => requests.push({ labels, seconds }),
      storageObjects: (resource, count) => counts.set(resource, count),
      expose: async () => ({ contentType: "text/plain; version=0.0.4; charset=utf-8", body: "up 1\n" }),
    };
    const lines: Record<string, unknown>[] = [];
    const api = new ApiServer();
    const http = await api.listen({
      metrics,
      requestLog: { info: (obj, msg) => lines.push({ ...obj, msg }) },
    });
    running.push({ api, http });
    await api
      .client()
      .resource(pods, "default")
      .create({
        metadata: { name: "web" },
        spec: { containers: [{ name: "web", image: "nginx" }] },
      });
    expect((await fetch(`${http.url}/api/v1/namespaces/default/pods/web`)).status).toBe(200);
    expect((await fetch(`${http.url}/api/v1/namespaces/default/pods/absent`)).status).toBe(404);
    const scrape = await fetch(`${http.url}/metrics`);
    expect(scrape.status).toBe(200);
    expect(scrape.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    expect(await scrape.text()).toBe("up 1\n");
    expect(counts.get("pods")).toBe(1);
    expect(counts.get("namespaces")).toBe(4);
    expect(counts.get("services")).toBe(1); // default/kubernetes
    expect(counts.get("deployments.apps")).toBe(0);
    await expect.poll(() => requests.length).toBe(3);
    expect(
      requests.map((r) => [
        r.labels.verb,
        r.labels.resource,
        r.labels.scope,
        r.labels.subresource,
        r.labels.code,
      ]),
    ).toEqual([
      ["GET", "pods", "resource", "", "200"],
      ["GET", "pods", "resource", "", "404"],
      ["GET", "", "", "/metrics", "200"],
    ]);
    for (const r of requests) expect(r.seconds).toBeGreaterThanOrEqual(0);
    expect(lines[1]).toMatchObject({
      msg: "HTTP",
      verb: "GET",
      URI: "/api/v1/namespaces/default/pods/absent",
      resource: "pods",
      status: 404,
    });
    expect(lines[1]?.latency).toMatch(/^\d+\.\d{3}ms$/);
  });

  it("without a metrics option /metrics is 404", async () => {
    const api = new ApiServer();
    const http = await api.listen();
    running.push({ api, http });
    expect((await fetch(`${http.url}/metrics`)).status).toBe(404);
  });
});
