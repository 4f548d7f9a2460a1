// What the built-in kinds' OpenAPI schemas cost (issue 16 section 2):
//
// (a) server start: ms from `new ApiServer()` to `flush()` (initial namespaces, the CRD controller's
//     first watch), 20 servers per run; the schemas are not touched.
// (b) first use of the schemas: ms to parse the 386 generated definitions (the text every process
//     parses once) and compile Pod's field tree.
// (c) heap the parsed definitions hold: heap growth per parsed copy, 10 copies held at once.
// (d) unknown-field check of one ~1.3 KB pod (pruneUnknownFields), µs, over 10,000 pods.
// (e) share of a pod create spent on (d): (d) divided by one create through the in-process client.
// (f) the OpenAPI v3 documents of every served kind, built once (what `/openapi/v3` computes per
//     change of the served set), ms.
//
// 5 measured runs after 1 warm-up each.
import { type Pod, pods } from "@reconcile/api";
import { measure, writeResults } from "../../../tools/bench/index.js";
import { openApiDocuments } from "../src/http/openapi.js";
import { ApiServer, builtinDefinitions } from "../src/index.js";
import { builtinDefinitionsJSON } from "../src/schemas/builtin-openapi.generated.js";
import { DefinitionSchema, type OpenAPIDefinition } from "../src/schemas/kind-schema.js";

function pod(i: number): Pod {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: `web-${i}`,
      namespace: "default",
      labels: { app: "web", tier: "frontend", "pod-template-hash": "7d9f8b6c5d" },
      annotations: { "prometheus.io/scrape": "true", "prometheus.io/port": "9090" },
    },
    spec: {
      containers: [
        {
          name: "web",
          image: "registry.example.com/web:1.2.3",
          command: ["/bin/web"],
          args: ["--port=8080", "--metrics-port=9090", "--log-level=info"],
          ports: [
            { name: "http", containerPort: 8080, protocol: "TCP" },
            { name: "metrics", containerPort: 9090, protocol: "TCP" },
          ],
          env: Array.from({ length: 8 }, (_, j) => ({ name: `VAR_${j}`, value: `value-${j}` })),
          resources: { requests: { cpu: "250m", memory: "256Mi" }, limits: { cpu: "1", memory: "512Mi" } },
          readinessProbe: { httpGet: { path: "/healthz", port: 8080 }, periodSeconds: 5 },
          livenessProbe: { httpGet: { path: "/livez", port: 8080 }, periodSeconds: 10 },
          volumeMounts: [{ name: "config", mountPath: "/etc/web" }],
        },
      ],
      volumes: [{ name: "config", configMap: { name: "web-config" } }],
      nodeSelector: { "kubernetes.io/os": "linux" },
      tolerations: [{ key: "dedicated", operator: "Equal", value: "web", effect: "NoSchedule" }],
    },
  };
}

function gc(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

const podBytes = JSON.stringify(pod(0)).length;
console.log(`pod size: ${podBytes} bytes of JSON`);
const results = [];

results.push(
  await measure({ name: "a: server start to ready", unit: "ms", higherIsBetter: false }, async () => {
    const servers: ApiServer[] = [];
    const start = performance.now();
    for (let i = 0; i < 20; i++) {
      const server = new ApiServer();
      await server.flush();
      servers.push(server);
    }
    const ms = (performance.now() - start) / 20;
    for (const server of servers) await server.close();
    return ms;
  }),
);

results.push(
  await measure({ name: "b: first use of the schemas", unit: "ms", higherIsBetter: false }, () => {
    const start = performance.now();
    const parsed = JSON.parse(builtinDefinitionsJSON) as Record<string, OpenAPIDefinition>;
    new DefinitionSchema("io.k8s.api.core.v1.Pod", () => parsed).pruneUnknownFields({ spec: {} });
    return performance.now() - start;
  }),
);

results.push(
  await measure({ name: "c: heap of the parsed schemas", unit: "MB", higherIsBetter: false }, () => {
    gc();
    const before = process.memoryUsage().heapUsed;
    const held = Array.from({ length: 10 }, () => JSON.parse(builtinDefinitionsJSON) as unknown);
    gc();
    const after = process.memoryUsage().heapUsed;
    if (held.length !== 10) throw new Error("lost a copy");
    return (after - before) / 10 / 1e6;
  }),
);

const podSchema = builtinDefinitions.find((d) => d.descriptor.kind === "Pod")!.openAPI!;
const copies = Array.from({ length: 10_000 }, (_, i) => pod(i));
let checkMicros = 0;
results.push(
  await measure({ name: "d: unknown-field check of one pod", unit: "µs", higherIsBetter: false }, () => {
    const objects = copies.map((p) => structuredClone(p) as unknown as Record<string, unknown>);
    const start = performance.now();
    for (const object of objects) podSchema.pruneUnknownFields(object);
    checkMicros = ((performance.now() - start) * 1000) / objects.length;
    return checkMicros;
  }),
);

let createMicros = 0;
results.push(
  await measure(
    {
      name: "e: share of a pod create spent on the unknown-field check",
      unit: "%",
      higherIsBetter: false,
      target: 20,
    },
    async () => {
      const server = new ApiServer({ garbageCollection: false });
      const client = server.client().resource(pods, "default");
      const start = performance.now();
      for (let i = 0; i < 5_000; i++) await client.create(pod(i));
      createMicros = ((performance.now() - start) * 1000) / 5_000;
      await server.close();
      return (checkMicros / createMicros) * 100;
    },
  ),
);

results.push(
  await measure(
    { name: "f: OpenAPI v3 documents of every served kind", unit: "ms", higherIsBetter: false },
    () => {
      const start = performance.now();
      const documents = openApiDocuments(builtinDefinitions);
      const ms = performance.now() - start;
      if (!documents.byPath.has("apis/apps/v1")) throw new Error("no apps/v1 document");
      return ms;
    },
  ),
);

writeResults("schemas", results, { podJsonBytes: podBytes, createMicros });
