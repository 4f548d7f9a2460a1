// The ReplicaSet controller end to end on the embedded API server: writes go
// through the in-process client, informers watch the server, and time is a
// FakeClock the tests advance.
import {
  type DeepReadonly,
  events as eventsResource,
  getControllerOf,
  isPodActive,
  type KubeObject,
  type ListerWatcher,
  newInternalError,
  type Pod,
  pods,
  type ReplicaSet,
  replicaSets,
  type WatchEvent,
} from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import { type Client, listerWatcher, type ResourceClient } from "@reconcile/client";
import { FakeClock } from "@reconcile/clock";
import { SharedIndexInformer, SharedInformerFactory } from "@reconcile/informer";
import { afterEach, describe, expect, it } from "vitest";
import { ReplicaSetController } from "./replica-set-controller.js";

const namespace = "default";

interface Cluster {
  clock: FakeClock;
  server: ApiServer;
  /** The server's own client, for the test's reads and writes. */
  client: Client;
}

interface RunningController {
  controller: ReplicaSetController;
  stop(): Promise<void>;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

function startCluster(): Cluster {
  const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
  const server = new ApiServer({ clock });
  cleanups.push(() => server.close());
  return { clock, server, client: server.client() };
}

/**
 * Starts informers and the controller. `controllerClient` is what the
 * controller writes through; `podListerWatcher` lets a test slow the pod watch.
 */
function startController(
  cluster: Cluster,
  options: {
    controllerClient?: Client;
    podListerWatcher?: (inner: ListerWatcher<Pod>) => ListerWatcher<Pod>;
    burstReplicas?: number;
  } = {},
): RunningController {
  const { clock, client } = cluster;
  const abort = new AbortController();
  const factory = new SharedInformerFactory({ client, clock, detectMutations: true });
  let controller: ReplicaSetController;
  let podInformerRun: Promise<void> | undefined;
  const common = {
    client: options.controllerClient ?? client,
    clock,
    ...(options.burstReplicas ? { burstReplicas: options.burstReplicas } : {}),
  };
  if (options.podListerWatcher) {
    const podInformer = new SharedIndexInformer<Pod>({
      listerWatcher: options.podListerWatcher(listerWatcher(client, pods)),
      resource: pods,
      clock,
      detectMutations: true,
    });
    podInformerRun = podInformer.run(abort.signal);
    controller = new ReplicaSetController({
      ...common,
      podInformer,
      replicaSetInformer: factory.forResource(replicaSets),
    });
  } else {
    controller = ReplicaSetController.fromInformerFactory(factory, common);
  }
  factory.start(abort.signal);
  const run = controller.run({ signal: abort.signal, workers: 5 });
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    abort.abort();
    await run;
    await factory.shutdown();
    await podInformerRun;
  };
  cleanups.push(stop);
  return { controller, stop };
}

function newReplicaSet(
  name: string,
  replicas: number,
  labels: Record<string, string> = { app: name },
): ReplicaSet {
  return {
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    metadata: { name, namespace },
    spec: {
      replicas,
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: { containers: [{ name: "app", image: "nginx:1.27" }] } },
    },
  };
}

async function ownedActivePods(client: Client, rs: ReplicaSet | DeepReadonly<ReplicaSet>): Promise<Pod[]> {
  const list = await client.resource(pods, namespace).list();
  return list.items.filter((pod) => isPodActive(pod) && getControllerOf(pod)?.uid === rs.metadata?.uid);
}

async function getRS(client: Client, name: string): Promise<ReplicaSet> {
  return client.resource(replicaSets, namespace).get(name);
}

async function scale(client: Client, name: string, replicas: number): Promise<void> {
  const rs = await getRS(client, name);
  await client.resource(replicaSets, namespace).update({ ...rs, spec: { ...rs.spec!, replicas } });
}

/**
 * Advances the fake clock in small steps until `check` passes, calling
 * `observe` after every step (to watch for overshoot). Fails after `limitMs` of fake time.
 */
async function eventually(
  clock: FakeClock,
  check: () => Promise<boolean> | boolean,
  options: { limitMs?: number; stepMs?: number; observe?: () => Promise<void> | void } = {},
): Promise<void> {
  const limit = options.limitMs ?? 120_000;
  const step = options.stepMs ?? 10;
  for (let elapsed = 0; elapsed <= limit; elapsed += step) {
    await options.observe?.();
    if (await check()) return;
    await clock.advance(step);
  }
  throw new Error(`condition not reached within ${limit} ms of fake time`);
}

async function settledAt(cluster: Cluster, name: string, replicas: number): Promise<void> {
  const { clock, client } = cluster;
  await eventually(clock, async () => {
    const rs = await getRS(client, name);
    const owned = await ownedActivePods(client, rs);
    return (
      owned.length === replicas &&
      rs.status?.replicas === replicas &&
      rs.status?.observedGeneration === rs.metadata?.generation
    );
  });
}

/** Sets the pod's Ready condition, as a kubelet would (the embedded server runs no pods). */
async function markReady(client: Client, pod: Pod, atMs: number): Promise<void> {
  const transition = new Date(atMs).toISOString().replace(/\.\d{3}Z$/, "Z");
  const fresh = await client.resource(pods, namespace).get(pod.metadata!.name!);
  await client.resource(pods, namespace).updateStatus({
    ...fresh,
    status: {
      phase: "Running",
      conditions: [{ type: "Ready", status: "True", lastTransitionTime: transition }],
    },
  });
}

/** A Client whose resource clients can be intercepted per call. */
function interceptingClient(
  inner: Client,
  intercept: (call: { verb: string; resource: string; args: unknown[] }) => Promise<void> | void,
): Client {
  return {
    resource<T extends KubeObject>(
      resource: Parameters<Client["resource"]>[0],
      ns?: string,
    ): ResourceClient<T> {
      const target = inner.resource(resource, ns) as unknown as ResourceClient<T>;
      return new Proxy(target, {
        get(object, property, receiver) {
          const value = Reflect.get(object, property, receiver);
          if (typeof value !== "function") return value;
          return async (...args: unknown[]) => {
            await intercept({ verb: String(property), resource: resource.plural, args });
            return (value as (...a: unknown[]) => unknown).apply(object, args);
          };
        },
      });
    },
  } as Client;
}

/** Delivers every watch event `delayMs` of fake time late (a slow informer). */
function delayedWatch(clock: FakeClock, delayMs: number) {
  return (inner: ListerWatcher<Pod>): ListerWatcher<Pod> => ({
    list: (options) => inner.list(options),
    async watch(options) {
      const stream = await inner.watch(options);
      return {
        async *[Symbol.asyncIterator](): AsyncIterator<WatchEvent<Pod>> {
          for await (const event of stream) {
            await clock.sleep(delayMs);
            yield event;
          }
        },
      };
    },
  });
}

// ---------------------------------------------------------------------------

describe("ReplicaSet controller on the embedded API server", () => {
  it("scales 0 → 10 → 3 → 0 and reports status", async () => {
    const cluster = startCluster();
    const { client } = cluster;
    startController(cluster);
    await client.resource(replicaSets, namespace).create(newReplicaSet("web", 0));
    await settledAt(cluster, "web", 0);
    await scale(client, "web", 10);
    await settledAt(cluster, "web", 10);
    const rs = await getRS(client, "web");
    const owned = await ownedActivePods(client, rs);
    expect(owned.every((pod) => pod.metadata?.name?.startsWith("web-"))).toBe(true);
    expect(owned.every((pod) => pod.metadata?.labels?.app === "web")).toBe(true);
    expect(rs.status).toMatchObject({
      replicas: 10,
      fullyLabeledReplicas: 10,
      readyReplicas: 0,
      availableReplicas: 0,
    });
    await scale(client, "web", 3);
    await settledAt(cluster, "web", 3);
    await scale(client, "web", 0);
    await settledAt(cluster, "web", 0);
    expect((await client.resource(pods, namespace).list()).items).toEqual([]);
  });

  it("counts pods marked ready in readyReplicas and availableReplicas", async () => {
    const cluster = startCluster();
    const { client, clock } = cluster;
    startController(cluster);
    await client.resource(replicaSets, namespace).create(newReplicaSet("web", 3));
    await settledAt(cluster, "web", 3);
    const rs = await getRS(client, "web");
    for (const pod of await ownedActivePods(client, rs)) {
      const transition = new Date(clock.now()).toISOString().replace(/\.\d{3}Z$/, "Z");
      await client.resource(pods, namespace).updateStatus({
        ...pod,
        status: {
          phase: "Running",
          conditions: [{ type: "Ready", status: "True", lastTransitionTime: transition }],
        },
      });
    }
    await eventually(clock, async () => {
      const status = (await getRS(client, "web")).status;
      return status?.readyReplicas === 3 && status.availableReplicas === 3;
    });
  });

  it("counts a ready pod as available only after minReadySeconds", async () => {
    const cluster = startCluster();
    const { client, clock } = cluster;
    startController(cluster);
    const rs = newReplicaSet("web", 2);
    rs.spec!.minReadySeconds = 30;
    await client.resource(replicaSets, namespace).create(rs);
    await settledAt(cluster, "web", 2);
    const readyAt = clock.now();
    for (const pod of await ownedActivePods(client, await getRS(client, "web"))) {
      await markReady(client, pod, readyAt);
    }
    await eventually(clock, async () => (await getRS(client, "web")).status?.readyReplicas === 2);
    expect((await getRS(client, "web")).status?.availableReplicas).toBe(0);
    // Nothing changes in the cluster after this: only the controller's own requeue can notice.
    await eventually(clock, async () => (await getRS(client, "web")).status?.availableReplicas === 2, {
      stepMs: 500,
    });
    expect(clock.now() - readyAt).toBeGreaterThan(30_000);
  });

  it("scales down by deleting the pending, not-ready pods first", async () => {
    const cluster = startCluster();
    const { client, clock } = cluster;
    startController(cluster);
    await client.resource(replicaSets, namespace).create(newReplicaSet("web", 4));
    await settledAt(cluster, "web", 4);
    const rs = await getRS(client, "web");
    const [a, b, c, d] = await ownedActivePods(client, rs);
    for (const pod of [a!, c!]) await markReady(client, pod, clock.now());
    await eventually(clock, async () => (await getRS(client, "web")).status?.readyReplicas === 2);
    await scale(client, "web", 2);
    await settledAt(cluster, "web", 2);
    const left = (await ownedActivePods(client, rs)).map((pod) => pod.metadata?.name).sort();
    expect(left).toEqual([a!.metadata?.name, c!.metadata?.name].sort());
    expect([b, d].every((pod) => !left.includes(pod!.metadata?.name))).toBe(true);
  });

  it("replaces a pod deleted by hand", async () => {
    const cluster = startCluster();
    const { client, clock } = cluster;
    startController(cluster);
    await client.resource(replicaSets, namespace).create(newReplicaSet("web", 3));
    await settledAt(cluster, "web", 3);
    const rs = await getRS(client, "web");
    const [victim] = await ownedActivePods(client, rs);
    await client.resource(pods, namespace).delete(victim!.metadata!.name!);
    await eventually(clock, async () => {
      const owned = await ownedActivePods(client, rs);
      return owned.length === 3 && owned.every((pod) => pod.metadata?.name !== victim!.metadata?.name);
    });
    // Four SuccessfulCreate Events on the ReplicaSet: three at first, one for the replacement.
    await eventually(clock, async () => {
      const events = await client.resource(eventsResource, namespace).list();
      return events.items.filter((e) => e.reason === "SuccessfulCreate").length === 4;
    });
  });

  it("adopts a matching orphan instead of creating a pod", async () => {
    const cluster = startCluster();
    const { client, clock } = cluster;
    await client.resource(pods, namespace).create({
      metadata: { name: "orphan", namespace, labels: { app: "web" } },
      spec: { containers: [{ name: "app", image: "nginx:1.27" }] },
    });
    startController(cluster);
    const created = await client.resource(replicaSets, namespace).create(newReplicaSet("web", 1));
    await settledAt(cluster, "web", 1);
    const orphan = await client.resource(pods, namespace).get("orphan");
    expect(getControllerOf(orphan)).toMatchObject({
      kind: "ReplicaSet",
      name: "web",
      uid: created.metadata?.uid,
    });
    expect((await client.resource(pods, namespace).list()).items).toHaveLength(1);
    await clock.advance(1000);
    expect((await client.resource(pods, namespace).list()).items).toHaveLength(1);
  });

  it("releases a pod whose labels stop matching and replaces it", async () => {
    const cluster = startCluster();
    const { client, clock } = cluster;
    startController(cluster);
    await client.resource(replicaSets, namespace).create(newReplicaSet("web", 2));
    await settledAt(cluster, "web", 2);
    const rs = await getRS(client, "web");
    const [pod] = await ownedActivePods(client, rs);
    const name = pod!.metadata!.name!;
    await client
      .resource(pods, namespace)
      .patch(name, { metadata: { labels: { app: "debug" } } }, { type: "merge" });
    await eventually(clock, async () => {
      const released = await client.resource(pods, namespace).get(name);
      return getControllerOf(released) === undefined && (await ownedActivePods(client, rs)).length === 2;
    });
    expect((await client.resource(pods, namespace).list()).items).toHaveLength(3);
  });

  it("does not adopt an orphan while the ReplicaSet is being deleted", async () => {
    const cluster = startCluster();
    const { client, clock } = cluster;
    startController(cluster);
    const rs = newReplicaSet("web", 0);
    rs.metadata!.finalizers = ["example.com/hold"];
    await client.resource(replicaSets, namespace).create(rs);
    await settledAt(cluster, "web", 0);
    await client.resource(replicaSets, namespace).delete("web");
    await eventually(
      clock,
      async () => (await getRS(client, "web")).metadata?.deletionTimestamp !== undefined,
    );
    await client.resource(pods, namespace).create({
      metadata: { name: "orphan", namespace, labels: { app: "web" } },
      spec: { containers: [{ name: "app", image: "nginx:1.27" }] },
    });
    await clock.advance(5000);
    const orphan = await client.resource(pods, namespace).get("orphan");
    expect(orphan.metadata?.ownerReferences).toBeUndefined();
    expect((await client.resource(pods, namespace).list()).items).toHaveLength(1);
  });

  it("never overshoots when one create in three fails, and converges", async () => {
    const cluster = startCluster();
    const { client, clock } = cluster;
    let creates = 0;
    let failed = 0;
    let deletes = 0;
    const flaky = interceptingClient(client, ({ verb, resource }) => {
      if (resource !== "pods") return;
      if (verb === "delete") deletes++;
      if (verb !== "create") return;
      creates++;
      if (creates % 3 === 0) {
        failed++;
        throw newInternalError("injected create failure");
      }
    });
    startController(cluster, { controllerClient: flaky });
    await client.resource(replicaSets, namespace).create(newReplicaSet("web", 20));
    let maxSeen = 0;
    const rs = await getRS(client, "web");
    await eventually(
      clock,
      async () =>
        (await ownedActivePods(client, rs)).length === 20 &&
        (await getRS(client, "web")).status?.replicas === 20,
      {
        observe: async () => {
          maxSeen = Math.max(maxSeen, (await ownedActivePods(client, rs)).length);
        },
      },
    );
    expect(maxSeen).toBe(20);
    expect(failed).toBeGreaterThan(0);
    expect(creates - failed).toBe(20);
    expect(deletes).toBe(0);
    const conditions = (await getRS(client, "web")).status?.conditions;
    expect(conditions).toBeUndefined(); // ReplicaFailure is cleared once a sync succeeds
  });

  it("never creates twice while the pod informer lags behind", async () => {
    const cluster = startCluster();
    const { client, clock } = cluster;
    let creates = 0;
    const counting = interceptingClient(client, ({ verb, resource }) => {
      if (resource === "pods" && verb === "create") creates++;
    });
    startController(cluster, { controllerClient: counting, podListerWatcher: delayedWatch(clock, 3000) });
    await client.resource(replicaSets, namespace).create(newReplicaSet("web", 8));
    await settledAt(cluster, "web", 8);
    expect(creates).toBe(8);
    await clock.advance(30_000);
    expect(creates).toBe(8);
    expect((await client.resource(pods, namespace).list()).items).toHaveLength(8);
  });

  it("converges to exactly the desired count after a restart mid-scale", async () => {
    const cluster = startCluster();
    const { client, clock } = cluster;
    // The first controller "crashes" after 12 pods: its later creates never reach the server.
    let crashed = false;
    let creates = 0;
    const dying = interceptingClient(client, ({ verb, resource }) => {
      if (resource !== "pods" || verb !== "create") return;
      if (crashed || creates >= 12) {
        crashed = true;
        throw new Error("connection reset");
      }
      creates++;
    });
    const first = startController(cluster, { controllerClient: dying, burstReplicas: 5 });
    await client.resource(replicaSets, namespace).create(newReplicaSet("web", 30));
    await eventually(clock, () => crashed);
    await first.stop();
    const rs = await getRS(client, "web");
    expect((await ownedActivePods(client, rs)).length).toBe(12);
    let secondCreates = 0;
    const counting = interceptingClient(client, ({ verb, resource }) => {
      if (resource === "pods" && verb === "create") secondCreates++;
    });
    startController(cluster, { controllerClient: counting, burstReplicas: 5 });
    await settledAt(cluster, "web", 30);
    await clock.advance(10_000);
    expect(secondCreates).toBe(18);
    expect((await ownedActivePods(client, rs)).length).toBe(30);
    expect((await client.resource(pods, namespace).list()).items).toHaveLength(30);
  });

  it("starts syncing on a FakeClock nobody advances: the caches' synced signal needs no timer", async () => {
    const cluster = startCluster();
    const { client } = cluster;
    await client.resource(replicaSets, namespace).create(newReplicaSet("web", 3));
    startController(cluster);
    const rs = await getRS(client, "web");
    for (let turn = 0; turn < 1000 && (await ownedActivePods(client, rs)).length < 3; turn++) {
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    expect((await ownedActivePods(client, rs)).length).toBe(3);
  });

  it("stops without waiting for a pod create in flight: the worker's signal aborts it", async () => {
    const cluster = startCluster();
    const { client, clock } = cluster;
    let started = 0;
    let aborted = 0;
    const hanging = interceptingClient(client, ({ verb, resource, args }) => {
      if (resource !== "pods" || verb !== "create") return;
      started++;
      const signal = (args[1] as { signal?: AbortSignal } | undefined)?.signal;
      // A request that never answers: only the caller's signal ends it.
      return new Promise<void>((_resolve, reject) => {
        signal?.addEventListener(
          "abort",
          () => {
            aborted++;
            reject(signal.reason);
          },
          { once: true },
        );
      });
    });
    const running = startController(cluster, { controllerClient: hanging });
    await client.resource(replicaSets, namespace).create(newReplicaSet("web", 1));
    await eventually(clock, () => started === 1);
    await running.stop();
    expect(aborted).toBe(1);
    expect((await client.resource(pods, namespace).list()).items).toHaveLength(0);
  });
});
