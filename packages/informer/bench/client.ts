// One benchmark client, run in its own process: `client.ts <kind> <baseUrl> <pods> <burstEvents>`.
// kind: ours | ours-watchlist | ours-transform | client-node | raw. Prints one JSON line:
// { syncMs, syncCpuMs, heapPerPod, peakHeapOverSteady, peakRssOverSteady, rssPerPod, burstMs, burstCpuMs,
//   eventsPerSec }.
import type { Pod } from "@reconcile/api";
import { SharedIndexInformer } from "../src/index.js";
import { httpListerWatcher, readAll, request, splitLines } from "./http-lister-watcher.js";

const [kind, baseUrl, podsArg, burstArg] = process.argv.slice(2) as [string, string, string, string];
const podCount = Number(podsArg);
const burstEvents = Number(burstArg);
const lastResourceVersion = String(1_000_000 + burstEvents);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error("run with --expose-gc");

interface Client {
  /** Starts; resolves once `podCount` objects are cached and handled. */
  sync(): Promise<void>;
  /** Resolves when the update with the last burst resourceVersion has been handled. */
  burstDone(): Promise<void>;
  /** Keeps the cache reachable while memory is measured. */
  size(): number;
  stop(): Promise<void> | void;
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

function ours(transform: boolean, useWatchList = false): Client {
  const informer = new SharedIndexInformer<Pod>({
    listerWatcher: httpListerWatcher<Pod>(baseUrl, "/api/v1/pods"),
    name: "pods",
    detectMutations: false,
    useWatchList,
  });
  if (transform) {
    informer.setTransform((pod) => {
      // Assigning undefined keeps the object's shape (delete would make it a slow dictionary object).
      if (pod.metadata) (pod.metadata as { managedFields?: unknown }).managedFields = undefined;
      return pod;
    });
  }
  const synced = deferred();
  const burst = deferred();
  let adds = 0;
  informer.addEventHandler({
    onAdd: () => {
      if (++adds === podCount) synced.resolve();
    },
    onUpdate: (_old, pod) => {
      if (pod.metadata?.resourceVersion === lastResourceVersion) burst.resolve();
    },
  });
  const controller = new AbortController();
  let running: Promise<void> | undefined;
  return {
    sync: () => {
      running = informer.run({ signal: controller.signal });
      return synced.promise;
    },
    burstDone: () => burst.promise,
    size: () => informer.getIndexer().size,
    stop: async () => {
      controller.abort();
      await running;
    },
  };
}

function raw(): Client {
  const cache = new Map<string, Pod>();
  const burst = deferred();
  const controller = new AbortController();
  return {
    sync: async () => {
      const res = await request(new URL("/api/v1/pods", baseUrl));
      const list = JSON.parse(await readAll(res)) as { metadata: { resourceVersion: string }; items: Pod[] };
      for (const pod of list.items) cache.set(`${pod.metadata!.namespace}/${pod.metadata!.name}`, pod);
      const watch = await request(
        new URL(`/api/v1/pods?watch=true&resourceVersion=${list.metadata.resourceVersion}`, baseUrl),
        controller.signal,
      );
      void (async () => {
        for await (const event of splitLines<{ type: string; object: Pod }>(watch)) {
          const pod = event.object;
          cache.set(`${pod.metadata!.namespace}/${pod.metadata!.name}`, pod);
          if (pod.metadata?.resourceVersion === lastResourceVersion) burst.resolve();
        }
      })();
    },
    burstDone: () => burst.promise,
    size: () => cache.size,
    stop: () => controller.abort(),
  };
}

async function clientNode(): Promise<Client> {
  const k8s = await import("@kubernetes/client-node");
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: "bench", server: baseUrl, skipTLSVerify: true }],
    users: [{ name: "bench" }],
    contexts: [{ name: "bench", cluster: "bench", user: "bench" }],
    currentContext: "bench",
  });
  const api = kc.makeApiClient(k8s.CoreV1Api);
  const informer = k8s.makeInformer(kc, "/api/v1/pods", () => api.listPodForAllNamespaces());
  const synced = deferred();
  const burst = deferred();
  let adds = 0;
  informer.on("add", () => {
    if (++adds === podCount) synced.resolve();
  });
  informer.on("update", (pod) => {
    if (pod.metadata?.resourceVersion === lastResourceVersion) burst.resolve();
  });
  let stopping = false;
  informer.on("error", (error) => {
    if (!stopping) console.error("client-node informer error:", error);
  });
  return {
    sync: async () => {
      await informer.start();
      await synced.promise;
    },
    burstDone: () => burst.promise,
    size: () => informer.list().length,
    stop: () => {
      stopping = true;
      return informer.stop();
    },
  };
}

function cpuMs(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
}

function settledMemory(): NodeJS.MemoryUsage {
  gc!();
  gc!();
  return process.memoryUsage();
}

const client =
  kind === "ours"
    ? ours(false)
    : kind === "ours-watchlist"
      ? ours(false, true)
      : kind === "ours-transform"
        ? ours(true)
        : kind === "raw"
          ? raw()
          : kind === "client-node"
            ? await clientNode()
            : undefined;
if (client === undefined) throw new Error(`unknown client kind ${kind}`);

// Warm the connection pool and the fetch machinery outside the measurement.
await readAll(await request(new URL("/healthz", baseUrl)));
const before = settledMemory();
let cpu = process.cpuUsage();
let start = performance.now();
// The heap's high point during the sync, sampled between tasks (a LIST's whole body is parsed in
// one task, so its true peak lies between samples: maxRSS below is the process's own peak).
let peakHeap = process.memoryUsage().heapUsed;
const sampler = setInterval(() => {
  peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
}, 5);
await client.sync();
clearInterval(sampler);
peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
const syncMs = performance.now() - start;
const syncCpuMs = cpuMs(cpu);
const maxRssKB = process.resourceUsage().maxRSS;
const after = settledMemory();
const cached = client.size();
if (cached !== podCount) throw new Error(`${kind}: cached ${cached} pods, expected ${podCount}`);

cpu = process.cpuUsage();
start = performance.now();
const burstRequest = request(new URL("/burst", baseUrl)).then(readAll);
await client.burstDone();
const burstMs = performance.now() - start;
const burstCpuMs = cpuMs(cpu);
await burstRequest;
await client.stop();

process.stdout.write(
  `${JSON.stringify({
    syncMs,
    syncCpuMs,
    heapPerPod: (after.heapUsed - before.heapUsed) / podCount,
    peakHeapOverSteady: peakHeap / after.heapUsed,
    peakRssOverSteady: (maxRssKB * 1024) / after.rss,
    rssPerPod: (after.rss - before.rss) / podCount,
    burstMs,
    burstCpuMs,
    eventsPerSec: burstEvents / (burstMs / 1000),
  })}\n`,
);
process.exit(0);
