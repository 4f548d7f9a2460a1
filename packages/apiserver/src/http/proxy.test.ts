import { endpoints, nodes, type Pod, pods, services } from "@reconcile/api";
import { FakeClock } from "@reconcile/clock";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";
import { closeKubectlClusters, kubectlCluster } from "../testing/kubectl.js";
import { requestAttributes } from "./auth/request-auth.js";
import type { KubeletConnection, PodPortStream } from "./pod-connect.js";
import { type ListeningApiServer, listen } from "./server.js";

const running: { api: ApiServer; http: ListeningApiServer }[] = [];
afterEach(async () => {
  await closeKubectlClusters();
  for (const { api, http } of running.splice(0)) {
    await http.close();
    await api.close();
  }
});

/**
 * A kubelet whose pods answer HTTP on every port: the request line, the port,
 * the Authorization header (or none) and the body, echoed as text.
 */
function echoingKubelet(dialed: string[]): KubeletConnection {
  return {
    containerLogs: () => undefined,
    exec: () => undefined,
    portForward(nodeName, namespace, podName, port) {
      dialed.push(`${nodeName} ${namespace}/${podName}:${port}`);
      if (port === 9999) return { ok: false, message: "connection refused" };
      let received = "";
      let onData: (data: Uint8Array) => void = () => {};
      let onEnd: (error?: string) => void = () => {};
      const stream: PodPortStream = {
        write(data) {
          received += Buffer.from(data).toString("latin1");
          const headEnd = received.indexOf("\r\n\r\n");
          if (headEnd === -1) return;
          const head = received.slice(0, headEnd);
          const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
          const body = received.slice(headEnd + 4);
          if (body.length < length) return;
          const auth = /authorization: (.*)/i.exec(head)?.[1] ?? "none";
          const text = `${head.split("\r\n")[0]} port=${port} auth=${auth} body=${body}`;
          onData(
            Buffer.from(
              `HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Pod: ${podName}\r\nContent-Length: ${text.length}\r\nConnection: close\r\n\r\n${text}`,
            ),
          );
          onEnd();
        },
        end() {},
        onData: (listener) => void (onData = listener),
        onEnd: (listener) => void (onEnd = listener),
      };
      return { ok: true, stream };
    },
  };
}

async function start(options: { token?: string } = {}) {
  const dialed: string[] = [];
  const api = new ApiServer({ clock: new FakeClock(Date.parse("2026-01-01T00:00:00Z")) });
  const server = await listen(api, {
    kubeletConnection: echoingKubelet(dialed),
    ...(options.token === undefined ? {} : { token: options.token, tls: true }),
  });
  running.push({ api, http: server });
  const client = api.client();
  const pod = await client.resource(pods, "default").create({
    metadata: { name: "web", labels: { app: "web" } },
    spec: {
      nodeName: "node-1",
      containers: [{ name: "web", image: "nginx", ports: [{ containerPort: 8080 }] }],
    },
  } satisfies Pod);
  await client
    .resource(pods, "default")
    .updateStatus({ ...pod, status: { phase: "Running", podIP: "10.244.0.7" } });
  return { api, server, dialed };
}

async function get(server: ListeningApiServer, path: string, init: RequestInit = {}) {
  const response = await fetch(server.url + path, { redirect: "manual", ...init });
  return { code: response.status, headers: response.headers, text: await response.text() };
}

describe("pods/proxy and services/proxy", () => {
  it("passes a request to the pod's first container port, or the one named, and streams the answer back", async () => {
    const { server, dialed } = await start();
    const first = await get(server, "/api/v1/namespaces/default/pods/web/proxy/hello/there?x=1&y=2");
    expect(first).toMatchObject({
      code: 200,
      text: "GET /hello/there?x=1&y=2 HTTP/1.1 port=8080 auth=none body=",
    });
    expect(first.headers.get("x-pod")).toBe("web");
    expect(first.headers.get("content-type")).toBe("text/plain");
    const named = await get(server, "/api/v1/namespaces/default/pods/http:web:9090/proxy/", {
      method: "POST",
      body: "ping",
    });
    expect(named.text).toBe("POST / HTTP/1.1 port=9090 auth=none body=ping");
    expect(dialed).toEqual(["node-1 default/web:8080", "node-1 default/web:9090"]);
  });

  it("redirects an empty path to the proxy's root, and answers upstream's errors", async () => {
    const { server } = await start();
    const bare = await get(server, "/api/v1/namespaces/default/pods/web/proxy?a=b");
    expect(bare.code).toBe(301);
    expect(bare.headers.get("location")).toBe("/api/v1/namespaces/default/pods/web/proxy/?a=b");
    const missing = await get(server, "/api/v1/namespaces/default/pods/nope/proxy/");
    expect(missing.code).toBe(404);
    expect(JSON.parse(missing.text).message).toBe('pods "nope" not found');
    const invalid = await get(server, "/api/v1/namespaces/default/pods/ftp:web:80/proxy/");
    expect(invalid.code).toBe(400);
    expect(JSON.parse(invalid.text).message).toBe('invalid pod request "ftp:web:80"');
    const refused = await get(server, "/api/v1/namespaces/default/pods/web:9999/proxy/");
    expect(refused.code).toBe(503);
    expect(JSON.parse(refused.text)).toMatchObject({
      reason: "ServiceUnavailable",
      message: "error trying to reach pod: connection refused",
    });
  });

  it("reaches a Service through its Endpoints: the port by name or number, its target port on a ready pod", async () => {
    const { api, server, dialed } = await start();
    const client = api.client();
    await client.resource(services, "default").create({
      metadata: { name: "web" },
      spec: { selector: { app: "web" }, ports: [{ name: "http", port: 80, targetPort: 8080 }] },
    });
    const none = await get(server, "/api/v1/namespaces/default/services/web:http/proxy/");
    expect(none.code).toBe(503);
    expect(JSON.parse(none.text)).toMatchObject({
      reason: "ServiceUnavailable",
      message: 'no endpoints available for service "web"',
    });
    await client.resource(endpoints, "default").create({
      metadata: { name: "web" },
      subsets: [
        {
          addresses: [{ ip: "10.244.0.7", targetRef: { kind: "Pod", name: "web", namespace: "default" } }],
          ports: [{ name: "http", port: 8080 }],
        },
      ],
    } as never);
    for (const name of ["web:http", "web:80"]) {
      const answer = await get(server, `/api/v1/namespaces/default/services/${name}/proxy/status`);
      expect(answer.text).toBe("GET /status HTTP/1.1 port=8080 auth=none body=");
    }
    expect(dialed).toEqual(["node-1 default/web:8080", "node-1 default/web:8080"]);
    // The unnamed port, which this Service has not.
    const unnamed = await get(server, "/api/v1/namespaces/default/services/web/proxy/");
    expect(unnamed.code).toBe(503);
    expect(JSON.parse(unnamed.text).message).toBe('no endpoints available for service "web"');
    const wrongPort = await get(server, "/api/v1/namespaces/default/services/web:81/proxy/");
    expect(JSON.parse(wrongPort.text).message).toBe('no service port 81 found for service "web"');
  });

  it("serves kubectl get --raw, never passing the client's credentials on", async () => {
    const dialed: string[] = [];
    const cluster = await kubectlCluster(
      {},
      { tls: true, token: "admin-token", kubeletConnection: echoingKubelet(dialed) },
    );
    const pod = await cluster.client.resource(pods, "default").create({
      metadata: { name: "web" },
      spec: { nodeName: "node-1", containers: [{ name: "web", image: "nginx" }] },
    } satisfies Pod);
    await cluster.client
      .resource(pods, "default")
      .updateStatus({ ...pod, status: { phase: "Running", podIP: "10.244.0.7" } });
    const answer = await cluster.kubectl([
      "get",
      "--raw",
      "/api/v1/namespaces/default/pods/web/proxy/metrics?x=1",
    ]);
    expect(answer).toEqual({
      code: 0,
      stdout: "GET /metrics?timeout=20s&x=1 HTTP/1.1 port=80 auth=none body=",
      stderr: "",
    });
    expect(dialed).toEqual(["node-1 default/web:80"]);
  });

  it("is authorized as get on pods/proxy, with the path after proxy no part of the subresource", () => {
    const user = { username: "jane", groups: [] };
    expect(
      requestAttributes(
        user,
        "GET",
        "/api/v1/namespaces/default/pods/web:8080/proxy/metrics/cadvisor",
        new URLSearchParams(),
      ),
    ).toEqual([
      {
        user,
        resourceRequest: true,
        verb: "get",
        apiGroup: "",
        resource: "pods",
        subresource: "proxy",
        namespace: "default",
        name: "web:8080",
      },
    ]);
  });
});

describe("nodes/{name}/proxy", () => {
  it("asks the node's kubelet server for the path and query, and answers as it does", async () => {
    const asked: string[] = [];
    const kubelet: KubeletConnection = {
      containerLogs: () => undefined,
      nodeProxy(nodeName, method, path) {
        asked.push(`${nodeName} ${method} ${path}`);
        return path.startsWith("/healthz")
          ? { status: 200, headers: { "Content-Type": "text/plain; charset=utf-8" }, body: "ok" }
          : {
              status: 404,
              headers: { "Content-Type": "text/plain; charset=utf-8" },
              body: "404 page not found\n",
            };
      },
    };
    const api = new ApiServer({ clock: new FakeClock(Date.parse("2026-01-01T00:00:00Z")) });
    const server = await listen(api, { kubeletConnection: kubelet });
    running.push({ api, http: server });
    await api
      .client()
      .resource(nodes)
      .create({
        metadata: { name: "n1" },
        status: { addresses: [{ type: "InternalIP", address: "10.0.0.7" }] },
      });
    const get = async (path: string, method = "GET") => {
      const response = await fetch(`${server.url}${path}`, { method, redirect: "manual" });
      return `${response.status} ${response.headers.get("content-type")} ${await response.text()}`;
    };
    expect(await get("/api/v1/nodes/n1/proxy/healthz?verbose")).toBe("200 text/plain; charset=utf-8 ok");
    expect(await get("/api/v1/nodes/n1:10250/proxy/other")).toBe(
      "404 text/plain; charset=utf-8 404 page not found\n",
    );
    expect(await get("/api/v1/nodes/n1/proxy/healthz", "HEAD")).toBe("200 text/plain; charset=utf-8 ");
    expect(asked).toEqual(["n1 GET /healthz?verbose", "n1 GET /other", "n1 HEAD /healthz"]);
    const otherPort = JSON.parse((await get("/api/v1/nodes/n1:8080/proxy/")).split(" ").slice(2).join(" "));
    expect([otherPort.code, otherPort.message]).toEqual([
      503,
      "error trying to reach service: dial tcp 10.0.0.7:8080: connect: connection refused",
    ]);
    const missing = JSON.parse((await get("/api/v1/nodes/n2/proxy/healthz")).split(" ").slice(2).join(" "));
    expect([missing.code, missing.message]).toEqual([404, 'nodes "n2" not found']);
    expect(asked).toHaveLength(3);
  });

  it("is authorized as the nodes/proxy subresource", () => {
    const [attributes] = requestAttributes(
      { username: "u", groups: [] },
      "GET",
      "/api/v1/nodes/n1/proxy/metrics",
      new URLSearchParams(),
    );
    expect(attributes).toMatchObject({
      verb: "get",
      resource: "nodes",
      subresource: "proxy",
      name: "n1",
      namespace: "",
    });
  });
});
