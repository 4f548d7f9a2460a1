// The ReplicaSet controller and its informers behind a fault-injecting proxy:
// the embedded API server listens on loopback, and everything the controller
// reads, watches and writes goes through HttpClient → FaultProxy → server,
// where requests are reset before and after the server applied them, answered
// 5xx or 429 with Retry-After, cut mid-chunk or stalled, and watches are cut.
// The test's own user writes directly through the server's in-process client.
// Once the faults stop, the informers' caches must equal the server's lists
// and the controller must settle at exactly the desired pods.
//
// Everything, the proxy's stalls and the server included, runs on one
// FakeClock that the test advances in small steps while real loopback I/O
// runs between them; a seed fixes the mix of faults (not their exact order,
// which follows the order requests arrive in).
import {
  type DeepReadonly,
  getControllerOf,
  isPodActive,
  type KubeObject,
  type Pod,
  pods,
  type ReplicaSet,
  replicaSets,
} from "@reconcile/api";
import { ApiServer, type ListeningApiServer, listen } from "@reconcile/apiserver";
import { type Client, HttpClient, type KubeConfigLike } from "@reconcile/client";
import { type FaultKind, FaultProxy, type FaultRates } from "@reconcile/client/testing";
import { FakeClock } from "@reconcile/clock";
import { type SharedIndexInformer, SharedInformerFactory } from "@reconcile/informer";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { ReplicaSetController } from "./replica-set-controller.js";

const namespace = "default";

/** About half the requests meet a fault while they are on (`cutWatch` strikes only watches). */
const faults: FaultRates = {
  reset: 0.06,
  serverError: 0.06,
  unavailable: 0.05,
  tooManyRequests: 0.05,
  dropResponse: 0.08,
  truncate: 0.08,
  stall: 0.06,
  cutWatch: 0.2,
};

const seeds = [1, 2, 3, 4];
/** Fake time the cluster gets to converge once faults stop: the 5-minute expectations TTL, then a resync. */
const convergeLimitMs = 420_000;
const stepMs = 10;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

/** Faults met across every seed; each kind must have struck at least once. */
const faultsSeen: Record<string, number> = {};
let seedsRun = 0;
afterAll(() => {
  // Only meaningful when every seed ran (not under a `-t` filter).
  if (seedsRun < seeds.length) return;
  for (const kind of Object.keys(faults) as FaultKind[]) expect(faultsSeen[kind], kind).toBeGreaterThan(0);
});

interface ChaosCluster {
  clock: FakeClock;
  /** The server's in-process client: the test's own reads and writes, free of faults. */
  direct: Client;
  proxy: FaultProxy;
  podsInformer: SharedIndexInformer<Pod>;
  rsInformer: SharedIndexInformer<ReplicaSet>;
}

async function startChaosCluster(seed: number): Promise<ChaosCluster> {
  const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
  const apiServer = new ApiServer({ clock });
  cleanups.push(() => apiServer.close());
  const listening: ListeningApiServer = await listen(apiServer);
  cleanups.push(() => listening.close());
  const proxy = await FaultProxy.start({
    target: listening.url,
    seed,
    clock,
    faults,
    retryAfterSeconds: 1,
    maxStallMs: 8_000,
    maxWatchLifeMs: 10_000,
  });
  cleanups.push(() => proxy.close());

  const kubeConfig: KubeConfigLike = {
    getCurrentCluster: () => ({ server: proxy.url }),
    getCurrentContext: () => "chaos",
    getContextObject: () => ({ namespace }),
    applyToHTTPSOptions: async () => undefined,
  };
  // A 5 s timeout, so that some stalls outlast it.
  const client = new HttpClient({ kubeConfig, clock, qps: Number.POSITIVE_INFINITY, timeoutMs: 5_000 });
  cleanups.push(async () => client.close());

  const factory = new SharedInformerFactory({
    client,
    clock,
    detectMutations: true,
    // Upstream's safety net (kube-controller-manager resyncs its informers too): a pod
    // created and deleted while the pod watch was down is never observed, so its
    // creation expectation only expires after 5 minutes, and then only an event
    // wakes the ReplicaSet; a resync of the ReplicaSet informer is that event.
    resyncPeriodMs: 30_000,
    // Every fault shows up here; the test judges the outcome instead.
    watchErrorHandler: () => undefined,
  });
  const controller = ReplicaSetController.fromInformerFactory(factory, { client, clock });
  const abort = new AbortController();
  factory.start(abort.signal);
  const run = controller.run({ signal: abort.signal, workers: 5 });
  cleanups.push(async () => {
    abort.abort();
    await run;
    await factory.shutdown();
  });
  return {
    clock,
    direct: apiServer.client(),
    proxy,
    podsInformer: factory.forResource(pods),
    rsInformer: factory.forResource(replicaSets),
  };
}

/** Advances fake time in small steps, letting real I/O run between them. */
async function pump(clock: FakeClock, ms: number): Promise<void> {
  for (let elapsed = 0; elapsed < ms; elapsed += stepMs) {
    await clock.advance(stepMs);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

function newReplicaSet(name: string, replicas: number): ReplicaSet {
  const labels = { app: name };
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

async function scale(direct: Client, name: string, replicas: number): Promise<void> {
  const rs = await direct.resource(replicaSets, namespace).get(name);
  await direct.resource(replicaSets, namespace).update({ ...rs, spec: { ...rs.spec!, replicas } });
}

/** `namespace/name@resourceVersion` of each object, sorted: equal lists mean nothing missing, extra or stale. */
function versions(objects: readonly DeepReadonly<KubeObject>[]): string[] {
  return objects
    .map((o) => `${o.metadata?.namespace}/${o.metadata?.name}@${o.metadata?.resourceVersion}`)
    .sort();
}

interface Divergence {
  pods: { missing: string[]; extra: string[] };
  replicaSets: { missing: string[]; extra: string[] };
  /** Per ReplicaSet: desired, active pods it controls, status.replicas, whether status saw this generation. */
  sets: Record<string, { desired: number; active: number; status: number | undefined; observed: boolean }>;
  /** Pods no ReplicaSet controls, or that are not active. */
  strays: string[];
}

async function divergence(cluster: ChaosCluster): Promise<Divergence> {
  const serverPods = (await cluster.direct.resource(pods, namespace).list()).items;
  const serverSets = (await cluster.direct.resource(replicaSets, namespace).list()).items;
  const diff = (server: readonly DeepReadonly<KubeObject>[], cache: readonly DeepReadonly<KubeObject>[]) => {
    const want = new Set(versions(server));
    const have = new Set(versions(cache));
    return { missing: [...want].filter((v) => !have.has(v)), extra: [...have].filter((v) => !want.has(v)) };
  };
  const sets: Divergence["sets"] = {};
  const uids = new Map<string, string>();
  for (const rs of serverSets) {
    uids.set(rs.metadata!.uid!, rs.metadata!.name!);
    sets[rs.metadata!.name!] = {
      desired: rs.spec?.replicas ?? 1,
      active: 0,
      status: rs.status?.replicas,
      observed: rs.status?.observedGeneration === rs.metadata?.generation,
    };
  }
  const strays: string[] = [];
  for (const pod of serverPods as Pod[]) {
    const owner = uids.get(getControllerOf(pod)?.uid ?? "");
    if (owner !== undefined && isPodActive(pod)) sets[owner]!.active++;
    else strays.push(pod.metadata!.name!);
  }
  return {
    pods: diff(serverPods, cluster.podsInformer.getStore().list()),
    replicaSets: diff(serverSets, cluster.rsInformer.getStore().list()),
    sets,
    strays,
  };
}

function converged(d: Divergence): boolean {
  return (
    d.pods.missing.length +
      d.pods.extra.length +
      d.replicaSets.missing.length +
      d.replicaSets.extra.length ===
      0 &&
    d.strays.length === 0 &&
    Object.values(d.sets).every((s) => s.active === s.desired && s.status === s.desired && s.observed)
  );
}

describe("ReplicaSet controller and informers behind a fault-injecting proxy", () => {
  it.each(seeds)("converge exactly once the faults stop (seed %i)", async (seed) => {
    const cluster = await startChaosCluster(seed);
    const { clock, direct, proxy } = cluster;
    const sets = direct.resource(replicaSets, namespace);

    // Faults on: the user creates, scales and deletes pods by hand while requests fail.
    const random = seededRandom(seed);
    const names = ["web", "api", "worker"];
    const desired: Record<string, number> = {};
    for (const name of names) {
      desired[name] = Math.floor(random() * 5);
      await sets.create(newReplicaSet(name, desired[name]!));
    }
    for (let round = 0; round < 8; round++) {
      await pump(clock, 2_000);
      const name = names[Math.floor(random() * names.length)]!;
      desired[name] = Math.floor(random() * 7);
      await scale(direct, name, desired[name]!);
      const all = (await direct.resource(pods, namespace).list()).items;
      const victim = all[Math.floor(random() * all.length)];
      if (victim !== undefined) await direct.resource(pods, namespace).delete(victim.metadata!.name!);
    }
    await pump(clock, 2_000);

    proxy.heal();
    const healedAt = clock.now();
    let last = await divergence(cluster);
    while (!converged(last) && clock.now() - healedAt < convergeLimitMs) {
      await pump(clock, 500);
      last = await divergence(cluster);
    }
    expect(last).toEqual({
      pods: { missing: [], extra: [] },
      replicaSets: { missing: [], extra: [] },
      sets: Object.fromEntries(
        names.map((name) => {
          const count = desired[name]!;
          return [name, { desired: count, active: count, status: count, observed: true }];
        }),
      ),
      strays: [],
    });

    // The faults did strike, and a while later nothing has moved.
    const struck = Object.entries(proxy.counts).filter(([kind]) => kind !== "none");
    for (const [kind, count] of struck) faultsSeen[kind] = (faultsSeen[kind] ?? 0) + count;
    seedsRun++;
    expect(struck.reduce((sum, [, count]) => sum + count, 0)).toBeGreaterThan(10);
    const settled = versions((await direct.resource(pods, namespace).list()).items);
    await pump(clock, 10_000);
    expect(versions((await direct.resource(pods, namespace).list()).items)).toEqual(settled);
    expect(converged(await divergence(cluster))).toBe(true);
  });
});

/** mulberry32, for the user's choices; the proxy draws its faults from its own generator. */
function seededRandom(seed: number): () => number {
  let state = (seed * 7919) >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
