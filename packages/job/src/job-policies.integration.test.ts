// podFailurePolicy, podReplacementPolicy and successPolicy end to end on the
// embedded API server: the test plays the kubelet by writing pod phases,
// exit codes and conditions; time is a FakeClock.
import { getControllerOf, type Job, jobs, type Pod, pods, rfc3339 } from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import type { Client } from "@reconcile/client";
import { FakeClock } from "@reconcile/clock";
import { SharedInformerFactory } from "@reconcile/informer";
import { afterEach, describe, expect, it } from "vitest";
import { JobController } from "./job-controller.js";
import { jobCompletionIndexAnnotation } from "./job-pods.js";
import { matchPodFailurePolicy, matchSuccessPolicy } from "./job-policies.js";

const namespace = "default";
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

function start() {
  const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
  const server = new ApiServer({ clock });
  const client = server.client();
  const abort = new AbortController();
  const factory = new SharedInformerFactory({ client, clock });
  const controller = JobController.fromInformerFactory(factory, { client, clock });
  factory.start(abort.signal);
  const run = controller.run({ signal: abort.signal });
  cleanups.push(async () => {
    abort.abort();
    await run;
    await factory.shutdown();
    await server.close();
  });
  return { clock, client };
}

function newJob(name: string, spec: Partial<NonNullable<Job["spec"]>>): Job {
  return {
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
): Promise<T> {
  for (let elapsed = 0; elapsed <= 60_000; elapsed += 10) {
    const value = await read();
    if (check(value)) return value;
    await clock.advance(10);
  }
  throw new Error(`condition not reached: ${JSON.stringify(await read())}`);
}

async function jobPods(client: Client, job: string): Promise<Pod[]> {
  const list = await client.resource(pods, namespace).list();
  return list.items.filter((pod) => getControllerOf(pod)?.name === job);
}

const live = (list: Pod[]) =>
  list.filter(
    (p) => p.status?.phase !== "Succeeded" && p.status?.phase !== "Failed" && !p.metadata?.deletionTimestamp,
  );

/** Plays the kubelet: the pod ends with `phase`, its container with `exitCode`, plus any `conditions`. */
async function end(
  client: Client,
  clock: FakeClock,
  pod: Pod,
  exitCode: number,
  conditions: { type: string; status: string }[] = [],
) {
  const fresh = await client.resource(pods, namespace).get(pod.metadata!.name!);
  const now = rfc3339(clock.now());
  await client.resource(pods, namespace).updateStatus({
    ...fresh,
    status: {
      phase: exitCode === 0 ? "Succeeded" : "Failed",
      conditions,
      containerStatuses: [
        {
          name: "main",
          image: "busybox",
          imageID: "",
          ready: false,
          restartCount: 0,
          state: { terminated: { exitCode, startedAt: now, finishedAt: now } },
        },
      ],
    },
  });
}

const conditionsOf = (job: Job) =>
  (job.status?.conditions ?? []).map((c) => `${c.type}=${c.status} ${c.reason}`);
const getJob = (client: Client, name: string) => client.resource(jobs, namespace).get(name);

describe("Job policies", () => {
  it("fails the Job at once on an exit code a FailJob rule names, with the rule's message", async () => {
    const { clock, client } = start();
    await client.resource(jobs, namespace).create(
      newJob("strict", {
        backoffLimit: 6,
        podFailurePolicy: {
          rules: [
            { action: "FailJob", onExitCodes: { containerName: "main", operator: "In", values: [42] } },
          ],
        },
      }),
    );
    const [pod] = await eventually(
      clock,
      () => jobPods(client, "strict"),
      (l) => l.length === 1,
    );
    await end(client, clock, pod!, 42);
    const failed = await eventually(
      clock,
      () => getJob(client, "strict"),
      (j) => conditionsOf(j).includes("Failed=True PodFailurePolicy"),
    );
    expect(conditionsOf(failed)).toEqual([
      "FailureTarget=True PodFailurePolicy",
      "Failed=True PodFailurePolicy",
    ]);
    expect(failed.status?.conditions?.[1]?.message).toBe(
      `Container main for pod default/${pod!.metadata?.name} failed with exit code 42 matching FailJob rule at index 0`,
    );
    expect(failed.status?.failed).toBe(1);
  });

  it("does not count a failure an Ignore rule matches (a disruption), and replaces the pod", async () => {
    const { clock, client } = start();
    await client.resource(jobs, namespace).create(
      newJob("tolerant", {
        backoffLimit: 0,
        podFailurePolicy: {
          rules: [{ action: "Ignore", onPodConditions: [{ type: "DisruptionTarget", status: "True" }] }],
        },
      }),
    );
    const [first] = await eventually(
      clock,
      () => jobPods(client, "tolerant"),
      (l) => l.length === 1,
    );
    await end(client, clock, first!, 137, [{ type: "DisruptionTarget", status: "True" }]);
    const list = await eventually(
      clock,
      () => jobPods(client, "tolerant"),
      (l) => live(l).length === 1 && l.length === 2,
    );
    // The ignored pod's finalizer is gone, and nothing was counted.
    expect(list.find((p) => p.metadata?.uid === first!.metadata?.uid)?.metadata?.finalizers).toBeUndefined();
    const job = await getJob(client, "tolerant");
    expect(job.status?.failed).toBeUndefined();
    expect(conditionsOf(job)).toEqual([]);
    // A failure no rule matches counts as usual: past backoffLimit 0.
    await end(client, clock, live(list)[0]!, 1);
    await eventually(
      clock,
      () => getJob(client, "tolerant"),
      (j) => conditionsOf(j).includes("Failed=True BackoffLimitExceeded"),
    );
  });

  it("with podReplacementPolicy Failed, replaces a terminating pod only once it has failed", async () => {
    const { clock, client } = start();
    await client.resource(jobs, namespace).create(newJob("patient", { podReplacementPolicy: "Failed" }));
    const [pod] = await eventually(
      clock,
      () => jobPods(client, "patient"),
      (l) => l.length === 1,
    );
    await client
      .resource(pods, namespace)
      .patch(pod!.metadata!.name!, { spec: { nodeName: "node-1" } }, { type: "merge" });
    await client.resource(pods, namespace).delete(pod!.metadata!.name!, { gracePeriodSeconds: 30 });
    await clock.advance(2_000);
    expect((await jobPods(client, "patient")).length).toBe(1);
    expect((await getJob(client, "patient")).status?.terminating).toBe(1);
    await end(client, clock, pod!, 143);
    await eventually(
      clock,
      () => jobPods(client, "patient"),
      (l) => live(l).length === 1,
    );
  });

  it("completes an Indexed Job when its successPolicy is met, deleting the other pods", async () => {
    const { clock, client } = start();
    await client.resource(jobs, namespace).create(
      newJob("leader", {
        completionMode: "Indexed",
        completions: 3,
        parallelism: 3,
        successPolicy: { rules: [{ succeededIndexes: "0" }] },
      }),
    );
    const list = await eventually(
      clock,
      () => jobPods(client, "leader"),
      (l) => l.length === 3,
    );
    const zero = list.find((p) => p.metadata?.annotations?.[jobCompletionIndexAnnotation] === "0")!;
    await end(client, clock, zero, 0);
    const done = await eventually(
      clock,
      () => getJob(client, "leader"),
      (j) => conditionsOf(j).includes("Complete=True SuccessPolicy"),
    );
    expect(conditionsOf(done)).toEqual([
      "SuccessCriteriaMet=True SuccessPolicy",
      "Complete=True SuccessPolicy",
    ]);
    expect(done.status?.conditions?.[0]?.message).toBe("Matched rules at index 0");
    expect(done.status?.completedIndexes).toBe("0");
    expect(live(await jobPods(client, "leader"))).toEqual([]);
  });
});

describe("backoffLimitPerIndex", () => {
  const indexOf = (pod: Pod) => pod.metadata?.annotations?.[jobCompletionIndexAnnotation];

  it("retries an index up to its limit, marks it failed, finishes the others, and fails with FailedIndexes", async () => {
    const { clock, client } = start();
    await client.resource(jobs, namespace).create(
      newJob("per-index", {
        completionMode: "Indexed",
        completions: 3,
        parallelism: 3,
        backoffLimitPerIndex: 1,
      }),
    );
    let list = await eventually(
      clock,
      () => jobPods(client, "per-index"),
      (l) => l.length === 3,
    );
    await end(client, clock, list.find((p) => indexOf(p) === "1")!, 1);
    list = await eventually(
      clock,
      () => jobPods(client, "per-index"),
      (l) => live(l).filter((p) => indexOf(p) === "1").length === 1,
    );
    const retry = live(list).find((p) => indexOf(p) === "1")!;
    expect(retry.metadata?.annotations?.["batch.kubernetes.io/job-index-failure-count"]).toBe("1");
    await end(client, clock, retry, 1);
    const marked = await eventually(
      clock,
      () => getJob(client, "per-index"),
      (j) => j.status?.failedIndexes === "1",
    );
    expect(conditionsOf(marked)).toEqual([]);
    await clock.advance(30_000);
    expect(
      live(await jobPods(client, "per-index"))
        .map(indexOf)
        .sort(),
    ).toEqual(["0", "2"]);
    for (const pod of live(await jobPods(client, "per-index"))) await end(client, clock, pod, 0);
    const failed = await eventually(
      clock,
      () => getJob(client, "per-index"),
      (j) => conditionsOf(j).includes("Failed=True FailedIndexes"),
    );
    expect(failed.status?.conditions?.find((c) => c.type === "Failed")?.message).toBe(
      "Job has failed indexes",
    );
    expect([failed.status?.completedIndexes, failed.status?.failedIndexes]).toEqual(["0,2", "1"]);
  });

  it("fails at once past maxFailedIndexes, and a FailIndex rule fails an index without retries", async () => {
    const { clock, client } = start();
    await client.resource(jobs, namespace).create(
      newJob("strict-index", {
        completionMode: "Indexed",
        completions: 4,
        parallelism: 4,
        backoffLimitPerIndex: 3,
        maxFailedIndexes: 0,
        podFailurePolicy: { rules: [{ action: "FailIndex", onExitCodes: { operator: "In", values: [9] } }] },
      }),
    );
    const list = await eventually(
      clock,
      () => jobPods(client, "strict-index"),
      (l) => l.length === 4,
    );
    await end(client, clock, list.find((p) => indexOf(p) === "2")!, 9);
    const failed = await eventually(
      clock,
      () => getJob(client, "strict-index"),
      (j) => conditionsOf(j).includes("Failed=True MaxFailedIndexesExceeded"),
    );
    expect(failed.status?.failedIndexes).toBe("2");
    expect(failed.status?.conditions?.find((c) => c.type === "Failed")?.message).toBe(
      "Job has exceeded the specified maximal number of failed indexes",
    );
    expect(live(await jobPods(client, "strict-index"))).toEqual([]);
  });
});

describe("policy matching (upstream's table cases)", () => {
  const failed = (exitCodes: [string, number][], conditions: [string, string][] = []): Pod => ({
    metadata: { name: "p", namespace: "ns" },
    status: {
      phase: "Failed",
      conditions: conditions.map(([type, status]) => ({ type, status })),
      containerStatuses: exitCodes.map(([name, exitCode]) => ({
        name,
        image: "x",
        imageID: "",
        ready: false,
        restartCount: 0,
        state: { terminated: { exitCode } },
      })),
    },
  });
  it.each([
    [
      "In matches",
      { rules: [{ action: "Count", onExitCodes: { operator: "In", values: [1, 2] } }] },
      [["c", 2]],
      "Count",
    ],
    [
      "In misses",
      { rules: [{ action: "Count", onExitCodes: { operator: "In", values: [1, 2] } }] },
      [["c", 3]],
      undefined,
    ],
    [
      "NotIn matches",
      { rules: [{ action: "Ignore", onExitCodes: { operator: "NotIn", values: [1] } }] },
      [["c", 3]],
      "Ignore",
    ],
    [
      "exit 0 never matches",
      { rules: [{ action: "Ignore", onExitCodes: { operator: "NotIn", values: [1] } }] },
      [["c", 0]],
      undefined,
    ],
    [
      "another container's name",
      { rules: [{ action: "FailJob", onExitCodes: { containerName: "x", operator: "In", values: [5] } }] },
      [["c", 5]],
      undefined,
    ],
    [
      "the first matching rule wins",
      {
        rules: [
          { action: "Ignore", onExitCodes: { operator: "In", values: [7] } },
          { action: "FailJob", onExitCodes: { operator: "In", values: [7] } },
        ],
      },
      [["c", 7]],
      "Ignore",
    ],
    [
      "FailIndex needs backoffLimitPerIndex",
      { rules: [{ action: "FailIndex", onExitCodes: { operator: "In", values: [7] } }] },
      [["c", 7]],
      undefined,
    ],
  ] as const)("%s", (_name, policy, exitCodes, action) => {
    const match = matchPodFailurePolicy(
      policy as never,
      failed(exitCodes as unknown as [string, number][]),
      false,
    );
    expect(match.action).toBe(action);
    expect(match.count).toBe(action !== "Ignore");
  });

  it("matches success rules by indexes, by count, and by both", () => {
    const job = (rules: unknown[]): Job =>
      ({ spec: { completions: 5, successPolicy: { rules }, template: {} } }) as unknown as Job;
    expect(matchSuccessPolicy(job([{ succeededIndexes: "0-2" }]), new Set([0, 1]))).toBeUndefined();
    expect(matchSuccessPolicy(job([{ succeededIndexes: "0-2" }]), new Set([0, 1, 2]))).toBe(
      "Matched rules at index 0",
    );
    expect(
      matchSuccessPolicy(job([{ succeededIndexes: "1,3" }, { succeededCount: 2 }]), new Set([0, 4])),
    ).toBe("Matched rules at index 1");
    expect(
      matchSuccessPolicy(job([{ succeededIndexes: "0-3", succeededCount: 3 }]), new Set([0, 2, 4])),
    ).toBeUndefined();
  });
});
