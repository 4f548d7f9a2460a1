// The disruption controller and the eviction subresource together on the
// embedded API server: the controller writes each budget's status, evictions
// spend it, and a budget that allows no disruption answers 429.
import { type Pod, podDisruptionBudgets, pods, type ReplicaSet, replicaSets, rfc3339 } from "@reconcile/api";
import { ApiServer, type ListeningApiServer, listen } from "@reconcile/apiserver";
import type { Client } from "@reconcile/client";
import { FakeClock } from "@reconcile/clock";
import { SharedInformerFactory } from "@reconcile/informer";
import type { PodDisruptionBudget } from "kubernetes-types/policy/v1.js";
import { afterEach, describe, expect, it } from "vitest";
import { DisruptionController } from "./disruption-controller.js";

const namespace = "default";
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function start() {
  const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
  const api = new ApiServer({ clock });
  const server: ListeningApiServer = await listen(api);
  const client = api.client();
  const abort = new AbortController();
  const factory = new SharedInformerFactory({ client, clock });
  const controller = DisruptionController.fromInformerFactory(factory, { client, clock });
  factory.start(abort.signal);
  const run = controller.run({ signal: abort.signal });
  cleanups.push(async () => {
    abort.abort();
    await run;
    await factory.shutdown();
    await server.close();
    await api.close();
  });
  const evict = async (name: string) => {
    const response = await fetch(`${server.url}/api/v1/namespaces/${namespace}/pods/${name}/eviction`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ apiVersion: "policy/v1", kind: "Eviction", metadata: { name, namespace } }),
    });
    return { code: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  return { clock, client, evict };
}

/** A ReplicaSet of `replicas` and `ready` of its pods, Running and Ready on node-1. */
async function replicaSet(client: Client, clock: FakeClock, name: string, replicas: number, ready: number) {
  const rs = await client.resource(replicaSets, namespace).create({
    metadata: { name, namespace },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: "c", image: "nginx" }] },
      },
    },
  } as ReplicaSet);
  for (let i = 0; i < ready; i++) {
    const pod = await client.resource(pods, namespace).create({
      metadata: {
        name: `${name}-${i}`,
        namespace,
        labels: { app: name },
        ownerReferences: [
          { apiVersion: "apps/v1", kind: "ReplicaSet", name, uid: rs.metadata?.uid ?? "", controller: true },
        ],
      },
      spec: { nodeName: "node-1", containers: [{ name: "c", image: "nginx" }] },
    } as Pod);
    const now = rfc3339(clock.now());
    await client.resource(pods, namespace).updateStatus({
      ...pod,
      status: { phase: "Running", conditions: [{ type: "Ready", status: "True", lastTransitionTime: now }] },
    } as Pod);
  }
}

async function budget(client: Client, name: string, spec: NonNullable<PodDisruptionBudget["spec"]>) {
  await client.resource(podDisruptionBudgets, namespace).create({ metadata: { name, namespace }, spec });
}

async function statusOf(
  client: Client,
  clock: FakeClock,
  name: string,
  check: (pdb: PodDisruptionBudget) => boolean,
) {
  for (let i = 0; i < 200; i++) {
    const pdb = await client.resource(podDisruptionBudgets, namespace).get(name);
    if (check(pdb)) return pdb.status;
    await clock.advance(10);
  }
  throw new Error(`budget ${name} never reached the expected status`);
}

describe("DisruptionController with the eviction subresource", () => {
  it("minAvailable: 2 of 3 ready pods allows one eviction; the next is refused with 429 until the status changes", async () => {
    const { clock, client, evict } = await start();
    await replicaSet(client, clock, "web", 3, 3);
    await budget(client, "web", { minAvailable: 2, selector: { matchLabels: { app: "web" } } });
    const status = await statusOf(client, clock, "web", (p) => p.status?.observedGeneration === 1);
    expect(status).toMatchObject({
      observedGeneration: 1,
      currentHealthy: 3,
      desiredHealthy: 2,
      expectedPods: 3,
      disruptionsAllowed: 1,
      conditions: [{ type: "DisruptionAllowed", status: "True", reason: "SufficientPods", message: "" }],
    });
    expect(await evict("web-0")).toMatchObject({ code: 201 });
    const spent = await client.resource(podDisruptionBudgets, namespace).get("web");
    expect(spent.status?.disruptionsAllowed).toBe(0);
    // web-0 is terminating (its grace period runs): the controller drops it from disruptedPods once it sees that.
    expect((await client.resource(pods, namespace).get("web-0")).metadata?.deletionTimestamp).toBe(
      "2026-01-01T00:00:30Z",
    );
    const refused = await evict("web-1");
    expect(refused.code).toBe(429);
    expect(refused.body).toMatchObject({
      kind: "Status",
      status: "Failure",
      message: "Cannot evict pod as it would violate the pod's disruption budget.",
      reason: "TooManyRequests",
      code: 429,
    });
    // 3 healthy pods, or 2 once the controller has seen web-0 terminate.
    expect((refused.body.details as { causes: { reason: string; message: string }[] }).causes).toEqual([
      {
        reason: "DisruptionBudget",
        message: expect.stringMatching(
          /^The disruption budget web needs 2 healthy pods and has [23] currently$/,
        ),
      },
    ]);
    // The evicted pod is terminating: the controller no longer counts it healthy.
    const after = await statusOf(client, clock, "web", (p) => p.status?.currentHealthy === 2);
    expect(after).toMatchObject({ currentHealthy: 2, desiredHealthy: 2, disruptionsAllowed: 0 });
    expect(after?.conditions?.[0]).toMatchObject({ status: "False", reason: "InsufficientPods" });
    expect((await evict("web-2")).code).toBe(429);
  });

  it("maxUnavailable counts the controller's replicas, not only the pods that exist", async () => {
    const { clock, client } = await start();
    await replicaSet(client, clock, "api", 4, 3);
    await budget(client, "api", { maxUnavailable: 1, selector: { matchLabels: { app: "api" } } });
    const status = await statusOf(client, clock, "api", (p) => p.status?.observedGeneration === 1);
    expect(status).toMatchObject({
      expectedPods: 4,
      desiredHealthy: 3,
      currentHealthy: 3,
      disruptionsAllowed: 0,
    });
  });

  it("a percentage over pods without a controller fails safe: SyncFailed and no disruptions", async () => {
    const { clock, client, evict } = await start();
    await client.resource(pods, namespace).create({
      metadata: { name: "lone", namespace, labels: { app: "lone" } },
      spec: { nodeName: "node-1", containers: [{ name: "c", image: "nginx" }] },
    } as Pod);
    await budget(client, "lone", { minAvailable: "50%", selector: { matchLabels: { app: "lone" } } });
    const status = await statusOf(client, clock, "lone", (p) => p.status?.observedGeneration === 1);
    expect(status?.disruptionsAllowed).toBe(0);
    expect(status?.conditions?.[0]).toMatchObject({
      type: "DisruptionAllowed",
      status: "False",
      reason: "SyncFailed",
      message: 'found no controller ref for pod "lone"',
    });
    // A pod that is not running is evicted without consulting the budget, as upstream.
    expect((await evict("lone")).code).toBe(201);
  });
});
