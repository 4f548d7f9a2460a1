// Scheduler benchmark in upstream's SchedulingBasic shape
// (test/integration/scheduler_perf, misc/performance-config.yaml), on the
// embedded API server through its in-process client, with real time:
// create `initNodes` nodes (cpu 4, memory 32Gi, pods 110, no taints), create
// `initPods` pods and let them schedule (not measured), then create
// `measurePods` pods (one container, requests cpu 100m, memory 500Mi) and
// measure until every one is bound.
//
// Reported: pods/s over the measured pods (from the first create to the last
// bind), pods per CPU-second of the process (the scheduler, the API server and
// the pod creates share it; steadier than wall time on a loaded machine), and
// scheduling latency per pod (its create → its bind) p50 / p99.
// Workloads: 1,000 nodes / 0 init / 10,000 measured; 5,000 nodes / 1,000 init /
// 1,000 measured. Goal (issue 15): ≥ 1,000 pods/s on both.
import { type DeepReadonly, type Node, nodes, type Pod, pods } from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import { SharedInformerFactory } from "@reconcile/informer";
import { type Measurement, measure, median, writeResults } from "../../../tools/bench/index.js";
import { type Binder, ClientBinder, Scheduler } from "../src/index.js";

const namespace = "default";

function node(i: number): Node {
  const name = `node-${i}`;
  const capacity = { cpu: "4", memory: "32Gi", pods: "110" };
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: { name, labels: { "kubernetes.io/hostname": name } },
    status: { capacity, allocatable: capacity, conditions: [{ type: "Ready", status: "True" }] },
  };
}

function pod(name: string): Pod {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace },
    spec: {
      containers: [
        {
          name: "pause",
          image: "registry.k8s.io/pause:3.10",
          ports: [{ containerPort: 80 }],
          resources: { requests: { cpu: "100m", memory: "500Mi" }, limits: { cpu: "100m", memory: "500Mi" } },
        },
      ],
    },
  };
}

interface Run {
  podsPerSecond: number;
  /** Measured pods per second of this process's CPU time (user + system): steadier than wall time on a shared machine. */
  podsPerCpuSecond: number;
  p50Ms: number;
  p99Ms: number;
}

async function runWorkload(initNodes: number, initPods: number, measurePods: number): Promise<Run> {
  const server = new ApiServer({ historySize: 100_000, watchBufferSize: 200_000 });
  const client = server.client();
  const nodeClient = client.resource(nodes);
  for (let i = 0; i < initNodes; i++) await nodeClient.create(node(i));

  const createdAt = new Map<string, number>();
  const latencies: number[] = [];
  let bound = 0;
  let lastBind = 0;
  const inner = new ClientBinder({ client });
  const binder: Binder = {
    async bind(p: DeepReadonly<Pod>, nodeName: string, options) {
      await inner.bind(p, nodeName, options);
      bound++;
      lastBind = performance.now();
      const started = createdAt.get(p.metadata?.name ?? "");
      if (started !== undefined) latencies.push(lastBind - started);
    },
  };
  const factory = new SharedInformerFactory({ client });
  const scheduler = Scheduler.fromInformerFactory(factory, { client, binder });
  const abort = new AbortController();
  factory.start(abort.signal);
  const running = scheduler.run({ signal: abort.signal });
  await factory.waitForCacheSync(abort.signal);

  const podClient = client.resource(pods, namespace);
  for (let i = 0; i < initPods; i++) await podClient.create(pod(`init-${i}`));
  await waitFor(() => bound >= initPods);

  global.gc?.();
  bound = 0;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < measurePods; i++) {
    const name = `measured-${i}`;
    createdAt.set(name, performance.now());
    await podClient.create(pod(name));
  }
  await waitFor(() => bound >= measurePods);
  const seconds = (lastBind - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  abort.abort();
  await running;
  await factory.shutdown();
  await server.close();
  latencies.sort((a, b) => a - b);
  return {
    podsPerSecond: measurePods / seconds,
    podsPerCpuSecond: measurePods / cpuSeconds,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
  };
}

// The sample at index ceil(n·p/100) − 1, as upstream's throughput collector picks percentiles.
function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.max(0, Math.ceil((sorted.length * p) / 100) - 1)] ?? 0;
}

async function waitFor(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 5));
}

const workloads = [
  { name: "SchedulingBasic 1000Nodes_10000Pods", initNodes: 1000, initPods: 0, measurePods: 10_000 },
  { name: "SchedulingBasic 5000Nodes_1000Pods", initNodes: 5000, initPods: 1000, measurePods: 1000 },
];

const measurements: Measurement[] = [];
for (const workload of workloads) {
  const runs: Run[] = [];
  const throughput = await measure(
    {
      name: `${workload.name}: throughput`,
      unit: "pods/s",
      higherIsBetter: true,
      runs: 3,
      warmups: 1,
      target: 1000,
    },
    async () => {
      const run = await runWorkload(workload.initNodes, workload.initPods, workload.measurePods);
      runs.push(run);
      return run.podsPerSecond;
    },
  );
  // The warm-up run is the first; the latencies are those of the measured runs.
  const measured = runs.slice(-3);
  measurements.push(
    throughput,
    {
      name: `${workload.name}: pods per CPU-second (scheduler and API server together)`,
      unit: "pods/cpu-s",
      higherIsBetter: true,
      runs: measured.map((run) => run.podsPerCpuSecond),
      median: median(measured.map((run) => run.podsPerCpuSecond)),
    },
    {
      name: `${workload.name}: scheduling latency p99 (create → bound)`,
      unit: "ms",
      higherIsBetter: false,
      runs: measured.map((run) => run.p99Ms),
      median: median(measured.map((run) => run.p99Ms)),
      extra: { p50MedianMs: median(measured.map((run) => run.p50Ms)) },
    },
  );
  console.log(
    `${workload.name}: p50 ${median(measured.map((r) => r.p50Ms)).toFixed(1)} ms, p99 ${median(measured.map((r) => r.p99Ms)).toFixed(1)} ms`,
  );
}
writeResults("scheduler", measurements);
