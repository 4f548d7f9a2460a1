// The control plane in one process (issue's §6): the embedded API server,
// the controller manager (ReplicaSet and Deployment controllers), the
// scheduler and 100 simulated nodes, on the real clock. Every component runs
// with upstream's defaults; the bench passes no options of its own.
//
// (a) a 3,000-replica Deployment created → Available (every replica
//     updated, ready and available): seconds. Goal ≤ 10 s… for the rollout;
//     this one is reported for reference.
// (b) pod startup latency during (a), created → Ready, p50 and p99, seen
//     through a watch (the pod's ADDED event → its Ready condition True).
//     Kubernetes' SLO: p99 ≤ 5 s; goal: p99 ≤ 1 s. Also split in two, for
//     what bounds it: created → bound (first seen with spec.nodeName: the
//     scheduler's share) and bound → Ready (the kubelet's).
// (c) the same Deployment rolled to a new image → complete: seconds. Goal ≤ 10 s.
//
// (a) and (c) also report the process's CPU time (user + system): everything
// runs on one event loop, so on a shared machine the wall times follow the
// machine's load while the CPU time follows the work done.
//
// Each run starts a fresh cluster; 5 runs (RUNS) after a warm-up run that is
// not counted (the first run in a process is slower: the code is not yet
// compiled), medians reported. NODES and REPLICAS change the cluster's size.
import { type Deployment, deployments, isPodReady } from "@reconcile/api";
import { fromRuns, percentile, writeResults } from "../../../tools/bench/index.js";
import { sleep, startCluster } from "./cluster.js";

const nodeCount = Number(process.env.NODES ?? 100);
const replicas = Number(process.env.REPLICAS ?? 3000);
const runs = Number(process.env.RUNS ?? 5);

interface Run {
  availableSeconds: number;
  /** CPU time (user + system) of the whole process during (a). */
  availableCpuSeconds: number;
  rolloutSeconds: number;
  /** CPU time (user + system) of the whole process during (c). */
  rolloutCpuSeconds: number;
  startupP50Ms: number;
  startupP99Ms: number;
  /** Created → first seen bound, and bound → Ready, p50 and p99. */
  boundMs: [number, number];
  readyAfterBoundMs: [number, number];
  pods: number;
}

async function once(): Promise<Run> {
  // Startup latency: first seen (ADDED) → first seen Ready, per pod uid.
  const seen = new Map<string, number>();
  const latencies: number[] = [];
  const boundAt = new Map<string, number>();
  const toBound: number[] = [];
  const boundToReady: number[] = [];
  const cluster = await startCluster({
    nodes: nodeCount,
    controllers: "replicaset,deployment",
    prepare: ({ podInformer }) =>
      podInformer.addEventHandler({
        onAdd: (pod) => {
          seen.set(pod.metadata?.uid ?? "", performance.now());
        },
        onUpdate: (_, pod) => {
          const uid = pod.metadata?.uid ?? "";
          const added = seen.get(uid);
          if (added === undefined) return;
          const now = performance.now();
          if (pod.spec?.nodeName && !boundAt.has(uid)) {
            boundAt.set(uid, now);
            toBound.push(now - added);
          }
          if (isPodReady(pod)) {
            latencies.push(now - added);
            boundToReady.push(now - (boundAt.get(uid) ?? now));
            seen.delete(uid);
            boundAt.delete(uid);
          }
        },
      }),
  });
  const { client } = cluster;

  const started = performance.now();
  const cpuAtStart = process.cpuUsage();
  await client.resource(deployments, "default").create(deployment("nginx:1.27"));
  await until(async () => complete(await client.resource(deployments, "default").get("web"), "nginx:1.27"));
  const availableSeconds = (performance.now() - started) / 1000;
  const availableCpuSeconds = cpuSeconds(process.cpuUsage(cpuAtStart));
  const startup = [...latencies];
  const bound = [...toBound];
  const readyAfterBound = [...boundToReady];

  const rolled = performance.now();
  const cpuAtRollout = process.cpuUsage();
  const d = await client.resource(deployments, "default").get("web");
  d.spec!.template.spec!.containers[0]!.image = "nginx:1.28";
  await client.resource(deployments, "default").update(d);
  await until(async () => complete(await client.resource(deployments, "default").get("web"), "nginx:1.28"));
  const rolloutSeconds = (performance.now() - rolled) / 1000;
  const rolloutCpuSeconds = cpuSeconds(process.cpuUsage(cpuAtRollout));

  await cluster.close();
  return {
    availableSeconds,
    availableCpuSeconds,
    rolloutSeconds,
    rolloutCpuSeconds,
    startupP50Ms: percentile(startup, 0.5),
    startupP99Ms: percentile(startup, 0.99),
    boundMs: [percentile(bound, 0.5), percentile(bound, 0.99)],
    readyAfterBoundMs: [percentile(readyAfterBound, 0.5), percentile(readyAfterBound, 0.99)],
    pods: startup.length,
  };
}

function deployment(image: string): Deployment {
  const labels = { app: "web" };
  return {
    metadata: { name: "web", namespace: "default" },
    spec: {
      replicas,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          containers: [{ name: "nginx", image, resources: { requests: { cpu: "10m", memory: "16Mi" } } }],
        },
      },
    },
  };
}

function complete(d: Deployment, image: string): boolean {
  const s = d.status;
  return (
    d.spec?.template.spec?.containers[0]?.image === image &&
    s?.observedGeneration === d.metadata?.generation &&
    s?.updatedReplicas === replicas &&
    s?.replicas === replicas &&
    s?.availableReplicas === replicas
  );
}

async function until(condition: () => Promise<boolean>, timeoutMs = 300_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`not reached within ${timeoutMs} ms`);
    await sleep(20);
  }
}

function cpuSeconds(usage: NodeJS.CpuUsage): number {
  return (usage.user + usage.system) / 1e6;
}

const results: Run[] = [];
{
  const warmUp = await once();
  console.log(`warm-up: available in ${warmUp.availableSeconds.toFixed(2)} s (not counted)`);
}
for (let i = 0; i < runs; i++) {
  const run = await once();
  console.log(
    `run ${i + 1}: available in ${run.availableSeconds.toFixed(2)} s (${run.availableCpuSeconds.toFixed(2)} CPU-s), rollout ${run.rolloutSeconds.toFixed(2)} s (${run.rolloutCpuSeconds.toFixed(2)} CPU-s), startup p50 ${run.startupP50Ms.toFixed(0)} ms p99 ${run.startupP99Ms.toFixed(0)} ms (${run.pods} pods; created → bound p50 ${run.boundMs[0].toFixed(0)} p99 ${run.boundMs[1].toFixed(0)} ms, bound → Ready p50 ${run.readyAfterBoundMs[0].toFixed(0)} p99 ${run.readyAfterBoundMs[1].toFixed(0)} ms)`,
  );
  results.push(run);
}
const measurement = (name: string, unit: string, values: number[], target?: number) =>
  fromRuns(name, unit, values, { target });
const measurements = [
  measurement(
    `a: ${replicas}-replica Deployment created → Available, ${nodeCount} nodes`,
    "s",
    results.map((r) => r.availableSeconds),
    10,
  ),
  measurement(
    "a: CPU time of the process (API server, controllers, scheduler, kubelets together)",
    "CPU-s",
    results.map((r) => r.availableCpuSeconds),
  ),
  measurement(
    "b: pod startup created → Ready, p50",
    "ms",
    results.map((r) => r.startupP50Ms),
    1000,
  ),
  measurement(
    "b: pod startup created → Ready, p99 (SLO 5000 ms)",
    "ms",
    results.map((r) => r.startupP99Ms),
    1000,
  ),
  measurement(
    "b: created → bound (scheduling), p50",
    "ms",
    results.map((r) => r.boundMs[0]),
  ),
  measurement(
    "b: created → bound (scheduling), p99",
    "ms",
    results.map((r) => r.boundMs[1]),
  ),
  measurement(
    "b: bound → Ready (the kubelet), p50",
    "ms",
    results.map((r) => r.readyAfterBoundMs[0]),
  ),
  measurement(
    "b: bound → Ready (the kubelet), p99",
    "ms",
    results.map((r) => r.readyAfterBoundMs[1]),
  ),
  measurement(
    `c: rolled to a new image → complete`,
    "s",
    results.map((r) => r.rolloutSeconds),
    10,
  ),
  measurement(
    "c: CPU time of the process (API server, controllers, scheduler, kubelets together)",
    "CPU-s",
    results.map((r) => r.rolloutCpuSeconds),
  ),
];
for (const m of measurements) console.log(`${m.name}: median ${m.median.toFixed(2)} ${m.unit}`);
writeResults("control-plane", measurements, { nodes: nodeCount, replicas });
