// Pod workers microbenchmarks, in process, on the real clock, with a syncer
// that does nothing and a status cache that answers at once — what is measured
// is the workers' own bookkeeping:
//
// (a) 10,000 pods × 10 updates each, sent at once: updates/s until every pod
//     has synced its last update (updates coalesce: latest wins), and how many
//     syncs that took.
// (b) 10,000 pods, one update each, awaited round by round (10 rounds):
//     syncs/s when every update is synced.
// (c) 10,000 pods created, killed and finished, then forgotten by
//     syncKnownPods: pods/s through the whole lifecycle.
// (d) heap per idle worker: 10,000 synced pods, heap after minus heap before
//     (after gc), per pod.
//
// 5 measured runs after 1 warm-up; medians reported.
import type { Pod } from "kubernetes-types/core/v1.js";
import { measure, writeResults } from "../../../tools/bench/index.js";
import {
  BasicWorkQueue,
  type ConfigPod,
  newPodWorkers,
  type PodSyncer,
  type RunnablePodWorkers,
} from "../src/index.js";

const podCount = 10_000;

function newPod(i: number, version: number): Pod {
  return {
    metadata: { uid: `uid-${i}`, name: `pod-${i}`, namespace: "default", resourceVersion: String(version) },
    spec: {
      containers: [{ name: "app", image: "registry.example.com/app:1" }],
      terminationGracePeriodSeconds: 30,
    },
  };
}

interface Harness {
  workers: RunnablePodWorkers;
  stop: () => Promise<void>;
  /** Resolves once `predicate` has held after a sync. */
  until: (predicate: () => boolean) => Promise<void>;
  counts: { syncs: number; lastVersionSynced: number; terminated: number };
}

function harness(lastVersion = -1): Harness {
  const counts = { syncs: 0, lastVersionSynced: 0, terminated: 0 };
  let waiter: { predicate: () => boolean; resolve: () => void } | undefined;
  const check = () => {
    if (waiter?.predicate()) {
      const { resolve } = waiter;
      waiter = undefined;
      resolve();
    }
  };
  const syncer: PodSyncer<{ id: string }> = {
    async syncPod(_signal, _type, pod: ConfigPod) {
      counts.syncs++;
      if (pod.metadata?.resourceVersion === String(lastVersion)) counts.lastVersionSynced++;
      check();
      return false;
    },
    async syncTerminatingPod() {
      counts.syncs++;
    },
    async syncTerminatingRuntimePod() {},
    async syncTerminatedPod() {
      counts.syncs++;
      counts.terminated++;
      check();
    },
  };
  const status = (uid: string) => ({ id: uid });
  const workers = newPodWorkers<{ id: string }>({
    podSyncer: syncer,
    podCache: { get: () => undefined, getNewerThan: async (uid) => status(uid) },
    isPodStatusTerminal: () => true,
    workQueue: new BasicWorkQueue(),
  });
  const abort = new AbortController();
  const running = workers.run({ signal: abort.signal });
  return {
    workers,
    counts,
    stop: async () => {
      abort.abort();
      await running;
    },
    until: (predicate) =>
      new Promise<void>((resolve) => {
        if (predicate()) resolve();
        else waiter = { predicate, resolve };
      }),
  };
}

const syncsPerRun: number[] = [];
const coalescing = await measure(
  { name: `(a) ${podCount} pods × 10 updates at once: updates/s`, unit: "updates/s", higherIsBetter: true },
  async () => {
    const h = harness(9);
    const started = performance.now();
    for (let version = 0; version < 10; version++) {
      for (let i = 0; i < podCount; i++) {
        h.workers.updatePod({ updateType: version === 0 ? "create" : "update", pod: newPod(i, version) });
      }
    }
    await h.until(() => h.counts.lastVersionSynced === podCount);
    const seconds = (performance.now() - started) / 1000;
    syncsPerRun.push(h.counts.syncs);
    await h.stop();
    return (podCount * 10) / seconds;
  },
);

const rounds = 10;
const sequential = await measure(
  {
    name: `(b) ${podCount} pods, ${rounds} rounds of one awaited update each: syncs/s`,
    unit: "syncs/s",
    higherIsBetter: true,
  },
  async () => {
    const h = harness();
    const started = performance.now();
    for (let round = 0; round < rounds; round++) {
      const target = (round + 1) * podCount;
      for (let i = 0; i < podCount; i++) {
        h.workers.updatePod({ updateType: round === 0 ? "create" : "update", pod: newPod(i, round) });
      }
      await h.until(() => h.counts.syncs >= target);
    }
    const seconds = (performance.now() - started) / 1000;
    await h.stop();
    return (podCount * rounds) / seconds;
  },
);

const lifecycle = await measure(
  {
    name: `(c) ${podCount} pods created, killed, finished and forgotten: pods/s`,
    unit: "pods/s",
    higherIsBetter: true,
  },
  async () => {
    const h = harness();
    const started = performance.now();
    for (let i = 0; i < podCount; i++) h.workers.updatePod({ updateType: "create", pod: newPod(i, 0) });
    for (let i = 0; i < podCount; i++) h.workers.updatePod({ updateType: "kill", pod: newPod(i, 0) });
    await h.until(() => h.counts.terminated === podCount);
    // the last syncTerminatedPod has returned; let its worker record the pod finished
    await new Promise((resolve) => setImmediate(resolve));
    const left = h.workers.syncKnownPods([]).size;
    const seconds = (performance.now() - started) / 1000;
    if (left !== 0) throw new Error(`${left} workers were not forgotten`);
    await h.stop();
    return podCount / seconds;
  },
);

const heap = await measure(
  { name: `(d) heap per idle pod worker (${podCount} pods)`, unit: "bytes/pod", higherIsBetter: false },
  async () => {
    const pods = Array.from({ length: podCount }, (_, i) => newPod(i, 0));
    global.gc?.();
    const before = process.memoryUsage().heapUsed;
    const h = harness(0);
    for (const pod of pods) h.workers.updatePod({ updateType: "create", pod });
    await h.until(() => h.counts.lastVersionSynced === podCount);
    global.gc?.();
    const after = process.memoryUsage().heapUsed;
    await h.stop();
    return (after - before) / podCount;
  },
);

writeResults("kubelet-pod-workers", [coalescing, sequential, lifecycle, heap], {
  syncsPerCoalescingRun: syncsPerRun,
  gcExposed: typeof global.gc === "function",
});
