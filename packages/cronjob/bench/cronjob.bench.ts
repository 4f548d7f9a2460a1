// CRONJOBS (100) CronJobs firing every minute, for HOURS (1) simulated hour
// on a FakeClock: the CronJob controller on the embedded API server, with a
// stand-in for the Job controller that completes each Job as it appears, so
// the CronJob controller also tracks active Jobs, records completions and
// prunes its history (successfulJobsHistoryLimit 3). The clock advances a
// minute at a time once the Jobs of the minute before exist.
//
// Reported: wall time for the simulated hour (6,000 Jobs), and Jobs/s.
// kube-controller-manager's anchor: its CronJob controller writes a Job, a
// status and (with pruning) a delete per activation, ~3 writes; at 20 QPS
// that is ~7 activations/s, so an hour of 100 per-minute CronJobs (6,000
// activations) needs ≥ 15 min of its client budget alone.
//
// 5 runs (RUNS) after a warm-up run, medians reported.
import { cronJobs, type Job, jobs, rfc3339 } from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import { FakeClock } from "@reconcile/clock";
import { SharedInformerFactory } from "@reconcile/informer";
import type { CronJob } from "kubernetes-types/batch/v1.js";
import { median, writeResults } from "../../../tools/bench/index.js";
import { CronJobController } from "../src/index.js";

const cronJobCount = Number(process.env.CRONJOBS ?? 100);
const hours = Number(process.env.HOURS ?? 1);
const runs = Number(process.env.RUNS ?? 5);
const start = Date.parse("2026-01-01T00:00:30Z");

async function once(): Promise<{ seconds: number; jobs: number }> {
  const clock = new FakeClock(start);
  const server = new ApiServer({ clock });
  const client = server.client();
  const abort = new AbortController();
  const factory = new SharedInformerFactory({ client, clock });
  const controller = CronJobController.fromInformerFactory(factory, { client, clock });
  const jobInformer = factory.forResource(jobs);
  let created = 0;
  // The Job controller's part: each new Job completes at once.
  jobInformer.addEventHandler({
    onAdd: (job, initial) => {
      if (initial) return;
      created++;
      const now = rfc3339(clock.now());
      void client
        .resource(jobs, job.metadata?.namespace ?? "")
        .updateStatus({
          ...structuredClone(job),
          status: {
            startTime: now,
            completionTime: now,
            succeeded: 1,
            conditions: [{ type: "Complete", status: "True", lastTransitionTime: now, lastProbeTime: now }],
          },
        } as Job)
        .catch(() => {});
    },
  });
  factory.start(abort.signal);
  const run = controller.run({ signal: abort.signal });
  await factory.waitForCacheSync(abort.signal);
  for (let i = 0; i < cronJobCount; i++)
    await client.resource(cronJobs, "default").create(cronJob(`tick-${i}`));

  const started = performance.now();
  const minutes = hours * 60;
  for (let minute = 1; minute <= minutes; minute++) {
    await clock.advance(60_000);
    while (created < minute * cronJobCount) {
      if (performance.now() - started > 600_000) throw new Error(`minute ${minute}: only ${created} Jobs`);
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  const seconds = (performance.now() - started) / 1000;
  abort.abort();
  await run;
  await factory.shutdown();
  await server.close();
  return { seconds, jobs: created };
}

function cronJob(name: string): CronJob {
  return {
    metadata: { name, namespace: "default" },
    spec: {
      schedule: "* * * * *",
      jobTemplate: {
        spec: {
          template: { spec: { restartPolicy: "Never", containers: [{ name: "c", image: "busybox" }] } },
        },
      },
    },
  };
}

{
  const warmUp = await once();
  console.log(`warm-up: ${warmUp.seconds.toFixed(2)} s (not counted)`);
}
const results: { seconds: number; jobs: number }[] = [];
for (let i = 0; i < runs; i++) {
  const result = await once();
  console.log(
    `run ${i + 1}: ${cronJobCount} CronJobs × ${hours * 60} minutes = ${result.jobs} Jobs in ${result.seconds.toFixed(2)} s of wall time (${(result.jobs / result.seconds).toFixed(0)} Jobs/s)`,
  );
  results.push(result);
}
writeResults("cronjob", [
  {
    name: `${cronJobCount} CronJobs firing every minute for ${hours} simulated hour(s) on a FakeClock: wall time`,
    unit: "s",
    higherIsBetter: false,
    runs: results.map((r) => r.seconds),
    median: median(results.map((r) => r.seconds)),
  },
  {
    name: "activations per second of wall time (Job created, completion recorded, history pruned)",
    unit: "Jobs/s",
    higherIsBetter: true,
    runs: results.map((r) => r.jobs / r.seconds),
    median: median(results.map((r) => r.jobs / r.seconds)),
  },
]);
