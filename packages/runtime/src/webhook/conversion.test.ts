import { defineResource, type KubeObject } from "@reconcile/api";
import type { CustomResourceDefinition, JSONSchemaProps } from "kubernetes-types/apiextensions/v1.js";
import { afterEach, describe, expect, it } from "vitest";
import { startTestEnvironment } from "../envtest/index.js";
import { Manager } from "../manager.js";
import { newWebhookManagedBy } from "./builder.js";
import { convertReview } from "./conversion.js";

type Pool = KubeObject & { spec?: Record<string, unknown> };

const v1 = defineResource<Pool>({
  group: "example.com",
  version: "v1",
  kind: "Pool",
  plural: "pools",
  namespaced: true,
});
const v1alpha1 = defineResource<Pool>({
  group: "example.com",
  version: "v1alpha1",
  kind: "Pool",
  plural: "pools",
  namespaced: true,
});
const v1beta1 = defineResource<Pool>({
  group: "example.com",
  version: "v1beta1",
  kind: "Pool",
  plural: "pools",
  namespaced: true,
});

// The hub is v1 (`replicas`); v1alpha1 says `size` (small, large), v1beta1 `count`.
const conversion = {
  hub: "v1",
  spokes: {
    v1alpha1: {
      toHub: (p: Pool): Pool => ({ ...p, spec: { replicas: p.spec?.size === "large" ? 3 : 1 } }),
      fromHub: (p: Pool): Pool => ({
        ...p,
        spec: { size: (p.spec?.replicas as number) >= 3 ? "large" : "small" },
      }),
    },
    v1beta1: {
      toHub: (p: Pool): Pool => ({ ...p, spec: { replicas: p.spec?.count } }),
      fromHub: (p: Pool): Pool => ({ ...p, spec: { count: p.spec?.replicas } }),
    },
  },
};

describe("convertReview (what /convert answers)", () => {
  const review = (desiredAPIVersion: string, objects: Pool[]) => ({
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "ConversionReview",
    request: { uid: "u", desiredAPIVersion, objects },
  });
  const conversions = new Map([["example.com/Pool", conversion]]);
  it("converts spoke to spoke through the hub, leaves objects already there, keeps the uid", () => {
    const alpha = {
      apiVersion: "example.com/v1alpha1",
      kind: "Pool",
      metadata: { name: "a" },
      spec: { size: "large" },
    };
    const beta = {
      apiVersion: "example.com/v1beta1",
      kind: "Pool",
      metadata: { name: "b" },
      spec: { count: 2 },
    };
    expect(convertReview(review("example.com/v1beta1", [alpha, beta]), conversions)).toEqual({
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "ConversionReview",
      response: {
        uid: "u",
        convertedObjects: [
          { apiVersion: "example.com/v1beta1", kind: "Pool", metadata: { name: "a" }, spec: { count: 3 } },
          beta,
        ],
        result: { status: "Success" },
      },
    });
  });
  it("answers Failure naming what is missing", () => {
    const other = { apiVersion: "example.com/v2", kind: "Pool", metadata: { name: "x" }, spec: {} };
    expect(convertReview(review("example.com/v1", [other]), conversions).response).toEqual({
      uid: "u",
      result: { status: "Failure", message: "example.com/Pool has no conversion for version v2" },
    });
  });
});

const schema = (spec: Record<string, JSONSchemaProps>) => ({
  openAPIV3Schema: { type: "object", properties: { spec: { type: "object", properties: spec } } },
});
const crd: CustomResourceDefinition = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "pools.example.com" },
  spec: {
    group: "example.com",
    scope: "Namespaced",
    names: { plural: "pools", kind: "Pool" },
    conversion: {
      strategy: "Webhook",
      webhook: {
        clientConfig: { service: { name: "webhook-service", namespace: "system", path: "/convert" } },
        conversionReviewVersions: ["v1"],
      },
    },
    versions: [
      { name: "v1alpha1", served: true, storage: false, schema: schema({ size: { type: "string" } }) },
      { name: "v1beta1", served: true, storage: false, schema: schema({ count: { type: "integer" } }) },
      { name: "v1", served: true, storage: true, schema: schema({ replicas: { type: "integer" } }) },
    ],
  },
};

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (stops.length > 0) await stops.pop()!();
});

describe("a conversion webhook in @reconcile/runtime, tested with envtest in process", () => {
  it("objects written at one version are read at every other", async () => {
    const env = await startTestEnvironment({ crds: [crd], http: false });
    stops.push(() => env.stop());
    const manager = new Manager({ client: env.client });
    expect(newWebhookManagedBy(manager).for(v1).withConversion(conversion).complete()).toEqual({
      convertPath: "/convert",
    });
    await env.serveWebhooks(manager.getWebhookServer());
    await env.client
      .resource(v1alpha1, "default")
      .create({ metadata: { name: "a" }, spec: { size: "large" } });
    expect((await env.client.resource(v1, "default").get("a")).spec).toEqual({ replicas: 3 });
    expect((await env.client.resource(v1beta1, "default").get("a")).spec).toEqual({ count: 3 });
    await env.client.resource(v1beta1, "default").create({ metadata: { name: "b" }, spec: { count: 1 } });
    const alphas = (await env.client.resource(v1alpha1, "default").list()).items;
    expect(alphas.map((p) => [p.metadata?.name, p.spec?.size])).toEqual([
      ["a", "large"],
      ["b", "small"],
    ]);
  });
});
