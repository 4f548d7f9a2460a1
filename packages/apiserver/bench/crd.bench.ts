// CustomResourceDefinition benchmarks (issue 16 section 4), through the in-process client:
//
// (a) CRD created → first object accepted: ms from the CRD's create until a create of an object of its
//     kind succeeds (retried on each turn of the event loop while the kind is not yet served).
//     Goal: established in ≤ 100 ms.
// (b) schema work per object: µs to prune, default and validate (OpenAPI, list types, one CEL rule)
//     one 40-field custom object, over 10,000 objects.
// (c) creates/s of those custom objects, 5,000 one after another in a fresh server.
// (d) creates/s of ~2.5 KB pods the same way, for comparison.
// (e) share of the create path spent on schema work: (b) divided by the time of one create in (c).
//     Goal: ≤ 20%.
//
// 5 measured runs after 1 warm-up each.
import { type KubeObject, type Pod, pods } from "@reconcile/api";
import { type Measurement, measure, writeResults } from "../../../tools/bench/index.js";
import {
  ApiServer,
  type CustomResourceDefinition,
  customResourceDefinitions,
  decodeCustomResource,
  type JSONSchemaProps,
  validateCustomResource,
} from "../src/index.js";

const spec: Record<string, JSONSchemaProps> = {};
const sample: Record<string, unknown> = {};
for (let i = 0; i < 10; i++) {
  spec[`name${i}`] = { type: "string", maxLength: 63, pattern: "^[a-z0-9-]+$" };
  sample[`name${i}`] = `value-${i}`;
  spec[`count${i}`] = { type: "integer", minimum: 0, maximum: 1000, default: 1 };
  sample[`count${i}`] = i;
  spec[`mode${i}`] = { type: "string", enum: ["Always", "Never", "IfNotPresent"] };
  sample[`mode${i}`] = "Always";
}
for (let i = 0; i < 5; i++) {
  spec[`tags${i}`] = {
    type: "array",
    "x-kubernetes-list-type": "set",
    maxItems: 16,
    items: { type: "string" },
  };
  sample[`tags${i}`] = ["a", "b", "c"];
  spec[`limits${i}`] = {
    type: "object",
    properties: {
      cpu: { "x-kubernetes-int-or-string": true },
      memory: { type: "string" },
      enabled: { type: "boolean", default: true },
    },
  };
  sample[`limits${i}`] = { cpu: "500m", memory: "256Mi" };
}
const schema: JSONSchemaProps = {
  type: "object",
  properties: {
    spec: {
      type: "object",
      properties: spec,
      required: ["name0"],
      "x-kubernetes-validations": [
        { rule: "self.count0 <= self.count1 + 1000", message: "count0 too large" },
      ],
    },
    status: { type: "object", properties: { ready: { type: "boolean" } } },
  },
};
console.log(`custom object: ${Object.keys(spec).length} spec fields`);

const crd: CustomResourceDefinition = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "widgets.bench.example.com" },
  spec: {
    group: "bench.example.com",
    scope: "Namespaced",
    names: { plural: "widgets", kind: "Widget" },
    versions: [
      {
        name: "v1",
        served: true,
        storage: true,
        schema: { openAPIV3Schema: schema },
        subresources: { status: {} },
      },
    ],
  },
};
const widgets = {
  group: "bench.example.com",
  version: "v1",
  kind: "Widget",
  listKind: "WidgetList",
  plural: "widgets",
  singular: "widget",
  namespaced: true,
  shortNames: [],
  categories: [],
  subresources: ["status" as const],
};

function widget(i: number): KubeObject {
  return {
    apiVersion: "bench.example.com/v1",
    kind: "Widget",
    metadata: { name: `w-${i}`, labels: { app: "bench" } },
    spec: structuredClone(sample),
  } as KubeObject;
}

async function established(): Promise<{ api: ApiServer; ms: number }> {
  const api = new ApiServer({ customResourceDefinitions: true, garbageCollection: false });
  const start = performance.now();
  await api.client().resource(customResourceDefinitions).create(crd);
  const client = api.client().resource(widgets, "default");
  for (;;) {
    try {
      await client.create(widget(0));
      return { api, ms: performance.now() - start };
    } catch (error) {
      if ((error as { code?: number }).code !== 404) throw error;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
}

const results: Measurement[] = [];
results.push(
  await measure(
    { name: "a: CRD created → first object accepted", unit: "ms", higherIsBetter: false, target: 100 },
    async () => {
      const { api, ms } = await established();
      await api.close();
      return ms;
    },
  ),
);

const objects = Array.from({ length: 10_000 }, (_, i) => widget(i));
const schemaWork = await measure(
  { name: "b: prune + default + validate one 40-field custom object", unit: "µs", higherIsBetter: false },
  () => {
    const copies = objects.map((o) => structuredClone(o) as Record<string, unknown>);
    const start = performance.now();
    for (const object of copies) {
      decodeCustomResource(object, schema);
      const errors = validateCustomResource(object, schema);
      if (errors.length > 0) throw new Error(errors[0]?.message);
    }
    return ((performance.now() - start) * 1000) / copies.length;
  },
);
results.push(schemaWork);

const customCreates = await measure(
  { name: "c: creates of 40-field custom objects", unit: "creates/s", higherIsBetter: true },
  async () => {
    const { api } = await established();
    const client = api.client().resource(widgets, "default");
    const start = performance.now();
    for (let i = 1; i <= 5_000; i++) await client.create(widget(i));
    const perSecond = 5_000 / ((performance.now() - start) / 1000);
    await api.close();
    return perSecond;
  },
);
results.push(customCreates);

function pod(i: number): Pod {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: `p-${i}`, labels: { app: "bench", tier: "frontend" } },
    spec: {
      containers: [
        {
          name: "web",
          image: "registry.example.com/team/web:1.27.3",
          ports: [{ name: "http", containerPort: 8080 }],
          env: [{ name: "LOG_LEVEL", value: "info" }],
          resources: { requests: { cpu: "250m", memory: "256Mi" } },
        },
      ],
    },
  };
}
results.push(
  await measure({ name: "d: creates of pods", unit: "creates/s", higherIsBetter: true }, async () => {
    const api = new ApiServer({ garbageCollection: false });
    const client = api.client().resource(pods, "default");
    const start = performance.now();
    for (let i = 0; i < 5_000; i++) await client.create(pod(i));
    const perSecond = 5_000 / ((performance.now() - start) / 1000);
    await api.close();
    return perSecond;
  }),
);

const share = (schemaWork.median / (1_000_000 / customCreates.median)) * 100;
console.log(`e: schema work share of a custom create: ${share.toFixed(1)}% (goal ≤ 20%)`);
results.push({
  name: "e: schema work share of a custom object's create",
  unit: "%",
  higherIsBetter: false,
  runs: [share],
  median: share,
  target: 20,
});

writeResults("crd", results, { customSpecFields: Object.keys(spec).length });
