// Builder benchmarks (issue 18 §6), on the embedded API server through its
// in-process client, with real time:
//
// (a) 10,000 custom objects (a `Widget` kind served through the server's
//     definitions) reconciled through newControllerManagedBy(...).for(widgets),
//     each reconcile reading its object from the cache and writing
//     status.observedGeneration: seconds from `manager.run` until every
//     status is written. Goal ≤ 5 s.
// (b) the same reconcile wired by hand (SharedInformerFactory, a
//     RateLimitingQueue, an event handler and runController): the builder's
//     overhead is (a) / (b) - 1. Goal ≤ 10 %.
// (c) and (d): as (a) and (b) with a reconcile that only reads the cache, so
//     the pipeline's own cost is not hidden behind the status writes.
// Each hand-wired run is made twice: bare (no metrics) and with the same
// prom-client workqueue and reconcile metrics the builder records.
//
// Objects are created before the controllers start (not timed). 4 workers.
//
// Every variant runs in processes of its own (this file starts itself again
// with BENCH_VARIANT set): run in one process, the variants inherit each
// other's JIT feedback and heap, and whichever runs second pays for the
// first (the builder came out 25 % slower than the hand-wired loop in one
// process and 5 % faster in separate ones). Rounds alternate the variants;
// each process makes 1 warm-up and 3 measured runs; medians over 3 rounds.
// Each run records wall time and the CPU time (user + system) the process
// spent in it. The overheads are given on both: on a shared 2-core machine
// the wall time of one variant varies by tens of per cent from run to run
// with the load of other processes, while the CPU time measures the work
// each variant does, which is what the overhead is about.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { defineResource, type KubeObject } from "@reconcile/api";
import { ApiServer, defineKind } from "@reconcile/apiserver";
import type { Client } from "@reconcile/client";
import { runController } from "@reconcile/controller";
import { SharedInformerFactory } from "@reconcile/informer";
import { RateLimitingQueue } from "@reconcile/workqueue";
import { Registry } from "prom-client";
import { type Measurement, median, writeResults } from "../../../tools/bench/index.js";
import { Manager, newControllerManagedBy, prometheusReconcileMetrics } from "../src/index.js";
import { prometheusWorkqueueMetrics } from "../src/prometheus.js";

interface Widget extends KubeObject {
  spec: { size: number };
  status?: { observedGeneration?: number };
}

const widgets = defineResource<Widget>({
  group: "bench.reconcile.dev",
  version: "v1",
  kind: "Widget",
  plural: "widgets",
  namespaced: true,
  subresources: ["status"],
});

const count = 10_000;
const workers = 4;
const namespace = "default";

async function cluster(): Promise<ApiServer> {
  const server = new ApiServer({ garbageCollection: false });
  server.definitions.add(defineKind({ descriptor: widgets }));
  const client = server.client().resource(widgets, namespace);
  const batch = 200;
  for (let i = 0; i < count; i += batch) {
    await Promise.all(
      Array.from({ length: Math.min(batch, count - i) }, (_, j) =>
        client.create({ metadata: { name: `w-${i + j}`, namespace }, spec: { size: i + j } }),
      ),
    );
  }
  return server;
}

type Reconcile = (
  client: Client,
  obj: Widget | undefined,
  name: string,
  signal: AbortSignal,
) => Promise<void>;

const writeStatus: Reconcile = async (client, obj, _name, signal) => {
  if (obj === undefined) return;
  await client
    .resource(widgets, namespace)
    .updateStatus({ ...obj, status: { observedGeneration: obj.metadata?.generation ?? 0 } }, { signal });
};
const readOnly: Reconcile = async () => {};

/** Wall and CPU seconds of one run. */
interface Run {
  wall: number;
  cpu: number;
}

function startClock(): () => Run {
  globalThis.gc?.();
  const wall = performance.now();
  const cpu = process.cpuUsage();
  return () => {
    const used = process.cpuUsage(cpu);
    return { wall: (performance.now() - wall) / 1000, cpu: (used.user + used.system) / 1e6 };
  };
}

/** Seconds until `count` reconciles finished, through the builder. */
async function viaBuilder(reconcile: Reconcile): Promise<Run> {
  const server = await cluster();
  const manager = new Manager({ client: server.client() });
  let done = 0;
  let resolveAll!: () => void;
  const all = new Promise<void>((resolve) => {
    resolveAll = resolve;
  });
  newControllerManagedBy(manager)
    .for(widgets)
    .withOptions({ workers })
    .complete(async (request, ctx) => {
      await reconcile(ctx.client, ctx.get(widgets, request) as Widget | undefined, request.name, ctx.signal);
      if (++done === count) resolveAll();
    });
  const stop = new AbortController();
  const elapsed = startClock();
  const running = manager.run({ signal: stop.signal });
  await all;
  const seconds = elapsed();
  stop.abort();
  await running;
  await server.close();
  return seconds;
}

/** Seconds until `count` reconciles finished, wired by hand on the harness. */
async function byHand(reconcile: Reconcile, withMetrics: boolean): Promise<Run> {
  const server = await cluster();
  const client = server.client();
  const factory = new SharedInformerFactory({ client });
  const informer = factory.forResource(widgets);
  const registry = new Registry();
  const queue = new RateLimitingQueue<string>({
    name: "widgets",
    metricsProvider: withMetrics ? prometheusWorkqueueMetrics(registry) : undefined,
  });
  const metrics = withMetrics ? prometheusReconcileMetrics(registry).syncMetrics : undefined;
  const enqueue = (obj: { metadata?: { namespace?: string; name?: string } }) =>
    queue.add(`${obj.metadata?.namespace}/${obj.metadata?.name}`);
  informer.addEventHandler({ onAdd: enqueue, onUpdate: (_, obj) => enqueue(obj), onDelete: () => {} });
  let done = 0;
  let resolveAll!: () => void;
  const all = new Promise<void>((resolve) => {
    resolveAll = resolve;
  });
  const stop = new AbortController();
  const elapsed = startClock();
  factory.start(stop.signal);
  const running = runController({
    name: "widgets",
    signal: stop.signal,
    informers: { widgets: informer },
    queue,
    workers,
    metrics,
    sync: async (key, { signal }) => {
      const name = key.slice(key.indexOf("/") + 1);
      await reconcile(client, informer.getIndexer().getByKey(key) as Widget | undefined, name, signal);
      if (++done === count) resolveAll();
    },
  });
  await all;
  const seconds = elapsed();
  stop.abort();
  await running;
  await factory.shutdown();
  await server.close();
  return seconds;
}

type Variant = "builder" | "hand" | "hand-metrics";
const reconciles: Record<string, Reconcile> = { "write-status": writeStatus, "read-only": readOnly };
const runsPerProcess = 3;
const rounds = 3;

/** In a child process: one warm-up and `runsPerProcess` runs of one variant, printed as JSON. */
async function child(variant: Variant, reconcileName: string): Promise<void> {
  const reconcile = reconciles[reconcileName]!;
  const once = () =>
    variant === "builder" ? viaBuilder(reconcile) : byHand(reconcile, variant === "hand-metrics");
  await once();
  const runs: Run[] = [];
  for (let i = 0; i < runsPerProcess; i++) runs.push(await once());
  console.log(JSON.stringify(runs));
}

/** Runs one variant in a fresh process and returns its runs. */
function inProcess(variant: Variant, reconcileName: string): Run[] {
  const result = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url)], {
    env: { ...process.env, BENCH_VARIANT: variant, BENCH_RECONCILE: reconcileName },
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  if (result.status !== 0)
    throw new Error(`benchmark child ${variant} ${reconcileName} failed (${result.status})`);
  return JSON.parse(result.stdout.trim().split("\n").pop()!) as Run[];
}

function pair(label: string, reconcileName: string, target?: number): Measurement[] {
  const builder: Run[] = [];
  const hand: Run[] = [];
  const handMetrics: Run[] = [];
  for (let round = 0; round < rounds; round++) {
    builder.push(...inProcess("builder", reconcileName));
    hand.push(...inProcess("hand", reconcileName));
    handMetrics.push(...inProcess("hand-metrics", reconcileName));
  }
  const measurements: Measurement[] = [];
  for (const kind of ["wall", "cpu"] as const) {
    const b = builder.map((run) => run[kind]);
    const h = hand.map((run) => run[kind]);
    const hm = handMetrics.map((run) => run[kind]);
    const overhead = (median(b) / median(h) - 1) * 100;
    const overheadSameMetrics = (median(b) / median(hm) - 1) * 100;
    console.log(
      `${label} (${kind} time): builder median ${median(b).toFixed(3)} s, by hand ${median(h).toFixed(3)} s (overhead ${overhead.toFixed(1)} %), by hand with the same metrics ${median(hm).toFixed(3)} s (overhead ${overheadSameMetrics.toFixed(1)} %)`,
    );
    const unit = kind === "wall" ? "s" : "s of CPU";
    measurements.push(
      {
        name: `${label}: ${count} objects through the builder (${kind} time)`,
        unit,
        higherIsBetter: false,
        runs: b,
        median: median(b),
        ...(target === undefined || kind === "cpu" ? {} : { target }),
      },
      {
        name: `${label}: the same wired by hand (${kind} time)`,
        unit,
        higherIsBetter: false,
        runs: h,
        median: median(h),
      },
      {
        name: `${label}: builder overhead (${kind} time)`,
        unit: "%",
        higherIsBetter: false,
        runs: b.map((value, i) => (value / h[i]! - 1) * 100),
        median: overhead,
        target: 10,
      },
      {
        name: `${label}: wired by hand with the same prom-client workqueue and reconcile metrics (${kind} time)`,
        unit,
        higherIsBetter: false,
        runs: hm,
        median: median(hm),
      },
      {
        name: `${label}: builder overhead over the hand-wired loop with the same metrics (${kind} time)`,
        unit: "%",
        higherIsBetter: false,
        runs: b.map((value, i) => (value / hm[i]! - 1) * 100),
        median: overheadSameMetrics,
        target: 10,
      },
    );
  }
  return measurements;
}

const variant = process.env.BENCH_VARIANT as Variant | undefined;
if (variant !== undefined) {
  await child(variant, process.env.BENCH_RECONCILE ?? "read-only");
} else {
  const results = [
    ...pair("a/b status write per object", "write-status", 5),
    ...pair("c/d cache read only", "read-only"),
  ];
  writeResults("runtime", results, { count, workers, rounds, runsPerProcess });
}
