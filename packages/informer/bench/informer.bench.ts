// Informer benchmark: our SharedIndexInformer, @kubernetes/client-node 1.4's
// informer and a raw baseline (list → JSON.parse → Map; watch lines →
// JSON.parse → Map.set), each in its own process, against one local
// list/watch server in another process serving pre-serialized ~2.7 KB pods.
// Per client and size: initial sync time, CPU, heap and RSS per cached pod
// (after gc), the sync's peak heap and RSS over that steady state (`ours-watchlist`
// syncs by watch list, `sendInitialEvents`, instead of a LIST), then a MODIFIED burst (events/s).
//   pnpm bench informer           (BENCH_SIZES=10000,50000 BENCH_RUNS=3 to change)
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { type Measurement, median, writeResults } from "../../../tools/bench/index.js";

const sizes = (process.env.BENCH_SIZES ?? "10000,50000,100000").split(",").map(Number);
const runs = Number(process.env.BENCH_RUNS ?? 3);
const burstEvents = Number(process.env.BENCH_BURST ?? 100_000);
const kinds = ["raw", "ours", "ours-watchlist", "ours-transform", "client-node"] as const;
type Kind = (typeof kinds)[number];

interface RunResult {
  syncMs: number;
  syncCpuMs: number;
  heapPerPod: number;
  peakHeapOverSteady: number;
  peakRssOverSteady: number;
  rssPerPod: number;
  burstMs: number;
  burstCpuMs: number;
  eventsPerSec: number;
}

const nodeArgs = ["--conditions=@reconcile/source", "--expose-gc", "--import", "tsx"];
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

async function startServer(pods: number): Promise<{ child: ChildProcess; url: string; bytesPerPod: number }> {
  const child = spawn(
    process.execPath,
    [...nodeArgs, here("./server.ts"), String(pods), String(burstEvents)],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  let output = "";
  for await (const chunk of child.stdout!) {
    output += chunk;
    const match = /listening (\d+) (\d+)/.exec(output);
    if (match) return { child, url: `http://127.0.0.1:${match[1]}`, bytesPerPod: Number(match[2]) };
  }
  throw new Error("benchmark server exited before listening");
}

async function runClient(kind: Kind, url: string, pods: number): Promise<RunResult> {
  const child = spawn(
    process.execPath,
    [
      ...nodeArgs,
      "--max-old-space-size=8192",
      here("./client.ts"),
      kind,
      url,
      String(pods),
      String(burstEvents),
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  let output = "";
  child.stdout!.on("data", (chunk) => (output += chunk));
  const [code] = await once(child, "exit");
  if (code !== 0) throw new Error(`${kind} client exited with ${code}`);
  return JSON.parse(output.trim().split("\n").at(-1)!) as RunResult;
}

const measurements: Measurement[] = [];
const summary: Record<string, Record<string, Record<Kind, number>>> = {};
const metrics: { key: keyof RunResult; unit: string; higherIsBetter: boolean }[] = [
  { key: "syncMs", unit: "ms", higherIsBetter: false },
  { key: "syncCpuMs", unit: "ms", higherIsBetter: false },
  { key: "heapPerPod", unit: "bytes", higherIsBetter: false },
  { key: "peakHeapOverSteady", unit: "×", higherIsBetter: false },
  { key: "peakRssOverSteady", unit: "×", higherIsBetter: false },
  { key: "rssPerPod", unit: "bytes", higherIsBetter: false },
  { key: "eventsPerSec", unit: "events/s", higherIsBetter: true },
  { key: "burstCpuMs", unit: "ms", higherIsBetter: false },
];

let bytesPerPod = 0;
for (const pods of sizes) {
  const server = await startServer(pods);
  bytesPerPod = server.bytesPerPod;
  const perSize: Record<string, Record<Kind, number>> = {};
  try {
    // Rounds interleave the clients, so that load from elsewhere on the machine hits them alike.
    const results = new Map<Kind, RunResult[]>(kinds.map((kind) => [kind, []]));
    for (let r = 0; r < runs; r++) {
      for (const kind of kinds) results.get(kind)!.push(await runClient(kind, server.url, pods));
    }
    for (const kind of kinds) {
      for (const { key, unit, higherIsBetter } of metrics) {
        const values = results.get(kind)!.map((result) => result[key]);
        const burstMetric = key === "burstCpuMs" || key === "eventsPerSec";
        const m: Measurement = {
          name: `${kind}: ${key} (${pods} pods${burstMetric ? `, then ${burstEvents} MODIFIED` : ""})`,
          unit,
          higherIsBetter,
          runs: values,
          median: median(values),
        };
        measurements.push(m);
        perSize[key] ??= {} as Record<Kind, number>;
        perSize[key]![kind] = m.median;
      }
      console.log(
        `${pods} pods, ${kind}: sync ${perSize.syncMs![kind].toFixed(0)} ms (cpu ${perSize.syncCpuMs![kind].toFixed(0)}), ` +
          `heap ${perSize.heapPerPod![kind].toFixed(0)} B/pod, peak heap ${perSize.peakHeapOverSteady![kind].toFixed(2)}× and RSS ${perSize.peakRssOverSteady![kind].toFixed(2)}× steady, burst ${perSize.eventsPerSec![kind].toFixed(0)} events/s (cpu ${perSize.burstCpuMs![kind].toFixed(0)} ms)`,
      );
    }
  } finally {
    server.child.kill("SIGTERM");
    await once(server.child, "exit");
  }
  summary[String(pods)] = perSize;
}

const ratios: Record<string, Record<string, number>> = {};
console.log(
  "\npods     | sync ms raw / ours / ours+tf / peer | ours÷raw peer÷raw | events/s raw / ours / peer | ours÷raw ours÷peer | heap B/pod raw / ours / ours+tf / peer | ours÷peer tf÷peer",
);
for (const [pods, s] of Object.entries(summary)) {
  const sync = s.syncMs!;
  const eps = s.eventsPerSec!;
  const heap = s.heapPerPod!;
  const syncCpu = s.syncCpuMs!;
  const burstCpu = s.burstCpuMs!;
  ratios[pods] = {
    syncCpuOursOverRaw: syncCpu.ours / syncCpu.raw,
    syncCpuPeerOverRaw: syncCpu["client-node"] / syncCpu.raw,
    burstCpuOursOverRaw: burstCpu.ours / burstCpu.raw,
    burstCpuPeerOverRaw: burstCpu["client-node"] / burstCpu.raw,
    syncOursOverRaw: sync.ours / sync.raw,
    syncPeerOverRaw: sync["client-node"] / sync.raw,
    syncPeerOverOurs: sync["client-node"] / sync.ours,
    eventsOursOverRaw: eps.ours / eps.raw,
    eventsOursOverPeer: eps.ours / eps["client-node"],
    eventsPeerOverRaw: eps["client-node"] / eps.raw,
    heapOursOverPeer: heap.ours / heap["client-node"],
    heapTransformOverPeer: heap["ours-transform"] / heap["client-node"],
    heapOursOverRaw: heap.ours / heap.raw,
  };
  const r = ratios[pods]!;
  const f = (n: number) => n.toFixed(0);
  const x = (n: number) => n.toFixed(2);
  console.log(
    `${pods.padEnd(8)} | ${f(sync.raw)} / ${f(sync.ours)} / ${f(sync["ours-transform"])} / ${f(sync["client-node"])} | ${x(r.syncOursOverRaw!)} ${x(r.syncPeerOverRaw!)} | ` +
      `${f(eps.raw)} / ${f(eps.ours)} / ${f(eps["client-node"])} | ${x(r.eventsOursOverRaw!)} ${x(r.eventsOursOverPeer!)} | ` +
      `${f(heap.raw)} / ${f(heap.ours)} / ${f(heap["ours-transform"])} / ${f(heap["client-node"])} | ${x(r.heapOursOverPeer!)} ${x(r.heapTransformOverPeer!)}`,
  );
}

writeResults("informer", measurements, {
  podBytes: bytesPerPod,
  burstEvents,
  runsPerPoint: runs,
  peer: "@kubernetes/client-node 1.4.0 makeInformer",
  summary,
  ratios,
  targets: {
    syncOursOverRaw: "<= 1.25",
    eventsOursOverRaw: ">= 0.9",
    eventsOursOverPeer: ">= 1.1",
    heapOursOverPeer: "<= 0.75",
    heapTransformOverPeer: "<= 0.6",
  },
});
