import * as http from "node:http";
import * as net from "node:net";
import { configMaps } from "@reconcile/api";
import { FakeClock } from "@reconcile/clock";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiServer } from "../api-server.js";
import { type ListeningApiServer, type ListenOptions, listen } from "./server.js";

// Hostile input and resource exhaustion at the HTTP layer: every case here was
// once a data loss, a 500 or a server that stopped answering.

const running: { api: ApiServer; http: ListeningApiServer }[] = [];
const sockets: net.Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  for (const { api, http } of running.splice(0)) {
    await http.close();
    await api.close();
  }
});

async function start(options: Omit<ListenOptions, "signal"> = {}) {
  const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
  const api = new ApiServer({ clock });
  const server = await listen(api, options);
  running.push({ api, http: server });
  return { api, clock, server, url: server.url, port: server.port };
}

interface Answer {
  code: number;
  body: Record<string, unknown>;
  text: string;
}

/**
 * One request with node:http, which sends the path exactly as given (fetch
 * resolves dot segments before sending).
 */
function request(
  port: number,
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string>; agent?: http.Agent } = {},
): Promise<Answer & { reusedSocket: boolean }> {
  return new Promise((resolve, reject) => {
    const body =
      options.body === undefined
        ? undefined
        : typeof options.body === "string"
          ? options.body
          : JSON.stringify(options.body);
    const req = http.request(
      {
        host: "127.0.0.1",
        port,
        method,
        path,
        agent: options.agent ?? false,
        headers: {
          // node:http sends a DELETE's body without a length unless told one.
          ...(body === undefined
            ? {}
            : { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) }),
          ...options.headers,
        },
      },
      (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          text += chunk;
        });
        response.on("end", () => {
          let parsed: Record<string, unknown> = {};
          try {
            parsed = JSON.parse(text);
          } catch {}
          resolve({ code: response.statusCode ?? 0, body: parsed, text, reusedSocket: req.reusedSocket });
        });
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** Sends raw bytes on a new connection and collects everything until the server closes it. */
function raw(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    sockets.push(socket);
    let received = "";
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => {
      received += chunk;
    });
    socket.on("error", reject);
    socket.on("close", () => resolve(received));
    socket.write(text);
  });
}

const configMap = (name: string, data: Record<string, string> = { a: "1" }) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name },
  data,
});

const pod = (name: string, nodeName?: string) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name },
  spec: { containers: [{ name: "c", image: "busybox" }], ...(nodeName ? { nodeName } : {}) },
});

async function createNamespace(port: number, name: string) {
  const answer = await request(port, "POST", "/api/v1/namespaces", { body: { metadata: { name } } });
  expect(answer.code).toBe(201);
}

describe("names that would re-target a request", () => {
  it("answers 400 to `.`, `..` and names with `/` or `%`, in any spelling, before touching anything", async () => {
    const { port } = await start();
    await createNamespace(port, "ns1");
    for (const name of ["p1", "p2"])
      expect((await request(port, "POST", "/api/v1/namespaces/ns1/pods", { body: pod(name) })).code).toBe(
        201,
      );
    expect(
      (await request(port, "POST", "/api/v1/namespaces/ns1/configmaps", { body: configMap("cm") })).code,
    ).toBe(201);
    const cases: [method: string, path: string, body?: unknown][] = [
      ["DELETE", "/api/v1/namespaces/ns1/pods/.."],
      ["DELETE", "/api/v1/namespaces/ns1/pods/%2e%2e"],
      ["DELETE", "/api/v1/namespaces/ns1/pods/%2E."],
      ["DELETE", "/api/v1/namespaces/ns1/pods/."],
      ["DELETE", "/api/v1/namespaces/ns1/pods/%2e"],
      ["GET", "/api/v1/namespaces/ns1/pods/.."],
      ["PATCH", "/api/v1/namespaces/ns1/configmaps/..", { metadata: { labels: { x: "y" } } }],
      ["PUT", "/api/v1/namespaces/ns1/configmaps/..", configMap("..")],
      ["GET", "/api/v1/namespaces/ns1/pods/a%2Fb"],
      ["DELETE", "/api/v1/namespaces/ns1/pods/p1%2f..%2f..%2f"],
      ["GET", "/api/v1/namespaces/ns1/pods/a%25b"],
      ["DELETE", "/api/v1/namespaces/../pods"],
      ["GET", "/api/v1/namespaces/%2e%2e/pods/p1"],
      ["DELETE", "/api/v1/namespaces/.."],
      ["DELETE", "/api/v1/namespaces/ns1/pods/p1/.."],
      ["DELETE", "/api/v1/nodes/."],
      ["GET", "/apis/apps/v1/namespaces/ns1/deployments/%2e%2e/scale"],
    ];
    for (const [method, path, body] of cases) {
      const answer = await request(port, method, path, {
        body,
        headers: method === "PATCH" ? { "content-type": "application/merge-patch+json" } : {},
      });
      expect([path, answer.code, answer.body.reason]).toEqual([path, 400, "BadRequest"]);
    }
    const dotDot = await request(port, "DELETE", "/api/v1/namespaces/ns1/pods/..");
    expect(dotDot.body.message).toBe(`Name parameter invalid: "..": may not be '..'`);
    const slash = await request(port, "GET", "/api/v1/namespaces/ns1/pods/a%2Fb");
    expect(slash.body.message).toBe(`Name parameter invalid: "a/b": may not contain '/'`);
    const namespace = await request(port, "GET", "/api/v1/namespaces/%2e%2e/pods/p1");
    expect(namespace.body.message).toBe(`Namespace parameter invalid: "..": may not be '..'`);
    // Nothing was deleted or changed.
    const ns = await request(port, "GET", "/api/v1/namespaces/ns1");
    expect([ns.code, (ns.body.metadata as { deletionTimestamp?: string }).deletionTimestamp]).toEqual([
      200,
      undefined,
    ]);
    const pods = await request(port, "GET", "/api/v1/namespaces/ns1/pods");
    expect((pods.body.items as { metadata: { name: string } }[]).map((p) => p.metadata.name)).toEqual([
      "p1",
      "p2",
    ]);
    const namespaceObject = await request(port, "GET", "/api/v1/namespaces/ns1");
    expect((namespaceObject.body.metadata as { labels?: object }).labels).toEqual({
      "kubernetes.io/metadata.name": "ns1",
    });
  });
});

describe("collections across all namespaces", () => {
  it("serve only list and watch: DELETE and POST are 405 MethodNotAllowed, as kube-apiserver answers", async () => {
    const { port } = await start();
    await createNamespace(port, "ns1");
    const deployment = {
      metadata: { name: "web" },
      spec: {
        selector: { matchLabels: { app: "web" } },
        template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "c", image: "i" }] } },
      },
    };
    for (const ns of ["default", "ns1"]) {
      const created = await request(port, "POST", `/apis/apps/v1/namespaces/${ns}/deployments`, {
        body: deployment,
      });
      expect(created.code).toBe(201);
    }
    const deleted = await request(port, "DELETE", "/apis/apps/v1/deployments");
    expect([deleted.code, deleted.body.reason]).toEqual([405, "MethodNotAllowed"]);
    const posted = await request(port, "POST", "/api/v1/configmaps", {
      body: { metadata: { name: "x", namespace: "default" } },
    });
    expect([posted.code, posted.body.reason]).toEqual([405, "MethodNotAllowed"]);
    const list = await request(port, "GET", "/apis/apps/v1/deployments");
    expect((list.body.items as unknown[]).length).toBe(2);
    expect((await request(port, "GET", "/api/v1/namespaces/default/configmaps/x")).code).toBe(404);
    // A cluster-scoped kind's collection is the kind's only collection: deletecollection is served.
    expect((await request(port, "DELETE", "/api/v1/nodes")).code).toBe(200);
  });

  it("serve no deletecollection of namespaces (405), as kube-apiserver, and discovery says so", async () => {
    const { port } = await start();
    await createNamespace(port, "ns1");
    const deleted = await request(port, "DELETE", "/api/v1/namespaces");
    expect([deleted.code, deleted.body.reason]).toEqual([405, "MethodNotAllowed"]);
    const ns = await request(port, "GET", "/api/v1/namespaces/ns1");
    expect((ns.body.metadata as { deletionTimestamp?: string }).deletionTimestamp).toBeUndefined();
    const core = await request(port, "GET", "/api/v1");
    const resources = core.body.resources as { name: string; verbs: string[] }[];
    expect(resources.find((r) => r.name === "namespaces")?.verbs).toEqual([
      "create",
      "delete",
      "get",
      "list",
      "patch",
      "update",
      "watch",
    ]);
    expect(resources.find((r) => r.name === "pods")?.verbs).toContain("deletecollection");
  });
});

describe("malformed requests", () => {
  it("answers 400 to request targets that are not a path (`//`, `http://[`, `*`)", async () => {
    const { port } = await start();
    for (const target of ["//", "http://[", "*", "//evil/api/v1/namespaces"]) {
      const answer = await raw(
        port,
        `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`,
      );
      expect([target, answer.split("\r\n")[0]]).toEqual([target, "HTTP/1.1 400 Bad Request"]);
    }
    expect((await request(port, "GET", "/healthz")).code).toBe(200);
  });

  it("answers 413 to an over-limit Content-Length with Expect: 100-continue, without sending 100 Continue", async () => {
    const { port } = await start({ maxRequestBytes: 1024 });
    const answer = await raw(
      port,
      "POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 5000\r\nExpect: 100-continue\r\n\r\n",
    );
    expect(answer.split("\r\n")[0]).toBe("HTTP/1.1 413 Payload Too Large");
    expect(answer).not.toContain("100 Continue");
    // Within the limit, the client is told to go on and the body is read.
    const body = JSON.stringify(configMap("small"));
    const socket = net.connect(port, "127.0.0.1");
    sockets.push(socket);
    let received = "";
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => {
      received += chunk;
      if (received === "HTTP/1.1 100 Continue\r\n\r\n") socket.write(body);
    });
    const closed = new Promise((resolve) => socket.on("close", resolve));
    socket.write(
      `POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`,
    );
    await closed;
    expect(received).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 201 Created\r\n/);
  });

  it("answers 422 naming spec.containers to a pod update without containers", async () => {
    const { port } = await start();
    expect((await request(port, "POST", "/api/v1/namespaces/default/pods", { body: pod("p") })).code).toBe(
      201,
    );
    const answer = await request(port, "PUT", "/api/v1/namespaces/default/pods/p", {
      body: { apiVersion: "v1", kind: "Pod", metadata: { name: "p" }, spec: {} },
    });
    expect([answer.code, answer.body.reason]).toEqual([422, "Invalid"]);
    expect(answer.body.message).toContain("spec.containers: Required value");
  });

  it("answers 422 to a grace period whose deletion time cannot be written, and leaves the pod alone", async () => {
    const { port } = await start();
    expect(
      (await request(port, "POST", "/api/v1/namespaces/default/pods", { body: pod("p", "node-1") })).code,
    ).toBe(201);
    for (const [path, body] of [
      ["/api/v1/namespaces/default/pods/p", { gracePeriodSeconds: 99_999_999_999_999 }],
      ["/api/v1/namespaces/default/pods/p?gracePeriodSeconds=99999999999999999999", undefined],
    ] as const) {
      const answer = await request(port, "DELETE", path, { body });
      expect([answer.code, answer.body.reason]).toEqual([422, "Invalid"]);
      expect(answer.body.message).toMatch(/^DeleteOptions\.meta\.k8s\.io "" is invalid: gracePeriodSeconds/);
    }
    const got = await request(port, "GET", "/api/v1/namespaces/default/pods/p");
    expect((got.body.metadata as { deletionTimestamp?: string }).deletionTimestamp).toBeUndefined();
  });

  it("answers 400 to a forged continue token whose resourceVersion is not an integer it could have issued", async () => {
    const { port } = await start();
    for (const rv of ["1e300", "9007199254740993", "1.5"]) {
      const token = Buffer.from(`{"v":"meta.k8s.io/v1","rv":${rv},"start":"a"}`).toString("base64");
      const answer = await request(port, "GET", `/api/v1/namespaces/default/pods?continue=${token}&limit=1`);
      expect([rv, answer.code, answer.body.reason]).toEqual([rv, 400, "BadRequest"]);
      expect(answer.body.message).toMatch(/^continue key is not valid/);
    }
  });

  it("answers 422 Invalid to a `__proto__` label or annotation key instead of dropping it", async () => {
    const { port } = await start();
    for (const field of ["labels", "annotations"]) {
      const answer = await request(port, "POST", "/api/v1/namespaces/default/configmaps", {
        body: `{"metadata":{"name":"x","${field}":{"__proto__":"v","ok":"v"}}}`,
      });
      expect([answer.code, answer.body.reason]).toEqual([422, "Invalid"]);
      expect(answer.body.message).toContain(`metadata.${field}: Invalid value: "__proto__"`);
    }
    expect((await request(port, "GET", "/api/v1/namespaces/default/configmaps/x")).code).toBe(404);
  });

  it("answers an apply without fieldManager, and force on another patch, with kube-apiserver's 422", async () => {
    const { port } = await start();
    const path = "/api/v1/namespaces/default/configmaps/cm";
    const apply = { "content-type": "application/apply-patch+yaml" };
    const missing = await request(port, "PATCH", path, { body: configMap("cm"), headers: apply });
    expect([missing.code, missing.body.message]).toEqual([
      422,
      `PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch`,
    ]);
    // StatusDetails' name is omitempty: an empty one is left out, as Go's encoder does.
    expect(missing.body.details).toEqual({
      group: "meta.k8s.io",
      kind: "PatchOptions",
      causes: [
        {
          reason: "FieldValueRequired",
          message: "Required value: is required for apply patch",
          field: "fieldManager",
        },
      ],
    });
    const forced = await request(port, "PATCH", `${path}?force=true`, {
      body: { data: { a: "2" } },
      headers: { "content-type": "application/merge-patch+json" },
    });
    expect([forced.code, forced.body.message]).toEqual([
      422,
      `PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch`,
    ]);
    expect((await request(port, "GET", path)).code).toBe(404);
    const applied = await request(port, "PATCH", `${path}?fieldManager=me`, {
      body: configMap("cm"),
      headers: apply,
    });
    expect(applied.code).toBe(201);
  });
});

describe("authentication", () => {
  it("takes the bearer scheme in any case, as kube-apiserver's token authenticator does", async () => {
    const { port } = await start({ token: "t0ken" });
    for (const authorization of ["Bearer t0ken", "bearer t0ken", "BEARER t0ken"]) {
      const answer = await request(port, "GET", "/api/v1/namespaces", { headers: { authorization } });
      expect([authorization, answer.code]).toEqual([authorization, 200]);
    }
    // A token no authenticator knows is a 401; a header that carries no bearer token leaves the request anonymous.
    for (const authorization of ["Bearer t0ke", "Bearer t0kenx"]) {
      const answer = await request(port, "GET", "/api/v1/namespaces", { headers: { authorization } });
      expect([authorization, answer.code]).toEqual([authorization, 401]);
    }
    for (const authorization of ["Bearer", "Bearer ", "Basic t0ken"]) {
      const answer = await request(port, "GET", "/api/v1/namespaces", { headers: { authorization } });
      expect([authorization, answer.code]).toEqual([authorization, 403]);
    }
  });

  it("without a token, refuses requests whose Host is not a loopback name or address (DNS rebinding)", async () => {
    const { port } = await start();
    for (const host of [
      `localhost:${port}`,
      "localhost",
      `127.0.0.1:${port}`,
      "127.5.6.7",
      `[::1]:${port}`,
      "LOCALHOST.",
    ]) {
      const answer = await request(port, "GET", "/api/v1/namespaces", { headers: { host } });
      expect([host, answer.code]).toEqual([host, 200]);
    }
    for (const host of [
      `evil.example:${port}`,
      "10.0.0.1",
      "localhost.evil.example",
      "127.0.0.1.nip.io",
      "[::2]",
    ]) {
      const answer = await request(port, "GET", "/api/v1/namespaces", { headers: { host } });
      expect([host, answer.code, answer.body.reason]).toEqual([host, 403, "Forbidden"]);
      const write = await request(port, "POST", "/api/v1/namespaces", {
        headers: { host },
        body: { metadata: { name: "rebound" } },
      });
      expect(write.code).toBe(403);
    }
    expect((await request(port, "GET", "/api/v1/namespaces/rebound")).code).toBe(404);
  });

  it("with a token, accepts any Host: the token is what a rebinding page cannot send", async () => {
    const { port } = await start({ token: "t0ken" });
    const answer = await request(port, "GET", "/api/v1/namespaces", {
      headers: { host: "api.example", authorization: "Bearer t0ken" },
    });
    expect(answer.code).toBe(200);
  });
});

describe("connections", () => {
  /** Opens `count` connections that never send a byte. */
  async function flood(port: number, count: number): Promise<net.Socket[]> {
    const opened: net.Socket[] = [];
    for (let i = 0; i < count; i++) {
      const socket = net.connect(port, "127.0.0.1");
      socket.on("error", () => {});
      sockets.push(socket);
      opened.push(socket);
      await new Promise<void>((resolve) => {
        socket.once("connect", () => resolve());
        socket.once("close", () => resolve());
      });
    }
    return opened;
  }

  function connectionCount(server: http.Server): Promise<number> {
    return new Promise((resolve, reject) =>
      server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
    );
  }

  it("holds at most maxConnections and keeps serving authenticated clients through a flood of idle ones", async () => {
    const { port, server } = await start({ token: "t0ken", maxConnections: 16 });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const authorization = "Bearer t0ken";
    expect(
      (await request(port, "GET", "/api/v1/namespaces", { agent, headers: { authorization } })).code,
    ).toBe(200);
    await flood(port, 100);
    await vi.waitFor(async () => expect(await connectionCount(server.server)).toBeLessThanOrEqual(16));
    // The authenticated keep-alive connection survived the flood and is reused.
    const again = await request(port, "GET", "/api/v1/namespaces", { agent, headers: { authorization } });
    expect([again.code, again.reusedSocket]).toEqual([200, true]);
    // New clients get in too: their connections displace idle ones that never authenticated.
    expect((await request(port, "GET", "/healthz")).code).toBe(200);
    const fresh = await request(port, "GET", "/api/v1/namespaces", { headers: { authorization } });
    expect(fresh.code).toBe(200);
    agent.destroy();
  });

  it("closes a connection that sends no request within headersTimeoutMs", async () => {
    const { port } = await start({ headersTimeoutMs: 200 });
    const [socket] = await flood(port, 1);
    let received = "";
    socket!.setEncoding("latin1");
    socket!.on("data", (chunk: string) => {
      received += chunk;
    });
    await new Promise((resolve) => socket!.once("close", resolve));
    expect(received).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n|^$/);
  });

  it("answers a request not answered in requestTimeoutMs with a 504 Timeout and closes its connection", async () => {
    // A body that never arrives holds the handler; the shorter body timeout is set past the request's.
    const { clock, port } = await start({ bodyTimeoutMs: 120_000 });
    const socket = net.connect(port, "127.0.0.1");
    sockets.push(socket);
    let received = "";
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => {
      received += chunk;
    });
    const closed = new Promise((resolve) => socket.on("close", resolve));
    // A body announced and never sent: the handler waits for it.
    socket.write(
      "PUT /api/v1/namespaces/default/configmaps/x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
    );
    await vi.waitFor(() => expect(clock.pendingTimers().map((timer) => timer.in)).toContain(60_000));
    await clock.advance(60_000);
    await closed;
    expect(received.split("\r\n")[0]).toBe("HTTP/1.1 504 Gateway Timeout");
    expect(JSON.parse(received.slice(received.indexOf("\r\n\r\n") + 4))).toMatchObject({
      kind: "Status",
      code: 504,
      reason: "Timeout",
      message: "Timeout: request did not complete within requested timeout - context deadline exceeded",
    });
  });

  it("applies kube's timeouts by default: headers 32 s, requests 60 s, idle keep-alive 90 s", async () => {
    const { server } = await start();
    expect([
      server.server.headersTimeout,
      server.server.requestTimeout,
      server.server.keepAliveTimeout,
    ]).toEqual([32_000, 60_000, 90_000]);
  });
});

describe("watches whose client stops reading", () => {
  /** A watch on a raw socket that reads nothing until `resume`, and enough events to back the server up. */
  async function stalledWatch(port: number, api: ApiServer, query: string) {
    const socket = net.connect(port, "127.0.0.1");
    sockets.push(socket);
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
    socket.write(
      `GET /api/v1/namespaces/default/configmaps?watch=true${query} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`,
    );
    socket.pause();
    // 60 MB of events: more than the kernel's socket buffers on loopback hold.
    const client = api.client().resource(configMaps, "default");
    const blob = "y".repeat(600_000);
    for (let i = 0; i < 100; i++) await client.create({ metadata: { name: `c${i}` }, data: { blob } });
    let received = 0;
    const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    return {
      closed,
      resume() {
        socket.on("data", (chunk: Buffer) => {
          received += chunk.length;
        });
        socket.resume();
      },
      get received() {
        return received;
      },
    };
  }

  it("closes a watch that has not taken any data for watchWriteTimeoutMs", async () => {
    const { api, clock, port } = await start({ watchWriteTimeoutMs: 10_000 });
    const watch = await stalledWatch(port, api, "");
    // The server is blocked on the socket once its write deadline is armed.
    await vi.waitFor(() => expect(clock.pendingTimers().some((timer) => timer.in === 10_000)).toBe(true));
    await clock.advance(10_000);
    watch.resume();
    await watch.closed;
    expect(watch.received).toBeLessThan(60_000_000);
  });

  it("ends a watch at timeoutSeconds even while its client reads nothing", async () => {
    const { api, clock, port } = await start();
    const watch = await stalledWatch(port, api, "&timeoutSeconds=5");
    await vi.waitFor(() => expect(clock.pendingTimers().some((timer) => timer.in === 30_000)).toBe(true));
    await clock.advance(5_000);
    watch.resume();
    await watch.closed;
    expect(watch.received).toBeLessThan(60_000_000);
  });
});
