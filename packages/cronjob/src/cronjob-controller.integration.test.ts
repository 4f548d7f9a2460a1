// The CronJob controller on the embedded API server and a FakeClock: hours
// of schedules run in milliseconds. No Job controller runs here; the test
// finishes Jobs by writing their conditions.
import { cronJobs, events as eventsResource, type Job, jobs, rfc3339 } from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import type { Client } from "@reconcile/client";
import { FakeClock } from "@reconcile/clock";
import { SharedInformerFactory } from "@reconcile/informer";
import type { CronJob } from "kubernetes-types/batch/v1.js";
import { afterEach, describe, expect, it } from "vitest";
import { CronJobController } from "./cronjob-controller.js";

const namespace = "default";
const start = Date.parse("2026-01-01T00:00:00Z");
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

function cluster() {
  const clock = new FakeClock(start);
  const server = new ApiServer({ clock });
  const client = server.client();
  return { clock, client, server };
}

function runController(clock: FakeClock, client: Client) {
  const abort = new AbortController();
  const factory = new SharedInformerFactory({ client, clock });
  const controller = CronJobController.fromInformerFactory(factory, { client, clock });
  factory.start(abort.signal);
  const run = controller.run({ signal: abort.signal });
  const stop = async () => {
    abort.abort();
    await run;
    await factory.shutdown();
  };
  cleanups.push(stop);
  return stop;
}

function newCronJob(name: string, spec: Partial<NonNullable<CronJob["spec"]>> = {}): CronJob {
  return {
    apiVersion: "batch/v1",
    kind: "CronJob",
    metadata: { name, namespace },
    spec: {
      schedule: "*/5 * * * *",
      jobTemplate: {
        metadata: { labels: { app: name } },
        spec: {
          template: { spec: { restartPolicy: "Never", containers: [{ name: "c", image: "busybox" }] } },
        },
      },
      ...spec,
    },
  };
}

/** Advances the clock in 1 s steps (letting the controller's work settle between them). */
async function advance(clock: FakeClock, ms: number): Promise<void> {
  for (let done = 0; done < ms; done += 1_000) await clock.advance(1_000);
}

const jobNames = async (client: Client) =>
  (await client.resource(jobs, namespace).list()).items.map((j) => j.metadata?.name).sort();

async function finishJob(client: Client, clock: FakeClock, name: string, type: "Complete" | "Failed") {
  const job = await client.resource(jobs, namespace).get(name);
  const now = rfc3339(clock.now());
  await client.resource(jobs, namespace).updateStatus({
    ...job,
    status: {
      startTime: job.metadata?.creationTimestamp,
      ...(type === "Complete" ? { completionTime: now, succeeded: 1 } : { failed: 1 }),
      conditions: [{ type, status: "True", lastTransitionTime: now, lastProbeTime: now }],
    },
  } as Job);
}

async function eventsOf(client: Client): Promise<string[]> {
  const list = await client.resource(eventsResource, namespace).list();
  return list.items.map((e) => `${e.reason}: ${e.message}`);
}

const minute = (iso: string) => Math.floor(Date.parse(iso) / 60_000);

describe("CronJobController", () => {
  it("creates one Job per activation, named by its minute, for an hour of */5", async () => {
    const { clock, client } = cluster();
    runController(clock, client);
    await client.resource(cronJobs, namespace).create(newCronJob("tick"));
    await advance(clock, 60 * 60_000 + 1_000);
    const names = await jobNames(client);
    expect(names).toEqual(
      Array.from({ length: 12 }, (_, i) => `tick-${minute("2026-01-01T00:05:00Z") + 5 * i}`).sort(),
    );
    const job = await client.resource(jobs, namespace).get(`tick-${minute("2026-01-01T00:05:00Z")}`);
    expect(job.metadata?.labels).toEqual({ app: "tick" });
    expect(job.metadata?.annotations).toEqual({
      "batch.kubernetes.io/cronjob-scheduled-timestamp": "2026-01-01T00:05:00Z",
    });
    expect(job.metadata?.ownerReferences?.[0]).toMatchObject({
      kind: "CronJob",
      name: "tick",
      controller: true,
    });
    const cj = await client.resource(cronJobs, namespace).get("tick");
    expect(cj.status?.lastScheduleTime).toBe("2026-01-01T01:00:00Z");
    expect(cj.status?.active?.length).toBe(12);
    expect(cj.status?.active?.[0]).toMatchObject({ kind: "Job", apiVersion: "batch/v1", namespace });
  });

  it("Forbid skips an activation while a Job runs; a finished one leaves the active list and sets lastSuccessfulTime", async () => {
    const { clock, client } = cluster();
    runController(clock, client);
    await client.resource(cronJobs, namespace).create(newCronJob("solo", { concurrencyPolicy: "Forbid" }));
    await advance(clock, 11 * 60_000);
    const first = `solo-${minute("2026-01-01T00:05:00Z")}`;
    expect(await jobNames(client)).toEqual([first]);
    expect(await eventsOf(client)).toContain(
      "JobAlreadyActive: Not starting job because prior execution is running and concurrency policy is Forbid",
    );
    await finishJob(client, clock, first, "Complete");
    await advance(clock, 2_000);
    const cj = await client.resource(cronJobs, namespace).get("solo");
    expect(cj.status?.lastSuccessfulTime).toBe("2026-01-01T00:11:00Z");
    expect(await eventsOf(client)).toContain(
      `SawCompletedJob: Saw completed job: ${first}, condition: Complete`,
    );
    // The skipped 00:10 activation is the most recent one and was never started: it starts now, as upstream.
    const second = `solo-${minute("2026-01-01T00:10:00Z")}`;
    expect(await jobNames(client)).toEqual([first, second]);
    expect(cj.status?.active?.map((ref) => ref.name)).toEqual([second]);
  });

  it("Replace deletes the running Job and starts the new one", async () => {
    const { clock, client } = cluster();
    runController(clock, client);
    await client.resource(cronJobs, namespace).create(newCronJob("swap", { concurrencyPolicy: "Replace" }));
    await advance(clock, 11 * 60_000);
    expect(await jobNames(client)).toEqual([`swap-${minute("2026-01-01T00:10:00Z")}`]);
    expect(await eventsOf(client)).toContain(
      `SuccessfulDelete: Deleted job swap-${minute("2026-01-01T00:05:00Z")}`,
    );
  });

  it("keeps successfulJobsHistoryLimit and failedJobsHistoryLimit, deleting the oldest", async () => {
    const { clock, client } = cluster();
    runController(clock, client);
    await client
      .resource(cronJobs, namespace)
      .create(newCronJob("hist", { successfulJobsHistoryLimit: 2, failedJobsHistoryLimit: 1 }));
    await advance(clock, 1_000);
    for (let i = 1; i <= 5; i++) {
      await advance(clock, 5 * 60_000);
      const name = `hist-${minute("2026-01-01T00:00:00Z") + 5 * i}`;
      await finishJob(client, clock, name, i === 2 || i === 4 ? "Failed" : "Complete");
    }
    await advance(clock, 2_000);
    const base = minute("2026-01-01T00:00:00Z");
    expect(await jobNames(client)).toEqual([`hist-${base + 15}`, `hist-${base + 20}`, `hist-${base + 25}`]);
  });

  it("a controller that was down starts only the most recent missed Job; with startingDeadlineSeconds it lets old ones go", async () => {
    const { clock, client } = cluster();
    await client.resource(cronJobs, namespace).create(newCronJob("late", { schedule: "0 * * * *" }));
    await client
      .resource(cronJobs, namespace)
      .create(newCronJob("strict", { schedule: "0 * * * *", startingDeadlineSeconds: 60 }));
    await clock.advance(3 * 60 * 60_000 + 10 * 60_000);
    runController(clock, client);
    await advance(clock, 2_000);
    // 01:00, 02:00 and 03:00 were missed: only 03:00 runs; "strict" lets 03:00 go (more than 60 s ago).
    expect(await jobNames(client)).toEqual([`late-${minute("2026-01-01T03:00:00Z")}`]);
    await advance(clock, 50 * 60_000);
    expect(await jobNames(client)).toEqual([
      `late-${minute("2026-01-01T03:00:00Z")}`,
      `late-${minute("2026-01-01T04:00:00Z")}`,
      `strict-${minute("2026-01-01T04:00:00Z")}`,
    ]);
  });

  it("more than 100 missed activations is a TooManyMissedTimes Warning, and the most recent still starts", async () => {
    const { clock, client } = cluster();
    await client.resource(cronJobs, namespace).create(newCronJob("flood", { schedule: "* * * * *" }));
    await clock.advance(200 * 60_000 + 30_000);
    runController(clock, client);
    await advance(clock, 1_000);
    expect(await jobNames(client)).toEqual([`flood-${minute("2026-01-01T03:20:00Z")}`]);
    expect(await eventsOf(client)).toContain(
      "TooManyMissedTimes: too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew",
    );
  });

  it("a suspended CronJob starts nothing until it is resumed", async () => {
    const { clock, client } = cluster();
    runController(clock, client);
    await client.resource(cronJobs, namespace).create(newCronJob("paused", { suspend: true }));
    await advance(clock, 11 * 60_000);
    expect(await jobNames(client)).toEqual([]);
    await client
      .resource(cronJobs, namespace)
      .patch("paused", { spec: { suspend: false } }, { type: "merge" });
    await advance(clock, 2_000);
    // The most recent activation (00:10) is started at once, as upstream does without a deadline.
    expect(await jobNames(client)).toEqual([`paused-${minute("2026-01-01T00:10:00Z")}`]);
  });

  it("runs in its time zone: 0 9 * * * in Asia/Tokyo fires at 00:00 UTC", async () => {
    const { clock, client } = cluster();
    runController(clock, client);
    await client
      .resource(cronJobs, namespace)
      .create(newCronJob("tokyo", { schedule: "0 9 * * *", timeZone: "Asia/Tokyo" }));
    await clock.advance(23 * 60 * 60_000 + 59 * 60_000);
    await advance(clock, 62_000);
    const [name] = await jobNames(client);
    expect(name).toBe(`tokyo-${minute("2026-01-02T00:00:00Z")}`);
    const job = await client.resource(jobs, namespace).get(name ?? "");
    expect(job.metadata?.annotations?.["batch.kubernetes.io/cronjob-scheduled-timestamp"]).toBe(
      "2026-01-02T09:00:00+09:00",
    );
  });
});
