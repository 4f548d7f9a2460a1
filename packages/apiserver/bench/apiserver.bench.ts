// Embedded API server benchmarks (issue 3 section 6), all through the in-process client:
//
// (a) creates/s: create 10,000 pods (~2.5 KB of JSON each) one after another in a fresh server.
// (b) updates/s: update each of 10,000 stored pods once (a label change, so each is a real write).
// (c) list of 100,000 pods (~2.5 KB each): ms for one unpaginated list of the namespace
//     (the client hands out copies, so this includes copying every item), and ms for the
//     same list read in pages of 500 (kubectl's and the reflector's page size).
// (d) watch fan-out: 1,000 watchers on pods, then 10,000 lease-sized pod writes; reports
//     events delivered to readers per second, from the first write until every watcher
//     has read every event (each read is a copy, as the client hands out).
// (e) memory per stored pod: heap growth after storing 100,000 pods, divided by 100,000
//     (with a forced GC before and after; the history holds the last 10,000 changes).
// (f) strategic merge patch of a 20,000-item list: ms for one patch that reverses the
//     order of a container's 20,000 env entries with `$setElementOrder/env` and changes
//     every value (a ~1 MB patch, as kubectl sends for a reordered list).
//
// 5 measured runs after 1 warm-up for (a)-(c); 3 after 1 for (d) and (f); (e) is measured once.
import { type Pod, pods } from "@reconcile/api";
import { measure, writeResults } from "../../../tools/bench/index.js";
import { ApiServer, strategicMergePatch } from "../src/index.js";

function bigPod(i: number): Pod {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: `web-7d9f8b6c5d-${i.toString(36).padStart(5, "0")}`,
      labels: { app: "web", tier: "frontend", "pod-template-hash": "7d9f8b6c5d", release: "stable" },
      annotations: {
        "kubectl.kubernetes.io/restartedAt": "2026-01-01T00:00:00Z",
        "prometheus.io/scrape": "true",
        "prometheus.io/port": "9090",
      },
      ownerReferences: [
        {
          apiVersion: "apps/v1",
          kind: "ReplicaSet",
          name: "web-7d9f8b6c5d",
          uid: "0f7c3b8e-5a4d-4f1e-9c2b-7e6d5c4b3a21",
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      nodeName: `node-${i % 50}`,
      containers: [
        {
          name: "web",
          image: "registry.example.com/team/web:1.27.3",
          ports: [
            { name: "http", containerPort: 8080 },
            { name: "metrics", containerPort: 9090 },
          ],
          env: [
            { name: "LOG_LEVEL", value: "info" },
            { name: "DATABASE_URL", value: "postgres://db.internal.example.com:5432/app" },
            { name: "CACHE_TTL_SECONDS", value: "300" },
            { name: "FEATURE_FLAGS", value: "search,checkout,recommendations" },
          ],
          resources: { requests: { cpu: "250m", memory: "256Mi" }, limits: { cpu: "500m", memory: "512Mi" } },
          readinessProbe: { httpGet: { path: "/healthz", port: 8080 }, periodSeconds: 10 },
          livenessProbe: { httpGet: { path: "/livez", port: 8080 }, periodSeconds: 20, failureThreshold: 3 },
          volumeMounts: [{ name: "config", mountPath: "/etc/web" }],
        },
        {
          name: "log-shipper",
          image: "registry.example.com/platform/log-shipper:3.1.0",
          args: ["--input=/var/log/web", "--output=collector.logging.svc:24224"],
          resources: { requests: { cpu: "50m", memory: "64Mi" } },
        },
      ],
      volumes: [{ name: "config", configMap: { name: "web-config" } }],
      tolerations: [
        {
          key: "node.kubernetes.io/not-ready",
          operator: "Exists",
          effect: "NoExecute",
          tolerationSeconds: 300,
        },
      ],
      serviceAccountName: "web",
    },
  };
}

function smallPod(i: number): Pod {
  return {
    metadata: { name: `p-${i}`, labels: { app: "web" } },
    spec: { containers: [{ name: "c", image: "nginx" }] },
  };
}

async function serverWithPods(count: number, make: (i: number) => Pod): Promise<ApiServer> {
  const server = new ApiServer({ garbageCollection: false });
  const client = server.client().resource(pods, "default");
  for (let i = 0; i < count; i++) await client.create(make(i));
  return server;
}

async function creates(): Promise<number> {
  const server = new ApiServer({ garbageCollection: false });
  const client = server.client().resource(pods, "default");
  const objects = Array.from({ length: 10_000 }, (_, i) => bigPod(i));
  const start = performance.now();
  for (const object of objects) await client.create(object);
  const seconds = (performance.now() - start) / 1000;
  await server.close();
  return objects.length / seconds;
}

async function updates(): Promise<number> {
  const server = await serverWithPods(10_000, bigPod);
  const client = server.client().resource(pods, "default");
  const stored = (await client.list()).items;
  for (const pod of stored) pod.metadata!.labels!.updated = "yes";
  const start = performance.now();
  for (const pod of stored) await client.update(pod);
  const seconds = (performance.now() - start) / 1000;
  await server.close();
  return stored.length / seconds;
}

async function fanOut(): Promise<number> {
  const watchers = 1_000;
  const writes = 10_000;
  const server = new ApiServer({ garbageCollection: false, watchBufferSize: writes });
  const client = server.client().resource(pods, "default");
  const readers: Promise<number>[] = [];
  for (let w = 0; w < watchers; w++) {
    const watch = await client.watch({ resourceVersion: String(await server.storage.currentRevision()) });
    readers.push(
      (async () => {
        let read = 0;
        for await (const _ of watch) if (++read === writes) break;
        return read;
      })(),
    );
  }
  const start = performance.now();
  for (let i = 0; i < writes; i++) await client.create(smallPod(i));
  const delivered = (await Promise.all(readers)).reduce((a, b) => a + b, 0);
  const seconds = (performance.now() - start) / 1000;
  await server.close();
  if (delivered !== watchers * writes)
    throw new Error(`delivered ${delivered} events, expected ${watchers * writes}`);
  return delivered / seconds;
}

function reorderedEnvPatch(): number {
  const count = 20_000;
  const env = Array.from({ length: count }, (_, i) => ({ name: `VAR_${i}`, value: `value-${i}` }));
  const original = { spec: { containers: [{ name: "app", image: "app:1", env }] } };
  const reversed = env.map((_, i) => ({ name: `VAR_${count - 1 - i}` }));
  const changed = env.map((_, i) => ({ name: `VAR_${i}`, value: `changed-${i}` }));
  const patch = { spec: { containers: [{ name: "app", "$setElementOrder/env": reversed, env: changed }] } };
  const start = performance.now();
  const result = strategicMergePatch(original, patch) as typeof original;
  const ms = performance.now() - start;
  const first = result.spec.containers[0]!.env[0]!;
  if (first.name !== `VAR_${count - 1}` || first.value !== `changed-${count - 1}`)
    throw new Error(`unexpected first env entry ${JSON.stringify(first)}`);
  return ms;
}

function gc(): void {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (collect === undefined) throw new Error("run with --expose-gc (pnpm bench does)");
  collect();
  collect();
}

const podBytes = JSON.stringify(bigPod(0)).length;
console.log(`pod size: ${podBytes} bytes of JSON as sent; larger once defaulted and stored`);
const results = [];

results.push(
  await measure(
    { name: "a: creates through the in-process client", unit: "creates/s", higherIsBetter: true },
    creates,
  ),
);
results.push(
  await measure(
    { name: "b: updates through the in-process client", unit: "updates/s", higherIsBetter: true },
    updates,
  ),
);

const listed = await serverWithPods(100_000, bigPod);
const listClient = listed.client().resource(pods, "default");
const storedBytes = JSON.stringify((await listClient.list({ limit: 1 })).items[0]).length;
results.push(
  await measure(
    { name: "c: list of 100,000 pods, unpaginated", unit: "ms", higherIsBetter: false },
    async () => {
      const start = performance.now();
      const list = await listClient.list();
      const ms = performance.now() - start;
      if (list.items.length !== 100_000) throw new Error(`listed ${list.items.length}`);
      return ms;
    },
  ),
);
results.push(
  await measure(
    { name: "c: list of 100,000 pods in pages of 500", unit: "ms", higherIsBetter: false },
    async () => {
      const start = performance.now();
      let count = 0;
      let token: string | undefined;
      do {
        const page = await listClient.list({ limit: 500, continue: token });
        count += page.items.length;
        token = page.metadata.continue;
      } while (token);
      const ms = performance.now() - start;
      if (count !== 100_000) throw new Error(`listed ${count}`);
      return ms;
    },
  ),
);
await listed.close();

results.push(
  await measure(
    {
      name: "d: watch fan-out, 1,000 watchers x 10,000 events",
      unit: "events/s",
      higherIsBetter: true,
      runs: 3,
    },
    fanOut,
  ),
);

results.push(
  await measure(
    {
      name: "f: strategic merge patch reordering a 20,000-item list",
      unit: "ms",
      higherIsBetter: false,
      runs: 3,
    },
    reorderedEnvPatch,
  ),
);

gc();
const before = process.memoryUsage().heapUsed;
const memoryServer = await serverWithPods(100_000, bigPod);
gc();
const after = process.memoryUsage().heapUsed;
const perPod = (after - before) / 100_000;
console.log(`e: memory per stored pod: ${Math.round(perPod)} bytes (stored pod JSON: ${storedBytes} bytes)`);
results.push({
  name: "e: heap per stored pod (100,000 pods)",
  unit: "bytes",
  higherIsBetter: false,
  runs: [perPod],
  median: perPod,
  extra: { storedPodJsonBytes: storedBytes },
});
await memoryServer.close();

writeResults("apiserver", results, { podJsonBytes: podBytes, storedPodJsonBytes: storedBytes });
