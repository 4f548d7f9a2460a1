// Kubelet benchmarks, in process on the embedded API server with the
// simulated runtime at its defaults (no delays), on the real clock:
//
// (a) 100 nodes × 100 pods bound at once (created with spec.nodeName): seconds
//     until every pod is Running and Ready; pods/s; bound → Ready latency
//     (create call → the pod's Ready condition seen True through a watch),
//     p50 and p99; API writes per pod (status patches, events, deletes).
//     Goal: ≥ 5,000 pods/s. Run twice: the nodes on the API server's
//     thread (NodeSimulator), and on a worker thread over a port (NodeThreads).
// (b) 1,000 idle nodes heartbeating (leases every 10 s, node status on
//     change or every 5 min): CPU share of one core over a 20 s window once
//     all are registered, and API writes/s. Goal: ≤ 10 % of a core.
// (c) kubelet-side heap: per idle node (heap with the 1,000 nodes running
//     minus after they stop, the server keeping their Nodes and Leases), and
//     per running pod (heap with (a)'s pods running minus after the nodes
//     stop). Goal: ≤ 100 KB per idle node.
// (d) the kubelets alone: (a) again, but through a client that answers every
//     call at once from a map (no API server): pods/s, and the kubelets'
//     CPU time per pod — what the kubelet side costs, apart from the server.
//
// (e) the same pods arriving steadily at 1,000 pods/s (below saturation):
//     bound → Ready p50 and p99, in both places. Goal: p99 ≤ 200 ms.
//
// 3 measured runs after 1 warm-up for (a), the two places alternating; 3 runs
// for (b)/(c)/(e); medians reported. `KUBELET_BENCH=ae` runs only those parts.
import { type KubeObject, newAlreadyExists, newNotFound, nodes, type Pod, pods } from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import type { Client, ResourceClient } from "@reconcile/client";
import { listerWatcher, writeVerbs } from "@reconcile/client";
import { SharedIndexInformer } from "@reconcile/informer";
import { fromRuns, type Measurement, percentile, writeResults } from "../../../tools/bench/index.js";
import { Kubelet, NodeSimulator, NodeThreads } from "../src/index.js";

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

function gcHeap(): number {
  global.gc?.();
  global.gc?.();
  return process.memoryUsage().heapUsed;
}

interface BoundRun {
  seconds: number;
  p50Ms: number;
  p99Ms: number;
  writesPerPod: number;
  heapPerPodKb: number;
}

/** Where the simulated nodes run: on the API server's thread, or on a worker thread over a port. */
type Mode = "in-process" | "thread";

/**
 * Pods bound at once (`ratePerSecond` undefined), or arriving steadily at
 * that rate: seconds until every pod is Running and Ready, and each pod's
 * bound → Ready latency.
 */
async function boundPods(
  nodeCount: number,
  podsPerNode: number,
  mode: Mode = "in-process",
  ratePerSecond?: number,
): Promise<BoundRun> {
  const server = new ApiServer({ historySize: 200_000, watchBufferSize: 500_000 });
  const client = server.client();
  const counter = { writes: 0 };
  const abort = new AbortController();
  const simulator =
    mode === "in-process"
      ? new NodeSimulator({ client: countingClient(client, counter), nodes: nodeCount })
      : new NodeThreads({
          client: countingClient(server.client({ shared: true }), counter),
          nodes: nodeCount,
          threads: 1,
        });
  const running = simulator.run({ signal: abort.signal });
  const registered = async () => {
    if (simulator instanceof NodeSimulator) return simulator.kubelets.every((k) => k.nodeStatus.registered);
    const list = await client.resource(nodes).list({ limit: 1 });
    return list.items.length + (list.metadata.remainingItemCount ?? 0) === nodeCount;
  };
  const total = nodeCount * podsPerNode;
  const createdAt = new Map<string, number>();
  const latencies: number[] = [];
  let allReady: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    allReady = resolve;
  });
  // The observer: a separate informer that sees each pod turn Ready.
  const watcher = new SharedIndexInformer<Pod>({
    listerWatcher: listerWatcher(client, pods),
    resource: pods,
  });
  const seen = new Set<string>();
  const onPod = (pod: Pod) => {
    const name = pod.metadata?.name ?? "";
    if (seen.has(name)) return;
    if (pod.status?.phase !== "Running") return;
    if (pod.status.conditions?.find((c) => c.type === "Ready")?.status !== "True") return;
    const at = createdAt.get(name);
    if (at === undefined) return;
    seen.add(name);
    latencies.push(performance.now() - at);
    if (seen.size === total) allReady();
  };
  watcher.addEventHandler({ onAdd: (p) => onPod(p as Pod), onUpdate: (_, p) => onPod(p as Pod) });
  const stopWatcher = new AbortController();
  const watcherRun = watcher.run(stopWatcher.signal);
  while (!watcher.hasSynced() || !(await registered())) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  await simulator.synced;
  const podClient = client.resource(pods, "default");
  gcHeap();
  counter.writes = 0;
  const started = performance.now();
  const creates: Promise<unknown>[] = [];
  let sent = 0;
  for (let p = 0; p < podsPerNode; p++) {
    for (let n = 0; n < nodeCount; n++) {
      if (ratePerSecond !== undefined) {
        // Steady arrival: wait until this pod's turn, in 10 ms steps.
        const due = started + (sent / ratePerSecond) * 1000;
        if (due - performance.now() > 10)
          await new Promise((resolve) => setTimeout(resolve, due - performance.now()));
      }
      sent++;
      const name = `p-${n + 1}-${p}`;
      createdAt.set(name, performance.now());
      creates.push(
        podClient.create({
          metadata: { name, namespace: "default" },
          spec: {
            nodeName: `node-${n + 1}`,
            containers: [{ name: "app", image: "registry.example.com/app:1.0" }],
          },
        }),
      );
    }
  }
  await Promise.all(creates);
  await done;
  const seconds = (performance.now() - started) / 1000;
  // Let the last status writes and events land before counting and weighing.
  await new Promise((resolve) => setTimeout(resolve, 500));
  const writes = counter.writes;
  // The observer's cache holds the pods too: drop it first, so that only the kubelets' share is weighed.
  stopWatcher.abort();
  await watcherRun;
  // A node thread's heap is its own: weighed only in process.
  const withPods = mode === "in-process" ? gcHeap() : 0;
  abort.abort();
  await running;
  const withoutNodes = mode === "in-process" ? gcHeap() : 0;
  await server.close();
  return {
    seconds,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    writesPerPod: writes / total,
    heapPerPodKb: (withPods - withoutNodes) / total / 1024,
  };
}

interface AloneRun {
  seconds: number;
  cpuMsPerPod: number;
}

/** A Client that answers at once from a map: creates, updates, JSON merge patches, deletes and gets. */
function instantClient(onPodStatus: (name: string, status: Pod["status"]) => void): Client {
  const objects = new Map<string, KubeObject>();
  let resourceVersion = 1;
  const stamp = (object: KubeObject): KubeObject => ({
    ...object,
    metadata: { ...object.metadata, resourceVersion: String(resourceVersion++) },
  });
  return {
    resource(resource: Parameters<Client["resource"]>[0], ns?: string) {
      const keyOf = (name: string) => `${resource.plural}/${ns ?? ""}/${name}`;
      const group = { group: resource.group, resource: resource.plural };
      return {
        async get(name: string) {
          const object = objects.get(keyOf(name));
          if (object === undefined) throw newNotFound(group, name);
          return object;
        },
        async create(object: KubeObject) {
          const name = object.metadata?.name ?? `generated-${resourceVersion}`;
          if (objects.has(keyOf(name))) throw newAlreadyExists(group, name);
          const created = stamp({
            ...object,
            metadata: { ...object.metadata, name, uid: `uid-${resourceVersion}` },
          });
          objects.set(keyOf(name), created);
          return created;
        },
        async update(object: KubeObject) {
          const updated = stamp(object);
          objects.set(keyOf(object.metadata?.name ?? ""), updated);
          return updated;
        },
        async patch(name: string, patch: Record<string, unknown>) {
          const patched = stamp(mergePatch(objects.get(keyOf(name)) ?? {}, patch) as KubeObject);
          objects.set(keyOf(name), patched);
          if (resource.plural === "pods") onPodStatus(name, (patched as Pod).status);
          return patched;
        },
        async delete(name: string) {
          objects.delete(keyOf(name));
          return {};
        },
      };
    },
  } as unknown as Client;
}

function mergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== "object" || patch === null || Array.isArray(patch)) return patch;
  const merged: Record<string, unknown> =
    typeof target === "object" && target !== null && !Array.isArray(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete merged[key];
    else merged[key] = mergePatch(merged[key], value);
  }
  return merged;
}

async function kubeletsAlone(nodeCount: number, podsPerNode: number): Promise<AloneRun> {
  const total = nodeCount * podsPerNode;
  const ready = new Set<string>();
  let allReady: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    allReady = resolve;
  });
  const client = instantClient((name, status) => {
    if (status?.phase !== "Running") return;
    if (status.conditions?.find((c) => c.type === "Ready")?.status !== "True") return;
    ready.add(name);
    if (ready.size === total) allReady();
  });
  const abort = new AbortController();
  const kubelets = Array.from(
    { length: nodeCount },
    (_, i) =>
      new Kubelet({
        nodeName: `node-${i + 1}`,
        client,
        podSource: "external",
        podCIDR: `10.${244 + Math.floor(i / 256)}.${i % 256}.0/24`,
        nodeIP: `10.0.${Math.floor(i / 250)}.${(i % 250) + 2}`,
      }),
  );
  const running = kubelets.map((kubelet) => kubelet.run({ signal: abort.signal }));
  for (const kubelet of kubelets) kubelet.markSourcesReady();
  while (kubelets.some((k) => !k.nodeStatus.registered)) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const podClient = client.resource(pods, "default");
  for (let p = 0; p < podsPerNode; p++) {
    for (let n = 0; n < nodeCount; n++) {
      // What the API server would have stored and the informer delivered.
      const pod = await podClient.create({
        metadata: {
          name: `p-${n + 1}-${p}`,
          namespace: "default",
          creationTimestamp: new Date().toISOString(),
        },
        spec: {
          nodeName: `node-${n + 1}`,
          containers: [{ name: "app", image: "registry.example.com/app:1.0" }],
        },
        status: { phase: "Pending", qosClass: "BestEffort" },
      });
      kubelets[n]?.podHandler.onAdd?.(pod, false);
    }
  }
  await done;
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  abort.abort();
  await Promise.allSettled(running);
  return { seconds, cpuMsPerPod: (cpu.user + cpu.system) / 1000 / total };
}

interface IdleRun {
  cpuShare: number;
  writesPerSecond: number;
  heapPerNodeKb: number;
}

async function idleNodes(nodeCount: number, windowMs: number): Promise<IdleRun> {
  const server = new ApiServer();
  const client = server.client();
  const counter = { writes: 0 };
  const abort = new AbortController();
  const simulator = new NodeSimulator({ client: countingClient(client, counter), nodes: nodeCount });
  const running = simulator.run({ signal: abort.signal });
  while (simulator.kubelets.some((k) => !k.nodeStatus.registered || k.nodeLease.writes === 0)) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  // Past the start-up burst: every node has registered and written its first lease.
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  counter.writes = 0;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, windowMs));
  const elapsedMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const writes = counter.writes;
  const withNodes = gcHeap();
  abort.abort();
  await running;
  const withoutNodes = gcHeap();
  await server.close();
  return {
    cpuShare: (cpu.user + cpu.system) / 1000 / elapsedMs,
    writesPerSecond: writes / (elapsedMs / 1000),
    heapPerNodeKb: (withNodes - withoutNodes) / nodeCount / 1024,
  };
}

// `KUBELET_BENCH=ae` runs only those parts (default all).
const parts = process.env.KUBELET_BENCH ?? "abcde";
const modes: Mode[] = ["in-process", "thread"];
const bound = new Map<Mode, BoundRun[]>(modes.map((mode) => [mode, []]));
const steady = new Map<Mode, BoundRun[]>(modes.map((mode) => [mode, []]));
if (parts.includes("a") || parts.includes("c")) {
  // A warm-up of each mode, then the modes alternating.
  for (const mode of modes) await boundPods(100, 100, mode);
  for (let i = 0; i < 3; i++)
    for (const mode of modes) bound.get(mode)!.push(await boundPods(100, 100, mode));
}
if (parts.includes("e")) {
  for (let i = 0; i < 3; i++)
    for (const mode of modes) steady.get(mode)!.push(await boundPods(100, 100, mode, 1_000));
}
const alone: AloneRun[] = [];
if (parts.includes("d")) {
  await kubeletsAlone(100, 100); // warm-up
  for (let i = 0; i < 3; i++) alone.push(await kubeletsAlone(100, 100));
}
const idle: IdleRun[] = [];
if (parts.includes("b") || parts.includes("c"))
  for (let i = 0; i < 3; i++) idle.push(await idleNodes(1_000, 20_000));

const results: Measurement[] = [];
const where = (mode: Mode) => (mode === "thread" ? ", nodes on a worker thread" : "");
for (const mode of modes) {
  const runs = bound.get(mode)!;
  if (runs.length === 0) continue;
  const label = `(a) 100 nodes × 100 pods bound at once${where(mode)}`;
  results.push(
    fromRuns(
      `${label}: seconds until all Running and Ready`,
      "s",
      runs.map((r) => r.seconds),
    ),
    fromRuns(
      `${label}: pods/s`,
      "pods/s",
      runs.map((r) => 10_000 / r.seconds),
      { higherIsBetter: true, target: 5_000 },
    ),
    fromRuns(
      `${label}: bound → Ready p50`,
      "ms",
      runs.map((r) => r.p50Ms),
    ),
    fromRuns(
      `${label}: bound → Ready p99`,
      "ms",
      runs.map((r) => r.p99Ms),
    ),
    fromRuns(
      `${label}: API writes per pod`,
      "writes/pod",
      runs.map((r) => r.writesPerPod),
    ),
  );
}
for (const mode of modes) {
  const runs = steady.get(mode)!;
  if (runs.length === 0) continue;
  const label = `(e) 1,000 pods/s arriving on 100 nodes for 10 s${where(mode)}`;
  results.push(
    fromRuns(
      `${label}: bound → Ready p50`,
      "ms",
      runs.map((r) => r.p50Ms),
    ),
    fromRuns(
      `${label}: bound → Ready p99`,
      "ms",
      runs.map((r) => r.p99Ms),
      { target: 200 },
    ),
  );
}
if (idle.length > 0)
  results.push(
    fromRuns(
      "(b) 1,000 idle nodes: CPU share of one core",
      "core",
      idle.map((r) => r.cpuShare),
      { target: 0.1 },
    ),
    fromRuns(
      "(b) 1,000 idle nodes: API writes/s",
      "writes/s",
      idle.map((r) => r.writesPerSecond),
    ),
    fromRuns(
      "(c) kubelet heap per idle node",
      "KB",
      idle.map((r) => r.heapPerNodeKb),
      { target: 100 },
    ),
  );
const inProcess = bound.get("in-process")!;
if (inProcess.length > 0)
  results.push(
    fromRuns(
      "(c) kubelet heap per running pod",
      "KB",
      inProcess.map((r) => r.heapPerPodKb),
    ),
  );
if (alone.length > 0)
  results.push(
    fromRuns(
      "(d) the kubelets alone, 100 nodes × 100 pods: pods/s",
      "pods/s",
      alone.map((r) => 10_000 / r.seconds),
      {
        higherIsBetter: true,
      },
    ),
    fromRuns(
      "(d) the kubelets alone: CPU per pod",
      "ms",
      alone.map((r) => r.cpuMsPerPod),
    ),
  );
for (const m of results) console.log(`${m.name}: median ${m.median.toPrecision(4)} ${m.unit}`);
writeResults("kubelet", results);
