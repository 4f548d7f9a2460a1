// ReplicaSet controller benchmarks (issue 6 section 6), on the embedded API
// server through its in-process client, with real time:
//
// (a) one ReplicaSet scaled 0 → 10,000: seconds from the scale-up until the
//     ReplicaSet's status.replicas reads 10,000; pods/s; API writes per pod
//     (every create/update/updateStatus/patch/delete the controller sends,
//     Events included); peak RSS of the process during the run.
// (b) 1,000 ReplicaSets × 10 replicas created at once: seconds until every
//     status.replicas reads 10; pods/s; API writes per pod.
//
// Each run starts a fresh server, informers and controller (5 workers).
// 3 measured runs after 1 warm-up; medians reported. Goal: ≥ 2,000 pods/s.
import { type KubeObject, pods, type ReplicaSet, replicaSets } from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import type { Client, ResourceClient } from "@reconcile/client";
import { SharedInformerFactory } from "@reconcile/informer";
import { type Measurement, measure, writeResults } from "../../../tools/bench/index.js";
import { ReplicaSetController } from "../src/index.js";

const namespace = "default";
const writeVerbs = new Set(["create", "update", "updateStatus", "patch", "delete", "deleteCollection"]);

function newReplicaSet(name: string, replicas: number): ReplicaSet {
  const labels = { app: name, tier: "bench" };
  return {
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    metadata: { name, namespace },
    spec: {
      replicas,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          containers: [
            {
              name: "app",
              image: "registry.example.com/team/app:1.27.3",
              ports: [{ name: "http", containerPort: 8080 }],
              resources: { requests: { cpu: "100m", memory: "128Mi" } },
            },
          ],
        },
      },
    },
  };
}

/** Counts the writes sent through `inner`. */
function countingClient(inner: Client, counter: { writes: number }): Client {
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
          if (writeVerbs.has(String(property))) {
            return (...args: unknown[]) => {
              counter.writes++;
              return (value as (...a: unknown[]) => unknown).apply(object, args);
            };
          }
          return value.bind(object);
        },
      });
    },
  } as Client;
}

interface Run {
  seconds: number;
  writesPerPod: number;
  peakRssMb: number;
}

async function runScenario(replicaSetCount: number, replicasEach: number): Promise<Run> {
  const server = new ApiServer({ historySize: 50_000, watchBufferSize: 100_000 });
  const client = server.client();
  const counter = { writes: 0 };
  const abort = new AbortController();
  const factory = new SharedInformerFactory({ client });
  const controller = new ReplicaSetController({
    client: countingClient(client, counter),
    podInformer: factory.forResource(pods),
    replicaSetInformer: factory.forResource(replicaSets),
  });
  factory.start(abort.signal);
  const running = controller.run({ signal: abort.signal, workers: 5 });
  await factory.waitForCacheSync(abort.signal);

  const rsClient = client.resource(replicaSets, namespace);
  // (a) starts from an existing ReplicaSet at 0 and scales it; (b) creates them all at once.
  if (replicaSetCount === 1) {
    await rsClient.create(newReplicaSet("big", 0));
    await waitFor(async () => (await rsClient.get("big")).status?.observedGeneration === 1);
  }
  global.gc?.();
  counter.writes = 0;
  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }, 25);
  const started = performance.now();
  if (replicaSetCount === 1) {
    const rs = await rsClient.get("big");
    await rsClient.update({ ...rs, spec: { ...rs.spec!, replicas: replicasEach } });
    await waitFor(async () => (await rsClient.get("big")).status?.replicas === replicasEach);
  } else {
    await Promise.all(
      Array.from({ length: replicaSetCount }, (_, i) =>
        rsClient.create(newReplicaSet(`rs-${i}`, replicasEach)),
      ),
    );
    await allReport(rsClient, replicaSetCount, replicasEach);
  }
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
  const writes = counter.writes;
  abort.abort();
  await running;
  await factory.shutdown();
  await server.close();
  return {
    seconds,
    writesPerPod: writes / (replicaSetCount * replicasEach),
    peakRssMb: peakRss / (1024 * 1024),
  };
}

/**
 * Resolves once `count` ReplicaSets report `replicas` in their status: read
 * from one list and then a watch, so the wait costs the run almost nothing
 * (listing 1,000 ReplicaSets every 50 ms took about a tenth of the CPU).
 */
async function allReport(
  rsClient: ResourceClient<ReplicaSet>,
  count: number,
  replicas: number,
): Promise<void> {
  const list = await rsClient.list();
  const done = new Set<string>();
  const see = (rs: ReplicaSet) => {
    if (rs.status?.replicas === replicas) done.add(rs.metadata!.name!);
    else done.delete(rs.metadata!.name!);
  };
  for (const rs of list.items) see(rs);
  if (done.size === count) return;
  const watch = await rsClient.watch({ resourceVersion: list.metadata.resourceVersion });
  for await (const event of watch) {
    if (event.type === "ADDED" || event.type === "MODIFIED") see(event.object);
    if (done.size === count) return;
  }
}

async function waitFor(check: () => Promise<boolean>, pollMs = 10): Promise<void> {
  for (;;) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

async function scenario(
  label: string,
  replicaSetCount: number,
  replicasEach: number,
): Promise<Measurement[]> {
  const runs: Run[] = [];
  const podCount = replicaSetCount * replicasEach;
  const seconds = await measure(
    {
      name: `${label}: seconds until status.replicas = ${replicasEach}`,
      unit: "s",
      higherIsBetter: false,
      runs: 3,
      warmups: 1,
    },
    async () => {
      const run = await runScenario(replicaSetCount, replicasEach);
      runs.push(run);
      return run.seconds;
    },
  );
  const measured = runs.slice(-3);
  const fromRuns = (name: string, unit: string, higherIsBetter: boolean, values: number[], target?: number) =>
    measure(
      { name, unit, higherIsBetter, runs: values.length, warmups: 0, ...(target ? { target } : {}) },
      () => values.shift()!,
    );
  return [
    seconds,
    await fromRuns(
      `${label}: pods/s`,
      "pods/s",
      true,
      measured.map((r) => podCount / r.seconds),
      2000,
    ),
    await fromRuns(
      `${label}: API writes per pod`,
      "writes/pod",
      false,
      measured.map((r) => r.writesPerPod),
    ),
    await fromRuns(
      `${label}: peak RSS`,
      "MB",
      false,
      measured.map((r) => r.peakRssMb),
    ),
  ];
}

const results = [
  ...(await scenario("(a) 1 ReplicaSet 0 → 10,000", 1, 10_000)),
  ...(await scenario("(b) 1,000 ReplicaSets × 10", 1_000, 10)),
];
writeResults("replicaset", results);
