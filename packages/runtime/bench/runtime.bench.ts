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
// Builder and hand-wired runs alternate; 1 warm-up each, 5 measured runs, medians.
import { defineResource, type KubeObject } from "@reconcile/api";
import { ApiServer, defineKind } from "@reconcile/apiserver";
import type { Client } from "@reconcile/client";
import { runController } from "@reconcile/controller";
import { prometheusWorkqueueMetrics } from "@reconcile/controller-manager";
import { SharedInformerFactory } from "@reconcile/informer";
import { RateLimitingQueue } from "@reconcile/workqueue";
import { Registry } from "prom-client";
import { type Measurement, median, writeResults } from "../../../tools/bench/index.js";
import { Manager, newControllerManagedBy, prometheusReconcileMetrics } from "../src/index.js";

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

/** Seconds until `count` reconciles finished, through the builder. */
async function viaBuilder(reconcile: Reconcile): Promise<number> {
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
  const start = performance.now();
  const running = manager.run({ signal: stop.signal });
  await all;
  const seconds = (performance.now() - start) / 1000;
  stop.abort();
  await running;
  await server.close();
  return seconds;
}

/** Seconds until `count` reconciles finished, wired by hand on the harness. */
async function byHand(reconcile: Reconcile, withMetrics: boolean): Promise<number> {
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
  const start = performance.now();
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
  const seconds = (performance.now() - start) / 1000;
  stop.abort();
  await running;
  await factory.shutdown();
  await server.close();
  return seconds;
}

async function pair(label: string, reconcile: Reconcile, target?: number): Promise<Measurement[]> {
  const builder: number[] = [];
  const hand: number[] = [];
  const handMetrics: number[] = [];
  await viaBuilder(reconcile);
  await byHand(reconcile, false);
  await byHand(reconcile, true);
  for (let i = 0; i < 5; i++) {
    builder.push(await viaBuilder(reconcile));
    hand.push(await byHand(reconcile, false));
    handMetrics.push(await byHand(reconcile, true));
  }
  const overhead = (median(builder) / median(hand) - 1) * 100;
  const overheadSameMetrics = (median(builder) / median(handMetrics) - 1) * 100;
  console.log(
    `${label}: builder median ${median(builder).toFixed(3)} s, by hand ${median(hand).toFixed(3)} s (overhead ${overhead.toFixed(1)} %), by hand with the same metrics ${median(handMetrics).toFixed(3)} s (overhead ${overheadSameMetrics.toFixed(1)} %)`,
  );
  return [
    {
      name: `${label}: ${count} objects through the builder`,
      unit: "s",
      higherIsBetter: false,
      runs: builder,
      median: median(builder),
      ...(target === undefined ? {} : { target }),
    },
    {
      name: `${label}: the same wired by hand`,
      unit: "s",
      higherIsBetter: false,
      runs: hand,
      median: median(hand),
    },
    {
      name: `${label}: builder overhead`,
      unit: "%",
      higherIsBetter: false,
      runs: builder.map((b, i) => (b / hand[i]! - 1) * 100),
      median: overhead,
      target: 10,
    },
    {
      name: `${label}: wired by hand with the same prom-client workqueue and reconcile metrics`,
      unit: "s",
      higherIsBetter: false,
      runs: handMetrics,
      median: median(handMetrics),
    },
    {
      name: `${label}: builder overhead over the hand-wired loop with the same metrics`,
      unit: "%",
      higherIsBetter: false,
      runs: builder.map((b, i) => (b / handMetrics[i]! - 1) * 100),
      median: overheadSameMetrics,
      target: 10,
    },
  ];
}

const results = [
  ...(await pair("a/b status write per object", writeStatus, 5)),
  ...(await pair("c/d cache read only", readOnly)),
];
writeResults("runtime", results, { count, workers });
