import * as http from "node:http";
import * as net from "node:net";
import { FakeClock } from "@reconcile/clock";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";
import { type ListeningApiServer, listen } from "./server.js";

const running: { api: ApiServer; http: ListeningApiServer }[] = [];
afterEach(async () => {
  for (const { api, http } of running.splice(0)) {
    await http.close();
    await api.close();
  }
});

async function start(
  options: { token?: string; maxRequestBytes?: number; historySize?: number; watchBufferSize?: number } = {},
) {
  const api = new ApiServer({
    clock: new FakeClock(Date.parse("2026-01-01T00:00:00Z")),
    historySize: options.historySize,
    watchBufferSize: options.watchBufferSize,
  });
  const server = await listen(api, { token: options.token, maxRequestBytes: options.maxRequestBytes });
  running.push({ api, http: server });
  return { api, server, url: server.url };
}

interface Answer {
  code: number;
  contentType: string;
  body: Record<string, unknown>;
  text: string;
}

async function call(
  url: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body =
      body instanceof Uint8Array || typeof body === "string" ? (body as string) : JSON.stringify(body);
    (init.headers as Record<string, string>)["content-type"] ??= "application/json";
  }
  const response = await fetch(url + path, init);
  const text = await response.text();
  let parsed: Record<string, unknown> = {};
  try {
    parsed = JSON.parse(text);
  } catch {}
  return {
    code: response.status,
    contentType: response.headers.get("content-type") ?? "",
    body: parsed,
    text,
  };
}

const deployment = (name: string, replicas = 1) => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name, labels: { app: name } },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: "main", image: "nginx", ports: [{ containerPort: 80 }] }] },
    },
  },
});

const tableAccept =
  "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";

/** Opens a watch and collects its lines until `count` arrived (or the stream ends). */
function watchLines(url: string, path: string, headers: Record<string, string> = {}) {
  const lines: Record<string, unknown>[] = [];
  let buffered = "";
  let ended = false;
  let statusCode = 0;
  let request: http.ClientRequest;
  const opened = new Promise<void>((resolve, reject) => {
    request = http.get(url + path, { headers }, (response) => {
      statusCode = response.statusCode ?? 0;
      resolve();
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => {
        buffered += chunk;
        let newline = buffered.indexOf("\n");
        while (newline !== -1) {
          lines.push(JSON.parse(buffered.slice(0, newline)));
          buffered = buffered.slice(newline + 1);
          newline = buffered.indexOf("\n");
        }
      });
      response.on("end", () => {
        ended = true;
      });
      response.on("error", () => {
        ended = true;
      });
    });
    request.on("error", reject);
  });
  return {
    opened,
    lines,
    get ended() {
      return ended;
    },
    get statusCode() {
      return statusCode;
    },
    close: () => request.destroy(),
  };
}

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 20_000 && !condition(); i++) await new Promise((resolve) => setImmediate(resolve));
  if (!condition()) throw new Error("condition never held");
}

describe("the REST API over HTTP", () => {
  it("serves version, health and discovery", async () => {
    const { url } = await start();
    expect((await call(url, "GET", "/version")).body).toMatchObject({ major: "1", minor: "32" });
    const health = await call(url, "GET", "/healthz");
    expect([health.code, health.text]).toEqual([200, "ok"]);
    expect((await call(url, "GET", "/api")).body).toMatchObject({ kind: "APIVersions", versions: ["v1"] });
    expect((await call(url, "GET", "/apis/apps/v1")).body).toMatchObject({
      kind: "APIResourceList",
      groupVersion: "apps/v1",
    });
    expect((await call(url, "GET", "/openapi/v3")).body).toHaveProperty("paths.apis/apps/v1");
    const missing = await call(url, "GET", "/apis/nope.example.com/v1");
    expect(missing.code).toBe(404);
    expect(missing.body).toMatchObject({ kind: "Status", reason: "NotFound" });
  });

  it("serves aggregated discovery to clients that ask for it, with its exact content type", async () => {
    const { url } = await start();
    const accept =
      "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";
    const apis = await call(url, "GET", "/apis", undefined, { accept });
    expect(apis.contentType).toBe("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList");
    expect(apis.body).toMatchObject({ kind: "APIGroupDiscoveryList", apiVersion: "apidiscovery.k8s.io/v2" });
    const apps = (
      apis.body.items as { metadata: { name: string }; versions: { resources: { resource: string }[] }[] }[]
    ).find((item) => item.metadata.name === "apps");
    expect(apps?.versions[0]?.resources).toContainEqual({
      resource: "deployments",
      responseKind: { group: "apps", version: "v1", kind: "Deployment" },
      scope: "Namespaced",
      singularResource: "deployment",
      verbs: ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
      shortNames: ["deploy"],
      categories: ["all"],
      subresources: [
        {
          subresource: "status",
          responseKind: { group: "apps", version: "v1", kind: "Deployment" },
          verbs: ["get", "patch", "update"],
        },
        {
          subresource: "scale",
          responseKind: { group: "autoscaling", version: "v1", kind: "Scale" },
          verbs: ["get", "patch", "update"],
        },
      ],
    });
    const core = await call(url, "GET", "/api", undefined, { accept });
    expect((core.body.items as { metadata: object }[])[0]!.metadata).toEqual({});
    // A client that knows only v2beta1 (kubectl 1.28) gets the unaggregated documents.
    const old = await call(url, "GET", "/api", undefined, {
      accept: "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json",
    });
    expect([old.contentType, old.body.kind]).toEqual(["application/json", "APIVersions"]);
  });

  it("creates (201), gets, lists, updates and answers a stale update with 409 Conflict", async () => {
    const { url } = await start();
    const created = await call(
      url,
      "POST",
      "/apis/apps/v1/namespaces/default/deployments",
      deployment("web"),
    );
    expect(created.code).toBe(201);
    expect(created.body).toMatchObject({ metadata: { name: "web", namespace: "default", generation: 1 } });
    const got = await call(url, "GET", "/apis/apps/v1/namespaces/default/deployments/web");
    expect(got.body).toEqual(created.body);
    const list = await call(url, "GET", "/apis/apps/v1/deployments");
    expect(list.body).toMatchObject({
      kind: "DeploymentList",
      apiVersion: "apps/v1",
      items: [{ metadata: { name: "web" } }],
    });
    const object = got.body as { spec: { replicas: number } };
    object.spec.replicas = 3;
    const updated = await call(url, "PUT", "/apis/apps/v1/namespaces/default/deployments/web", object);
    expect(updated.body).toMatchObject({ spec: { replicas: 3 }, metadata: { generation: 2 } });
    const stale = await call(url, "PUT", "/apis/apps/v1/namespaces/default/deployments/web", object);
    expect(stale.code).toBe(409);
    expect(stale.body).toMatchObject({ kind: "Status", reason: "Conflict" });
  });

  it("streams a large list in batches that parse back to the whole list", async () => {
    const { url } = await start();
    const note = "x".repeat(2000);
    for (let i = 0; i < 300; i++) {
      await call(url, "POST", "/api/v1/namespaces/default/configmaps", {
        metadata: { name: `cm-${i}` },
        data: { note },
      });
    }
    const list = await call(url, "GET", "/api/v1/namespaces/default/configmaps");
    expect(list.code).toBe(200);
    expect(list.text.length).toBeGreaterThan(600_000);
    const items = list.body.items as { metadata: { name: string } }[];
    expect(items.map((i) => i.metadata.name)).toEqual(
      Array.from({ length: 300 }, (_, i) => `cm-${i}`).sort(),
    );
    expect(list.body).toMatchObject({
      kind: "ConfigMapList",
      apiVersion: "v1",
      metadata: { resourceVersion: expect.any(String) },
    });
    const table = await call(url, "GET", "/api/v1/namespaces/default/configmaps", undefined, {
      accept: tableAccept,
    });
    expect((table.body.rows as unknown[]).length).toBe(300);
  });

  it("answers kubectl's Table Accept with a Table whose rows carry PartialObjectMetadata or, asked, the object", async () => {
    const { url } = await start();
    await call(url, "POST", "/apis/apps/v1/namespaces/default/deployments", deployment("web", 2));
    const table = await call(
      url,
      "GET",
      "/apis/apps/v1/namespaces/default/deployments?limit=500",
      undefined,
      { accept: tableAccept },
    );
    expect(table.contentType).toBe("application/json;as=Table;v=v1;g=meta.k8s.io");
    expect(table.body).toMatchObject({
      kind: "Table",
      apiVersion: "meta.k8s.io/v1",
      rows: [
        {
          cells: ["web", "0/2", 0, 0, "0s", "main", "nginx", "app=web"],
          object: { kind: "PartialObjectMetadata" },
        },
      ],
    });
    const withObject = await call(
      url,
      "GET",
      "/apis/apps/v1/namespaces/default/deployments?includeObject=Object",
      undefined,
      {
        accept: tableAccept,
      },
    );
    expect(withObject.body).toMatchObject({
      rows: [{ object: { kind: "Deployment", spec: { replicas: 2 } } }],
    });
    const single = await call(url, "GET", "/apis/apps/v1/namespaces/default/deployments/web", undefined, {
      accept: tableAccept,
    });
    expect(single.body).toMatchObject({
      kind: "Table",
      rows: [{ cells: ["web", "0/2", 0, 0, "0s", "main", "nginx", "app=web"] }],
    });
  });

  it("decodes the protobuf body of kubectl create namespace and answers in JSON", async () => {
    const { url } = await start();
    const body = Buffer.from(
      "6b3873000a0f0a02763112094e616d657370616365121e0a160a067465616d2d6112001a0022002a0032003800420012001a020a001a002200",
      "hex",
    );
    const created = await call(
      url,
      "POST",
      "/api/v1/namespaces?fieldManager=kubectl-create&fieldValidation=Strict",
      body,
      {
        "content-type": "application/vnd.kubernetes.protobuf",
        accept: "application/vnd.kubernetes.protobuf,application/json",
      },
    );
    expect(created.code).toBe(201);
    expect(created.contentType).toBe("application/json");
    expect(created.body).toMatchObject({
      kind: "Namespace",
      metadata: { name: "team-a" },
      status: { phase: "Active" },
    });
    const garbage = await call(url, "POST", "/api/v1/namespaces", Buffer.from("k8s\0\xff"), {
      "content-type": "application/vnd.kubernetes.protobuf",
    });
    expect(garbage.code).toBe(400);
    expect(garbage.body.message).toMatch(/^the protobuf body could not be decoded: /);
  });

  it("patches in all four kinds; an apply patch creates the object when absent", async () => {
    const { url } = await start();
    const path = "/apis/apps/v1/namespaces/default/deployments/web";
    const applied = await call(url, "PATCH", `${path}?fieldManager=kubectl&force=false`, deployment("web"), {
      "content-type": "application/apply-patch+yaml",
    });
    expect(applied.code).toBe(201);
    const merge = await call(
      url,
      "PATCH",
      path,
      { metadata: { labels: { tier: "fe" } } },
      { "content-type": "application/merge-patch+json" },
    );
    expect(merge.body).toMatchObject({ metadata: { labels: { app: "web", tier: "fe" } } });
    const smp = await call(
      url,
      "PATCH",
      path,
      {
        spec: {
          template: {
            spec: {
              "$setElementOrder/containers": [{ name: "main" }],
              containers: [{ name: "main", image: "nginx:1.27" }],
            },
          },
        },
      },
      { "content-type": "application/strategic-merge-patch+json" },
    );
    // Merged by the containers' merge key `name`: the ports survive.
    expect(smp.body).toMatchObject({
      spec: {
        template: {
          spec: { containers: [{ name: "main", image: "nginx:1.27", ports: [{ containerPort: 80 }] }] },
        },
      },
    });
    expect(JSON.stringify(smp.body)).not.toContain("$setElementOrder");
    const json = await call(url, "PATCH", path, [{ op: "replace", path: "/spec/replicas", value: 4 }], {
      "content-type": "application/json-patch+json",
    });
    expect(json.body).toMatchObject({ spec: { replicas: 4 } });
    // The JSON patch took spec.replicas over: applying another value conflicts, unless forced.
    const conflicting = await call(url, "PATCH", `${path}?fieldManager=kubectl`, deployment("web", 2), {
      "content-type": "application/apply-patch+yaml",
    });
    expect([conflicting.code, conflicting.body.reason]).toEqual([409, "Conflict"]);
    const reapplied = await call(
      url,
      "PATCH",
      `${path}?fieldManager=kubectl&force=true`,
      deployment("web", 2),
      {
        "content-type": "application/apply-patch+yaml",
      },
    );
    expect(reapplied.code).toBe(200);
    const unsupported = await call(url, "PATCH", path, {}, { "content-type": "text/plain" });
    expect(unsupported.code).toBe(415);
  });

  it("reads, puts and merge-patches the scale subresource", async () => {
    const { url } = await start();
    await call(url, "POST", "/apis/apps/v1/namespaces/default/deployments", deployment("web", 2));
    const scale = await call(url, "GET", "/apis/apps/v1/namespaces/default/deployments/web/scale");
    expect(scale.body).toMatchObject({
      kind: "Scale",
      apiVersion: "autoscaling/v1",
      spec: { replicas: 2 },
      status: { selector: "app=web" },
    });
    const patched = await call(
      url,
      "PATCH",
      "/apis/apps/v1/namespaces/default/deployments/web/scale",
      { spec: { replicas: 5 } },
      {
        "content-type": "application/merge-patch+json",
      },
    );
    expect(patched.body).toMatchObject({ kind: "Scale", spec: { replicas: 5 } });
    const put = await call(url, "PUT", "/apis/apps/v1/namespaces/default/deployments/web/scale", {
      ...(patched.body as object),
      spec: { replicas: 1 },
    });
    expect(put.body).toMatchObject({ spec: { replicas: 1 } });
    const stale = await call(url, "PUT", "/apis/apps/v1/namespaces/default/deployments/web/scale", {
      ...(patched.body as object),
      spec: { replicas: 7 },
    });
    expect(stale.code).toBe(409);
    const got = await call(url, "GET", "/apis/apps/v1/namespaces/default/deployments/web");
    expect(got.body).toMatchObject({ spec: { replicas: 1 } });
  });

  it("deletes with DeleteOptions (a bound pod is deleted gracefully: 200 with the object, 202 if orphanDependents is false) and deletes collections", async () => {
    const { url } = await start();
    const pod = (name: string, nodeName?: string) => ({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name, labels: { app: "x" } },
      spec: { containers: [{ name: "c", image: "busybox" }], ...(nodeName ? { nodeName } : {}) },
    });
    await call(url, "POST", "/api/v1/namespaces/default/pods", pod("bound", "node-1"));
    await call(url, "POST", "/api/v1/namespaces/default/pods", pod("free"));
    const graceful = await call(url, "DELETE", "/api/v1/namespaces/default/pods/bound", {
      propagationPolicy: "Background",
    });
    // Marked, not gone: still a 200, as kube-apiserver answers unless orphanDependents is false.
    expect(graceful.code).toBe(200);
    expect(graceful.body).toMatchObject({ metadata: { name: "bound", deletionGracePeriodSeconds: 30 } });
    await call(url, "POST", "/api/v1/namespaces/default/pods", pod("cascading", "node-1"));
    const cascading = await call(url, "DELETE", "/api/v1/namespaces/default/pods/cascading", {
      orphanDependents: false,
    });
    expect(cascading.code).toBe(202);
    expect(cascading.body).toMatchObject({ metadata: { deletionTimestamp: expect.any(String) } });
    const wrongUid = await call(url, "DELETE", "/api/v1/namespaces/default/pods/free", {
      preconditions: { uid: "nope" },
    });
    expect(wrongUid.code).toBe(409);
    const all = await call(url, "DELETE", "/api/v1/namespaces/default/pods?labelSelector=app%3Dx", {
      gracePeriodSeconds: 0,
    });
    expect(all.code).toBe(200);
    expect((all.body.items as unknown[]).length).toBe(3);
    const list = await call(url, "GET", "/api/v1/namespaces/default/pods");
    expect(list.body.items).toEqual([]);
  });

  it("answers malformed requests with a 4xx Status and leaves storage unchanged", async () => {
    const { url } = await start({ maxRequestBytes: 2048 });
    const cases = [
      await call(url, "POST", "/apis/apps/v1/namespaces/default/deployments", "{not json"),
      await call(url, "POST", "/apis/apps/v1/namespaces/default/deployments", "[1,2]"),
      await call(
        url,
        "POST",
        "/apis/apps/v1/namespaces/default/deployments",
        JSON.stringify({ metadata: { name: "x", labels: "nope" } }),
      ),
      await call(url, "POST", "/apis/apps/v1/namespaces/default/deployments", deployment("x"), {
        "content-type": "application/xml",
      }),
      await call(url, "POST", "/apis/apps/v1/namespaces/default/deployments", "x".repeat(5000)),
      await call(url, "GET", "/apis/apps/v1/namespaces/default/deployments?limit=abc"),
      await call(url, "GET", "/apis/apps/v1/namespaces/default/deployments?labelSelector=a%20in%20(b"),
      await call(url, "GET", "/api/v1/namespaces/%E0%A4%A/pods"),
      await call(url, "POST", "/apis/apps/v1/namespaces/default/deployments/web"),
      await call(url, "DELETE", "/apis/apps/v1/namespaces/default/deployments/web", "{bad"),
    ];
    expect(cases.map((c) => [c.code, c.body.kind, c.body.reason])).toEqual([
      [400, "Status", "BadRequest"],
      [400, "Status", "BadRequest"],
      [400, "Status", "BadRequest"],
      [415, "Status", "UnsupportedMediaType"],
      [413, "Status", "RequestEntityTooLarge"],
      [400, "Status", "BadRequest"],
      [400, "Status", "BadRequest"],
      [400, "Status", "BadRequest"],
      [405, "Status", "MethodNotAllowed"],
      [400, "Status", "BadRequest"],
    ]);
    const list = await call(url, "GET", "/apis/apps/v1/deployments");
    expect(list.body.items).toEqual([]);
  });

  it("answers 404 NotFound to a path it does not serve, whatever the method", async () => {
    const { url } = await start();
    const review = await call(url, "POST", "/apis/example.com/v1/widgetreviews", {});
    expect([review.code, review.body.reason]).toEqual([404, "NotFound"]);
    const put = await call(url, "PUT", "/version", {});
    expect([put.code, put.body.reason]).toEqual([405, "MethodNotAllowed"]);
  });

  it("survives arbitrary requests: every answer is a Status or a success, and storage stays consistent", async () => {
    const { url } = await start({ maxRequestBytes: 4096 });
    const paths = [
      "/api/v1/namespaces/default/pods",
      "/api/v1/namespaces/default/pods/p",
      "/api/v1/namespaces/default/pods/p/status",
      "/apis/apps/v1/namespaces/default/deployments/d/scale",
      "/api/v1/namespaces/x",
      "/api/v1/nodes/n",
      "/apis/apps/v1/deployments",
      "/api/v1/namespaces/default/pods?watch=true&resourceVersion=abc",
      "/api/v1/namespaces/default/pods?watch=1&labelSelector=%3D%3D",
      "/api/v1/namespaces/default/pods?limit=-1&continue=bogus",
    ];
    const contentTypes = [
      "application/json",
      "application/merge-patch+json",
      "application/json-patch+json",
      "application/strategic-merge-patch+json",
      "application/apply-patch+yaml",
      "application/vnd.kubernetes.protobuf",
    ];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE"),
        fc.constantFrom(...paths),
        fc.constantFrom(...contentTypes),
        fc.oneof(
          fc.jsonValue().map((v) => JSON.stringify(v)),
          fc.string(),
          fc.constant(
            JSON.stringify({ metadata: { name: "p" }, spec: { containers: [{ name: "c", image: "i" }] } }),
          ),
        ),
        async (method, path, contentType, body) => {
          const answer = await call(url, method, path, method === "GET" ? undefined : body, {
            "content-type": contentType,
          });
          expect(answer.code).toBeLessThan(500);
          if (answer.code >= 400)
            expect(answer.body).toMatchObject({ kind: "Status", status: "Failure", code: answer.code });
        },
      ),
      { numRuns: 150 },
    );
    expect((await call(url, "GET", "/healthz")).code).toBe(200);
    const list = await call(url, "GET", "/api/v1/pods");
    expect(list.code).toBe(200);
    for (const item of list.body.items as { metadata: { resourceVersion: string; uid: string } }[]) {
      expect(item.metadata.uid).toBeTruthy();
    }
  });

  it("with a token, answers anonymous requests as RBAC allows system:anonymous and a wrong token with 401 everywhere", async () => {
    const { url, server } = await start({ token: "t0ken" });
    const denied = await call(url, "GET", "/api/v1/namespaces");
    expect([denied.code, denied.body.reason, denied.body.message]).toEqual([
      403,
      "Forbidden",
      'namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" in API group "" at the cluster scope',
    ]);
    for (const path of ["/api/v1/namespaces", "/version", "/healthz"]) {
      const wrong = await call(url, "GET", path, undefined, { authorization: "Bearer wrong" });
      expect([path, wrong.code, wrong.body.reason]).toEqual([path, 401, "Unauthorized"]);
    }
    expect(
      (await call(url, "GET", "/api/v1/namespaces", undefined, { authorization: "Bearer t0ken" })).code,
    ).toBe(200);
    // system:public-info-viewer is bound to system:unauthenticated; discovery is not.
    expect((await call(url, "GET", "/healthz")).code).toBe(200);
    expect((await call(url, "GET", "/version")).code).toBe(200);
    const discovery = await call(url, "GET", "/api");
    expect([discovery.code, discovery.body.message]).toEqual([
      403,
      'forbidden: User "system:anonymous" cannot get path "/api"',
    ]);
    expect(server.kubeconfig()).toContain('token: "t0ken"');
  });
});

describe("listen", () => {
  it("closes the server and its open watches when its signal aborts", async () => {
    const api = new ApiServer();
    const controller = new AbortController();
    const server = await listen(api, { signal: controller.signal });
    const watch = watchLines(server.url, "/api/v1/namespaces/default/pods?watch=true");
    await watch.opened;
    controller.abort();
    await server.close();
    await until(() => watch.ended);
    expect(server.server.listening).toBe(false);
    await api.close();
  });
});

describe("watch over HTTP", () => {
  it("opens at once with headers flushed, then streams events as newline-delimited JSON", async () => {
    const { url } = await start();
    const list = await call(url, "GET", "/apis/apps/v1/namespaces/default/deployments");
    const rv = (list.body.metadata as { resourceVersion: string }).resourceVersion;
    const watch = watchLines(
      url,
      `/apis/apps/v1/namespaces/default/deployments?watch=true&resourceVersion=${rv}`,
    );
    await watch.opened;
    expect(watch.statusCode).toBe(200);
    await call(url, "POST", "/apis/apps/v1/namespaces/default/deployments", deployment("web"));
    await call(
      url,
      "PATCH",
      "/apis/apps/v1/namespaces/default/deployments/web",
      { spec: { replicas: 2 } },
      {
        "content-type": "application/merge-patch+json",
      },
    );
    await call(url, "DELETE", "/apis/apps/v1/namespaces/default/deployments/web");
    await until(() => watch.lines.length === 3);
    expect(watch.lines.map((l) => [l.type, (l.object as { kind: string }).kind])).toEqual([
      ["ADDED", "Deployment"],
      ["MODIFIED", "Deployment"],
      ["DELETED", "Deployment"],
    ]);
    watch.close();
  });

  it("sends single-row Tables with column definitions only in the first event", async () => {
    const { url } = await start();
    await call(url, "POST", "/apis/apps/v1/namespaces/default/deployments", deployment("a"));
    const watch = watchLines(url, "/apis/apps/v1/namespaces/default/deployments?watch=true", {
      accept: tableAccept,
    });
    await watch.opened;
    await call(url, "POST", "/apis/apps/v1/namespaces/default/deployments", deployment("b"));
    await until(() => watch.lines.length === 2);
    const [first, second] = watch.lines as {
      type: string;
      object: { kind: string; columnDefinitions: unknown[]; rows: { cells: unknown[] }[] };
    }[];
    expect(first!.type).toBe("ADDED");
    expect(first!.object.kind).toBe("Table");
    expect(first!.object.columnDefinitions.length).toBe(8);
    expect(first!.object.rows.map((r) => r.cells[0])).toEqual(["a"]);
    expect(second!.object.columnDefinitions).toEqual([]);
    expect(second!.object.rows.map((r) => r.cells[0])).toEqual(["b"]);
    watch.close();
  });

  it("answers a resourceVersion that has left the history with one 410 Expired ERROR event, then closes", async () => {
    const { url } = await start({ historySize: 2 });
    for (const name of ["a", "b", "c", "d"]) {
      await call(url, "POST", "/apis/apps/v1/namespaces/default/deployments", deployment(name));
    }
    const watch = watchLines(
      url,
      "/apis/apps/v1/namespaces/default/deployments?watch=true&resourceVersion=1",
    );
    await watch.opened;
    await until(() => watch.ended);
    expect(watch.statusCode).toBe(200);
    expect(watch.lines).toHaveLength(1);
    expect(watch.lines[0]).toMatchObject({
      type: "ERROR",
      object: { kind: "Status", code: 410, reason: "Expired" },
    });
  });

  it("closes a watch whose client stops reading, with an ERROR saying why, while other watches keep up", async () => {
    const { server, url } = await start({ watchBufferSize: 20 });
    // A raw socket that sends the request and then reads nothing, so the server's writes back up
    // once the kernel's socket buffers (up to 36 MiB here) are full: 50 MB of events overflow them.
    const stalled = net.connect(server.port, "127.0.0.1");
    await new Promise<void>((resolve) => stalled.once("connect", () => resolve()));
    stalled.write("GET /api/v1/namespaces/default/configmaps?watch=true HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    stalled.pause();
    const healthy = watchLines(url, "/api/v1/namespaces/default/configmaps?watch=true");
    await healthy.opened;
    const data = { blob: "y".repeat(200_000) };
    const count = 250;
    for (let i = 0; i < count; i++) {
      const created = await call(url, "POST", "/api/v1/namespaces/default/configmaps", {
        metadata: { name: `c${i}` },
        data,
      });
      expect(created.code).toBe(201);
    }
    await until(() => healthy.lines.length === count);
    expect(healthy.lines.every((l) => l.type === "ADDED")).toBe(true);
    let received = "";
    stalled.setEncoding("latin1");
    stalled.on("data", (chunk: string) => {
      received += chunk;
    });
    stalled.resume();
    // The server ended the response: the last chunk of a chunked body.
    await until(() => received.endsWith("\r\n0\r\n\r\n"));
    expect(received).toContain("fell more than 20 events behind and was closed");
    expect(received.split('"type":"ADDED"').length - 1).toBeLessThan(count);
    stalled.destroy();
    healthy.close();
  });

  it("sends BOOKMARK events to a watch that allows them", async () => {
    const { api, url } = await start();
    const watch = watchLines(
      url,
      "/api/v1/namespaces/default/pods?watch=true&resourceVersion=1&allowWatchBookmarks=true",
    );
    await watch.opened;
    await (api.clock as FakeClock).advance(60_000);
    await until(() => watch.lines.length === 1);
    expect(watch.lines[0]).toMatchObject({
      type: "BOOKMARK",
      object: {
        kind: "Pod",
        apiVersion: "v1",
        metadata: { resourceVersion: expect.stringMatching(/^[0-9]+$/) },
      },
    });
    watch.close();
  });

  it("closes the stream after timeoutSeconds", async () => {
    const { api, url } = await start();
    const watch = watchLines(url, "/api/v1/namespaces/default/pods?watch=true&timeoutSeconds=5");
    await watch.opened;
    expect(watch.ended).toBe(false);
    await (api.clock as FakeClock).advance(5000);
    await until(() => watch.ended);
  });
});
