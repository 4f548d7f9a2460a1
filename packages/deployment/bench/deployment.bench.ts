// Deployment controller benchmarks, in process: the embedded API server, the
// ReplicaSet and Deployment controllers (5 workers each) on real time, and a
// kubelet stand-in that marks each new pod Running and Ready at once.
//
// (a) one 1,000-replica Deployment created: seconds until it is Available
//     with every replica available (rollout complete);
// (b) a rolling update of it (25%/25%): seconds until the rollout is
//     complete, and API writes per replaced pod (every create, update,
//     updateStatus, patch and delete the two controllers send, Events
//     included; the stand-in's pod status writes are the kubelet's and are
//     counted apart);
// (c) 100 Deployments × 10 replicas created, then all rolled at once:
//     seconds until every rollout is complete.
//
// Each run starts a fresh server and controllers. 3 measured runs after 1
// warm-up; medians reported. Goals: (b) ≤ 3 s and ≤ 3 writes per replaced pod.
import { type Deployment, deployments, type KubeObject, type Pod, pods, replicaSets } from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import { type Client, type ResourceClient, writeVerbs } from "@reconcile/client";
import { SharedInformerFactory } from "@reconcile/informer";
import { ReplicaSetController } from "@reconcile/replicaset";
import { type Measurement, measure, writeResults } from "../../../tools/bench/index.js";
import { DeploymentController } from "../src/index.js";

const namespace = "default";

function newDeployment(name: string, replicas: number): Deployment {
  const labels = { app: name, tier: "bench" };
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace },
    spec: {
      replicas,
      selector: { matchLabels: labels },
      strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: "25%", maxUnavailable: "25%" } },
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

interface ControlPlane {
  client: Client;
  counter: { writes: number; kubeletWrites: number };
  stop(): Promise<void>;
}

async function startControlPlane(): Promise<ControlPlane> {
  const server = new ApiServer({ historySize: 100_000, watchBufferSize: 200_000 });
  const client = server.client();
  const counter = { writes: 0, kubeletWrites: 0 };
  const controllerClient = countingClient(client, counter);
  const abort = new AbortController();
  const factory = new SharedInformerFactory({ client });
  const podInformer = factory.forResource(pods);
  const rsController = ReplicaSetController.fromInformerFactory(factory, { client: controllerClient });
  const dController = DeploymentController.fromInformerFactory(factory, { client: controllerClient });
  const inFlight = new Set<Promise<unknown>>();
  podInformer.addEventHandler({
    onAdd(pod) {
      if (pod.status?.phase === "Running" || pod.metadata?.deletionTimestamp) return;
      counter.kubeletWrites++;
      const write = client
        .resource(pods, namespace)
        .updateStatus({
          ...(structuredClone(pod) as Pod),
          status: {
            phase: "Running",
            conditions: [{ type: "Ready", status: "True", lastTransitionTime: new Date().toISOString() }],
          },
        })
        .catch(() => {})
        .finally(() => inFlight.delete(write));
      inFlight.add(write);
    },
  });
  factory.start(abort.signal);
  const runs = [
    rsController.run({ signal: abort.signal, workers: 5 }),
    dController.run({ signal: abort.signal, workers: 5 }),
  ];
  await factory.waitForCacheSync(abort.signal);
  return {
    client,
    counter,
    async stop() {
      abort.abort();
      await Promise.all(runs);
      while (inFlight.size > 0) await Promise.all(inFlight);
      await factory.shutdown();
      await server.close();
    },
  };
}

async function allComplete(client: Client, replicas: number): Promise<boolean> {
  const list = await client.resource(deployments, namespace).list();
  return list.items.every((d) => {
    const s = d.status ?? {};
    return (
      (s.observedGeneration ?? 0) >= (d.metadata?.generation ?? 1) &&
      s.updatedReplicas === replicas &&
      s.replicas === replicas &&
      s.availableReplicas === replicas
    );
  });
}

async function waitFor(check: () => Promise<boolean>, pollMs = 10): Promise<void> {
  for (;;) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

async function rollAll(client: Client, names: readonly string[], image: string): Promise<void> {
  const dClient = client.resource(deployments, namespace);
  await Promise.all(
    names.map(async (name) => {
      const d = await dClient.get(name);
      d.spec!.template.spec!.containers[0]!.image = image;
      await dClient.update(d);
    }),
  );
}

interface Run {
  createSeconds: number;
  rolloutSeconds: number;
  writesPerReplacedPod: number;
  kubeletWritesPerReplacedPod: number;
}

async function runScenario(count: number, replicas: number): Promise<Run> {
  const plane = await startControlPlane();
  const { client, counter } = plane;
  const names = Array.from({ length: count }, (_, i) => `web-${i}`);
  global.gc?.();
  let started = performance.now();
  await Promise.all(
    names.map((name) => client.resource(deployments, namespace).create(newDeployment(name, replicas))),
  );
  await waitFor(() => allComplete(client, replicas), 20);
  const createSeconds = (performance.now() - started) / 1000;
  // Let trailing status writes of the creation settle before counting.
  await new Promise((resolve) => setTimeout(resolve, 200));
  counter.writes = 0;
  counter.kubeletWrites = 0;
  started = performance.now();
  await rollAll(client, names, "registry.example.com/team/app:1.28.0");
  await waitFor(async () => {
    if (!(await allComplete(client, replicas))) return false;
    const rss = await client.resource(replicaSets, namespace).list();
    // Complete means the old ReplicaSets' pods are gone too.
    return rss.items.every(
      (rs) => (rs.spec?.replicas ?? 0) === 0 || (rs.status?.replicas ?? 0) === rs.spec?.replicas,
    );
  }, 20);
  const rolloutSeconds = (performance.now() - started) / 1000;
  await new Promise((resolve) => setTimeout(resolve, 200));
  const replaced = count * replicas;
  const run = {
    createSeconds,
    rolloutSeconds,
    writesPerReplacedPod: counter.writes / replaced,
    kubeletWritesPerReplacedPod: counter.kubeletWrites / replaced,
  };
  await plane.stop();
  return run;
}

async function scenario(label: string, count: number, replicas: number): Promise<Measurement[]> {
  const runs: Run[] = [];
  const created = await measure(
    {
      name: `${label}: seconds from create to complete`,
      unit: "s",
      higherIsBetter: false,
      runs: 3,
      warmups: 1,
    },
    async () => {
      const run = await runScenario(count, replicas);
      runs.push(run);
      return run.createSeconds;
    },
  );
  const measured = runs.slice(-3);
  const fromRuns = (name: string, unit: string, values: number[], target?: number) =>
    measure(
      { name, unit, higherIsBetter: false, runs: values.length, warmups: 0, ...(target ? { target } : {}) },
      () => values.shift()!,
    );
  return [
    created,
    await fromRuns(
      `${label}: seconds for a 25%/25% rolling update to complete`,
      "s",
      measured.map((r) => r.rolloutSeconds),
      count === 1 ? 3 : undefined,
    ),
    await fromRuns(
      `${label}: controller API writes per replaced pod`,
      "writes/pod",
      measured.map((r) => r.writesPerReplacedPod),
      3,
    ),
    await fromRuns(
      `${label}: kubelet stand-in writes per replaced pod`,
      "writes/pod",
      measured.map((r) => r.kubeletWritesPerReplacedPod),
    ),
  ];
}

const results = [
  ...(await scenario("(a, b) 1 Deployment × 1,000", 1, 1_000)),
  ...(await scenario("(c) 100 Deployments × 10", 100, 10)),
];
writeResults("deployment", results);
