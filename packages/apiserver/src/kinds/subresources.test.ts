import {
  type ConfigMap,
  configMaps,
  type Deployment,
  defineResource,
  deployments,
  type KubeObject,
  type Pod,
  pods,
  type Scale,
} from "@reconcile/api";
import { type Client, HttpClient, loadKubeConfig } from "@reconcile/client";
import { FakeClock } from "@reconcile/clock";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";
import type { ListeningApiServer } from "../http/server.js";
import { defineKind } from "./definition.js";

// Every subresource is an entry of its kind's definition: status, scale,
// binding, eviction and finalize, and any a kind added at run time brings.
// Routing, discovery and both clients serve exactly what the entries implement.

interface Widget extends KubeObject {
  spec?: { size?: number };
}

const widgets = defineResource<Widget>({
  group: "example.com",
  version: "v1",
  kind: "Widget",
  plural: "widgets",
  namespaced: true,
});

/** A kind with two subresources of its own: `greeting` (read-only, another kind) and `reset` (POST). */
const widgetDefinition = defineKind({
  descriptor: widgets,
  schema: { fields: { spec: { fields: { size: "integer" } } } },
  subresources: {
    greeting: {
      kind: { group: "example.com", version: "v1", kind: "Greeting" },
      async get(store, namespace, name) {
        const widget = (await store.get(namespace, name)) as Widget;
        return {
          apiVersion: "example.com/v1",
          kind: "Greeting",
          metadata: { name },
          message: `hello from a widget of size ${widget.spec?.size ?? 0}`,
        };
      },
    },
    reset: {
      async create(store, namespace, name, _body, options) {
        await store.updateAs(
          "reset",
          namespace,
          name,
          undefined,
          (w) => ({ ...w, spec: { size: 0 } }),
          options,
        );
      },
    },
  },
});

const running: ApiServer[] = [];
afterEach(async () => {
  for (const api of running.splice(0)) await api.close();
});

async function start(): Promise<{ api: ApiServer; http: ListeningApiServer }> {
  const api = new ApiServer({ clock: new FakeClock(Date.parse("2026-01-01T00:00:00Z")) });
  running.push(api);
  return { api, http: await api.listen() };
}

// biome-ignore lint/suspicious/noExplicitAny: JSON answers of many shapes, asserted exactly
type Json = any;

async function call(
  http: ListeningApiServer,
  method: string,
  path: string,
  body?: unknown,
  contentType = "application/json",
): Promise<{ code: number; body: Json }> {
  const init: RequestInit = { method };
  if (body !== undefined) {
    init.headers = { "content-type": contentType };
    init.body = JSON.stringify(body);
  }
  const response = await fetch(http.url + path, init);
  const text = await response.text();
  return { code: response.status, body: text ? JSON.parse(text) : {} };
}

async function clientsOf(api: ApiServer, http: ListeningApiServer): Promise<[string, Client][]> {
  const httpClient = new HttpClient({ kubeConfig: await loadKubeConfig({ yaml: http.kubeconfig() }) });
  return [
    ["in-process", api.client()],
    ["HTTP", httpClient],
  ];
}

const widgetPath = "/apis/example.com/v1/namespaces/default/widgets";

describe("a subresource of a kind added at run time", () => {
  it("is routed, listed in discovery and served to both clients by the verbs its handler implements", async () => {
    const { api, http } = await start();
    api.definitions.add(widgetDefinition);
    expect((await call(http, "POST", widgetPath, { metadata: { name: "w" }, spec: { size: 3 } })).code).toBe(
      201,
    );

    expect((await call(http, "GET", "/apis/example.com/v1")).body.resources.slice(1)).toEqual([
      { name: "widgets/greeting", singularName: "", namespaced: true, kind: "Greeting", verbs: ["get"] },
      { name: "widgets/reset", singularName: "", namespaced: true, kind: "Widget", verbs: ["create"] },
    ]);
    const aggregated = await fetch(`${http.url}/apis`, {
      headers: { accept: "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList" },
    });
    const group = ((await aggregated.json()) as Json).items.find(
      (g: Json) => g.metadata.name === "example.com",
    );
    expect(group.versions[0].resources[0].subresources).toEqual([
      {
        subresource: "greeting",
        responseKind: { group: "example.com", version: "v1", kind: "Greeting" },
        verbs: ["get"],
      },
      {
        subresource: "reset",
        responseKind: { group: "example.com", version: "v1", kind: "Widget" },
        verbs: ["create"],
      },
    ]);

    const greeting = {
      apiVersion: "example.com/v1",
      kind: "Greeting",
      metadata: { name: "w" },
      message: "hello from a widget of size 3",
    };
    expect(await call(http, "GET", `${widgetPath}/w/greeting`)).toEqual({ code: 200, body: greeting });
    for (const [, client] of await clientsOf(api, http))
      expect(await client.resource(widgets, "default").get("w", { subresource: "greeting" })).toEqual(
        greeting,
      );

    expect(await call(http, "POST", `${widgetPath}/w/reset`, {})).toEqual({
      code: 201,
      body: { kind: "Status", apiVersion: "v1", metadata: {}, status: "Success", code: 201 },
    });
    expect((await api.client().resource(widgets, "default").get("w")).spec).toEqual({ size: 0 });

    // A verb the handler lacks is a 405; a subresource the kind lacks, a 404.
    expect(await call(http, "PUT", `${widgetPath}/w/greeting`, greeting)).toEqual({
      code: 405,
      body: expect.objectContaining({
        reason: "MethodNotAllowed",
        message: `the server does not allow this method on the requested resource (PUT ${widgetPath}/w/greeting)`,
      }),
    });
    expect((await call(http, "GET", `${widgetPath}/w/reset`)).code).toBe(405);
    expect((await call(http, "GET", `${widgetPath}/w/status`)).code).toBe(404);
    await expect(
      api
        .client()
        .resource(widgets, "default")
        .update({ metadata: { name: "w" } }, { subresource: "greeting" }),
    ).rejects.toMatchObject({
      code: 405,
      message: 'update is not supported on resources of kind "widgets.example.com"',
    });
    await expect(
      api.client().resource(widgets, "default").get("w", { subresource: "status" }),
    ).rejects.toMatchObject({ code: 404, message: 'widgets.example.com "w/status" not found' });

    // Removed with its kind.
    api.definitions.remove(widgets);
    expect((await call(http, "GET", `${widgetPath}/w/greeting`)).code).toBe(404);
  });
});

describe.each(["in-process", "HTTP"])("status and scale through the %s client", (which) => {
  async function setUp() {
    const { api, http } = await start();
    const client = Object.fromEntries(await clientsOf(api, http))[which]!;
    const deploymentClient = client.resource(deployments, "default");
    const created = await deploymentClient.create({
      metadata: { name: "web" },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: "web" } },
        template: {
          metadata: { labels: { app: "web" } },
          spec: { containers: [{ name: "app", image: "nginx" }] },
        },
      },
    });
    return { client, deploymentClient, created };
  }

  it("reads and writes status: a status write keeps the spec, a spec write keeps the status", async () => {
    const { deploymentClient, created } = await setUp();
    const updated = await deploymentClient.update(
      { ...created, spec: { ...created.spec!, replicas: 9 }, status: { observedGeneration: 1, replicas: 2 } },
      { subresource: "status" },
    );
    expect(updated.spec?.replicas).toBe(2);
    expect(updated.status).toEqual({ observedGeneration: 1, replicas: 2 });
    expect(updated.metadata?.generation).toBe(1);
    const patched = await deploymentClient.patch(
      "web",
      { status: { readyReplicas: 2 } },
      { type: "merge", subresource: "status" },
    );
    expect(patched.status).toEqual({ observedGeneration: 1, replicas: 2, readyReplicas: 2 });
    expect(await deploymentClient.get("web", { subresource: "status" })).toEqual(patched);
    const specWrite = await deploymentClient.update({ ...patched, status: {} });
    expect(specWrite.status).toEqual(patched.status);
  });

  it("a pod's status write keeps the stored spec, and its ownership takes only the status", async () => {
    const podClient = new ApiServer().client().resource(pods, "default");
    const created = await podClient.create(
      { metadata: { name: "p" }, spec: { containers: [{ name: "c", image: "nginx:1" }] } },
      { fieldManager: "creator" },
    );
    const creatorFields = created.metadata?.managedFields?.[0]?.fieldsV1;
    const written = await podClient.update(
      {
        ...created,
        spec: { ...created.spec!, containers: [{ ...created.spec!.containers[0]!, image: "nginx:2" }] },
        status: { ...created.status, phase: "Running" },
      },
      { subresource: "status", fieldManager: "kubelet" },
    );
    expect(written.spec).toEqual(created.spec);
    expect(written.status?.phase).toBe("Running");
    expect(written.metadata?.managedFields?.map((entry) => [entry.manager, entry.fieldsV1])).toEqual([
      ["creator", creatorFields],
      ["kubelet", { "f:status": { "f:phase": {} } }],
    ]);
    const patched = await podClient.patch(
      "p",
      { spec: { activeDeadlineSeconds: 5 }, status: { message: "up" } },
      { type: "merge", subresource: "status", fieldManager: "kubelet" },
    );
    expect(patched.spec).toEqual(created.spec);
    expect(patched.status).toEqual({ ...written.status, message: "up" });
  });

  it("reads and writes scale: an autoscaling/v1 Scale whose writes set the replicas", async () => {
    const { deploymentClient, created } = await setUp();
    const scale = (await deploymentClient.get("web", { subresource: "scale" })) as unknown as Scale;
    expect(scale).toEqual({
      apiVersion: "autoscaling/v1",
      kind: "Scale",
      metadata: {
        name: "web",
        namespace: "default",
        uid: created.metadata?.uid,
        resourceVersion: created.metadata?.resourceVersion,
        creationTimestamp: "2026-01-01T00:00:00Z",
      },
      spec: { replicas: 2 },
      status: { replicas: 0, selector: "app=web" },
    });
    const put = (await deploymentClient.update({ ...scale, spec: { replicas: 4 } } as unknown as Deployment, {
      subresource: "scale",
    })) as unknown as Scale;
    expect(put.spec).toEqual({ replicas: 4 });
    const patched = (await deploymentClient.patch(
      "web",
      { spec: { replicas: 5 } },
      { type: "merge", subresource: "scale" },
    )) as unknown as Scale;
    expect(patched.spec).toEqual({ replicas: 5 });
    const deployment = await deploymentClient.get("web");
    expect(deployment.spec?.replicas).toBe(5);
    expect(deployment.metadata?.generation).toBe(3);
    await expect(
      deploymentClient.patch(
        "web",
        { spec: { replicas: 1 } },
        { type: "apply", subresource: "scale", fieldManager: "test" },
      ),
    ).rejects.toMatchObject({
      code: 400,
      message: "apply patches are not supported on the scale subresource",
    });
  });

  it("answers 404 for a subresource a kind lacks and 405 for a verb its handler lacks", async () => {
    const { client } = await setUp();
    const configMapClient = client.resource<ConfigMap>(configMaps, "default");
    await configMapClient.create({ metadata: { name: "c" } });
    await expect(configMapClient.get("c", { subresource: "status" })).rejects.toMatchObject({ code: 404 });
    const podClient = client.resource<Pod>(pods, "default");
    await podClient.create({ metadata: { name: "p" }, spec: { containers: [{ name: "a", image: "a" }] } });
    await expect(podClient.get("p", { subresource: "binding" })).rejects.toMatchObject({ code: 405 });
    // A subresource never creates its object, not even by an apply.
    await expect(
      podClient.patch(
        "absent",
        { apiVersion: "v1", kind: "Pod", metadata: { name: "absent" }, status: { phase: "Running" } },
        { type: "apply", subresource: "status", fieldManager: "test" },
      ),
    ).rejects.toMatchObject({ code: 404 });
  });
});

describe("subresource verbs over HTTP", () => {
  it("answers 405 for DELETE of a status and POST to a status, 404 for a subresource a kind lacks", async () => {
    const { http } = await start();
    const pod = "/api/v1/namespaces/default/pods";
    expect(
      (
        await call(http, "POST", pod, {
          metadata: { name: "p" },
          spec: { containers: [{ name: "a", image: "a" }] },
        })
      ).code,
    ).toBe(201);
    expect((await call(http, "DELETE", `${pod}/p/status`)).code).toBe(405);
    expect((await call(http, "POST", `${pod}/p/status`, {})).code).toBe(405);
    expect((await call(http, "GET", `${pod}/p/binding`)).code).toBe(405);
    expect((await call(http, "GET", `${pod}/p/scale`)).code).toBe(404);
    expect((await call(http, "GET", "/api/v1/namespaces/default/configmaps/c/status")).code).toBe(404);
    expect(
      (await call(http, "PATCH", "/api/v1/namespaces/default/finalize", {}, "application/merge-patch+json"))
        .code,
    ).toBe(405);
    expect((await call(http, "GET", "/api/v1/namespaces/default/finalize")).code).toBe(405);
    expect(
      (await call(http, "PATCH", "/api/v1/namespaces/default/status", {}, "application/merge-patch+json"))
        .code,
    ).toBe(200);
  });
});
