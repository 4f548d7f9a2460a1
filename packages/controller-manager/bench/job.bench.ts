// A Job through the whole control plane in one process: the embedded API
// server, the controller manager's Job controller, the scheduler and 100
// simulated nodes whose containers run their command (`true`, which exits
// at once), on the real clock with upstream's defaults.
//
// A Job of COMPLETIONS (1,000) completions at PARALLELISM (100) created →
// Complete: pods/s (succeeded pods per second of wall time), and the API
// writes the Job controller makes per pod (creates, finalizer removals,
// status updates, Events), counted on its client. Goal: ≥ 2,000 pods/s.
// kube-controller-manager's default client rate of 20 QPS (burst 30) is the
// anchor: at ~3 writes per pod, upstream's Job controller alone tops out
// near 7 pods/s with those settings.
//
// The Job controller syncs a Job at most once per SYNC_BATCH_MS after pod
// events. Upstream's period is 1 s (`syncJobBatchPeriod`), which bounds a Job
// at parallelism P to about P pods per second whatever the machine does; the
// benchmark measures the pipeline's capacity, so its default is 0.
// SYNC_BATCH_MS=1000 runs with upstream's period.
//
// 5 runs (RUNS) after a warm-up run, medians reported.
import { type Job, jobs } from "@reconcile/api";
import { median, writeResults } from "../../../tools/bench/index.js";
import { newControllerDescriptors } from "../src/index.js";
import { observeWrites, sleep, startCluster } from "./cluster.js";

const nodeCount = Number(process.env.NODES ?? 100);
const completions = Number(process.env.COMPLETIONS ?? 1000);
const parallelism = Number(process.env.PARALLELISM ?? 100);
const runs = Number(process.env.RUNS ?? 5);
const syncBatchMs = Number(process.env.SYNC_BATCH_MS ?? 0);

interface Run {
  seconds: number;
  podsPerSecond: number;
  writesPerPod: number;
  cpuSeconds: number;
}

async function once(): Promise<Run> {
  let writes = 0;
  const cluster = await startCluster({
    nodes: nodeCount,
    controllers: "job",
    descriptors: newControllerDescriptors({ jobSyncBatchPeriodMs: syncBatchMs }),
    // The Job controller's writes, but those of Leases.
    managerClient: (client) =>
      observeWrites(client, (key) => {
        if (!key.endsWith(" leases.coordination.k8s.io")) writes++;
        return undefined;
      }),
  });
  const { client } = cluster;

  writes = 0;
  const started = performance.now();
  const cpuAtStart = process.cpuUsage();
  await client.resource(jobs, "default").create(job());
  for (;;) {
    const current = await client.resource(jobs, "default").get("batch");
    if (current.status?.conditions?.some((c) => c.type === "Complete" && c.status === "True")) break;
    if (performance.now() - started > 600_000) throw new Error("the Job did not complete within 10 minutes");
    await sleep(20);
  }
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuAtStart);
  const writesDuring = writes;

  await cluster.close();
  return {
    seconds,
    podsPerSecond: completions / seconds,
    writesPerPod: writesDuring / completions,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
  };
}

function job(): Job {
  return {
    metadata: { name: "batch", namespace: "default" },
    spec: {
      completions,
      parallelism,
      template: {
        spec: {
          restartPolicy: "Never",
          containers: [
            {
              name: "work",
              image: "busybox",
              command: ["true"],
              resources: { requests: { cpu: "10m", memory: "16Mi" } },
            },
          ],
        },
      },
    },
  };
}

{
  const warmUp = await once();
  console.log(`warm-up: ${warmUp.podsPerSecond.toFixed(0)} pods/s (not counted)`);
}
const results: Run[] = [];
for (let i = 0; i < runs; i++) {
  const run = await once();
  console.log(
    `run ${i + 1}: ${completions} completions at parallelism ${parallelism} in ${run.seconds.toFixed(2)} s: ${run.podsPerSecond.toFixed(0)} pods/s, ${run.writesPerPod.toFixed(2)} writes/pod by the Job controller, ${run.cpuSeconds.toFixed(2)} CPU-s`,
  );
  results.push(run);
}
writeResults("job", [
  {
    name: `a Job of ${completions} completions at parallelism ${parallelism} created → Complete, ${nodeCount} nodes, batch period ${syncBatchMs} ms`,
    unit: "pods/s",
    higherIsBetter: true,
    runs: results.map((r) => r.podsPerSecond),
    median: median(results.map((r) => r.podsPerSecond)),
    target: 2000,
  },
  {
    name: "API writes per pod by the Job controller (creates, finalizer removals, status, Events)",
    unit: "writes/pod",
    higherIsBetter: false,
    runs: results.map((r) => r.writesPerPod),
    median: median(results.map((r) => r.writesPerPod)),
  },
  {
    name: "CPU time of the process (API server, controllers, scheduler, kubelets together)",
    unit: "CPU-s",
    higherIsBetter: false,
    runs: results.map((r) => r.cpuSeconds),
    median: median(results.map((r) => r.cpuSeconds)),
  },
]);
