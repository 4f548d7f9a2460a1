import { type ConfigMap, configMaps, defineResource, type KubeObject, newBadRequest } from "@reconcile/api";
import { FakeClock } from "@reconcile/clock";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";
import type { ListeningApiServer } from "../http/server.js";
import { defineKind } from "../kinds/definition.js";
import type { DefinitionsChange } from "./definitions.js";

// A kind registered on a running server is served everywhere at once, as a
// CRD's is once it is Established: discovery, OpenAPI, REST, tables, the
// garbage collector. Removing it stops serving it; its objects stay stored.

interface Widget extends KubeObject {
  spec?: { size?: number };
}

const widgets = defineResource<Widget>({
  group: "example.com",
  version: "v1",
  kind: "Widget",
  plural: "widgets",
  namespaced: true,
  shortNames: ["wd"],
  categories: ["all"],
});

const widgetDefinition = defineKind({
  descriptor: widgets,
  schema: { fields: { spec: { fields: { size: "integer" } } } },
  printer: {
    columns: [
      { name: "Name", type: "string", format: "name", description: "", priority: 0 },
      { name: "Size", type: "integer", format: "", description: "", priority: 0 },
    ],
    cells: (object) => [object.metadata?.name ?? "", (object as Widget).spec?.size ?? 0],
  },
});

const widgetPath = "/apis/example.com/v1/namespaces/default/widgets";
const aggregated = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
const table = "application/json;as=Table;v=v1;g=meta.k8s.io";

const running: ApiServer[] = [];
afterEach(async () => {
  for (const api of running.splice(0)) await api.close();
});

async function start(): Promise<{ api: ApiServer; http: ListeningApiServer }> {
  const api = new ApiServer({ clock: new FakeClock(Date.parse("2026-01-01T00:00:00Z")) });
  running.push(api);
  return { api, http: await api.listen() };
}

// JSON answers of many shapes.
// biome-ignore lint/suspicious/noExplicitAny: read loosely, asserted exactly
type Json = any;

async function call(
  http: ListeningApiServer,
  method: string,
  path: string,
  body?: unknown,
  accept?: string,
): Promise<{ code: number; body: Json }> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers["content-type"] = "application/json";
  if (accept !== undefined) headers.accept = accept;
  const init: RequestInit = { method, headers };
  if (body !== undefined) init.body = JSON.stringify(body);
  const response = await fetch(http.url + path, init);
  const text = await response.text();
  return { code: response.status, body: text ? JSON.parse(text) : {} };
}

describe("a definition registered on a running server", () => {
  it("is served by discovery, OpenAPI, list, watch and tables from the next request on, and no longer once removed", async () => {
    const { api, http } = await start();
    const changes: DefinitionsChange["type"][] = [];
    api.definitions.onChange((change) => changes.push(change.type));
    expect((await call(http, "GET", widgetPath)).code).toBe(404);
    const indexBefore = (await call(http, "GET", "/openapi/v3")).body.paths;
    expect(Object.keys(indexBefore)).not.toContain("apis/example.com/v1");

    api.definitions.add(widgetDefinition);

    const groups = (await call(http, "GET", "/apis")).body.groups.map((g: { name: string }) => g.name);
    // kube-aggregator's order: its own group, then by group priority; a custom group (1000) after them.
    expect(groups).toEqual([
      "apiregistration.k8s.io",
      "apps",
      "events.k8s.io",
      "authentication.k8s.io",
      "authorization.k8s.io",
      "autoscaling",
      "batch",
      "certificates.k8s.io",
      "networking.k8s.io",
      "policy",
      "rbac.authorization.k8s.io",
      "storage.k8s.io",
      "admissionregistration.k8s.io",
      "apiextensions.k8s.io",
      "scheduling.k8s.io",
      "coordination.k8s.io",
      "node.k8s.io",
      "discovery.k8s.io",
      "flowcontrol.apiserver.k8s.io",
      "example.com",
    ]);
    expect((await call(http, "GET", "/apis/example.com/v1")).body.resources).toEqual([
      {
        name: "widgets",
        singularName: "widget",
        namespaced: true,
        kind: "Widget",
        verbs: ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
        shortNames: ["wd"],
        categories: ["all"],
        storageVersionHash: expect.any(String),
      },
    ]);
    const discovery = (await call(http, "GET", "/apis", undefined, aggregated)).body.items;
    expect(discovery.map((g: { metadata: { name: string } }) => g.metadata.name)).toContain("example.com");
    const index = (await call(http, "GET", "/openapi/v3")).body.paths;
    expect(Object.keys(index)).toEqual([...Object.keys(indexBefore), "apis/example.com/v1"]);
    const document = await call(http, "GET", `/openapi/v3/apis/example.com/v1`);
    expect(document.code).toBe(200);

    const watch = await fetch(`${http.url}${widgetPath}?watch=1`);
    const reader = watch.body!.getReader();
    expect((await call(http, "POST", widgetPath, { metadata: { name: "w" }, spec: { size: 3 } })).code).toBe(
      201,
    );
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(JSON.parse(first.split("\n")[0]!)).toMatchObject({
      type: "ADDED",
      object: { apiVersion: "example.com/v1", kind: "Widget", metadata: { name: "w" }, spec: { size: 3 } },
    });
    await reader.cancel();
    expect(
      (await call(http, "POST", widgetPath, { metadata: { name: "x" }, spec: { size: "big" } })).body,
    ).toMatchObject({
      code: 400,
      message: expect.stringMatching(/spec\.size: expected integer/),
    });
    const list = await call(http, "GET", widgetPath);
    expect(list.body).toMatchObject({ kind: "WidgetList", apiVersion: "example.com/v1" });
    expect(list.body.items.map((w: Widget) => w.metadata?.name)).toEqual(["w"]);
    const rows = await call(http, "GET", widgetPath, undefined, table);
    expect(rows.body.columnDefinitions.map((c: { name: string }) => c.name)).toEqual(["Name", "Size"]);
    expect(rows.body.rows.map((r: { cells: unknown[] }) => r.cells)).toEqual([["w", 3]]);
    expect((await api.client().resource(widgets, "default").get("w")).spec).toEqual({ size: 3 });

    expect(api.definitions.remove(widgets)).toBe(true);
    expect((await call(http, "GET", widgetPath)).code).toBe(404);
    expect((await call(http, "GET", "/apis/example.com/v1")).code).toBe(404);
    expect(Object.keys((await call(http, "GET", "/openapi/v3")).body.paths)).toEqual(
      Object.keys(indexBefore),
    );
    expect(changes).toEqual(["added", "removed"]);
  });

  it("lets the garbage collector resolve owners of the new kind", async () => {
    const { api } = await start();
    const client = api.client();
    api.definitions.add(widgetDefinition);
    const owner = await client
      .resource(widgets, "default")
      .create({ metadata: { name: "w" }, spec: { size: 1 } });
    const ownerReferences = [
      { apiVersion: "example.com/v1", kind: "Widget", name: "w", uid: owner.metadata!.uid! },
    ];
    const dependent: ConfigMap = { metadata: { name: "owned", ownerReferences } };
    await client.resource(configMaps, "default").create(dependent);
    const names = async () =>
      (await client.resource(configMaps, "default").list()).items.map((c) => c.metadata?.name);
    await api.flush();
    expect(await names()).toEqual(["owned"]);
    await client.resource(widgets, "default").delete("w", { propagationPolicy: "Background" });
    await api.flush();
    expect(await names()).toEqual([]);
  });

  it("serves a subresource handler of the new kind: a POST runs it, other verbs are 405, other names 404", async () => {
    const { api, http } = await start();
    api.definitions.add(
      defineKind({
        ...widgetDefinition,
        subresources: {
          resize: {
            async create(store, namespace, name, body, options) {
              const size = (body as { size?: unknown }).size;
              if (typeof size !== "number") throw newBadRequest("size must be a number");
              await store.update(namespace, name, (w) => ({ ...w, spec: { size } }), options);
            },
          },
        },
      }),
    );
    expect((await call(http, "POST", widgetPath, { metadata: { name: "w" }, spec: { size: 1 } })).code).toBe(
      201,
    );
    expect((await call(http, "POST", `${widgetPath}/w/resize?dryRun=All`, { size: 5 })).code).toBe(201);
    expect((await call(http, "GET", `${widgetPath}/w`)).body.spec).toEqual({ size: 1 });
    expect((await call(http, "POST", `${widgetPath}/w/resize`, { size: 7 })).body).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Success",
      code: 201,
    });
    expect((await call(http, "GET", `${widgetPath}/w`)).body.spec).toEqual({ size: 7 });
    expect((await call(http, "POST", `${widgetPath}/w/resize`, { size: "x" })).body).toMatchObject({
      code: 400,
      message: "size must be a number",
    });
    expect((await call(http, "POST", `${widgetPath}/nope/resize`, { size: 2 })).code).toBe(404);
    expect((await call(http, "GET", `${widgetPath}/w/resize`)).code).toBe(405);
    expect((await call(http, "POST", `${widgetPath}/w/shrink`, { size: 2 })).code).toBe(404);
  });

  it("refuses a second plural for a served kind, and replaces a definition of the same plural", () => {
    const api = new ApiServer();
    running.push(api);
    expect(() => api.definitions.add(defineKind({ descriptor: { ...configMaps, plural: "cms" } }))).toThrow(
      "ResourceDefinitions.add: v1 ConfigMap is already served as configmaps",
    );
    api.definitions.add(widgetDefinition);
    const renamed = defineKind({ descriptor: defineResource({ ...widgets, kind: "Gadget" }) });
    api.definitions.add(renamed);
    expect(api.definitions.get(widgets)).toBe(renamed);
    expect(api.definitions.forKind("example.com/v1", "Widget")).toBeUndefined();
    expect(api.registry.resources.filter((r) => r.group === "example.com").map((r) => r.kind)).toEqual([
      "Gadget",
    ]);
  });
});
