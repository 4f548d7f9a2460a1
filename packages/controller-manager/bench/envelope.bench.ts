// Kubernetes' scalability envelope in one process: the embedded API server,
// the controller manager (Deployment and ReplicaSet controllers), the
// scheduler and NODES simulated nodes (default 5,000), every component with
// upstream's defaults, on the real clock.
//
// The shape is upstream's load test (perf-tests clusterloader2
// `testing/load`): PODS_PER_NODE (30) pods per node, one namespace per 100
// nodes, and in each namespace a quarter of its pods in Deployments of 250,
// a quarter in Deployments of 30 and the rest in Deployments of 5. Unlike
// the load test, which creates objects at 10 per second, every Deployment is
// created at once: the phases measure what the control plane can do.
//
// Phases, each timed in wall and CPU seconds:
//   create  every Deployment created → every one Available;
//   roll    every tenth Deployment of each size (a tenth of the pods) rolled
//           to a new image → complete;
//   delete  every Deployment deleted (background propagation, as kubectl
//           does) → no pod left.
// Reported: pod startup latency created → Ready p50/p99 during `create`
// (SLO ≤ 5 s; goal ≤ 2 s), each mutating call's latency p99 by verb and
// resource as the components see it through the in-process client (SLO
// ≤ 1 s), API writes per pod, peak RSS (goal ≤ 16 GiB) and the heap and
// RSS per pod once `create` is done (goal ≤ 100 KB per pod).
//
// PROFILE_PHASE=create|roll|delete writes a V8 CPU profile of that phase to
// bench-results/envelope-<nodes>-<phase>.cpuprofile; HEAP_SNAPSHOT=1 a heap
// snapshot once `create` is done, to bench-results/envelope-<nodes>-create.heapsnapshot;
// ALLOC_PROFILE_PHASE=create|roll|delete a sampling profile of every
// allocation during that phase, the collected ones included (what the
// garbage collector has to chase), to envelope-<nodes>-<phase>.heapprofile.
//
// ETCD=1 keeps the objects in a local etcd (Debian's etcd-server, started
// over a temporary directory, its raft log kept to 10,000 entries and its
// store allowed 8 GiB) behind the API server's watch cache, as `serve --etcd`
// does; the results go to envelope-<nodes>-etcd.json, and etcd's own memory
// (its process's peak RSS) is reported beside the cluster's.
//
// Each run (RUNS, default 1) is a child process of its own, since peak RSS
// is the process's; the cluster's heap needs more than Node's default limit
// past ~20,000 pods, so the child gets `--max-old-space-size` (HEAP_MB,
// default 20,480). It also gets the young generation `npm run demo -- serve`
// runs with, `--max-semi-space-size=32` (SEMI_SPACE_MB; 0 leaves V8's 16):
// a whole cluster's short-lived copies outgrow the default and are promoted
// to the old generation, which at 1,000 nodes cost a quarter of the create
// phase.
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { join } from "node:path";
import { writeHeapSnapshot } from "node:v8";
import {
  type DeepReadonly,
  type Deployment,
  deployments,
  isPodReady,
  namespaces,
  type Pod,
} from "@reconcile/api";
import { type Client, listerWatcher } from "@reconcile/client";
import { type ResourceEventHandler, SharedIndexInformer } from "@reconcile/informer";
import { fromRuns, percentile, writeResults } from "../../../tools/bench/index.js";
import { CachedStorage, EtcdStorage, startEtcd } from "../../storage-etcd/src/index.js";
import { observeWrites, startCluster } from "./cluster.js";

const nodeCount = Number(process.env.NODES ?? 5000);
const podsPerNode = Number(process.env.PODS_PER_NODE ?? 30);
const runs = Number(process.env.RUNS ?? 1);
const heapMb = Number(process.env.HEAP_MB ?? 20_480);
const semiSpaceMb = Number(process.env.SEMI_SPACE_MB ?? 32);
const useEtcd = process.env.ETCD === "1";
const nodesPerNamespace = Math.min(nodeCount, 100);
const sizes = { big: 250, medium: 30, small: 5 } as const;

/** One Deployment of the load: its namespace, name, replicas and size class. */
interface Group {
  namespace: string;
  name: string;
  replicas: number;
  size: keyof typeof sizes;
  /** Its index among the namespace's Deployments of its size. */
  index: number;
}

/** The load test's Deployments: per namespace, ¼ of its pods in big groups, ¼ in medium, the rest small. */
function load(): Group[] {
  const groups: Group[] = [];
  const namespaceCount = Math.max(1, Math.floor(nodeCount / nodesPerNamespace));
  const podsPerNamespace = nodesPerNamespace * podsPerNode;
  const big = Math.floor(podsPerNamespace / (4 * sizes.big));
  const medium = Math.floor(podsPerNamespace / (4 * sizes.medium));
  const small = Math.floor((podsPerNamespace - big * sizes.big - medium * sizes.medium) / sizes.small);
  for (let n = 1; n <= namespaceCount; n++) {
    const namespace = `load-${n}`;
    for (const [size, count] of [
      ["big", big],
      ["medium", medium],
      ["small", small],
    ] as const) {
      for (let index = 0; index < count; index++)
        groups.push({ namespace, name: `${size}-${index}`, replicas: sizes[size], size, index });
    }
  }
  return groups;
}

interface Phase {
  seconds: number;
  cpuSeconds: number;
  writes: number;
}

interface Run {
  nodes: number;
  pods: number;
  deployments: number;
  phases: Record<"create" | "roll" | "delete", Phase>;
  startupMs: { p50: number; p99: number };
  /** Per `verb resource`: calls and p99 in ms, over the whole run. */
  mutating: Record<string, { calls: number; p99Ms: number }>;
  writesPerPod: number;
  peakRssMb: number;
  /** With ETCD=1: the etcd process's peak RSS. */
  etcdPeakRssMb?: number | undefined;
  /** After `create`, after a full GC. */
  heapUsedMb: number;
  rssMb: number;
  heapBytesPerPod: number;
  rssBytesPerPod: number;
}

async function once(): Promise<Run> {
  const groups = load();
  const podTotal = groups.reduce((sum, g) => sum + g.replicas, 0);
  console.log(
    `${nodeCount} nodes, ${podTotal} pods in ${groups.length} Deployments across ${new Set(groups.map((g) => g.namespace)).size} namespaces`,
  );
  // Every component's writes: how many, and how long each took, by verb and resource.
  const latencies = new Map<string, number[]>();
  let writes = 0;
  const timed = (client: Client) =>
    observeWrites(client, (key) => {
      writes++;
      const started = performance.now();
      return () => {
        let list = latencies.get(key);
        if (list === undefined) latencies.set(key, (list = []));
        list.push(performance.now() - started);
      };
    });
  // Pod startup: first seen (ADDED) → first seen Ready.
  const seen = new Map<string, number>();
  const startup: number[] = [];
  let podCount = 0;
  let readyCount = 0;
  let watchingStartup = true;
  const onPods: ResourceEventHandler<Pod> = {
    onAdd: (pod) => {
      podCount++;
      if (watchingStartup) seen.set(pod.metadata?.uid ?? "", performance.now());
    },
    onUpdate: (_, pod) => {
      const uid = pod.metadata?.uid ?? "";
      const added = seen.get(uid);
      if (added !== undefined && isPodReady(pod)) {
        startup.push(performance.now() - added);
        seen.delete(uid);
        readyCount++;
      }
    },
    onDelete: () => {
      podCount--;
      wake();
    },
  };
  // Deployments reached their goal: `${namespace}/${name}` → the image they reached.
  const reached = new Map<string, string>();
  const note = (d: DeepReadonly<Deployment>) => {
    const key = `${d.metadata?.namespace}/${d.metadata?.name}`;
    const image = d.spec?.template.spec?.containers[0]?.image ?? "";
    const s = d.status;
    const replicas = d.spec?.replicas ?? 1;
    if (
      s?.observedGeneration === d.metadata?.generation &&
      s?.updatedReplicas === replicas &&
      s?.replicas === replicas &&
      s?.availableReplicas === replicas
    ) {
      reached.set(key, image);
      wake();
    }
  };
  let waiter: (() => void) | undefined;
  const wake = () => waiter?.();
  const until = async (done: () => boolean, what: string, timeoutMs = 1_800_000) => {
    const deadline = performance.now() + timeoutMs;
    while (!done()) {
      if (performance.now() > deadline) throw new Error(`${what}: not reached within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        waiter = resolve;
        setTimeout(resolve, 100);
      });
    }
  };

  // PROGRESS=1 prints what the cluster has reached every 10 s.
  const progress =
    process.env.PROGRESS === undefined
      ? undefined
      : setInterval(() => {
          const rss = process.memoryUsage().rss / 2 ** 20;
          console.error(
            `  ${podCount} pods, ${readyCount} Ready, ${reached.size} Deployments at goal, RSS ${rss.toFixed(0)} MB`,
          );
        }, 10_000);
  const etcd = useEtcd
    ? await startEtcd({ snapshotCount: 10_000, quotaBackendBytes: 8 * 1024 ** 3 })
    : undefined;
  const cluster = await startCluster({
    storage:
      etcd === undefined
        ? undefined
        : new CachedStorage({ storage: new EtcdStorage({ endpoints: etcd.endpoints.join(",") }) }),
    nodes: nodeCount,
    controllers: "replicaset,deployment",
    client: timed,
    prepare: ({ podInformer }) => podInformer.addEventHandler(onPods),
  });
  const { client } = cluster;
  const deploymentInformer = new SharedIndexInformer<Deployment>({
    listerWatcher: listerWatcher(client, deployments),
    resource: deployments,
  });
  deploymentInformer.addEventHandler({ onAdd: note, onUpdate: (_, d) => note(d) });
  const deploymentsSynced = deploymentInformer.run(cluster.signal);
  await deploymentInformer.whenSynced();
  for (const namespace of new Set(groups.map((g) => g.namespace)))
    await client.resource(namespaces).create({ metadata: { name: namespace } });

  const phase = async (name: string, body: () => Promise<void>): Promise<Phase> => {
    const writesAtStart = writes;
    const started = performance.now();
    const cpuAtStart = process.cpuUsage();
    const profiling = process.env.PROFILE_PHASE === name ? await startProfile() : undefined;
    const sampling = process.env.ALLOC_PROFILE_PHASE === name ? await startAllocationSampling() : undefined;
    await body();
    const cpu = process.cpuUsage(cpuAtStart);
    if (profiling !== undefined) await profiling(`envelope-${nodeCount}-${name}.cpuprofile`);
    if (sampling !== undefined) await sampling(`envelope-${nodeCount}-${name}.heapprofile`);
    return {
      seconds: (performance.now() - started) / 1000,
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
      writes: writes - writesAtStart,
    };
  };

  const create = await phase("create", async () => {
    await Promise.all(
      groups.map((g) =>
        client.resource(deployments, g.namespace).create(deployment(g, "registry.k8s.io/pause:3.9")),
      ),
    );
    await until(() => reached.size === groups.length, "create");
  });
  watchingStartup = false;
  console.log(`create: ${create.seconds.toFixed(1)} s, ${create.cpuSeconds.toFixed(1)} CPU-s`);
  globalThis.gc?.();
  const memory = process.memoryUsage();
  if (process.env.HEAP_SNAPSHOT === "1") {
    mkdirSync("bench-results", { recursive: true });
    const file = writeHeapSnapshot(join("bench-results", `envelope-${nodeCount}-create.heapsnapshot`));
    console.error(`  wrote ${file}`);
  }

  const rolled = groups.filter((g) => g.index % 10 === 0);
  const roll = await phase("roll", async () => {
    await Promise.all(
      rolled.map(async (g) => {
        const d = await client.resource(deployments, g.namespace).get(g.name);
        d.spec!.template.spec!.containers[0]!.image = "registry.k8s.io/pause:3.10";
        reached.delete(`${g.namespace}/${g.name}`);
        await client.resource(deployments, g.namespace).update(d);
      }),
    );
    await until(
      () => rolled.every((g) => reached.get(`${g.namespace}/${g.name}`) === "registry.k8s.io/pause:3.10"),
      "roll",
    );
  });
  console.log(
    `roll: ${rolled.length} Deployments, ${rolled.reduce((s, g) => s + g.replicas, 0)} pods, ${roll.seconds.toFixed(1)} s, ${roll.cpuSeconds.toFixed(1)} CPU-s`,
  );

  const remove = await phase("delete", async () => {
    await Promise.all(
      groups.map((g) =>
        client.resource(deployments, g.namespace).delete(g.name, { propagationPolicy: "Background" }),
      ),
    );
    await until(() => podCount === 0, "delete");
  });
  console.log(`delete: ${remove.seconds.toFixed(1)} s, ${remove.cpuSeconds.toFixed(1)} CPU-s`);

  clearInterval(progress);
  await cluster.close();
  const etcdPid = etcd?.members[0]?.pid;
  const etcdPeakRssMb = etcdPid === undefined ? undefined : peakRssOf(etcdPid);
  await etcd?.stop();
  await deploymentsSynced;

  const mutating: Run["mutating"] = {};
  for (const [key, values] of [...latencies].sort(([a], [b]) => a.localeCompare(b)))
    mutating[key] = { calls: values.length, p99Ms: percentile(values, 0.99) };
  const totalWrites = create.writes + roll.writes + remove.writes;
  return {
    nodes: nodeCount,
    pods: podTotal,
    deployments: groups.length,
    phases: { create, roll, delete: remove },
    startupMs: { p50: percentile(startup, 0.5), p99: percentile(startup, 0.99) },
    mutating,
    writesPerPod: totalWrites / podTotal,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    heapUsedMb: memory.heapUsed / 2 ** 20,
    rssMb: memory.rss / 2 ** 20,
    heapBytesPerPod: memory.heapUsed / podTotal,
    rssBytesPerPod: memory.rss / podTotal,
    ...(etcdPeakRssMb === undefined ? {} : { etcdPeakRssMb }),
  };
}

/** A process's peak resident set (`VmHWM`), in MB, while it runs. */
function peakRssOf(pid: number): number | undefined {
  const match = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return match === null ? undefined : Number(match[1]) / 1024;
}

function deployment(g: Group, image: string): Deployment {
  const labels = { app: g.name };
  return {
    metadata: { name: g.name, namespace: g.namespace },
    spec: {
      replicas: g.replicas,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          containers: [{ name: "pause", image, resources: { requests: { cpu: "10m", memory: "16Mi" } } }],
        },
      },
    },
  };
}

/** Starts V8's CPU profiler; the function it returns stops it and writes the profile to bench-results/. */
async function startProfile(): Promise<(file: string) => Promise<void>> {
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.start");
  return async (file) => {
    const { profile } = await session.post("Profiler.stop");
    mkdirSync("bench-results", { recursive: true });
    writeFileSync(join("bench-results", file), JSON.stringify(profile));
    console.error(`  wrote bench-results/${file}`);
    session.disconnect();
  };
}

/** Starts V8's sampling heap profiler over every allocation; the function it returns stops it and writes the profile. */
async function startAllocationSampling(): Promise<(file: string) => Promise<void>> {
  const session = new Session();
  session.connect();
  await session.post("HeapProfiler.enable");
  await session.post("HeapProfiler.startSampling", {
    samplingInterval: 256 * 1024,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  return async (file) => {
    const { profile } = await session.post("HeapProfiler.stopSampling");
    mkdirSync("bench-results", { recursive: true });
    writeFileSync(join("bench-results", file), JSON.stringify(profile));
    console.error(`  wrote bench-results/${file}`);
    session.disconnect();
  };
}

function print(run: Run): void {
  const p = run.phases;
  console.log(
    `${run.nodes} nodes, ${run.pods} pods: create ${p.create.seconds.toFixed(1)} s (${p.create.cpuSeconds.toFixed(1)} CPU-s), roll ${p.roll.seconds.toFixed(1)} s (${p.roll.cpuSeconds.toFixed(1)} CPU-s), delete ${p.delete.seconds.toFixed(1)} s (${p.delete.cpuSeconds.toFixed(1)} CPU-s)`,
  );
  console.log(
    `startup p50 ${run.startupMs.p50.toFixed(0)} ms, p99 ${run.startupMs.p99.toFixed(0)} ms; ${run.writesPerPod.toFixed(2)} writes/pod; peak RSS ${run.peakRssMb.toFixed(0)} MB; after create heap ${run.heapUsedMb.toFixed(0)} MB (${(run.heapBytesPerPod / 1024).toFixed(1)} KB/pod), RSS ${run.rssMb.toFixed(0)} MB (${(run.rssBytesPerPod / 1024).toFixed(1)} KB/pod)${run.etcdPeakRssMb === undefined ? "" : `; etcd peak RSS ${run.etcdPeakRssMb.toFixed(0)} MB`}`,
  );
  for (const [key, m] of Object.entries(run.mutating))
    console.log(`  ${key}: ${m.calls} calls, p99 ${m.p99Ms.toFixed(1)} ms`);
}

if (process.env.ENVELOPE_CHILD === undefined) {
  // The parent: each run in a fresh process with room for the cluster's heap.
  const results: Run[] = [];
  for (let i = 0; i < runs; i++) {
    const child = spawnSync(
      process.execPath,
      [
        ...process.execArgv,
        `--max-old-space-size=${heapMb}`,
        ...(semiSpaceMb > 0 ? [`--max-semi-space-size=${semiSpaceMb}`] : []),
        process.argv[1]!,
      ],
      {
        env: { ...process.env, ENVELOPE_CHILD: "1" },
        stdio: ["ignore", "pipe", "inherit"],
        encoding: "utf8",
        maxBuffer: 1 << 26,
      },
    );
    process.stdout.write(child.stdout);
    if (child.status !== 0) throw new Error(`run ${i + 1} failed (exit ${child.status ?? child.signal})`);
    const line = child.stdout.split("\n").find((l) => l.startsWith("RESULT "));
    results.push(JSON.parse(line!.slice("RESULT ".length)) as Run);
  }
  const m = (name: string, unit: string, pick: (r: Run) => number, target?: number) =>
    fromRuns(name, unit, results.map(pick), { target });
  const pods = results[0]!.pods;
  const measurements = [
    m(`create: ${pods} pods in Deployments → all Available`, "s", (r) => r.phases.create.seconds),
    m("create: CPU time of the process", "CPU-s", (r) => r.phases.create.cpuSeconds),
    m("create: CPU per pod", "ms", (r) => (r.phases.create.cpuSeconds * 1000) / r.pods),
    m("pod startup created → Ready, p50", "ms", (r) => r.startupMs.p50),
    m("pod startup created → Ready, p99 (SLO 5000 ms)", "ms", (r) => r.startupMs.p99, 2000),
    m("roll: a tenth of the pods to a new image → complete", "s", (r) => r.phases.roll.seconds),
    m("roll: CPU time of the process", "CPU-s", (r) => r.phases.roll.cpuSeconds),
    m("delete: every Deployment deleted → no pod left", "s", (r) => r.phases.delete.seconds),
    m("delete: CPU time of the process", "CPU-s", (r) => r.phases.delete.cpuSeconds),
    m(
      "mutating API calls, p99 of the slowest verb and resource (SLO 1000 ms)",
      "ms",
      (r) => Math.max(...Object.values(r.mutating).map((x) => x.p99Ms)),
      1000,
    ),
    m("API writes per pod (every component, every phase)", "writes", (r) => r.writesPerPod),
    m("peak RSS", "MB", (r) => r.peakRssMb, 16_384),
    m("heap per pod after create (after a full GC)", "KB", (r) => r.heapBytesPerPod / 1024, 100),
    m("RSS per pod after create", "KB", (r) => r.rssBytesPerPod / 1024, 100),
    ...(useEtcd ? [m("etcd's peak RSS", "MB", (r) => r.etcdPeakRssMb ?? Number.NaN)] : []),
  ];
  for (const x of measurements) console.log(`${x.name}: median ${x.median.toFixed(2)} ${x.unit}`);
  writeResults(`envelope-${nodeCount}${useEtcd ? "-etcd" : ""}`, measurements, {
    storage: useEtcd ? "etcd" : "memory",
    maxSemiSpaceMb: semiSpaceMb > 0 ? semiSpaceMb : "V8 default",
    nodes: nodeCount,
    podsPerNode,
    pods,
    deployments: results[0]!.deployments,
    mutatingByResource: results.map((r) => r.mutating),
  });
} else {
  const run = await once();
  print(run);
  console.log(`RESULT ${JSON.stringify(run)}`);
}
