import { defineResource } from "@reconcile/api";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";
import { closeKubectlClusters, kubectlCluster } from "../testing/kubectl.js";

// A CRD whose versions differ in shape, converted by a webhook answered in process (upstream
// test/integration/apiserver/conversion cases): objects stored at the storage version, served at any.

const servers: ApiServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
  await closeKubectlClusters();
});

const schema = (spec: Record<string, unknown>) => ({
  openAPIV3Schema: { type: "object", properties: { spec: { type: "object", properties: spec } } },
});

const crd = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "pools.example.com" },
  spec: {
    group: "example.com",
    scope: "Namespaced",
    names: { plural: "pools", kind: "Pool" },
    conversion: {
      strategy: "Webhook",
      webhook: { clientConfig: { url: "https://convert.local/convert" }, conversionReviewVersions: ["v1"] },
    },
    versions: [
      { name: "v1alpha1", served: true, storage: false, schema: schema({ size: { type: "string" } }) },
      { name: "v1", served: true, storage: true, schema: schema({ replicas: { type: "integer" } }) },
    ],
  },
};

const alpha = defineResource({
  group: "example.com",
  version: "v1alpha1",
  kind: "Pool",
  plural: "pools",
  namespaced: true,
});
const ga = defineResource({
  group: "example.com",
  version: "v1",
  kind: "Pool",
  plural: "pools",
  namespaced: true,
});

type Pool = {
  apiVersion?: string;
  metadata?: { name?: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
};

/** v1alpha1's `size` (small, large) is v1's `replicas` (1, 3). */
function convert(pool: Pool, desired: string): Pool {
  if (desired === "example.com/v1")
    return { ...pool, apiVersion: desired, spec: { replicas: pool.spec?.size === "large" ? 3 : 1 } };
  return {
    ...pool,
    apiVersion: desired,
    spec: { size: (pool.spec?.replicas as number) >= 3 ? "large" : "small" },
  };
}

/** The webhook's successful answer: every object converted with `convert`. */
function converted(review: Record<string, unknown>) {
  const request = review.request as { uid: string; desiredAPIVersion: string; objects: Pool[] };
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "ConversionReview",
    response: {
      uid: request.uid,
      convertedObjects: request.objects.map((o) => convert(o, request.desiredAPIVersion)),
      result: { status: "Success" },
    },
  };
}

async function start(answer?: (review: Record<string, unknown>) => Record<string, unknown>) {
  const server = new ApiServer();
  servers.push(server);
  const reviews: { desired: string; count: number }[] = [];
  server.admissionWebhooks.serve("https://convert.local/convert", (review) => {
    const request = review.request as { uid: string; desiredAPIVersion: string; objects: Pool[] };
    reviews.push({ desired: request.desiredAPIVersion, count: request.objects.length });
    return answer ? answer(review) : converted(review);
  });
  await server
    .client()
    .resource(
      defineResource({
        group: "apiextensions.k8s.io",
        version: "v1",
        kind: "CustomResourceDefinition",
        plural: "customresourcedefinitions",
        namespaced: false,
      }),
    )
    .create(crd as never);
  for (let i = 0; i < 1000 && server.definitions.get(alpha) === undefined; i++)
    await new Promise((r) => setImmediate(r));
  return { server, reviews };
}

describe("CRD conversion by webhook", () => {
  it("stores at the storage version and serves every version, a list in one review", async () => {
    const { server, reviews } = await start();
    const client = server.client();
    const created = (await client
      .resource(alpha, "default")
      .create({ metadata: { name: "a" }, spec: { size: "large" } } as never)) as Pool;
    expect(created).toMatchObject({ apiVersion: "example.com/v1alpha1", spec: { size: "large" } });
    const stored = await server.storage.get("/example.com/pools/default/a");
    expect(stored).toMatchObject({ apiVersion: "example.com/v1", spec: { replicas: 3 } });
    expect((await client.resource(ga, "default").get("a")) as Pool).toMatchObject({
      apiVersion: "example.com/v1",
      spec: { replicas: 3 },
    });
    await client.resource(ga, "default").create({ metadata: { name: "b" }, spec: { replicas: 1 } } as never);
    reviews.length = 0;
    const listed = (await client.resource(alpha, "default").list()).items as Pool[];
    expect(listed.map((p) => [p.metadata?.name, p.apiVersion, p.spec?.size])).toEqual([
      ["a", "example.com/v1alpha1", "large"],
      ["b", "example.com/v1alpha1", "small"],
    ]);
    expect(reviews).toEqual([{ desired: "example.com/v1alpha1", count: 2 }]);
    // Reading at the storage version asks nothing.
    reviews.length = 0;
    await client.resource(ga, "default").list();
    expect(reviews).toEqual([]);
  });

  it("answers 500 with upstream's words when the webhook fails or changes what it may not", async () => {
    const { server } = await start((review) => {
      const request = review.request as { uid: string; objects: Pool[] };
      return {
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "ConversionReview",
        response: { uid: request.uid, result: { status: "Failure", message: "cannot convert size 'huge'" } },
      };
    });
    await expect(
      server
        .client()
        .resource(alpha, "default")
        .create({ metadata: { name: "a" }, spec: { size: "huge" } } as never),
    ).rejects.toMatchObject({
      code: 500,
      message:
        "Internal error occurred: conversion webhook for example.com/v1alpha1, Kind=Pool returned failure: cannot convert size 'huge'",
    });
    const renaming = await start((review) => {
      const request = review.request as { uid: string; desiredAPIVersion: string; objects: Pool[] };
      const objects = request.objects.map((o) => ({
        ...convert(o, request.desiredAPIVersion),
        metadata: { ...o.metadata, name: "other" },
      }));
      return {
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "ConversionReview",
        response: { uid: request.uid, convertedObjects: objects, result: { status: "Success" } },
      };
    });
    await expect(
      renaming.server
        .client()
        .resource(alpha, "default")
        .create({ metadata: { name: "a" }, spec: { size: "large" } } as never),
    ).rejects.toMatchObject({
      code: 500,
      message:
        "Internal error occurred: conversion webhook for example.com/v1alpha1, Kind=Pool failed: invalid converted object at index 0: must not change metadata.uid, name or namespace",
    });
  });
});

describe("kubectl and a CRD converted by webhook", () => {
  it("gets one object at both versions, each as its version says", async () => {
    const { api, kubectl, file } = await kubectlCluster({ kubernetesService: false });
    api.admissionWebhooks.serve("https://convert.local/convert", converted);
    expect((await kubectl(["apply", "-f", await file("crd.json", JSON.stringify(crd))])).code).toBe(0);
    expect(
      (await kubectl(["wait", "--for=condition=Established", "crd/pools.example.com", "--timeout=10s"])).code,
    ).toBe(0);
    const pool = {
      apiVersion: "example.com/v1alpha1",
      kind: "Pool",
      metadata: { name: "a" },
      spec: { size: "large" },
    };
    expect((await kubectl(["create", "-f", await file("pool.json", JSON.stringify(pool))])).code).toBe(0);
    const jsonpath = ["-o", "jsonpath={.apiVersion} {.spec}"];
    expect((await kubectl(["get", "pools.v1alpha1.example.com", "a", ...jsonpath])).stdout).toBe(
      'example.com/v1alpha1 {"size":"large"}',
    );
    expect((await kubectl(["get", "pools.v1.example.com", "a", ...jsonpath])).stdout).toBe(
      'example.com/v1 {"replicas":3}',
    );
  });

  it("compares a write in each manager's own version, through the webhook, for their managed fields", async () => {
    const { server } = await start();
    const client = server.client();
    // One manager applies `size` at v1alpha1; another updates v1's `replicas`, which is `size` there.
    await client.resource(alpha, "default").patch(
      "p",
      { apiVersion: "example.com/v1alpha1", kind: "Pool", metadata: { name: "p" }, spec: { size: "large" } },
      {
        type: "apply",
        fieldManager: "sizer",
      },
    );
    const current = (await client.resource(ga, "default").get("p")) as Pool;
    const updated = (await client
      .resource(ga, "default")
      .update({ ...current, spec: { replicas: 1 } } as never, { fieldManager: "scaler" })) as Pool & {
      metadata: { managedFields: { manager: string; apiVersion: string; fieldsV1: unknown }[] };
    };
    // At v1alpha1 the update changed `size` (large to small): the applier no longer owns it, and
    // keeps no entry; the updater owns `replicas` at its own version.
    expect(updated.metadata.managedFields.map((m) => [m.manager, m.apiVersion, m.fieldsV1])).toEqual([
      ["scaler", "example.com/v1", { "f:spec": { "f:replicas": {} } }],
    ]);
  });
});
