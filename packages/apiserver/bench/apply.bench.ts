// Server-side apply benchmarks (issue 17 section 4): the field-ownership work
// that apply and every other write add, on a Deployment of about 100 fields.
//
// (a) update through the in-process client of one stored Deployment (one env
//     value changes each time; managedFields tracked as on every write), µs per write.
// (b) the ownership work of an apply: applyConfiguration of the changed manifest
//     against the live object owned by two managers (merge, field sets, removal,
//     conflict check, managedFields encoding), µs per apply.
// (c) the ownership work of an update: trackUpdate of the same change, µs per write.
// (d) apply ÷ update estimated from the parts: (a − c + b) ÷ a, since (a)
//     includes (c); goal ≤ 2.
// (f) end to end through the in-process client, ownership tracked on both:
//     an apply patch (fieldManager kubectl) of the changed manifest vs an update
//     of it, µs per write, and their ratio; goal ≤ 2.
// (e) managedFields memory: heap per Deployment stored in a server, with its two
//     managedFields entries and without (5,000 objects, forced GC before and after), extra %;
//     goal ≤ 30 %.
//
// 5 measured runs after 1 warm-up for (a)–(c); (e) 3 alternating runs of each after a warm-up of each.
import { type Deployment, deployments } from "@reconcile/api";
import { measure, writeResults } from "../../../tools/bench/index.js";
import { applyConfiguration, trackUpdate } from "../src/apply/index.js";
import { ApiServer } from "../src/index.js";

type Obj = Record<string, unknown>;
const writes = 2_000;

function manifest(revision: number): Deployment {
  const labels: Record<string, string> = { app: "web" };
  for (let i = 0; i < 8; i++) labels[`label-${i}`] = `value-${i}`;
  const annotations: Record<string, string> = {};
  for (let i = 0; i < 8; i++) annotations[`example.com/annotation-${i}`] = `value-${i}`;
  const env = Array.from({ length: 40 }, (_, i) => ({
    name: `ENV_${i}`,
    value: i === 0 ? `r${revision}` : `v${i}`,
  }));
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "web", namespace: "default", labels, annotations },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: "web" } },
      strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
      template: {
        metadata: { labels: { app: "web", tier: "frontend" } },
        spec: {
          containers: [
            {
              name: "web",
              image: "registry.example.com/team/web:1.27.3",
              args: ["--port=8080", "--verbose"],
              env,
              ports: [
                { name: "http", containerPort: 8080 },
                { name: "metrics", containerPort: 9090 },
              ],
              resources: {
                requests: { cpu: "100m", memory: "128Mi" },
                limits: { cpu: "1", memory: "512Mi" },
              },
              readinessProbe: { httpGet: { path: "/healthz", port: 8080 }, periodSeconds: 5 },
            },
          ],
        },
      },
    },
  } as Deployment;
}

function countLeaves(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((n: number, item) => n + countLeaves(item), 0);
  if (typeof value === "object" && value !== null)
    return Object.values(value).reduce((n: number, v) => n + countLeaves(v), 0);
  return 1;
}

const now = new Date("2026-01-01T00:00:00Z");

/** A live Deployment owned by an applier and by a controller's Update. */
function ownedLive(): Obj {
  let live = applyConfiguration({
    live: undefined,
    config: manifest(0) as Obj,
    manager: "kubectl",
    apiVersion: "apps/v1",
    now,
  });
  const scaled = structuredClone(live);
  ((scaled.spec as Obj).template as { metadata: { annotations?: Obj } }).metadata.annotations = {
    restartedAt: "x",
  };
  live = trackUpdate({ before: live, after: scaled, manager: "kubectl-rollout", apiVersion: "apps/v1", now });
  return live;
}

const results = [];

const updateUs = await measure(
  { name: "a: plain update through the in-process client", unit: "µs/write", higherIsBetter: false },
  async () => {
    const server = new ApiServer();
    const client = server.client().resource(deployments, "default");
    let current = await client.create(manifest(0));
    const start = performance.now();
    for (let i = 1; i <= writes; i++) {
      const next = manifest(i);
      next.metadata = { ...next.metadata, resourceVersion: current.metadata?.resourceVersion ?? "" };
      current = await client.update(next);
    }
    const elapsed = performance.now() - start;
    server.close();
    return (elapsed * 1000) / writes;
  },
);
results.push(updateUs);

const live = ownedLive();
const applyUs = await measure(
  { name: "b: ownership work of an apply (applyConfiguration)", unit: "µs/apply", higherIsBetter: false },
  () => {
    const start = performance.now();
    for (let i = 1; i <= writes; i++) {
      applyConfiguration({
        live,
        config: manifest(i) as Obj,
        manager: "kubectl",
        apiVersion: "apps/v1",
        now,
      });
    }
    return ((performance.now() - start) * 1000) / writes;
  },
);
results.push(applyUs);

const trackUs = await measure(
  { name: "c: ownership work of an update (trackUpdate)", unit: "µs/write", higherIsBetter: false },
  () => {
    const start = performance.now();
    for (let i = 1; i <= writes; i++) {
      const after = {
        ...(manifest(i) as Obj),
        metadata: { ...(manifest(i).metadata as Obj), managedFields: (live.metadata as Obj).managedFields },
      };
      trackUpdate({ before: live, after, manager: "kubectl-edit", apiVersion: "apps/v1", now });
    }
    return ((performance.now() - start) * 1000) / writes;
  },
);
results.push(trackUs);

// (a) already does (c)'s work: an apply does (b) in its place.
const ratio = (updateUs.median - trackUs.median + applyUs.median) / updateUs.median;
results.push({
  name: "d: apply ÷ update from the parts, (a − c + b) ÷ a",
  unit: "×",
  higherIsBetter: false,
  runs: [ratio],
  median: ratio,
  target: 2,
});
console.log(`d: apply ÷ update from the parts: ${ratio.toFixed(2)}×`);

const serverApplyUs = await measure(
  { name: "f: server-side apply through the in-process client", unit: "µs/write", higherIsBetter: false },
  async () => {
    const server = new ApiServer();
    const client = server.client().resource(deployments, "default");
    await client.patch("web", manifest(0), { type: "apply", fieldManager: "kubectl" });
    const start = performance.now();
    for (let i = 1; i <= writes; i++) {
      await client.patch("web", manifest(i), { type: "apply", fieldManager: "kubectl" });
    }
    const elapsed = performance.now() - start;
    server.close();
    return (elapsed * 1000) / writes;
  },
);
results.push(serverApplyUs);
const endToEnd = serverApplyUs.median / updateUs.median;
results.push({
  name: "f: apply ÷ update through the in-process client",
  unit: "×",
  higherIsBetter: false,
  runs: [endToEnd],
  median: endToEnd,
  target: 2,
});
console.log(`f: apply ÷ update end to end: ${endToEnd.toFixed(2)}×`);

/**
 * Heap growth per stored Deployment in a server holding 10,000 of them, each
 * written by an apply (kubectl) then an update (kubectl-rollout): with
 * ownership tracked, or with tracking switched off by the update's empty
 * managedFields entry (the same objects, without managedFields). The history keeps
 * one change, so only the stored objects count.
 */
async function heapPerObject(tracked: boolean): Promise<number> {
  const count = 5_000;
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error("run with --expose-gc (pnpm bench does)");
  gc();
  const before = process.memoryUsage().heapUsed;
  const server = new ApiServer({ garbageCollection: false, historySize: 1 });
  const client = server.client().resource(deployments, "default");
  for (let i = 0; i < count; i++) {
    const name = `web-${i}`;
    const object = manifest(0);
    object.metadata = { ...object.metadata, name };
    const stored = tracked
      ? await client.patch(name, object, { type: "apply", fieldManager: "kubectl" })
      : await client.create(object);
    const template = stored.spec!.template;
    template.metadata = { ...template.metadata, annotations: { restartedAt: "x" } };
    // An empty entry clears the list (kube-apiserver's reset), and it stays empty.
    if (!tracked) stored.metadata = { ...stored.metadata, managedFields: [{}] };
    await client.update(stored, { fieldManager: "kubectl-rollout" });
  }
  gc();
  const after = process.memoryUsage().heapUsed;
  const sample = await client.get("web-0");
  if ((sample.metadata?.managedFields?.length ?? 0) !== (tracked ? 2 : 0))
    throw new Error(`unexpected managedFields ${JSON.stringify(sample.metadata?.managedFields)}`);
  await server.close();
  return (after - before) / count;
}
// One warm-up of each, then three alternating runs of each; the medians compared.
await heapPerObject(false);
await heapPerObject(true);
const plainRuns: number[] = [];
const trackedRuns: number[] = [];
for (let run = 0; run < 3; run++) {
  plainRuns.push(await heapPerObject(false));
  trackedRuns.push(await heapPerObject(true));
}
const middle = (runs: number[]) => [...runs].sort((a, b) => a - b)[1]!;
const plainBytes = middle(plainRuns);
const trackedBytes = middle(trackedRuns);
const extra = ((trackedBytes - plainBytes) / plainBytes) * 100;
results.push({
  name: "e: heap per stored Deployment, extra with managedFields",
  unit: "%",
  higherIsBetter: false,
  runs: [extra],
  median: extra,
  target: 30,
  extra: { bytesWithout: Math.round(plainBytes), bytesWith: Math.round(trackedBytes) },
});
console.log(
  `e: ${Math.round(plainBytes)} B without, ${Math.round(trackedBytes)} B with managedFields: +${extra.toFixed(1)} %`,
);

writeResults("apply", results, { fields: countLeaves(manifest(0)) });
