import * as http from "node:http";
import type { AddressInfo } from "node:net";
import {
  deployments,
  isInternalError,
  isNotFound,
  isServiceUnavailable,
  isTimeout,
  isTooManyRequests,
  isUnauthorized,
  type Logger,
  pods,
  StatusError,
} from "@reconcile/api";
import { FakeClock } from "@reconcile/clock";
import { afterEach, describe, expect, it } from "vitest";
import { loadKubeConfig } from "../kubeconfig/load.js";
import { HttpClient, type HttpClientOptions } from "./http-client.js";

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

type Handler = (req: Seen, res: http.ServerResponse) => void;

const servers: http.Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function serve(handler: Handler): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const entry = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      };
      seen.push(entry);
      handler(entry, res);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

async function kubeConfigFor(server: string, user = "{token: s3cret}") {
  return loadKubeConfig({
    yaml: `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "${server}"}}]
users: [{name: u, user: ${user}}]
contexts: [{name: ctx, context: {cluster: c, user: u, namespace: team-a}}]
current-context: ctx
`,
  });
}

async function clientFor(server: string, options: Partial<HttpClientOptions> = {}) {
  return new HttpClient({
    kubeConfig: await kubeConfigFor(server),
    qps: Number.POSITIVE_INFINITY,
    ...options,
  });
}

const json = (
  res: http.ServerResponse,
  code: number,
  body: unknown,
  headers: Record<string, string> = {},
) => {
  res.writeHead(code, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
};

/** Lets I/O run until `condition` holds (no timers involved). */
async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 10_000 && !condition(); i++) await new Promise((resolve) => setImmediate(resolve));
  if (!condition()) throw new Error("condition never held");
}

describe("HttpClient requests", () => {
  it("sends the bearer token from the kubeconfig and takes the context's namespace as the default", async () => {
    const { url, seen } = await serve((_req, res) => json(res, 200, { metadata: { name: "web" } }));
    const client = await clientFor(url);
    expect(client.defaultNamespace).toBe("team-a");
    const deployment = await client.resource(deployments, "team-a").get("web");
    expect(deployment).toEqual({ metadata: { name: "web" } });
    expect(seen[0]).toMatchObject({ method: "GET", url: "/apis/apps/v1/namespaces/team-a/deployments/web" });
    expect(seen[0]!.headers.authorization).toBe("Bearer s3cret");
    expect(seen[0]!.headers.accept).toBe("application/json");
    client.close();
  });

  it("runs the kubeconfig's exec credential plugin and sends the token it prints", async () => {
    const { url, seen } = await serve((_req, res) => json(res, 200, {}));
    const credential = JSON.stringify({
      apiVersion: "client.authentication.k8s.io/v1beta1",
      kind: "ExecCredential",
      status: { token: "from-exec" },
    });
    const user = `{exec: {apiVersion: client.authentication.k8s.io/v1beta1, command: "${process.execPath}", args: ["-e", ${JSON.stringify(`console.log(${JSON.stringify(credential)})`)}]}}`;
    const client = new HttpClient({ kubeConfig: await kubeConfigFor(url, user) });
    await client.resource(pods, "default").get("p");
    expect(seen[0]!.headers.authorization).toBe("Bearer from-exec");
    client.close();
  });

  it("reports a failing exec plugin as an Unauthorized StatusError, without retrying", async () => {
    const { url, seen } = await serve((_req, res) => json(res, 200, {}));
    const user = `{exec: {apiVersion: client.authentication.k8s.io/v1beta1, command: "${process.execPath}", args: ["-e", "process.exit(3)"]}}`;
    const client = new HttpClient({ kubeConfig: await kubeConfigFor(url, user) });
    const failure = client.resource(pods, "default").get("p");
    await expect(failure).rejects.toSatisfy(isUnauthorized);
    await expect(failure).rejects.toThrow("getting credentials from the kubeconfig failed");
    expect(seen).toEqual([]);
    client.close();
  });

  it("hands the server's Warning headers to onWarning", async () => {
    const { url } = await serve((_req, res) => {
      res.setHeader("Warning", [
        '299 - "apps/v1beta1 Deployment is deprecated"',
        '299 - "unknown field \\"spec.replica\\""',
      ]);
      json(res, 200, {});
    });
    const warnings: string[] = [];
    const client = await clientFor(url, { onWarning: (message) => warnings.push(message) });
    await client.resource(pods, "default").get("p");
    expect(warnings).toEqual(["apps/v1beta1 Deployment is deprecated", 'unknown field "spec.replica"']);
    client.close();
  });

  it("logs the server's Warning headers on its logger when no onWarning is given", async () => {
    const { url } = await serve((_req, res) => {
      res.setHeader("Warning", '299 - "apps/v1beta1 Deployment is deprecated"');
      json(res, 200, {});
    });
    const records: unknown[] = [];
    const logger: Logger = {
      debug: () => {},
      info: () => {},
      warn: (obj, msg) => void records.push({ obj, msg }),
      error: () => {},
      child: () => logger,
    };
    const client = await clientFor(url, { logger });
    await client.resource(pods, "default").get("p");
    expect(records).toEqual([
      { obj: { warning: "apps/v1beta1 Deployment is deprecated" }, msg: "the API server sent a warning" },
    ]);
    client.close();
  });

  it("lists with selectors, limit and continue in the query, across namespaces when unbound", async () => {
    const { url, seen } = await serve((_req, res) =>
      json(res, 200, { kind: "PodList", metadata: { resourceVersion: "7" }, items: null }),
    );
    const client = await clientFor(url);
    const list = await client
      .resource(pods)
      .list({ labelSelector: "app=web", fieldSelector: "status.phase=Running", limit: 2, continue: "abc" });
    expect(list).toEqual({ kind: "PodList", metadata: { resourceVersion: "7" }, items: [] });
    expect(seen[0]!.url).toBe(
      "/api/v1/pods?labelSelector=app%3Dweb&fieldSelector=status.phase%3DRunning&limit=2&continue=abc",
    );
    client.close();
  });

  it("reports a list response that is not JSON as an InternalError StatusError", async () => {
    const { url } = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"items":[{"a":');
    });
    const client = await clientFor(url);
    const failure = client.resource(pods).list();
    await expect(failure).rejects.toSatisfy(isInternalError);
    await expect(failure).rejects.toThrow("the server sent a response that is not JSON");
    client.close();
  });

  it("creates, updates, patches and deletes with the verbs, bodies and content types kube-apiserver expects", async () => {
    const { url, seen } = await serve((req, res) =>
      req.method === "DELETE"
        ? json(res, 200, { kind: "Status", apiVersion: "v1", status: "Success", metadata: {} })
        : json(res, 200, { metadata: { name: "web" } }),
    );
    const client = await clientFor(url);
    const rc = client.resource(deployments, "team-a");
    await rc.create({ metadata: { name: "web" } }, { fieldManager: "me" });
    await rc.update({ metadata: { name: "web", resourceVersion: "3" } });
    await rc.updateStatus({ metadata: { name: "web" }, status: { replicas: 1 } });
    await rc.patch("web", { spec: { replicas: 2 } }, { type: "strategic-merge" });
    await rc.patch(
      "web",
      { apiVersion: "apps/v1", kind: "Deployment" },
      { type: "apply", fieldManager: "me", force: true },
    );
    const deleted = await rc.delete("web", { propagationPolicy: "Foreground", gracePeriodSeconds: 0 });
    expect(deleted).toEqual({
      kind: "status",
      status: { kind: "Status", apiVersion: "v1", status: "Success", metadata: {} },
    });
    expect(seen.map((s) => `${s.method} ${s.url} ${s.headers["content-type"] ?? ""}`)).toEqual([
      "POST /apis/apps/v1/namespaces/team-a/deployments?fieldManager=me application/json",
      "PUT /apis/apps/v1/namespaces/team-a/deployments/web application/json",
      "PUT /apis/apps/v1/namespaces/team-a/deployments/web/status application/json",
      "PATCH /apis/apps/v1/namespaces/team-a/deployments/web application/strategic-merge-patch+json",
      "PATCH /apis/apps/v1/namespaces/team-a/deployments/web?fieldManager=me&force=true application/apply-patch+yaml",
      "DELETE /apis/apps/v1/namespaces/team-a/deployments/web application/json",
    ]);
    expect(JSON.parse(seen[0]!.body)).toEqual({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "web" },
    });
    expect(JSON.parse(seen[5]!.body)).toEqual({
      kind: "DeleteOptions",
      apiVersion: "v1",
      gracePeriodSeconds: 0,
      propagationPolicy: "Foreground",
    });
    client.close();
  });

  it("rejects a single-object call on a namespaced kind without any namespace, naming the problem", async () => {
    const { url, seen } = await serve((_req, res) => json(res, 200, {}));
    const client = await clientFor(url);
    await expect(client.resource(pods).get("p")).rejects.toThrow('pods "p": a namespace is required');
    await expect(
      client.resource(pods, "a").create({ metadata: { name: "p", namespace: "b" } }),
    ).rejects.toThrow("does not match the namespace sent on the request");
    expect(seen).toEqual([]);
    client.close();
  });
});

describe("HttpClient failures", () => {
  it("turns a Status response into a StatusError carrying it", async () => {
    const status = {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: 'pods "x" not found',
      reason: "NotFound",
      details: { name: "x", kind: "pods" },
      code: 404,
    };
    const { url } = await serve((_req, res) => json(res, 404, status));
    const client = await clientFor(url);
    const failure = client.resource(pods, "default").get("x");
    await expect(failure).rejects.toSatisfy(isNotFound);
    await expect(failure).rejects.toThrow('pods "x" not found');
    client.close();
  });

  it("makes a StatusError from the code when the body is not a Status", async () => {
    const { url } = await serve((_req, res) => {
      res.writeHead(500);
      res.end("boom");
    });
    const client = await clientFor(url);
    const failure = client.resource(pods, "default").get("x");
    await expect(failure).rejects.toSatisfy(isInternalError);
    await expect(failure).rejects.toThrow(
      "an error on the server has prevented the request from succeeding (boom)",
    );
    client.close();
  });

  it("waits as long as Retry-After says on 429 and then retries", async () => {
    let calls = 0;
    const { url } = await serve((_req, res) =>
      ++calls === 1
        ? json(
            res,
            429,
            { kind: "Status", code: 429, reason: "TooManyRequests", message: "slow down" },
            { "retry-after": "3" },
          )
        : json(res, 200, { metadata: { name: "p" } }),
    );
    const clock = new FakeClock();
    const client = await clientFor(url, { clock });
    const result = client.resource(pods, "default").get("p");
    await until(() => clock.pendingTimers().some((t) => t.at === 3000));
    expect(calls).toBe(1);
    await clock.advance(3000);
    await expect(result).resolves.toEqual({ metadata: { name: "p" } });
    expect(calls).toBe(2);
    client.close();
  });

  it("retries 429 ten times by default, as client-go", async () => {
    const { url, seen } = await serve((_req, res) =>
      json(res, 429, { kind: "Status", code: 429, reason: "TooManyRequests" }, { "retry-after": "0" }),
    );
    const client = await clientFor(url);
    await expect(client.resource(pods, "default").get("p")).rejects.toSatisfy(isTooManyRequests);
    expect(seen).toHaveLength(11);
    client.close();
  });

  it("gives up on 429 after maxRetries with a TooManyRequests StatusError", async () => {
    const { url, seen } = await serve((_req, res) =>
      json(
        res,
        429,
        { kind: "Status", code: 429, reason: "TooManyRequests", message: "no" },
        { "retry-after": "0" },
      ),
    );
    const client = await clientFor(url, { maxRetries: 2 });
    await expect(client.resource(pods, "default").get("p")).rejects.toSatisfy(isTooManyRequests);
    expect(seen).toHaveLength(3);
    client.close();
  });

  it("retries a read that could not connect, with back-off, and reports a 503 StatusError in the end", async () => {
    const { url } = await serve(() => undefined);
    servers[0]!.close();
    await new Promise((resolve) => setImmediate(resolve));
    const clock = new FakeClock();
    const client = await clientFor(url, { clock, maxRetries: 2, retryBackoffMs: 100 });
    const failure = client.resource(pods, "default").get("p");
    failure.catch(() => undefined);
    await until(() => clock.pendingTimers().length === 1);
    await clock.advance(100);
    await until(() => clock.pendingTimers().length === 1);
    expect(clock.pendingTimers()[0]!.at).toBe(300);
    await clock.advance(200);
    await expect(failure).rejects.toSatisfy(isServiceUnavailable);
    await expect(failure).rejects.toThrow(
      /unable to reach the API server at http:\/\/127\.0\.0\.1:\d+: .*ECONNREFUSED/,
    );
    client.close();
  });

  it("sends a read again at once, once, when the kept-alive socket it went out on is reset", async () => {
    let gets = 0;
    const { url, seen } = await serve((req, res) => {
      if (req.method === "GET" && ++gets === 2) {
        res.socket?.resetAndDestroy();
        return;
      }
      json(res, 200, { metadata: { name: "p" } });
    });
    const clock = new FakeClock();
    const client = await clientFor(url, { clock });
    const rc = client.resource(pods, "default");
    await rc.get("p");
    await expect(rc.get("p")).resolves.toEqual({ metadata: { name: "p" } });
    expect(seen.map((s) => s.method)).toEqual(["GET", "GET", "GET"]);
    expect(clock.pendingTimers()).toEqual([]);
    client.close();
  });

  it("does not retry a write that could not connect", async () => {
    const { url } = await serve(() => undefined);
    servers[0]!.close();
    const clock = new FakeClock();
    const client = await clientFor(url, { clock });
    await expect(client.resource(pods, "default").create({ metadata: { name: "p" } })).rejects.toSatisfy(
      isServiceUnavailable,
    );
    expect(clock.pendingTimers()).toEqual([]);
    client.close();
  });

  it("times a request out with a Timeout StatusError", async () => {
    const { url, seen } = await serve(() => undefined);
    const clock = new FakeClock();
    const client = await clientFor(url, { clock, timeoutMs: 5000 });
    const failure = client.resource(pods, "default").create({ metadata: { name: "p" } });
    failure.catch(() => undefined);
    await until(() => seen.length === 1);
    await clock.advance(5000);
    await expect(failure).rejects.toSatisfy(isTimeout);
    await expect(failure).rejects.toThrow("did not complete within 5000ms");
    client.close();
  });

  it("times out a response whose body stalls, for a get and for a list", async () => {
    const { url, seen } = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"metadata":');
    });
    const clock = new FakeClock();
    const client = await clientFor(url, { clock, timeoutMs: 5000 });
    const stalled = client.resource(pods, "default").get("stall");
    stalled.catch(() => undefined);
    await until(() => seen.length === 1);
    await clock.advance(5000);
    await expect(stalled).rejects.toSatisfy(isTimeout);
    const stalledList = client.resource(pods, "default").list();
    stalledList.catch(() => undefined);
    await until(() => seen.length === 2);
    await clock.advance(5000);
    await expect(stalledList).rejects.toSatisfy(isTimeout);
    client.close();
  });

  it("reports a response cut short by the server as a 503 StatusError", async () => {
    const { url } = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": "1000" });
      res.write('{"metadata":', () => res.socket?.destroy());
    });
    const client = await clientFor(url, { maxRetries: 0 });
    await expect(client.resource(pods, "default").get("p")).rejects.toSatisfy(isServiceUnavailable);
    await expect(client.resource(pods, "default").list()).rejects.toSatisfy(isServiceUnavailable);
    client.close();
  });

  it("paces requests through the token bucket", async () => {
    const { url, seen } = await serve((_req, res) => json(res, 200, {}));
    const clock = new FakeClock();
    const client = await clientFor(url, { clock, qps: 2, burst: 1 });
    const rc = client.resource(pods, "default");
    const first = rc.get("a");
    const second = rc.get("b");
    await first;
    await until(() => clock.pendingTimers().length === 1);
    expect(seen).toHaveLength(1);
    await clock.advance(500);
    await second;
    expect(seen).toHaveLength(2);
    client.close();
  });

  it("rejects with the signal's reason when aborted", async () => {
    const { url, seen } = await serve(() => undefined);
    const client = await clientFor(url);
    const controller = new AbortController();
    const failure = client.resource(pods, "default").get("p", { signal: controller.signal });
    await until(() => seen.length === 1);
    controller.abort(new Error("stopped"));
    await expect(failure).rejects.toThrow("stopped");
    client.close();
  });
});

describe("HttpClient watch", () => {
  it("resolves once the server answers, streams events as they come, and ends when the server closes", async () => {
    let respond: ((line: string) => void) | undefined;
    let finish: (() => void) | undefined;
    const { url, seen } = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.flushHeaders();
      respond = (line) => res.write(line);
      finish = () => res.end();
    });
    const client = await clientFor(url);
    const watch = await client
      .resource(pods, "default")
      .watch({ resourceVersion: "5", allowWatchBookmarks: true, timeoutSeconds: 30 });
    expect(seen[0]!.url).toBe(
      "/api/v1/namespaces/default/pods?watch=true&resourceVersion=5&allowWatchBookmarks=true&timeoutSeconds=30",
    );
    const iterator = watch[Symbol.asyncIterator]();
    respond!(`${JSON.stringify({ type: "ADDED", object: { metadata: { name: "a" } } })}\n{"type":"MODI`);
    expect(await iterator.next()).toEqual({
      done: false,
      value: { type: "ADDED", object: { metadata: { name: "a" } } },
    });
    respond!(`FIED","object":{"metadata":{"name":"a"}}}\n`);
    expect((await iterator.next()).value).toEqual({ type: "MODIFIED", object: { metadata: { name: "a" } } });
    respond!(
      `${JSON.stringify({ type: "ERROR", object: { kind: "Status", code: 410, reason: "Expired", message: "too old" } })}\n`,
    );
    const error = (await iterator.next()).value as { type: string; object: { code: number; reason: string } };
    expect(error.type).toBe("ERROR");
    expect(error.object).toMatchObject({ kind: "Status", code: 410, reason: "Expired" });
    finish!();
    expect(await iterator.next()).toEqual({ done: true, value: undefined });
    client.close();
  });

  it("keeps serving requests while a hundred watches are open", async () => {
    const { url } = await serve((req, res) => {
      if (req.url?.includes("watch=true")) {
        res.writeHead(200, { "content-type": "application/json" });
        res.flushHeaders();
      } else json(res, 200, { metadata: { name: "p" } });
    });
    const client = await clientFor(url);
    const controller = new AbortController();
    const watches = await Promise.all(
      Array.from({ length: 100 }, () =>
        client.resource(pods, "default").watch({ signal: controller.signal }),
      ),
    );
    expect(watches).toHaveLength(100);
    await expect(client.resource(pods, "default").get("p")).resolves.toEqual({ metadata: { name: "p" } });
    controller.abort();
    client.close();
  });

  it("ends the iteration when the signal aborts", async () => {
    const { url } = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.flushHeaders();
    });
    const client = await clientFor(url);
    const controller = new AbortController();
    const watch = await client.resource(pods, "default").watch({ signal: controller.signal });
    const iterator = watch[Symbol.asyncIterator]();
    const next = iterator.next();
    controller.abort();
    expect(await next).toEqual({ done: true, value: undefined });
    client.close();
  });

  it("rejects the watch call itself with the server's StatusError", async () => {
    const { url } = await serve((_req, res) =>
      json(res, 410, { kind: "Status", code: 410, reason: "Expired", message: "too old resource version" }),
    );
    const client = await clientFor(url);
    await expect(client.resource(pods, "default").watch({ resourceVersion: "1" })).rejects.toSatisfy(
      (e: unknown) => StatusError.isInstance(e) && e.status.reason === "Expired",
    );
    client.close();
  });
});
