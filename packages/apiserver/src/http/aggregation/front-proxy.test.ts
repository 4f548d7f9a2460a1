import type * as http from "node:http";
import * as https from "node:https";
import type { AddressInfo } from "node:net";
import type { TLSSocket } from "node:tls";
import {
  apiServices,
  clusterRoleBindings,
  clusterRoles,
  configMaps,
  endpoints,
  namespaces,
  services,
} from "@reconcile/api";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import { ApiServer } from "../../api-server.js";
import { establishSchemalessCRD } from "../../crd/crd.test-util.js";
import { requestHeaderFromData } from "../auth/request-header.js";
import type { ListeningApiServer } from "../server.js";
import { type CertificateAndKey, generateServingCertificates, issueClientCertificate } from "../tls.js";

// kubeadm's front proxy: the aggregating server passes requests on with its
// `front-proxy-client` certificate and the user in X-Remote-* headers; the
// aggregated server trusts them by what `kube-system/extension-apiserver-authentication`
// says, and authorizes the user the headers name.

const servers: ApiServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

interface Answer {
  code: number;
  body: string;
}

/** A request to `listening` with `headers`, presenting `client`'s certificate if given; a GET without a body. */
function call(
  listening: ListeningApiServer,
  path: string,
  headers: Record<string, string | string[]>,
  client?: CertificateAndKey,
  body?: unknown,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = https.request(
      `${listening.url}${path}`,
      {
        method: body === undefined ? "GET" : "POST",
        ca: listening.certificateAuthority,
        headers: body === undefined ? headers : { ...headers, "content-type": "application/json" },
        ...client,
        agent: false,
      },
      (response) => {
        let text = "";
        response.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
        response.on("end", () => resolve({ code: response.statusCode ?? 0, body: text }));
      },
    );
    request.on("error", reject);
    request.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** The aggregating server (`frontProxy: true`), jane a cluster admin on it. */
async function aggregating() {
  const api = new ApiServer({ frontProxy: true, aggregation: { recheckIntervalMs: 60_000 } });
  servers.push(api);
  const listening = await api.listen({
    tls: true,
    token: "admin-token",
    users: [{ token: "jane-token", user: { username: "jane", groups: ["devs"] } }],
  });
  await api
    .client()
    .resource(clusterRoleBindings)
    .create({
      metadata: { name: "jane" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "jane" }],
    });
  return { api, listening };
}

/** The aggregated server: serves widgets.example.com, trusts the front proxy `data` names. */
async function aggregated(data: Record<string, string>) {
  const api = new ApiServer();
  servers.push(api);
  const certificates = await generateServingCertificates({
    dnsNames: ["api.widgets.svc"],
    ipAddresses: ["127.0.0.1"],
  });
  const listening = await api.listen({
    tls: { ...certificates.serving, ca: certificates.ca.cert },
    token: "backend-admin-token",
    requestHeader: requestHeaderFromData(data),
  });
  await establishSchemalessCRD(api, { group: "example.com", plural: "widgets", kind: "Widget" });
  return { api, listening, ca: certificates.ca.cert };
}

/**
 * `v1.example.com` served by the server on loopback `port` (its certificate
 * signed by `ca`), through the Service `widgets/api` and Endpoints written by
 * hand; resolves once the availability check has run.
 */
async function aggregate(api: ApiServer, port: number, ca: string): Promise<void> {
  const client = api.client();
  await client.resource(namespaces).create({ metadata: { name: "widgets" } });
  await client.resource(services, "widgets").create({
    metadata: { name: "api" },
    spec: { ports: [{ name: "https", port: 443, targetPort: port }] },
  });
  await client.resource(endpoints, "widgets").create({
    metadata: { name: "api" },
    subsets: [{ addresses: [{ ip: "127.0.0.1" }], ports: [{ name: "https", port }] }],
  } as never);
  await client.resource(apiServices).create({
    metadata: { name: "v1.example.com" },
    spec: {
      group: "example.com",
      version: "v1",
      groupPriorityMinimum: 1000,
      versionPriority: 15,
      service: { namespace: "widgets", name: "api" },
      caBundle: Buffer.from(ca).toString("base64"),
    },
  });
  await api.flush();
}

describe("the front proxy", () => {
  it("publishes extension-apiserver-authentication, and passes users on to an aggregated server that trusts it", async () => {
    const front = await aggregating();
    const published = await front.api
      .client()
      .resource(configMaps, "kube-system")
      .get("extension-apiserver-authentication");
    const frontProxy = await front.api.frontProxy!;
    expect(published.data).toEqual({
      "client-ca-file": front.listening.certificateAuthority!.replaceAll("\r\n", "\n"),
      "requestheader-allowed-names": '["front-proxy-client"]',
      "requestheader-client-ca-file": frontProxy.ca.cert.replaceAll("\r\n", "\n"),
      "requestheader-extra-headers-prefix": '["X-Remote-Extra-"]',
      "requestheader-group-headers": '["X-Remote-Group"]',
      "requestheader-username-headers": '["X-Remote-User"]',
    });
    expect(frontProxy.client.cert).toContain("BEGIN CERTIFICATE");

    const backend = await aggregated(published.data!);
    const client = front.api.client();
    await aggregate(front.api, backend.listening.port, backend.ca);
    // The discovery check went as system:kube-aggregator in system:masters, trusted by the certificate.
    const available = await client.resource(apiServices).get("v1.example.com");
    expect(available.status?.conditions?.find((c) => c.type === "Available")).toMatchObject({
      status: "True",
      reason: "Passed",
    });

    // jane may list widgets where she asks, but the aggregated server decides for itself: as jane.
    const path = "/apis/example.com/v1/namespaces/default/widgets";
    const refused = await call(front.listening, path, { authorization: "Bearer jane-token" });
    expect(refused.code).toBe(403);
    expect(JSON.parse(refused.body).message).toBe(
      'widgets.example.com is forbidden: User "jane" cannot list resource "widgets" in API group "example.com" in the namespace "default"',
    );
    await backend.api
      .client()
      .resource(clusterRoles)
      .create({
        metadata: { name: "widget-reader" },
        rules: [{ apiGroups: ["example.com"], resources: ["widgets"], verbs: ["get", "list"] }],
      });
    await backend.api
      .client()
      .resource(clusterRoleBindings)
      .create({
        metadata: { name: "devs" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "widget-reader" },
        subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "devs" }],
      });
    const listed = await call(front.listening, path, { authorization: "Bearer jane-token" });
    expect(listed.code).toBe(200);
    expect(JSON.parse(listed.body)).toMatchObject({ kind: "WidgetList", items: [] });

    // Headers alone name nobody: without the front proxy's certificate the request is anonymous.
    const forged = await call(backend.listening, path, { "X-Remote-User": "jane", "X-Remote-Group": "devs" });
    expect(forged.code).toBe(403);
    expect(JSON.parse(forged.body).message).toBe(
      'widgets.example.com is forbidden: User "system:anonymous" cannot list resource "widgets" in API group "example.com" in the namespace "default"',
    );
    // The front proxy's certificate, with the user in its headers, is trusted directly too.
    const direct = await call(
      backend.listening,
      path,
      { "X-Remote-User": "jane", "X-Remote-Group": "devs", "X-Remote-Extra-Reason": "test" },
      frontProxy.client,
    );
    expect(direct.code).toBe(200);
    // Who the headers make the request: every group header, the extra keys unescaped and lowercased.
    const review = await call(
      backend.listening,
      "/apis/authentication.k8s.io/v1/selfsubjectreviews",
      { "X-Remote-User": "jane", "X-Remote-Group": ["devs", "qa"], "X-Remote-Extra-Reason%2FWhy": "test" },
      frontProxy.client,
      { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" },
    );
    expect(review.code).toBe(201);
    expect(JSON.parse(review.body).status.userInfo).toEqual({
      username: "jane",
      groups: ["devs", "qa", "system:authenticated"],
      extra: { "reason/why": ["test"] },
    });
    // A certificate of the front proxy's CA with another name is refused outright.
    const stranger = await issueClientCertificate(frontProxy.ca, { username: "stranger" });
    const refusedName = await call(backend.listening, path, { "X-Remote-User": "jane" }, stranger);
    expect(refusedName.code).toBe(401);
  });
});

/** An aggregated server that answers WebSocket upgrades by echoing, and records who asked. */
async function echoServer(frontProxyCA: string) {
  const certificates = await generateServingCertificates({ dnsNames: ["api.widgets.svc"], ipAddresses: [] });
  const asked: { url: string; headers: http.IncomingHttpHeaders; certificate: string | undefined }[] = [];
  // Its discovery answers the availability check; nothing else is served but upgrades.
  const server = https.createServer(
    {
      cert: certificates.serving.cert,
      key: certificates.serving.key,
      requestCert: true,
      rejectUnauthorized: false,
      ca: frontProxyCA,
    },
    (_request, response) => {
      response.writeHead(200, { "Content-Type": "application/json" });
      response.end(
        JSON.stringify({
          kind: "APIResourceList",
          apiVersion: "v1",
          groupVersion: "example.com/v1",
          resources: [],
        }),
      );
    },
  );
  const sockets = new WebSocketServer({ noServer: true });
  server.on("upgrade", (request: http.IncomingMessage, socket, head) => {
    const tls = request.socket as TLSSocket;
    asked.push({
      url: request.url ?? "",
      headers: request.headers,
      certificate: tls.authorized ? String(tls.getPeerCertificate().subject?.CN) : undefined,
    });
    if (!(request.url ?? "").split("?")[0]!.endsWith("/console")) {
      socket.end("HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot found");
      return;
    }
    sockets.handleUpgrade(request, socket, head, (ws) =>
      ws.on("message", (data) => ws.send(`echo: ${String(data)}`)),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    ca: certificates.ca.cert,
    asked,
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of sockets.clients) client.terminate();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe("upgrade requests to an aggregated server", () => {
  it("are passed on with the front proxy's certificate and the user's headers, and joined once it switches", async () => {
    const front = await aggregating();
    const frontProxy = await front.api.frontProxy!;
    const backend = await echoServer(frontProxy.ca.cert);
    try {
      const client = front.api.client();
      await aggregate(front.api, backend.port, backend.ca);
      const checked = await client.resource(apiServices).get("v1.example.com");
      expect(checked.status?.conditions?.find((c) => c.type === "Available")?.status).toBe("True");

      const base = `${front.listening.url.replace("https", "wss")}/apis/example.com/v1/namespaces/default/widgets/w`;
      const ws = new WebSocket(`${base}/console?tty=true`, {
        ca: front.listening.certificateAuthority,
        headers: { authorization: "Bearer jane-token" },
      });
      const echoed = new Promise<string>((resolve, reject) => {
        ws.on("message", (data) => resolve(String(data)));
        ws.on("error", reject);
      });
      await new Promise<void>((resolve, reject) => ws.on("open", resolve).on("error", reject));
      ws.send("hello");
      expect(await echoed).toBe("echo: hello");
      ws.close();
      const [seen] = backend.asked;
      expect(seen!.url).toBe("/apis/example.com/v1/namespaces/default/widgets/w/console?tty=true");
      expect(seen!.certificate).toBe("front-proxy-client");
      expect(seen!.headers["x-remote-user"]).toBe("jane");
      expect(seen!.headers["x-remote-group"]).toBe("devs, system:authenticated");
      expect(seen!.headers.authorization).toBeUndefined();
      expect(seen!.headers.upgrade).toBe("websocket");

      // An answer other than 101 comes back as it is.
      const missing = new WebSocket(`${base}/missing`, {
        ca: front.listening.certificateAuthority,
        headers: { authorization: "Bearer jane-token" },
      });
      const code = await new Promise<number>((resolve) =>
        missing.on("unexpected-response", (_request, response) => resolve(response.statusCode ?? 0)),
      );
      expect(code).toBe(404);
      // Without credentials the aggregating server refuses before anything is passed on.
      const anonymous = new WebSocket(`${base}/console`, { ca: front.listening.certificateAuthority });
      const refused = await new Promise<number>((resolve) =>
        anonymous.on("unexpected-response", (_request, response) => resolve(response.statusCode ?? 0)),
      );
      expect(refused).toBe(403);
      expect(backend.asked.map((asked) => asked.url.split("?")[0]!.split("/").at(-1))).toEqual([
        "console",
        "missing",
      ]);
      // A server that cannot be reached is kube-aggregator's plain-text 503, with why.
      await backend.close();
      const gone = new WebSocket(`${base}/console`, {
        ca: front.listening.certificateAuthority,
        headers: { authorization: "Bearer jane-token" },
      });
      const unreachable = await new Promise<{ code: number; body: string }>((resolve) =>
        gone.on("unexpected-response", (_request, response) => {
          let body = "";
          response.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
          response.on("end", () => resolve({ code: response.statusCode ?? 0, body }));
        }),
      );
      expect(unreachable).toEqual({ code: 503, body: `connect ECONNREFUSED 127.0.0.1:${backend.port}\n` });
    } finally {
      await backend.close();
    }
  });
});
