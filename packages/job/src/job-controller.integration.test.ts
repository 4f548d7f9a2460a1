// The Job and TTL-after-finished controllers end to end on the embedded API
// server: informers watch the server, the test plays the kubelet by writing
// pod phases, and time is a FakeClock the tests advance.
import {
  events as eventsResource,
  getControllerOf,
  type Job,
  jobs,
  type Pod,
  pods,
  rfc3339,
} from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import type { Client } from "@reconcile/client";
import { FakeClock } from "@reconcile/clock";
import { SharedInformerFactory } from "@reconcile/informer";
import { afterEach, describe, expect, it } from "vitest";
import { JobController } from "./job-controller.js";
import type { JobMetrics } from "./job-metrics.js";
import { jobTrackingFinalizer } from "./job-pods.js";
import { TTLAfterFinishedController } from "./ttl-after-finished.js";

const namespace = "default";
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

function start(metrics?: JobMetrics) {
  const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
  const server = new ApiServer({ clock });
  const client = server.client();
  const abort = new AbortController();
  const factory = new SharedInformerFactory({ client, clock, detectMutations: true });
  const controller = JobController.fromInformerFactory(factory, { client, clock, metrics });
  const ttl = new TTLAfterFinishedController({ client, clock, jobInformer: factory.forResource(jobs) });
  factory.start(abort.signal);
  const runs = [controller.run({ signal: abort.signal }), ttl.run({ signal: abort.signal })];
  cleanups.push(async () => {
    abort.abort();
    await Promise.all(runs);
    await factory.shutdown();
    await server.close();
  });
  return { clock, client };
}

function newJob(name: string, spec: Partial<NonNullable<Job["spec"]>> = {}): Job {
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { name, namespace },
    spec: {
      template: { spec: { restartPolicy: "Never", containers: [{ name: "main", image: "busybox" }] } },
      ...spec,
    },
  };
}

async function eventually<T>(
  clock: FakeClock,
  read: () => Promise<T>,
  check: (value: T) => boolean,
  limitMs = 30_000,
): Promise<T> {
  for (let elapsed = 0; elapsed <= limitMs; elapsed += 10) {
    const value = await read();
    if (check(value)) return value;
    await clock.advance(10);
  }
  throw new Error(`condition not reached within ${limitMs} ms of fake time: ${JSON.stringify(await read())}`);
}

async function jobPods(client: Client, job: string): Promise<Pod[]> {
  const list = await client.resource(pods, namespace).list();
  return list.items
    .filter((pod) => getControllerOf(pod)?.name === job)
    .sort((a, b) => (a.metadata?.name ?? "").localeCompare(b.metadata?.name ?? ""));
}

const running = (list: Pod[]) =>
  list.filter((p) => p.status?.phase !== "Succeeded" && p.status?.phase !== "Failed");

/** Plays the kubelet: the pod ends with `phase` now. */
async function finish(
  client: Client,
  clock: FakeClock,
  pod: Pod,
  phase: "Succeeded" | "Failed",
): Promise<void> {
  const fresh = await client.resource(pods, namespace).get(pod.metadata?.name ?? "");
  const now = rfc3339(clock.now());
  await client.resource(pods, namespace).updateStatus({
    ...fresh,
    status: {
      phase,
      containerStatuses: [
        {
          name: "main",
          image: "busybox",
          imageID: "",
          ready: false,
          restartCount: 0,
          state: { terminated: { exitCode: phase === "Succeeded" ? 0 : 1, startedAt: now, finishedAt: now } },
        },
      ],
    },
  });
}

const getJob = (client: Client, name: string) => client.resource(jobs, namespace).get(name);
const conditionsOf = (job: Job) =>
  (job.status?.conditions ?? []).map((c) => `${c.type}=${c.status} ${c.reason}`);

async function eventsOf(client: Client, name: string): Promise<string[]> {
  const list = await client.resource(eventsResource, namespace).list();
  return list.items
    .filter((e) => e.involvedObject?.kind === "Job" && e.involvedObject?.name === name)
    .map((e) => `${e.type} ${e.reason} ${e.message?.replace(/-[a-z0-9]{5}$/, "-*")}`);
}

describe("JobController", () => {
  it("runs a NonIndexed Job to its completions, parallelism at a time, and completes in two steps", async () => {
    const { clock, client } = start();
    await client.resource(jobs, namespace).create(newJob("pi", { completions: 3, parallelism: 2 }));
    let list = await eventually(
      clock,
      () => jobPods(client, "pi"),
      (l) => l.length === 2,
    );
    expect(list.every((p) => p.metadata?.finalizers?.includes(jobTrackingFinalizer))).toBe(true);
    expect(list[0]?.metadata?.generateName).toBe("pi-");
    expect(list[0]?.metadata?.labels?.["batch.kubernetes.io/job-name"]).toBe("pi");
    const started = await eventually(
      clock,
      () => getJob(client, "pi"),
      (j) => j.status?.active === 2,
    );
    expect(started.status).toEqual({
      active: 2,
      ready: 0,
      terminating: 0,
      startTime: "2026-01-01T00:00:00Z",
      uncountedTerminatedPods: {},
    });

    await finish(client, clock, list[0]!, "Succeeded");
    list = await eventually(
      clock,
      () => jobPods(client, "pi"),
      (l) => l.length === 3 && running(l).length === 2,
    );
    // The finalizer of the counted pod is gone; the count is in the status.
    expect(list.find((p) => p.status?.phase === "Succeeded")?.metadata?.finalizers).toBeUndefined();
    await eventually(
      clock,
      () => getJob(client, "pi"),
      (j) => j.status?.succeeded === 1,
    );

    for (const pod of running(list)) await finish(client, clock, pod, "Succeeded");
    const done = await eventually(
      clock,
      () => getJob(client, "pi"),
      (j) => conditionsOf(j).includes("Complete=True CompletionsReached"),
    );
    expect(conditionsOf(done)).toEqual([
      "SuccessCriteriaMet=True CompletionsReached",
      "Complete=True CompletionsReached",
    ]);
    expect(done.status?.conditions?.[1]?.message).toBe("Reached expected number of succeeded pods");
    expect(done.status?.succeeded).toBe(3);
    expect(done.status?.completionTime).toBeDefined();
    expect(done.status?.uncountedTerminatedPods).toEqual({});
    expect((await jobPods(client, "pi")).map((p) => p.metadata?.finalizers)).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
    await eventually(
      clock,
      () => eventsOf(client, "pi"),
      (e) => e.includes("Normal Completed Job completed"),
    );
    expect(await eventsOf(client, "pi")).toEqual([
      "Normal SuccessfulCreate Created pod: pi-*",
      "Normal SuccessfulCreate Created pod: pi-*",
      "Normal SuccessfulCreate Created pod: pi-*",
      "Normal Completed Job completed",
    ]);
  });

  it("syncs a Job one batch period (1 s) after its pods' events or a change outside its spec, and at once after a spec change", async () => {
    const syncs: number[] = [];
    const { clock, client } = start({
      jobSync: () => syncs.push(clock.now()),
      jobFinished: () => {},
      podsFinished: () => {},
      podsCreated: () => {},
      trackingFinalizer: () => {},
    });
    const createdAt = clock.now();
    await client.resource(jobs, namespace).create(newJob("batched", { completions: 6, parallelism: 2 }));
    // The Job's creation syncs it at once, not a batch period later.
    const list = await eventually(
      clock,
      () => jobPods(client, "batched"),
      (l) => l.length === 2,
    );
    expect(clock.now() - createdAt).toBeLessThan(1_000);

    // Let the syncs the creations and the first status write scheduled pass.
    for (let i = 0; i < 250; i++) await clock.advance(10);

    // A change that leaves the generation alone (a label) syncs once, a period later.
    const before = syncs.length;
    const labelled = await getJob(client, "batched");
    labelled.metadata!.labels = { ...labelled.metadata!.labels, team: "batch" };
    const labelledAt = clock.now();
    await client.resource(jobs, namespace).update(labelled);
    for (let i = 0; i < 99; i++) await clock.advance(10);
    expect(syncs.length).toBe(before);
    for (let i = 0; i < 11; i++) await clock.advance(10);
    expect(syncs.slice(before).map((at) => at - labelledAt)).toEqual([1_000]);
    // Both pods finish within the period: one sync counts both, 1 s after the first event.
    const finishedAt = clock.now();
    for (const pod of list) await finish(client, clock, pod, "Succeeded");
    const counted = await eventually(
      clock,
      () => getJob(client, "batched"),
      (j) => (j.status?.succeeded ?? 0) + (j.status?.uncountedTerminatedPods?.succeeded?.length ?? 0) > 0,
    );
    expect(clock.now() - finishedAt).toBeGreaterThanOrEqual(1_000);
    expect(clock.now() - finishedAt).toBeLessThan(1_100);
    expect(
      (counted.status?.succeeded ?? 0) + (counted.status?.uncountedTerminatedPods?.succeeded?.length ?? 0),
    ).toBe(2);

    // A spec change does not wait for the batch: raising parallelism adds pods at once.
    await eventually(
      clock,
      () => jobPods(client, "batched"),
      (l) => running(l).length === 2,
    );
    const fresh = await getJob(client, "batched");
    await client.resource(jobs, namespace).update({ ...fresh, spec: { ...fresh.spec!, parallelism: 3 } });
    const changedAt = clock.now();
    await eventually(
      clock,
      () => jobPods(client, "batched"),
      (l) => running(l).length === 3 && l.length === 5,
    );
    expect(clock.now() - changedAt).toBeLessThan(1_000);
  });

  it("replaces a failed pod only after the 10 s backoff, and fails with BackoffLimitExceeded past backoffLimit", async () => {
    const { clock, client } = start();
    await client.resource(jobs, namespace).create(newJob("flaky", { backoffLimit: 1 }));
    const [first] = await eventually(
      clock,
      () => jobPods(client, "flaky"),
      (l) => l.length === 1,
    );
    await finish(client, clock, first!, "Failed");
    // The backoff counts from the pod's finish, not from the status that counts it a batch period later.
    const failedAt = clock.now();
    await eventually(
      clock,
      () => getJob(client, "flaky"),
      (j) => j.status?.failed === 1,
    );
    const replaced = await eventually(
      clock,
      () => jobPods(client, "flaky"),
      (l) => l.length === 2,
    );
    // The replacement is the one still running (pod names are random).
    const second = running(replaced)[0];
    expect(clock.now() - failedAt).toBeGreaterThanOrEqual(9_900);
    expect(clock.now() - failedAt).toBeLessThan(10_500);
    await finish(client, clock, second!, "Failed");
    const failed = await eventually(
      clock,
      () => getJob(client, "flaky"),
      (j) => conditionsOf(j).includes("Failed=True BackoffLimitExceeded"),
    );
    expect(conditionsOf(failed)).toEqual([
      "FailureTarget=True BackoffLimitExceeded",
      "Failed=True BackoffLimitExceeded",
    ]);
    expect(failed.status?.conditions?.[1]?.message).toBe("Job has reached the specified backoff limit");
    expect(failed.status?.failed).toBe(2);
    expect(failed.status?.completionTime).toBeUndefined();
    await clock.advance(60_000);
    expect((await jobPods(client, "flaky")).length).toBe(2);
    expect(await eventsOf(client, "flaky")).toContain(
      "Warning BackoffLimitExceeded Job has reached the specified backoff limit",
    );
  });

  it("gives an Indexed Job's pods their index, hostname and JOB_COMPLETION_INDEX, and reports completedIndexes", async () => {
    const { clock, client } = start();
    await client
      .resource(jobs, namespace)
      .create(newJob("idx", { completions: 3, parallelism: 3, completionMode: "Indexed" }));
    const list = await eventually(
      clock,
      () => jobPods(client, "idx"),
      (l) => l.length === 3,
    );
    const byIndex = new Map(
      list.map((p) => [p.metadata?.annotations?.["batch.kubernetes.io/job-completion-index"], p]),
    );
    expect([...byIndex.keys()].sort()).toEqual(["0", "1", "2"]);
    const pod1 = byIndex.get("1")!;
    expect(pod1.metadata?.generateName).toBe("idx-1-");
    expect(pod1.metadata?.labels?.["batch.kubernetes.io/job-completion-index"]).toBe("1");
    expect(pod1.spec?.hostname).toBe("idx-1");
    expect(pod1.spec?.containers[0]?.env).toEqual([
      {
        name: "JOB_COMPLETION_INDEX",
        valueFrom: {
          fieldRef: {
            apiVersion: "v1",
            fieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']",
          },
        },
      },
    ]);
    await finish(client, clock, byIndex.get("0")!, "Succeeded");
    await finish(client, clock, byIndex.get("2")!, "Succeeded");
    await eventually(
      clock,
      () => getJob(client, "idx"),
      (j) => j.status?.completedIndexes === "0,2",
    );
    // A failed index is retried with a new pod for the same index.
    await finish(client, clock, pod1, "Failed");
    const retry = await eventually(
      clock,
      () => jobPods(client, "idx"),
      (l) => running(l).length === 1,
    );
    expect(running(retry)[0]?.metadata?.annotations?.["batch.kubernetes.io/job-completion-index"]).toBe("1");
    await finish(client, clock, running(retry)[0]!, "Succeeded");
    const done = await eventually(
      clock,
      () => getJob(client, "idx"),
      (j) => conditionsOf(j).includes("Complete=True CompletionsReached"),
    );
    expect(done.status?.completedIndexes).toBe("0-2");
    expect(done.status?.succeeded).toBe(3);
    expect(done.status?.failed).toBe(1);
  });

  it("creates nothing while suspended, and starts on resume with JobResumed", async () => {
    const { clock, client } = start();
    await client.resource(jobs, namespace).create(newJob("later", { suspend: true }));
    const suspended = await eventually(
      clock,
      () => getJob(client, "later"),
      (j) => conditionsOf(j).length > 0,
    );
    expect(conditionsOf(suspended)).toEqual(["Suspended=True JobSuspended"]);
    expect(suspended.status?.startTime).toBeUndefined();
    expect(await jobPods(client, "later")).toEqual([]);
    await clock.advance(5_000);
    const resumeAt = clock.now();
    await client.resource(jobs, namespace).patch("later", { spec: { suspend: false } }, { type: "merge" });
    await eventually(
      clock,
      () => jobPods(client, "later"),
      (l) => l.length === 1,
    );
    const resumed = await eventually(
      clock,
      () => getJob(client, "later"),
      (j) => j.status?.active === 1,
    );
    expect(conditionsOf(resumed)).toEqual(["Suspended=False JobResumed"]);
    // The clock of a resumed Job starts again at the resume.
    expect(resumed.status?.startTime).toBe(rfc3339(resumeAt));
  });

  it("fails a Job past activeDeadlineSeconds: its pods are deleted and Failed comes once they are gone", async () => {
    const { clock, client } = start();
    await client
      .resource(jobs, namespace)
      .create(newJob("slow", { activeDeadlineSeconds: 30, parallelism: 2, completions: 2 }));
    await eventually(
      clock,
      () => jobPods(client, "slow"),
      (l) => l.length === 2,
    );
    const failed = await eventually(
      clock,
      () => getJob(client, "slow"),
      (j) => conditionsOf(j).includes("Failed=True DeadlineExceeded"),
      60_000,
    );
    expect(clock.now() - Date.parse("2026-01-01T00:00:00Z")).toBeGreaterThanOrEqual(30_000);
    expect(conditionsOf(failed)).toEqual([
      "FailureTarget=True DeadlineExceeded",
      "Failed=True DeadlineExceeded",
    ]);
    expect(failed.status?.conditions?.[1]?.message).toBe("Job was active longer than specified deadline");
    expect(await jobPods(client, "slow")).toEqual([]);
  });

  it("deletes a finished Job ttlSecondsAfterFinished later", async () => {
    const { clock, client } = start();
    await client.resource(jobs, namespace).create(newJob("brief", { ttlSecondsAfterFinished: 5 }));
    const [pod] = await eventually(
      clock,
      () => jobPods(client, "brief"),
      (l) => l.length === 1,
    );
    await finish(client, clock, pod!, "Succeeded");
    const done = await eventually(
      clock,
      () => getJob(client, "brief"),
      (j) => conditionsOf(j).includes("Complete=True CompletionsReached"),
    );
    const finishedAt = Date.parse(done.status?.completionTime ?? "");
    await clock.advance(4_000);
    expect((await getJob(client, "brief")).metadata?.name).toBe("brief");
    const gone = await eventually(
      clock,
      () => client.resource(jobs, namespace).list(),
      (l) => l.items.length === 0,
    );
    expect(gone.items).toEqual([]);
    expect(clock.now() - finishedAt).toBeGreaterThanOrEqual(5_000);
  });

  it("releases the tracking finalizers of a deleted Job's pods", async () => {
    const { clock, client } = start();
    await client.resource(jobs, namespace).create(newJob("gone", { parallelism: 2, completions: 2 }));
    await eventually(
      clock,
      () => jobPods(client, "gone"),
      (l) => l.length === 2,
    );
    await client.resource(jobs, namespace).delete("gone", { propagationPolicy: "Orphan" });
    const orphans = await eventually(
      clock,
      () => client.resource(pods, namespace).list(),
      (l) => l.items.every((p) => !p.metadata?.finalizers?.includes(jobTrackingFinalizer)),
    );
    expect(orphans.items.length).toBe(2);
  });

  it("reports upstream's job_controller metrics: pods created with their finalizer, pods finished, the Job finished, each sync's action", async () => {
    const calls: string[] = [];
    const metrics: JobMetrics = {
      jobSync: (mode, result, action) => calls.push(`sync ${mode} ${result} ${action}`),
      jobFinished: (mode, result, reason) => calls.push(`finished ${mode} ${result} ${reason}`),
      podsFinished: (mode, result, count) => calls.push(`podsFinished ${mode} ${result} ${count}`),
      podsCreated: (reason, status, count) => calls.push(`podsCreated ${reason} ${status} ${count}`),
      trackingFinalizer: (event, count) => calls.push(`finalizer ${event} ${count}`),
    };
    const { clock, client } = start(metrics);
    await client.resource(jobs, namespace).create(newJob("metered", { completions: 2, parallelism: 2 }));
    const created = await eventually(
      clock,
      () => jobPods(client, "metered"),
      (l) => l.length === 2,
    );
    for (const pod of created) await finish(client, clock, pod, "Succeeded");
    await eventually(
      clock,
      () => getJob(client, "metered"),
      (job) => conditionsOf(job).includes("Complete=True CompletionsReached"),
    );
    await clock.advance(100);
    expect(calls.filter((c) => !c.startsWith("sync"))).toEqual([
      "podsCreated new succeeded 2",
      "finalizer add 2",
      "finalizer delete 2",
      "podsFinished NonIndexed succeeded 2",
      "finished NonIndexed succeeded CompletionsReached",
    ]);
    const syncs = new Set(calls.filter((c) => c.startsWith("sync")));
    expect(syncs).toContain("sync NonIndexed success pods_created");
    expect(syncs).toContain("sync NonIndexed success tracking");
    expect([...syncs].every((c) => c.includes(" success "))).toBe(true);
  });

  it("leaves a Job another controller manages (spec.managedBy) alone, and the API server keeps managedBy as set", async () => {
    const { clock, client } = start();
    const created = await client
      .resource(jobs, namespace)
      .create(newJob("external", { completions: 1, managedBy: "example.com/batch-scheduler" }));
    await clock.advance(1000);
    await clock.advance(1000);
    expect(await jobPods(client, "external")).toEqual([]);
    expect((await getJob(client, "external")).status).toEqual(created.status);
    await expect(
      client
        .resource(jobs, namespace)
        .patch("external", { spec: { managedBy: "kubernetes.io/job-controller" } }, { type: "merge" }),
    ).rejects.toMatchObject({
      status: {
        code: 422,
        message:
          'Job.batch "external" is invalid: spec.managedBy: Invalid value: "kubernetes.io/job-controller": field is immutable',
      },
    });
    await expect(
      client.resource(jobs, namespace).create(newJob("bad", { managedBy: "not-a-path" })),
    ).rejects.toMatchObject({
      status: {
        message:
          'Job.batch "bad" is invalid: spec.managedBy: Invalid value: "not-a-path": must be a domain-prefixed path (such as "acme.io/foo")',
      },
    });
    // Naming this controller is the same as not naming one.
    await client
      .resource(jobs, namespace)
      .create(newJob("ours", { completions: 1, managedBy: "kubernetes.io/job-controller" }));
    await eventually(
      clock,
      () => jobPods(client, "ours"),
      (l) => l.length === 1,
    );
  });
});
