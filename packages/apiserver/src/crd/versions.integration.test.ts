import { afterEach, describe, expect, it } from "vitest";
import type { ApiServer } from "../api-server.js";
import { closeKubectlClusters, kubectlCluster } from "../testing/index.js";
import { call, closeCrdServers, crdCondition, type Json, startCrdServer as start } from "./crd.test-util.js";

// A CRD with several served versions and conversion None: one set of objects,
// stored at the storage version, read and written at any served version with
// only `apiVersion` rewritten; each version validates and prunes by its own
// schema; a deprecated version warns with every answer.

afterEach(async () => {
  await closeCrdServers();
  await closeKubectlClusters();
});

const schema = (fields: Record<string, unknown>) => ({
  openAPIV3Schema: {
    type: "object",
    properties: { spec: { type: "object", properties: fields } },
  },
});

const widgetsCRD = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "widgets.example.com" },
  spec: {
    group: "example.com",
    scope: "Namespaced",
    names: { plural: "widgets", kind: "Widget" },
    versions: [
      {
        name: "v1beta1",
        served: true,
        storage: false,
        deprecated: true,
        schema: schema({ size: { type: "integer" } }),
      },
      {
        name: "v1",
        served: true,
        storage: true,
        schema: schema({ size: { type: "integer" }, color: { type: "string" } }),
      },
      { name: "v1alpha1", served: false, storage: false, schema: schema({ size: { type: "integer" } }) },
    ],
  },
};

const established = (api: ApiServer, name: string) => crdCondition(api, name, "Established");

const beta = "/apis/example.com/v1beta1/namespaces/default/widgets";
const ga = "/apis/example.com/v1/namespaces/default/widgets";
const deprecation = '299 - "example.com/v1beta1 Widget is deprecated; use example.com/v1 Widget"';

describe("a CRD with several served versions", () => {
  it("serves one set of objects at every served version, stored at the storage version", async () => {
    const { api, http } = await start();
    expect(
      (await call(http, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", widgetsCRD)).code,
    ).toBe(201);
    const crd = await established(api, "widgets.example.com");
    expect(crd.status?.storedVersions).toEqual(["v1"]);

    // Discovery: both served versions, the preferred (GA) first; the unserved one nowhere.
    expect((await call(http, "GET", "/apis/example.com")).body).toEqual({
      kind: "APIGroup",
      apiVersion: "v1",
      name: "example.com",
      versions: [
        { groupVersion: "example.com/v1", version: "v1" },
        { groupVersion: "example.com/v1beta1", version: "v1beta1" },
      ],
      preferredVersion: { groupVersion: "example.com/v1", version: "v1" },
    });
    expect((await call(http, "GET", "/apis/example.com/v1alpha1/namespaces/default/widgets")).code).toBe(404);

    const watch = await fetch(`${http.url}${beta}?watch=1`);
    const reader = watch.body!.getReader();

    // Written at v1beta1: answered at v1beta1 with the deprecation warning, stored at v1.
    const created = await call(http, "POST", beta, { metadata: { name: "w" }, spec: { size: 3 } });
    expect(created).toMatchObject({
      code: 201,
      warning: deprecation,
      body: { apiVersion: "example.com/v1beta1", kind: "Widget", spec: { size: 3 } },
    });
    expect((await api.storage.get("/example.com/widgets/default/w"))?.apiVersion).toBe("example.com/v1");
    const event = JSON.parse(new TextDecoder().decode((await reader.read()).value).split("\n")[0]!);
    expect(event).toMatchObject({
      type: "ADDED",
      object: { apiVersion: "example.com/v1beta1", metadata: { name: "w" } },
    });
    await reader.cancel();

    // Read at v1: the same object, no warning.
    const read = await call(http, "GET", `${ga}/w`);
    expect(read).toMatchObject({
      code: 200,
      warning: null,
      body: { apiVersion: "example.com/v1", spec: { size: 3 } },
    });
    expect(read.body.metadata.uid).toBe(created.body.metadata.uid);

    // Updated at v1 with a field only v1 declares; v1beta1 reads it back (None changes nothing else).
    const updated = await call(http, "PATCH", `${ga}/w`, { spec: { color: "red" } });
    expect(updated.body).toMatchObject({ apiVersion: "example.com/v1", spec: { size: 3, color: "red" } });
    const list = await call(http, "GET", beta);
    expect(list).toMatchObject({ code: 200, warning: deprecation });
    expect(list.body.apiVersion).toBe("example.com/v1beta1");
    expect(list.body.items.map((w: Json) => [w.apiVersion, w.spec])).toEqual([
      ["example.com/v1beta1", { size: 3, color: "red" }],
    ]);

    // Each version prunes by its own schema: v1beta1 does not know `color`.
    const second = await call(http, "POST", `${beta}?fieldValidation=Ignore`, {
      metadata: { name: "x" },
      spec: { size: 1, color: "blue" },
    });
    expect(second.body.spec).toEqual({ size: 1 });
    expect(
      (
        await call(http, "POST", `${beta}?fieldValidation=Strict`, {
          metadata: { name: "y" },
          spec: { color: "blue" },
        })
      ).body,
    ).toMatchObject({
      code: 400,
      message:
        'Widget in version "v1beta1" cannot be handled as a Widget: strict decoding error: unknown field "spec.color"',
    });

    // Deleting at v1beta1 deletes the one object.
    expect((await call(http, "DELETE", `${beta}/w`)).body).toMatchObject({
      apiVersion: "example.com/v1beta1",
    });
    expect((await call(http, "GET", `${ga}/w`)).code).toBe(404);
  });

  it("stops serving a version taken out of service, and keeps a stored version in spec.versions", async () => {
    const { api, http } = await start();
    await call(http, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", widgetsCRD);
    await established(api, "widgets.example.com");
    const path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com";
    const current = (await call(http, "GET", path)).body;
    current.spec.versions[0].served = false;
    expect((await call(http, "PUT", path, current)).code).toBe(200);
    await expect.poll(async () => (await call(http, "GET", beta)).code).toBe(404);
    expect((await call(http, "GET", ga)).code).toBe(200);

    const dropped = (await call(http, "GET", path)).body;
    dropped.spec.versions = dropped.spec.versions.filter((v: Json) => v.name !== "v1");
    dropped.spec.versions[0].storage = true;
    dropped.spec.versions[0].served = true;
    const refused = await call(http, "PUT", path, dropped);
    expect(refused.code).toBe(422);
    expect(refused.body.message).toContain(
      'status.storedVersions[0]: Invalid value: "v1": must appear in spec.versions',
    );
  });
});

describe("kubectl with a CRD of several versions", () => {
  it("gets and applies objects at a named version, printing the deprecation warning", async () => {
    const { kubectl } = await kubectlCluster({ customResourceDefinitions: true });
    await kubectl(["apply", "-f", "-"], JSON.stringify(widgetsCRD));
    await kubectl(["wait", "--for=condition=Established", "crd/widgets.example.com", "--timeout=20s"]);
    const applied = await kubectl(
      ["apply", "-f", "-"],
      JSON.stringify({
        apiVersion: "example.com/v1beta1",
        kind: "Widget",
        metadata: { name: "w", namespace: "default" },
        spec: { size: 2 },
      }),
    );
    expect(applied.stdout).toBe("widget.example.com/w created\n");
    expect(applied.stderr).toContain(
      "Warning: example.com/v1beta1 Widget is deprecated; use example.com/v1 Widget",
    );
    const atBeta = JSON.parse(
      (await kubectl(["get", "widgets.v1beta1.example.com", "w", "-o", "json"])).stdout,
    );
    expect(atBeta).toMatchObject({ apiVersion: "example.com/v1beta1", spec: { size: 2 } });
    const preferred = JSON.parse((await kubectl(["get", "widgets", "w", "-o", "json"])).stdout);
    expect(preferred).toMatchObject({ apiVersion: "example.com/v1", spec: { size: 2 } });
    const reapplied = await kubectl(
      ["apply", "-f", "-"],
      JSON.stringify({
        apiVersion: "example.com/v1",
        kind: "Widget",
        metadata: { name: "w", namespace: "default" },
        spec: { size: 4, color: "red" },
      }),
    );
    expect(reapplied.stderr + reapplied.stdout).toBe("widget.example.com/w configured\n");
    expect(
      JSON.parse((await kubectl(["get", "widgets.v1beta1.example.com", "w", "-o", "json"])).stdout).spec,
    ).toEqual({
      size: 4,
      color: "red",
    });
  });
});

describe("defaults on read", () => {
  it("serves a default added to the CRD on objects written before it, without writing them", async () => {
    const { api, http } = await start();
    const crdPath = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com";
    await call(http, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", widgetsCRD);
    await established(api, "widgets.example.com");
    const created = await call(http, "POST", ga, { metadata: { name: "old" }, spec: { size: 1 } });
    expect(created.body.spec).toEqual({ size: 1 });

    const crd = (await call(http, "GET", crdPath)).body;
    crd.spec.versions[1].schema.openAPIV3Schema.properties.spec.properties.color.default = "blue";
    expect((await call(http, "PUT", crdPath, crd)).code).toBe(200);
    await expect
      .poll(async () => (await call(http, "GET", `${ga}/old`)).body.spec)
      .toEqual({ size: 1, color: "blue" });
    expect((await call(http, "GET", ga)).body.items[0].spec).toEqual({ size: 1, color: "blue" });
    // Read, not written: the stored object and its resourceVersion are unchanged.
    const stored = await api.storage.get("/example.com/widgets/default/old");
    expect((stored as Json)?.spec).toEqual({ size: 1 });
    expect((await call(http, "GET", `${ga}/old`)).body.metadata.resourceVersion).toBe(
      created.body.metadata.resourceVersion,
    );
    // The version without the default serves the object as stored.
    expect((await call(http, "GET", `${beta}/old`)).body.spec).toEqual({ size: 1 });
  });
});

describe("patch types of a custom resource", () => {
  it("refuses a strategic merge patch with apiextensions' 415 and publishes no such PATCH body for kubectl", async () => {
    const { api, http } = await start();
    await call(http, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", widgetsCRD);
    await established(api, "widgets.example.com");
    await call(http, "POST", ga, { metadata: { name: "w" }, spec: { size: 1 } });
    const strategic = await fetch(`${http.url}${ga}/w`, {
      method: "PATCH",
      headers: { "content-type": "application/strategic-merge-patch+json" },
      body: JSON.stringify({ spec: { size: 2 } }),
    });
    expect(strategic.status).toBe(415);
    expect(await strategic.json()).toMatchObject({
      reason: "UnsupportedMediaType",
      message:
        "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
    });
    expect((await call(http, "PATCH", `${ga}/w`, { spec: { size: 3 } })).body.spec).toEqual({ size: 3 });
    const document = await call(http, "GET", "/openapi/v3/apis/example.com/v1");
    const patchTypes = Object.keys(
      document.body.paths[`/apis/example.com/v1/namespaces/{namespace}/widgets/{name}`].patch.requestBody
        .content,
    );
    expect(patchTypes.sort()).toEqual([
      "application/apply-patch+yaml",
      "application/json-patch+json",
      "application/merge-patch+json",
    ]);
  });
});
