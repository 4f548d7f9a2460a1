// When HttpClient sends a request again, and when it must not: against a real
// HTTP server on loopback that applies writes to a small store and can reset
// the TCP connection (RST) after applying one, before it answers.
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import {
  isBadRequest,
  isInternalError,
  isNotFound,
  isServiceUnavailable,
  isTooManyRequests,
  type Pod,
  pods,
  replicaSets,
} from "@reconcile/api";
import { FakeClock } from "@reconcile/clock";
import { afterEach, describe, expect, it } from "vitest";
import { loadKubeConfig } from "../kubeconfig/load.js";
import { HttpClient, type HttpClientOptions } from "./http-client.js";

/** What the store server does with the next request of a method. */
type Fault = "reset-after-apply" | "reset-before-apply";

interface StoreServer {
  url: string;
  /** Pod names in the store. */
  names(): string[];
  /** Every request line the server received, in order (`POST /api/v1/...`). */
  requests: string[];
  /** Arms a fault for the next request with this method. */
  fail(method: string, fault: Fault): void;
  /** Answers the next requests with this method with these responses first. */
  answer(method: string, ...responses: { code: number; headers?: Record<string, string> }[]): void;
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function storeServer(): Promise<StoreServer> {
  const store = new Map<string, Pod>();
  const faults = new Map<string, Fault>();
  const canned = new Map<string, { code: number; headers?: Record<string, string> }[]>();
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const method = req.method ?? "";
      requests.push(`${method} ${req.url}`);
      const fault = faults.get(method);
      faults.delete(method);
      if (fault === "reset-before-apply") {
        res.socket?.resetAndDestroy();
        return;
      }
      const early = canned.get(method)?.shift();
      if (early !== undefined) {
        send(res, early.code, { kind: "Status", code: early.code, message: "try later" }, early.headers);
        return;
      }
      const name = decodeURIComponent(req.url?.split("?")[0]?.split("/")[6] ?? "");
      let code = 200;
      let body: unknown;
      if (method === "POST") {
        const pod = JSON.parse(Buffer.concat(chunks).toString()) as Pod;
        const generateName = pod.metadata?.generateName;
        const podName = generateName ? `${generateName}${store.size}` : (pod.metadata?.name ?? "");
        pod.metadata = { ...pod.metadata, name: podName };
        if (store.has(podName)) {
          code = 409;
          body = {
            kind: "Status",
            code,
            reason: "AlreadyExists",
            message: `pods "${podName}" already exists`,
          };
        } else {
          store.set(podName, pod);
          code = 201;
          body = pod;
        }
      } else if (store.has(name)) {
        body = store.get(name);
        if (method === "DELETE") store.delete(name);
      } else {
        code = 404;
        body = { kind: "Status", code, reason: "NotFound", message: `pods "${name}" not found` };
      }
      if (fault === "reset-after-apply") {
        res.socket?.resetAndDestroy();
        return;
      }
      send(res, code, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    names: () => [...store.keys()],
    requests,
    fail: (method, fault) => faults.set(method, fault),
    answer: (method, ...responses) => canned.set(method, responses),
  };
}

function send(res: http.ServerResponse, code: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(code, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

async function clientFor(url: string, options: Partial<HttpClientOptions> = {}): Promise<HttpClient> {
  const kubeConfig = await loadKubeConfig({
    yaml: `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "${url}"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: ctx, context: {cluster: c, user: u, namespace: default}}]
current-context: ctx
`,
  });
  const client = new HttpClient({ kubeConfig, qps: Number.POSITIVE_INFINITY, ...options });
  closers.push(async () => client.close());
  return client;
}

/** Lets I/O run until `condition` holds (no timers involved). */
async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 10_000 && !condition(); i++) await new Promise((resolve) => setImmediate(resolve));
  if (!condition()) throw new Error("condition never held");
}

const pod = (name: string): Pod => ({ metadata: { name } });
/** A pod as the client sends it, with its type meta. */
const sent = (name: string): Pod => ({ apiVersion: "v1", kind: "Pod", metadata: { name } });

describe("HttpClient never sends a write twice when it may have been applied", () => {
  it("a create the server applied before the kept-alive connection was reset makes exactly one object", async () => {
    const server = await storeServer();
    const clock = new FakeClock();
    const client = await clientFor(server.url, { clock });
    const rc = client.resource(pods, "default");
    await expect(rc.get("warm-up")).rejects.toSatisfy(isNotFound);
    server.fail("POST", "reset-after-apply");
    const failure = rc.create({ metadata: { generateName: "web-" } });
    await expect(failure).rejects.toSatisfy(isServiceUnavailable);
    await expect(failure).rejects.toThrow(
      /failed after POST \/api\/v1\/namespaces\/default\/pods was sent .*the server may have processed it/,
    );
    expect(server.names()).toEqual(["web-0"]);
    expect(server.requests.filter((line) => line.startsWith("POST"))).toHaveLength(1);
    expect(clock.pendingTimers()).toEqual([]);
  });

  it("a create on a fresh connection that is reset after applying is not sent again either", async () => {
    const server = await storeServer();
    const client = await clientFor(server.url);
    server.fail("POST", "reset-after-apply");
    await expect(client.resource(pods, "default").create(pod("web-1"))).rejects.toSatisfy(
      isServiceUnavailable,
    );
    expect(server.names()).toEqual(["web-1"]);
    expect(server.requests).toEqual(["POST /api/v1/namespaces/default/pods"]);
  });

  it("a delete the server applied before the connection was reset reports the unknown outcome, not NotFound", async () => {
    const server = await storeServer();
    const client = await clientFor(server.url);
    const rc = client.resource(pods, "default");
    await rc.create(pod("web-1"));
    server.fail("DELETE", "reset-after-apply");
    const failure = rc.delete("web-1");
    await expect(failure).rejects.toSatisfy(isServiceUnavailable);
    await expect(failure).rejects.toThrow("the server may have processed it");
    expect(server.names()).toEqual([]);
    expect(server.requests.filter((line) => line.startsWith("DELETE"))).toEqual([
      "DELETE /api/v1/namespaces/default/pods/web-1",
    ]);
    await expect(rc.get("web-1")).rejects.toSatisfy(isNotFound);
  });

  it("a successful delete on a kept-alive connection comes back as the deleted object", async () => {
    const server = await storeServer();
    const client = await clientFor(server.url);
    const rc = client.resource(pods, "default");
    await rc.create(pod("web-1"));
    await expect(rc.delete("web-1")).resolves.toEqual({ kind: "object", object: sent("web-1") });
    expect(server.names()).toEqual([]);
  });

  it("patch, update and updateScale are not sent again after a reset either", async () => {
    const server = await storeServer();
    const client = await clientFor(server.url);
    const rc = client.resource(pods, "default");
    await rc.create(pod("web-1"));
    for (const [method, call] of [
      ["PATCH", () => rc.patch("web-1", { metadata: { labels: { a: "b" } } }, { type: "merge" })],
      ["PUT", () => rc.update(pod("web-1"))],
      ["PUT", () => rc.updateScale("web-1", { spec: { replicas: 2 } })],
    ] as const) {
      const before = server.requests.length;
      server.fail(method, "reset-after-apply");
      await expect(call()).rejects.toSatisfy(isServiceUnavailable);
      expect(server.requests.slice(before).map((line) => line.split(" ")[0])).toEqual([method]);
    }
  });

  it("a read reset before the server applied anything is sent again and answers", async () => {
    const server = await storeServer();
    const clock = new FakeClock();
    const client = await clientFor(server.url, { clock });
    const rc = client.resource(pods, "default");
    await rc.create(pod("web-1"));
    server.fail("GET", "reset-before-apply");
    await expect(rc.get("web-1")).resolves.toEqual(sent("web-1"));
    expect(server.requests.filter((line) => line.startsWith("GET"))).toHaveLength(2);
  });
});

describe("HttpClient retries what the server asks it to retry, as client-go's checkWait", () => {
  it("sends a create again after a 503 with Retry-After, once the wait is over", async () => {
    const server = await storeServer();
    server.answer("POST", { code: 503, headers: { "retry-after": "2" } });
    const clock = new FakeClock();
    const client = await clientFor(server.url, { clock });
    const created = client.resource(pods, "default").create(pod("web-1"));
    await until(() => clock.pendingTimers().some((timer) => timer.at === 2000));
    expect(server.requests).toHaveLength(1);
    await clock.advance(2000);
    await expect(created).resolves.toEqual(sent("web-1"));
    expect(server.names()).toEqual(["web-1"]);
    expect(server.requests).toHaveLength(2);
  });

  it("retries at once on a Retry-After of 0", async () => {
    const server = await storeServer();
    server.answer(
      "GET",
      { code: 429, headers: { "retry-after": "0" } },
      { code: 500, headers: { "retry-after": "0" } },
    );
    const clock = new FakeClock();
    const client = await clientFor(server.url, { clock });
    const rc = client.resource(pods, "default");
    await rc.create(pod("web-1"));
    await expect(rc.get("web-1")).resolves.toEqual(sent("web-1"));
    expect(server.requests.filter((line) => line.startsWith("GET"))).toHaveLength(3);
    expect(clock.pendingTimers()).toEqual([]);
  });

  it.each([
    ["a 429 without Retry-After", 429, {}, isTooManyRequests],
    ["a 500 without Retry-After", 500, {}, isInternalError],
    [
      "a 503 with an HTTP-date Retry-After",
      503,
      { "retry-after": "Wed, 21 Oct 2015 07:28:00 GMT" },
      isServiceUnavailable,
    ],
    ["a 429 with a fractional Retry-After", 429, { "retry-after": "1.5" }, isTooManyRequests],
    ["a 404 with Retry-After", 404, { "retry-after": "1" }, isNotFound],
  ] as const)("does not retry %s", async (_name, code, headers, predicate) => {
    const server = await storeServer();
    server.answer("GET", { code, headers });
    const clock = new FakeClock();
    const client = await clientFor(server.url, { clock });
    await expect(client.resource(pods, "default").get("web-1")).rejects.toSatisfy(predicate);
    expect(server.requests).toHaveLength(1);
    expect(clock.pendingTimers()).toEqual([]);
  });
});

describe("HttpClient refuses names that would change the request's path", () => {
  const badNames = [
    [".", "may not be '.'"],
    ["..", "may not be '..'"],
    ["a/b", "may not contain '/'"],
    ["%2e%2e", "may not contain '%'"],
    ["../%", "may not contain '/', may not contain '%'"],
  ] as const;

  it.each(
    badNames,
  )("rejects the name %j in every call that takes one, sending nothing", async (name, problem) => {
    const server = await storeServer();
    const client = await clientFor(server.url);
    const rc = client.resource(pods, "default");
    const calls: (() => Promise<unknown>)[] = [
      () => rc.get(name),
      () => rc.delete(name),
      () => rc.patch(name, {}, { type: "merge" }),
      () => rc.patch(name, {}, { type: "merge", subresource: "status" }),
      () => rc.update(pod(name)),
      () => rc.updateStatus(pod(name)),
      () => rc.getScale(name),
      () => rc.updateScale(name, { spec: { replicas: 1 } }),
    ];
    for (const call of calls) {
      const failure = call();
      await expect(failure).rejects.toSatisfy(isBadRequest);
      await expect(failure).rejects.toThrow(`invalid resource name ${JSON.stringify(name)}: ${problem}`);
    }
    expect(server.requests).toEqual([]);
  });

  it.each(badNames)("rejects the namespace %j, for collections too", async (namespace, problem) => {
    const server = await storeServer();
    const client = await clientFor(server.url);
    const rc = client.resource(pods, namespace);
    const unbound = client.resource(replicaSets);
    const calls: (() => Promise<unknown>)[] = [
      () => rc.list(),
      () => rc.watch(),
      () => rc.create(pod("web-1")),
      () => rc.deleteCollection(),
      () => rc.get("web-1"),
    ];
    for (const call of calls) {
      const failure = call();
      await expect(failure).rejects.toSatisfy(isBadRequest);
      await expect(failure).rejects.toThrow(`invalid namespace ${JSON.stringify(namespace)}: ${problem}`);
    }
    await expect(unbound.create({ metadata: { name: "web", namespace } })).rejects.toThrow(
      `invalid namespace ${JSON.stringify(namespace)}: ${problem}`,
    );
    expect(server.requests).toEqual([]);
  });

  it("still sends names with dots that are not dot segments", async () => {
    const server = await storeServer();
    const client = await clientFor(server.url);
    const rc = client.resource(pods, "default");
    await rc.create(pod("web.v1..a"));
    await expect(rc.get("web.v1..a")).resolves.toEqual(sent("web.v1..a"));
    expect(server.requests.at(-1)).toBe("GET /api/v1/namespaces/default/pods/web.v1..a");
  });
});
