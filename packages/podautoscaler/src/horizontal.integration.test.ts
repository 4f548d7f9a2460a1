// The HPA controller on the embedded API server and a FakeClock: the test
// plays the pods (Running and Ready, with CPU requests) and metrics-server
// (a resource metrics provider whose usage it sets), and reads the scale
// the controller writes into the Deployment.
import {
  type Deployment,
  deployments,
  events as eventsResource,
  horizontalPodAutoscalers,
  type PodMetrics,
  pods,
  rfc3339,
} from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import type { Client } from "@reconcile/client";
import { FakeClock } from "@reconcile/clock";
import { SharedInformerFactory } from "@reconcile/informer";
import type { HorizontalPodAutoscaler } from "kubernetes-types/autoscaling/v2.js";
import { afterEach, describe, expect, it } from "vitest";
import { HorizontalController } from "./horizontal.js";

const namespace = "default";
const start = Date.parse("2026-01-01T00:00:00Z");
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function setup(replicas: number) {
  const clock = new FakeClock(start);
  const server = new ApiServer({ clock });
  const client = server.client();
  // metrics-server's part: each pod of the Deployment uses `usage` millicores.
  let usage = 100;
  let serveMetrics = true;
  server.serveResourceMetrics({
    nodeMetrics: () => [],
    podMetrics: () => {
      if (!serveMetrics) return [];
      return cachedPods.map(
        (name): PodMetrics => ({
          apiVersion: "metrics.k8s.io/v1beta1",
          kind: "PodMetrics",
          metadata: { name, namespace, labels: { app: "web" } },
          timestamp: rfc3339(clock.now()),
          window: "20s",
          containers: [{ name: "c", usage: { cpu: `${usage}m`, memory: "10Mi" } }],
        }),
      );
    },
  });
  let cachedPods: string[] = [];
  await client.resource(deployments, namespace).create({
    metadata: { name: "web", namespace },
    spec: {
      replicas,
      selector: { matchLabels: { app: "web" } },
      template: {
        metadata: { labels: { app: "web" } },
        spec: { containers: [{ name: "c", image: "nginx" }] },
      },
    },
  } as Deployment);
  // The ReplicaSet controller's and the kubelet's part: as many running, ready pods as the Deployment wants.
  const syncPods = async () => {
    const want = (await client.resource(deployments, namespace).get("web")).spec?.replicas ?? 0;
    const have = (await client.resource(pods, namespace).list()).items.map((p) => p.metadata?.name ?? "");
    for (let i = have.length; i < want; i++) {
      const name = `web-${i}`;
      const created = await client.resource(pods, namespace).create({
        metadata: { name, namespace, labels: { app: "web" } },
        spec: { containers: [{ name: "c", image: "nginx", resources: { requests: { cpu: "100m" } } }] },
      });
      const since = rfc3339(clock.now() - 600_000);
      await client.resource(pods, namespace).updateStatus({
        ...created,
        status: {
          phase: "Running",
          startTime: since,
          conditions: [{ type: "Ready", status: "True", lastTransitionTime: since }],
        },
      });
    }
    for (const name of have.slice(want))
      await client.resource(pods, namespace).delete(name, { gracePeriodSeconds: 0 });
    cachedPods = (await client.resource(pods, namespace).list()).items.map((p) => p.metadata?.name ?? "");
  };
  await syncPods();
  const abort = new AbortController();
  const factory = new SharedInformerFactory({ client, clock });
  const controller = HorizontalController.fromInformerFactory(factory, { client, clock });
  factory.start(abort.signal);
  const run = controller.run({ signal: abort.signal });
  cleanups.push(async () => {
    abort.abort();
    await run;
    await factory.shutdown();
    await server.close();
  });
  return {
    clock,
    client,
    syncPods,
    setUsage: (millicores: number) => {
      usage = millicores;
    },
    stopMetrics: () => {
      serveMetrics = false;
    },
  };
}

async function autoscaler(client: Client, spec: Partial<NonNullable<HorizontalPodAutoscaler["spec"]>> = {}) {
  await client.resource(horizontalPodAutoscalers, namespace).create({
    metadata: { name: "web", namespace },
    spec: {
      scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "web" },
      minReplicas: 1,
      maxReplicas: 10,
      metrics: [
        {
          type: "Resource",
          resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 50 } },
        },
      ],
      ...spec,
    },
  } as HorizontalPodAutoscaler);
}

async function advance(clock: FakeClock, ms: number, step = 1_000): Promise<void> {
  for (let done = 0; done < ms; done += step) await clock.advance(step);
}

const replicasOf = async (client: Client) =>
  (await client.resource(deployments, namespace).get("web")).spec?.replicas;
const hpaOf = (client: Client) => client.resource(horizontalPodAutoscalers, namespace).get("web");
const conditionsOf = (hpa: HorizontalPodAutoscaler) =>
  (hpa.status?.conditions ?? []).map((c) => `${c.type}=${c.status} ${c.reason}`);

async function eventsOf(client: Client): Promise<string[]> {
  const list = await client.resource(eventsResource, namespace).list();
  return list.items.map((e) => `${e.type} ${e.reason} ${e.message}`);
}

describe("HorizontalController", () => {
  it("scales a Deployment up to what the CPU utilization asks for, and reports it in the status", async () => {
    const { clock, client, setUsage } = await setup(2);
    setUsage(100); // 100% of a 100m request, against a 50% target: twice the pods.
    await autoscaler(client);
    await advance(clock, 2_000);
    expect(await replicasOf(client)).toBe(4);
    const hpa = await hpaOf(client);
    expect(hpa.status?.currentReplicas).toBe(2);
    expect(hpa.status?.desiredReplicas).toBe(4);
    const scaledAt = Date.parse(hpa.status?.lastScaleTime ?? "");
    expect(scaledAt >= start && scaledAt <= clock.now()).toBe(true);
    expect(hpa.status?.currentMetrics).toEqual([
      {
        type: "Resource",
        resource: { name: "cpu", current: { averageUtilization: 100, averageValue: "100m" } },
      },
    ]);
    expect(conditionsOf(hpa)).toEqual([
      "AbleToScale=True SucceededRescale",
      "ScalingActive=True ValidMetricFound",
      "ScalingLimited=False DesiredWithinRange",
    ]);
    expect(await eventsOf(client)).toEqual([
      "Normal SuccessfulRescale New size: 4; reason: cpu resource utilization (percentage of request) above target",
    ]);
  });

  it("holds a scale-down for the 5-minute stabilization window, then scales down", async () => {
    const { clock, client, setUsage, syncPods } = await setup(4);
    setUsage(50);
    await autoscaler(client);
    await advance(clock, 2_000);
    expect(await replicasOf(client)).toBe(4);
    setUsage(10); // 10% against 50%: one pod would do.
    await advance(clock, 60_000);
    expect(await replicasOf(client)).toBe(4);
    expect(conditionsOf(await hpaOf(client))).toContain("AbleToScale=True ScaleDownStabilized");
    await advance(clock, 5 * 60_000);
    expect(await replicasOf(client)).toBe(1);
    await syncPods();
  });

  it("doubles at most per sync without a behavior, up to maxReplicas, and says what limited it", async () => {
    const { clock, client, setUsage, syncPods } = await setup(1);
    setUsage(500); // 500% against 50%: ten times the pods.
    await autoscaler(client, { maxReplicas: 6 });
    await advance(clock, 2_000);
    expect(await replicasOf(client)).toBe(4);
    expect(conditionsOf(await hpaOf(client))).toContain("ScalingLimited=True ScaleUpLimit");
    await syncPods();
    await advance(clock, 16_000);
    expect(await replicasOf(client)).toBe(6);
    expect(conditionsOf(await hpaOf(client))).toContain("ScalingLimited=True TooManyReplicas");
  });

  it("reports a metrics API without the pods' metrics in ScalingActive and an event, and leaves the scale alone", async () => {
    const { clock, client, stopMetrics } = await setup(2);
    stopMetrics();
    await autoscaler(client);
    await advance(clock, 2_000);
    expect(await replicasOf(client)).toBe(2);
    const hpa = await hpaOf(client);
    const active = hpa.status?.conditions?.find((c) => c.type === "ScalingActive");
    expect(active).toMatchObject({
      status: "False",
      reason: "FailedGetResourceMetric",
      message:
        "the HPA was unable to compute the replica count: failed to get cpu utilization: unable to get metrics for resource cpu: no metrics returned from resource metrics API",
    });
    expect(hpa.status?.currentMetrics).toEqual([{ type: "" }]);
    expect(await eventsOf(client)).toContain(
      "Warning FailedComputeMetricsReplicas invalid metrics (1 invalid out of 1), first error is: failed to get cpu utilization: unable to get metrics for resource cpu: no metrics returned from resource metrics API",
    );
    // A failure is looked at again after the sync period, not in a hot loop.
    const count = async () =>
      (await client.resource(eventsResource, namespace).list()).items.find(
        (e) => e.reason === "FailedComputeMetricsReplicas",
      )?.count;
    expect(await count()).toBe(1);
    await advance(clock, 10_000);
    expect(await count()).toBe(1);
    await advance(clock, 6_000);
    expect(await count()).toBe(2);
  });
});
