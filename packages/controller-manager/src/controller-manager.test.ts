import {
  builtinResources,
  certificateSigningRequests,
  controllerRevisions,
  cronJobs,
  type Deployment,
  daemonSets,
  deployments,
  horizontalPodAutoscalers,
  type Pod,
  persistentVolumeClaims,
  persistentVolumes,
  podDisruptionBudgets,
  pods,
  ReconcileError,
  replicaSets,
  replicationControllers,
  resourceQuotas,
  statefulSets,
  storageClasses,
} from "@reconcile/api";
import { ApiServer, generateServingCertificates } from "@reconcile/apiserver";
import type { Client } from "@reconcile/client";
import { FakeClock } from "@reconcile/clock";
import { endpointsResources } from "@reconcile/endpoints";
import { InterceptingClient } from "@reconcile/leader-election/testing";
import { LeaderElectionLostError } from "@reconcile/runtime";
import { serviceAccounts } from "@reconcile/serviceaccount";
import { afterEach, describe, expect, it } from "vitest";
import { ControllerManager } from "./controller-manager.js";
import { UnknownControllerError } from "./controllers-flag.js";
import { newControllerDescriptors } from "./default-controllers.js";

const start = Date.parse("2026-11-23T18:00:00Z");
const namespace = "default";

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of cleanup.reverse()) await stop();
  cleanup = [];
});

function cluster() {
  const clock = new FakeClock(start);
  const server = new ApiServer({
    clock,
    resources: [
      ...builtinResources,
      ...endpointsResources,
      serviceAccounts,
      cronJobs,
      podDisruptionBudgets,
      statefulSets,
      daemonSets,
      horizontalPodAutoscalers,
      replicationControllers,
      controllerRevisions,
      persistentVolumeClaims,
      persistentVolumes,
      storageClasses,
      resourceQuotas,
      certificateSigningRequests,
    ],
  });
  cleanup.push(() => server.close());
  /** Advances time in steps until `condition` holds; fails after `maxMs`. */
  async function until(condition: () => boolean | Promise<boolean>, maxMs = 60_000, stepMs = 100) {
    for (let waited = 0; ; waited += stepMs) {
      for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
      if (await condition()) return;
      if (waited >= maxMs) throw new Error(`condition not met within ${maxMs} ms of fake time`);
      await clock.advance(stepMs);
    }
  }
  return { clock, server, client: server.client(), until };
}

/** A manager whose writes (other than its Lease and Events) are recorded with the fake time they were made. */
function manager(
  env: ReturnType<typeof cluster>,
  identity: string,
  writes: { by: string; at: number; what: string }[],
  options: Partial<ConstructorParameters<typeof ControllerManager>[0]> = {},
) {
  const client: Client = new InterceptingClient(env.client, (call, next) => {
    if (call.verb !== "get" && call.resource.plural !== "leases" && call.resource.plural !== "events") {
      writes.push({ by: identity, at: env.clock.now(), what: `${call.verb} ${call.resource.plural}` });
    }
    return next();
  });
  const m = new ControllerManager({ client, clock: env.clock, leaderElection: { identity }, ...options });
  const abort = new AbortController();
  const done = m.run({ signal: abort.signal });
  done.catch(() => {});
  const stop = async () => {
    abort.abort();
    await env.clock.advance(1_000);
    await done.catch(() => {});
  };
  cleanup.push(stop);
  return { m, abort, done, stop };
}

async function markPodsReady(client: Client) {
  for (const pod of (await client.resource(pods, namespace).list()).items) {
    if (pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True")) continue;
    const ready: Pod = {
      ...pod,
      status: {
        phase: "Running",
        podIP: "10.244.0.9",
        conditions: [{ type: "Ready", status: "True", lastTransitionTime: new Date(start).toISOString() }],
      },
    };
    await client.resource(pods, namespace).updateStatus(ready);
  }
}

const web = (replicas: number): Deployment => ({
  metadata: { name: "web", namespace },
  spec: {
    replicas,
    selector: { matchLabels: { app: "web" } },
    template: {
      metadata: { labels: { app: "web" } },
      spec: { containers: [{ name: "nginx", image: "nginx:1.27" }] },
    },
  },
});

describe("ControllerManager", () => {
  it("runs the CSR signing controller only with a signing CA, after the ServiceAccount controller", async () => {
    const env = cluster();
    const name = "certificatesigningrequest-signing-controller";
    expect(newControllerDescriptors().canonicalName("csrsigning")).toBeUndefined();
    const { ca } = await generateServingCertificates();
    const descriptors = newControllerDescriptors({ clusterSigning: ca });
    expect(descriptors.canonicalName("csrsigning")).toBe(name);
    const manager = new ControllerManager({ client: env.client, descriptors });
    expect(manager.enabledControllers.slice(-4)).toEqual([
      "serviceaccount-controller",
      name,
      "certificatesigningrequest-approving-controller",
      "certificatesigningrequest-cleaner-controller",
    ]);
  });

  it("runs the controllers that --controllers enables, canonicalising aliases", () => {
    const env = cluster();
    const all = new ControllerManager({ client: env.client });
    expect(all.enabledControllers).toEqual([
      "endpoints-controller",
      "endpointslice-controller",
      "replicaset-controller",
      "deployment-controller",
      "daemonset-controller",
      "statefulset-controller",
      "job-controller",
      "cronjob-controller",
      "ttl-after-finished-controller",
      "horizontal-pod-autoscaler-controller",
      "disruption-controller",
      "pod-garbage-collector-controller",
      "resourcequota-controller",
      "persistentvolume-binder-controller",
      "persistentvolumeclaim-protection-controller",
      "persistentvolume-protection-controller",
      "node-lifecycle-controller",
      "taint-eviction-controller",
      "namespace-controller",
      "serviceaccount-controller",
      "certificatesigningrequest-approving-controller",
      "certificatesigningrequest-cleaner-controller",
    ]);
    const some = new ControllerManager({
      client: env.client,
      controllers: "*,-deployment,-endpoint,-nodelifecycle,-taint-eviction-controller",
    });
    expect(some.enabledControllers).toEqual([
      "endpointslice-controller",
      "replicaset-controller",
      "daemonset-controller",
      "statefulset-controller",
      "job-controller",
      "cronjob-controller",
      "ttl-after-finished-controller",
      "horizontal-pod-autoscaler-controller",
      "disruption-controller",
      "pod-garbage-collector-controller",
      "resourcequota-controller",
      "persistentvolume-binder-controller",
      "persistentvolumeclaim-protection-controller",
      "persistentvolume-protection-controller",
      "namespace-controller",
      "serviceaccount-controller",
      "certificatesigningrequest-approving-controller",
      "certificatesigningrequest-cleaner-controller",
    ]);
    const named = new ControllerManager({ client: env.client, controllers: ["deployment-controller"] });
    expect(named.enabledControllers).toEqual(["deployment-controller"]);
    expect(() => new ControllerManager({ client: env.client, controllers: "*,-nosuch" })).toThrow(
      UnknownControllerError,
    );
    expect(
      () => new ControllerManager({ client: env.client, workers: { "replicaset-controller": 0 } }),
    ).toThrow("workers of replicaset-controller must be a positive integer, got 0");
  });

  it("without election, runs only the enabled controllers and stops fully on abort", async () => {
    const env = cluster();
    const m = new ControllerManager({
      client: env.client,
      clock: env.clock,
      leaderElection: false,
      controllers: "replicaset",
    });
    const abort = new AbortController();
    const done = m.run({ signal: abort.signal });
    await env.until(() => m.isActing());
    await env.client.resource(deployments, namespace).create(web(2));
    await env.client.resource(replicaSets, namespace).create({
      metadata: { name: "standalone", namespace },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: "standalone" } },
        template: {
          metadata: { labels: { app: "standalone" } },
          spec: { containers: [{ name: "c", image: "busybox" }] },
        },
      },
    });
    await env.until(async () => (await env.client.resource(pods, namespace).list()).items.length === 2);
    await env.clock.advance(5_000);
    // No deployment controller: the Deployment got no ReplicaSet.
    const rsNames = (await env.client.resource(replicaSets, namespace).list()).items.map(
      (rs) => rs.metadata?.name,
    );
    expect(rsNames).toEqual(["standalone"]);
    abort.abort();
    await done;
    expect(m.isActing()).toBe(false);
  });

  it("with serviceAccountCredentials, a controller writes as its own ServiceAccount, made first (retried after a failure)", async () => {
    const env = cluster();
    const managerCalls: string[] = [];
    let failedOnce = false;
    const managerClient = new InterceptingClient(env.client, (call, next) => {
      if (call.resource.plural === "serviceaccounts") {
        managerCalls.push(`${call.verb} ${call.namespace}/${call.name}`);
        if (call.verb === "create" && !failedOnce) {
          failedOnce = true;
          return Promise.reject(new Error("etcdserver: leader changed"));
        }
      }
      return next();
    });
    const asked: string[] = [];
    const podCreators: string[] = [];
    const m = new ControllerManager({
      client: managerClient,
      clock: env.clock,
      leaderElection: false,
      controllers: "replicaset",
      serviceAccountCredentials: (serviceAccount) => {
        asked.push(serviceAccount);
        return new InterceptingClient(env.client, (call, next) => {
          if (call.verb === "create" && call.resource.plural === "pods") podCreators.push(serviceAccount);
          return next();
        });
      },
    });
    const abort = new AbortController();
    const done = m.run({ signal: abort.signal });
    await env.client.resource(replicaSets, namespace).create({
      metadata: { name: "web", namespace },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: "web" } },
        template: {
          metadata: { labels: { app: "web" } },
          spec: { containers: [{ name: "c", image: "busybox" }] },
        },
      },
    });
    await env.until(async () => (await env.client.resource(pods, namespace).list()).items.length === 2);
    expect(asked).toEqual(["replicaset-controller"]);
    expect(podCreators).toEqual(["replicaset-controller", "replicaset-controller"]);
    // Looked for, not found, a create that failed, and after a pause looked for and made.
    expect(managerCalls).toEqual([
      "get kube-system/replicaset-controller",
      "create kube-system/replicaset-controller",
      "get kube-system/replicaset-controller",
      "create kube-system/replicaset-controller",
    ]);
    const made = await env.client.resource(serviceAccounts, "kube-system").get("replicaset-controller");
    expect(made.metadata?.name).toBe("replicaset-controller");
    abort.abort();
    await done;
  });

  it("hands leadership over mid-rollout: the standby acts only after the leader stopped, and never both", async () => {
    const env = cluster();
    const writes: { by: string; at: number; what: string }[] = [];
    const a = manager(env, "cm-a", writes);
    await env.until(() => a.m.isActing());
    const b = manager(env, "cm-b", writes);
    const bothActing: number[] = [];
    const watchBoth = async () => {
      if (a.m.isActing() && b.m.isActing()) bothActing.push(env.clock.now());
    };

    await env.client.resource(deployments, namespace).create(web(3));
    await env.until(async () => {
      await watchBoth();
      return (await env.client.resource(pods, namespace).list()).items.length === 3;
    });
    expect(a.m.leader()).toBe("cm-a");
    expect(b.m.isActing()).toBe(false);

    // The leader dies without releasing the Lease, mid-rollout (no pod is ready yet).
    a.abort.abort();
    await a.done;
    const aStopped = env.clock.now();
    expect(a.m.isActing()).toBe(false);
    await markPodsReady(env.client);
    const scaled = await env.client.resource(deployments, namespace).get("web");
    await env.client
      .resource(deployments, namespace)
      .update({ ...scaled, spec: { ...scaled.spec!, replicas: 5 } });

    await env.until(async () => {
      await watchBoth();
      return b.m.isActing();
    });
    const bActing = env.clock.now();
    // Not before the Lease ran out: 15 s after the last renewal.
    expect(bActing - aStopped).toBeGreaterThanOrEqual(13_000);
    await env.until(async () => {
      await watchBoth();
      await markPodsReady(env.client);
      const d = await env.client.resource(deployments, namespace).get("web");
      return d.status?.availableReplicas === 5 && d.status.updatedReplicas === 5;
    });

    expect(bothActing).toEqual([]);
    expect(writes.filter((w) => w.by === "cm-a" && w.at > aStopped)).toEqual([]);
    expect(writes.filter((w) => w.by === "cm-b" && w.at < bActing)).toEqual([]);
    expect(writes.some((w) => w.by === "cm-b" && w.what === "create pods")).toBe(true);
    expect((await env.client.resource(replicaSets, namespace).list()).items).toHaveLength(1);
    expect((await env.client.resource(pods, namespace).list()).items).toHaveLength(5);
    expect(b.m.leader()).toBe("cm-b");
  });

  it("starts a standby's informers only once it leads, or at once with warmStandby, and a standby writes nothing", async () => {
    const env = cluster();
    const writes: { by: string; at: number; what: string }[] = [];
    const a = manager(env, "cm-a", writes);
    await env.until(() => a.m.isActing());
    const cold = manager(env, "cm-cold", writes);
    const warm = manager(env, "cm-warm", writes, { warmStandby: true });
    const running = (m: ControllerManager) => m.manager.informers.informers({ running: true });
    await env.until(
      () => running(warm.m).length > 0 && running(warm.m).every(([, informer]) => informer.hasSynced()),
    );
    expect(running(warm.m).map(([key]) => key)).toContain("deployments.apps");
    expect(running(cold.m)).toEqual([]);
    expect([warm.m.isActing(), cold.m.isActing()]).toEqual([false, false]);
    expect(writes.filter((w) => w.by !== "cm-a")).toEqual([]);
  });

  it("serves /healthz with the leaderElection check and one per started controller, /readyz and /metrics", async () => {
    const env = cluster();
    const a = manager(env, "cm-a", []);
    await env.until(() => a.m.isActing());
    const b = manager(env, "cm-b", []);
    await env.clock.advance(3_000);
    const [la, lb] = [await a.m.listen(), await b.m.listen()];
    cleanup.push(la.close, lb.close);
    const get = async (base: string, path: string) => {
      const response = await fetch(`${base}${path}`);
      return { status: response.status, body: await response.text() };
    };

    expect(await get(la.url, "/healthz")).toEqual({ status: 200, body: "ok" });
    expect(await get(la.url, "/healthz?verbose")).toEqual({
      status: 200,
      body: "[+]leaderElection ok\n[+]endpoints-controller ok\n[+]endpointslice-controller ok\n[+]replicaset-controller ok\n[+]deployment-controller ok\n[+]daemonset-controller ok\n[+]statefulset-controller ok\n[+]job-controller ok\n[+]cronjob-controller ok\n[+]ttl-after-finished-controller ok\n[+]horizontal-pod-autoscaler-controller ok\n[+]disruption-controller ok\n[+]pod-garbage-collector-controller ok\n[+]resourcequota-controller ok\n[+]persistentvolume-binder-controller ok\n[+]persistentvolumeclaim-protection-controller ok\n[+]persistentvolume-protection-controller ok\n[+]node-lifecycle-controller ok\n[+]taint-eviction-controller ok\n[+]namespace-controller ok\n[+]serviceaccount-controller ok\n[+]certificatesigningrequest-approving-controller ok\n[+]certificatesigningrequest-cleaner-controller ok\nhealthz check passed\n",
    });
    expect(await get(lb.url, "/healthz?verbose")).toEqual({
      status: 200,
      body: "[+]leaderElection ok\nhealthz check passed\n",
    });
    expect(await get(la.url, "/healthz/deployment-controller")).toEqual({ status: 200, body: "ok" });
    expect((await get(la.url, "/healthz/nosuch")).status).toBe(404);
    await env.until(async () => (await get(la.url, "/readyz")).status === 200);
    expect((await get(la.url, "/readyz?verbose")).body).toContain("[+]informer-sync ok\n");
    // A standby starts no informer, so it has nothing to wait for: ready.
    expect(await get(lb.url, "/readyz")).toEqual({ status: 200, body: "ok" });
    expect((await get(la.url, "/nosuch")).status).toBe(404);

    await env.client.resource(deployments, namespace).create(web(1));
    await env.until(async () => (await env.client.resource(pods, namespace).list()).items.length === 1);
    const metrics = (await get(la.url, "/metrics")).body;
    expect(metrics).toContain('leader_election_master_status{name="kube-controller-manager"} 1');
    expect(metrics).toMatch(/workqueue_adds_total\{name="deployment"\} [1-9]/);
    expect(metrics).toMatch(/workqueue_adds_total\{name="replicaset"\} [1-9]/);
    expect(metrics).toContain(
      'running_managed_controllers{name="deployment-controller",manager="kube-controller-manager"} 1',
    );
    expect((await get(lb.url, "/metrics")).body).toContain(
      'leader_election_master_status{name="kube-controller-manager"} 0',
    );
  });

  it("a leader that cannot renew stops its controllers and rejects with LeaderElectionLostError", async () => {
    const env = cluster();
    let partitioned = false;
    const client = new InterceptingClient(env.client, (call, next) => {
      if (partitioned && call.resource.plural === "leases")
        return Promise.reject(new Error("connection refused"));
      return next();
    });
    const m = new ControllerManager({ client, clock: env.clock, leaderElection: { identity: "cm-a" } });
    const done = m.run({ signal: new AbortController().signal });
    const outcome = done.then(
      () => "resolved",
      (error) => error,
    );
    await env.until(() => m.isActing());
    partitioned = true;
    await env.until(() => !m.isActing(), 20_000);
    const lost = await outcome;
    expect(lost).toBeInstanceOf(LeaderElectionLostError);
    // One of reconcile's own errors: recognisable across copies of the package, with a stable code.
    expect(LeaderElectionLostError.isInstance(lost) && ReconcileError.isInstance(lost)).toBe(true);
    expect((lost as LeaderElectionLostError).code).toBe("runtime.leader-election-lost");
  });
});
