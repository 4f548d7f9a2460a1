// Our HTTP client against @kubernetes/client-node 1.4, over HTTP on loopback,
// against the embedded API server. The server and each client run in their
// own processes (bench/http/server.ts, bench/http/client.ts), so each
// client's CPU time is its own.
//   list: 100,000 pods (~2.5 KB each) in one request, and in pages of 500
//   watch: 100,000 MODIFIED events, from the first received to the last
// Each is checked (every pod listed; every event once, in order) and measured
// after a warm-up, 5 times (3 when one sample takes over 30 s), the samples
// of the two clients alternating.
// Environment: BENCH_HTTP_PODS (default 100000), BENCH_HTTP_RUNS (default 5),
// BENCH_HTTP_CPU_PROF=<dir> runs the clients with --cpu-prof into <dir>/<client>/,
// BENCH_HTTP_SCENARIOS=watch,list (a comma-separated subset of list,
// list-paged, watch) runs only those.
import { type ChildProcess, execFileSync, fork } from "node:child_process";
import os from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Measurement, measure, median, writeResults } from "../../../tools/bench/index.js";
import type { ClientMessage, ClientRequest, Implementation } from "./http/client.js";
import type { ServerMessage, ServerRequest } from "./http/server.js";

const podCount = Number(process.env.BENCH_HTTP_PODS ?? 100_000);
const defaultRuns = Number(process.env.BENCH_HTTP_RUNS ?? 5);
const profileDir = process.env.BENCH_HTTP_CPU_PROF;
const pageSize = 500;
const slowSampleMs = 30_000;
const here = join(fileURLToPath(import.meta.url), "..", "http");
const childArgv = ["--conditions=@reconcile/source", "--import", "tsx", "--max-old-space-size=8192"];

type Message = { kind: string };

// Children still running when this process exits (a failed check, an exception) go with it.
const children = new Set<ChildProcess>();
process.on("exit", () => {
  for (const child of children) child.kill();
});

/** A child process spoken to with IPC messages. */
class Child<Out extends Message, In> {
  readonly process: ChildProcess;
  private readonly queue: Out[] = [];
  private waiter: (() => void) | undefined;
  private exited: Error | undefined;

  constructor(file: string, args: string[], options: { env?: NodeJS.ProcessEnv; profile?: string } = {}) {
    const execArgv =
      options.profile === undefined
        ? childArgv
        : [...childArgv, "--cpu-prof", `--cpu-prof-dir=${join(profileDir ?? "", options.profile)}`];
    this.process = fork(join(here, file), args, { execArgv, env: { ...process.env, ...options.env } });
    this.process.on("message", (message: Out) => {
      this.queue.push(message);
      this.waiter?.();
    });
    children.add(this.process);
    this.process.on("exit", (code, signal) => {
      children.delete(this.process);
      this.exited = new Error(`${file} ${args.join(" ")} exited (${signal ?? code})`);
      this.waiter?.();
    });
  }

  send(message: In): void {
    this.process.send(message as object);
  }

  /** The next message of this kind; a "failed" message or an exit rejects. */
  async next<K extends Out["kind"]>(kind: K): Promise<Extract<Out, { kind: K }>> {
    for (;;) {
      const index = this.queue.findIndex((m) => m.kind === kind || m.kind === "failed");
      if (index !== -1) {
        const message = this.queue.splice(index, 1)[0]!;
        if (message.kind === "failed") throw new Error((message as { message?: string }).message);
        return message as Extract<Out, { kind: K }>;
      }
      if (this.exited) throw this.exited;
      await new Promise<void>((resolve) => (this.waiter = resolve));
      this.waiter = undefined;
    }
  }

  async stop(message: In): Promise<void> {
    if (this.process.exitCode !== null) return;
    const exited = new Promise((resolve) => this.process.once("exit", resolve));
    this.send(message);
    await exited;
  }
}

const loadAverages: Record<string, number[]> = {};
const uptime = (): string => execFileSync("uptime", { encoding: "utf8" }).trim();
const uptimeAtStart = uptime();
console.log(`load: ${uptimeAtStart}`);

console.log(`seeding ${podCount} pods in the server process…`);
const server = new Child<ServerMessage, ServerRequest>("server.ts", [String(podCount)]);
const ready = await server.next("ready");
console.log(
  `server at ${ready.url}, ${podCount} pods of ${ready.podBytes} bytes seeded in ${(ready.seedMs / 1000).toFixed(1)} s`,
);
let resourceVersion = ready.resourceVersion;
let round = 0;

const implementations: Implementation[] = ["ours", "client-node"];
const clients = new Map<Implementation, Child<ClientMessage, ClientRequest>>();
for (const implementation of implementations) {
  const child = new Child<ClientMessage, ClientRequest>("client.ts", [implementation], {
    env: { BENCH_KUBECONFIG: ready.kubeconfig },
    ...(profileDir === undefined ? {} : { profile: implementation }),
  });
  await child.next("started");
  clients.set(implementation, child);
}

interface Sample {
  wallMs: number;
  cpuMs: number;
}

async function listSample(
  client: Child<ClientMessage, ClientRequest>,
  limit: number | undefined,
): Promise<Sample> {
  client.send({ kind: "list", limit });
  const listed = await client.next("listed");
  if (listed.count !== podCount) throw new Error(`listed ${listed.count} pods, expected ${podCount}`);
  const pages = limit === undefined ? 1 : Math.ceil(podCount / limit);
  if (listed.pages !== pages) throw new Error(`listed in ${listed.pages} pages, expected ${pages}`);
  return listed;
}

const writeMs: number[] = [];
async function watchSample(client: Child<ClientMessage, ClientRequest>): Promise<Sample> {
  client.send({ kind: "watch", resourceVersion, expected: podCount });
  await client.next("watching");
  server.send({ kind: "update", round: ++round });
  const [updated, watched] = await Promise.all([server.next("updated"), client.next("watched")]);
  writeMs.push(updated.writeMs);
  const expectedFirst = String(Number(updated.fromResourceVersion) + 1);
  const problems = [
    watched.count === podCount ? "" : `${watched.count} events`,
    watched.inOrder ? "" : "events out of order or not MODIFIED",
    watched.distinctPods === podCount ? "" : `${watched.distinctPods} distinct pods`,
    updated.fromResourceVersion === resourceVersion
      ? ""
      : `the server was at ${updated.fromResourceVersion}, not ${resourceVersion}`,
    watched.firstResourceVersion === expectedFirst
      ? ""
      : `first event at ${watched.firstResourceVersion}, not ${expectedFirst}`,
    watched.lastResourceVersion === updated.toResourceVersion
      ? ""
      : `last event at ${watched.lastResourceVersion}, not ${updated.toResourceVersion}`,
  ].filter(Boolean);
  if (problems.length > 0)
    throw new Error(`the watch did not see every update once in order: ${problems.join("; ")}`);
  resourceVersion = updated.toResourceVersion;
  return watched;
}

const scenarios: {
  key: string;
  name: string;
  sample: (client: Child<ClientMessage, ClientRequest>) => Promise<Sample>;
}[] = [
  { key: "list", name: `list ${podCount} pods, one request`, sample: (c) => listSample(c, undefined) },
  {
    key: "list-paged",
    name: `list ${podCount} pods, limit ${pageSize}`,
    sample: (c) => listSample(c, pageSize),
  },
  { key: "watch", name: `watch ${podCount} MODIFIED events`, sample: watchSample },
];

const only = process.env.BENCH_HTTP_SCENARIOS?.split(",");
const measurements: Measurement[] = [];
const ratios: Record<string, { wall: number; cpu: number }> = {};
for (const scenario of scenarios.filter((s) => only === undefined || only.includes(s.key))) {
  const medians = new Map<Implementation, { wall: number; cpu: number }>();
  // The warm-ups also tell how long a sample takes.
  let runs = defaultRuns;
  for (const implementation of implementations) {
    const warmup = await scenario.sample(clients.get(implementation)!);
    if (warmup.wallMs > slowSampleMs) runs = Math.min(3, defaultRuns);
  }
  if (runs < defaultRuns)
    console.log(`${scenario.name}: a sample takes over ${slowSampleMs / 1000} s, so ${runs} runs`);
  // Samples alternate between the clients (ABBA...), so that both see the same load on a shared machine.
  const taken = new Map<Implementation, Sample[]>(implementations.map((i) => [i, []]));
  for (let run = 0; run < runs; run++) {
    const order = run % 2 === 0 ? implementations : [...implementations].reverse();
    for (const implementation of order) {
      taken.get(implementation)!.push(await scenario.sample(clients.get(implementation)!));
    }
  }
  for (const implementation of implementations) {
    const samples = taken.get(implementation)!;
    const label = `${scenario.name}: ${implementation}`;
    // `measure` only summarises here: the samples were taken above, alternating.
    let next = 0;
    const wall = await measure(
      { name: `${label}, wall time`, unit: "ms", higherIsBetter: false, runs, warmups: 0 },
      () => samples[next++]!.wallMs,
    );
    const cpu = samples.map((sample) => sample.cpuMs);
    loadAverages[label] = os.loadavg();
    const cpuMedian = median(cpu);
    console.log(`${label}, client CPU time: median ${cpuMedian.toFixed(0)} ms`);
    measurements.push({
      ...wall,
      extra: {
        implementation,
        scenario: scenario.key,
        cpuMsRuns: cpu,
        cpuMsMedian: cpuMedian,
        loadAverage: os.loadavg(),
      },
    });
    if (scenario.key === "watch") {
      const rates = wall.runs.map((ms) => (podCount * 1000) / ms);
      measurements.push({
        name: `${label}, events/s`,
        unit: "events/s",
        higherIsBetter: true,
        runs: rates,
        median: median(rates),
        extra: { implementation, scenario: scenario.key },
      });
      console.log(`${label}: median ${median(rates).toFixed(0)} events/s`);
    }
    medians.set(implementation, { wall: wall.median, cpu: cpuMedian });
  }
  const ours = medians.get("ours")!;
  const peer = medians.get("client-node")!;
  ratios[scenario.key] = { wall: ours.wall / peer.wall, cpu: ours.cpu / peer.cpu };
  console.log(
    `${scenario.name}: ours/client-node wall ${ratios[scenario.key]!.wall.toFixed(2)}, CPU ${ratios[scenario.key]!.cpu.toFixed(2)}`,
  );
}

for (const client of clients.values()) await client.stop({ kind: "stop" });
await server.stop({ kind: "stop" });
const uptimeAtEnd = uptime();
console.log(`load: ${uptimeAtEnd}`);

writeResults(only === undefined ? "apiserver-http" : `apiserver-http-${only.join("-")}`, measurements, {
  description:
    "@reconcile/client's HttpClient against @kubernetes/client-node 1.4.0 over HTTP on loopback, each in its own process, against the embedded API server in a third; ratios are ours/client-node of the medians (below 1: ours is faster)",
  pods: podCount,
  podBytes: ready.podBytes,
  pageSize,
  ratios,
  serverWriteMs: { runs: writeMs, median: writeMs.length ? median(writeMs) : undefined },
  load: { atStart: uptimeAtStart, atEnd: uptimeAtEnd, perMeasurement: loadAverages },
});
