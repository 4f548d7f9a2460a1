import { FakeClock } from "@reconcile/clock";
import { FakeEventRecorder } from "@reconcile/controller/testing";
import type { Pod, PodStatus } from "kubernetes-types/core/v1.js";
import { describe, expect, it } from "vitest";
import { calculateEffectiveGracePeriod, killPodNow } from "./kill-pod.js";
import type { PodSyncStatus } from "./pod-sync-status.js";
import { DefaultPodWorkers, type PodWorkersTestHooks } from "./pod-workers.js";
import { allowPodStart } from "./static-pod-starts.js";
import type {
  ConfigPod,
  PodStatusCache,
  PodStatusFunc,
  PodSyncer,
  PodWorkersMetrics,
  PodWorkQueue,
  RunningPod,
  SyncPodType,
  UpdatePodOptions,
} from "./types.js";

// Cases ported from upstream's pkg/kubelet/pod_workers_test.go. Time starts at
// 1 s (upstream's time.Unix(1, 0)); statuses are inspected directly, as there.

const second = 1000;

/** The runtime status the fake cache hands out. */
interface FakeRuntimeStatus {
  id: string;
  running?: boolean;
}

/** One call into the syncer (upstream's `syncPodRecord`). */
interface SyncRecord {
  name: string;
  updateType?: SyncPodType;
  runningPod?: boolean;
  terminated?: boolean;
  gracePeriod?: number | undefined;
}

/** Records every enqueue (upstream's `fakeQueue`). */
class FakeQueue implements PodWorkQueue {
  readonly items: { uid: string; delayMs: number }[] = [];
  #currentStart = 0;

  enqueue(uid: string, delayMs: number): void {
    this.items.push({ uid, delayMs });
  }

  getWork(): string[] {
    const work = this.items.slice(this.#currentStart).map((item) => item.uid);
    this.#currentStart = this.items.length;
    return work;
  }

  /** UIDs enqueued since the last getWork. */
  set(): Set<string> {
    return new Set(this.items.slice(this.#currentStart).map((item) => item.uid));
  }
}

class FakeCache implements PodStatusCache<FakeRuntimeStatus> {
  readonly statuses = new Map<string, FakeRuntimeStatus>();
  getNewerThanError: Error | undefined;
  readonly getNewerThanCalls: { uid: string; minTime: number }[] = [];

  get(uid: string): FakeRuntimeStatus | undefined {
    return this.statuses.get(uid);
  }

  async getNewerThan(uid: string, minTime: number): Promise<FakeRuntimeStatus> {
    this.getNewerThanCalls.push({ uid, minTime });
    if (this.getNewerThanError) throw this.getNewerThanError;
    return this.statuses.get(uid) ?? { id: uid };
  }
}

/** A promise a test resolves by hand. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/** Waits for the signal, then rejects with its reason, as a cancellable sync does. */
function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
}

/** Lets every pending microtask and immediate run, the way upstream drains its goroutines. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

type Syncer = PodSyncer<FakeRuntimeStatus, RunningPod>;

function createPodWorkers(
  options: {
    hooks?: PodWorkersTestHooks;
    random?: () => number;
    resyncIntervalMs?: number;
    backOffPeriodMs?: number;
    metrics?: PodWorkersMetrics;
  } = {},
) {
  const clock = new FakeClock(1 * second);
  const processed = new Map<string, SyncRecord[]>();
  const record = (uid: string, entry: SyncRecord) => {
    const list = processed.get(uid) ?? [];
    list.push(entry);
    processed.set(uid, list);
  };
  const syncer: Syncer = {
    async syncPod(_signal, updateType, pod) {
      record(pod.metadata!.uid!, { name: pod.metadata!.name!, updateType });
      return false;
    },
    async syncTerminatingPod(_signal, pod, _status, gracePeriod) {
      record(pod.metadata!.uid!, { name: pod.metadata!.name!, updateType: "kill", gracePeriod });
    },
    async syncTerminatingRuntimePod(_signal, runningPod) {
      record(runningPod.id, { name: runningPod.name, updateType: "kill", runningPod: true });
    },
    async syncTerminatedPod(_signal, pod) {
      record(pod.metadata!.uid!, { name: pod.metadata!.name!, terminated: true });
    },
  };
  const queue = new FakeQueue();
  const cache = new FakeCache();
  const recorder = new FakeEventRecorder();
  // every method delegates to `syncer`, so a test can replace one of them
  const workers = new DefaultPodWorkers<FakeRuntimeStatus>(
    {
      podSyncer: {
        syncPod: (...args) => syncer.syncPod(...args),
        syncTerminatingPod: (...args) => syncer.syncTerminatingPod(...args),
        syncTerminatingRuntimePod: (...args) => syncer.syncTerminatingRuntimePod(...args),
        syncTerminatedPod: (...args) => syncer.syncTerminatedPod(...args),
      },
      podCache: cache,
      isPodStatusTerminal: (status) => !status.running,
      workQueue: queue,
      resyncIntervalMs: options.resyncIntervalMs ?? 1 * second,
      backOffPeriodMs: options.backOffPeriodMs ?? 1,
      recorder,
      clock,
      random: options.random ?? (() => 0),
      metrics: options.metrics,
    },
    options.hooks,
  );
  /** Waits until no worker outside `except` has work (upstream's drainWorkersExcept). */
  const drain = async (...except: string[]) => {
    for (let i = 0; i < 10_000; i++) {
      const busy = workers
        .inspectUIDs()
        .some((uid) => !except.includes(uid) && workers.inspectStatus(uid)?.working);
      if (!busy) return;
      await turn();
    }
    throw new Error("pod workers did not drain");
  };
  return { workers, syncer, processed, queue, cache, recorder, clock, drain };
}

/**
 * Upstream's timeIncrementingWorkers: every updatePod and every worker wake-up
 * advances the clock by one second, and workers can be paused.
 */
function createTimeIncrementingPodWorkers() {
  const holds = new Map<string, { promise: Promise<void>; open: () => void }>();
  let clock!: FakeClock;
  const env = createPodWorkers({
    hooks: {
      async workerWake(uid) {
        await holds.get(uid)?.promise;
        clock.setTime(clock.now() + second);
      },
    },
  });
  clock = env.clock;
  const tick = () => clock.setTime(clock.now() + second);
  const paused = () => [...holds.keys()];
  return {
    ...env,
    async updatePod(options: UpdatePodOptions, ...afterFns: (() => void)[]) {
      env.workers.updatePod(options);
      tick();
      for (const fn of afterFns) fn();
      await env.drain(...paused());
    },
    pause(...uids: string[]) {
      for (const uid of uids) if (!holds.has(uid)) holds.set(uid, gate());
    },
    release(...uids: string[]) {
      for (const uid of uids) {
        holds.get(uid)?.open();
        holds.delete(uid);
      }
    },
  };
}

function newNamedPod(uid: string, namespace: string, name: string, isStatic = false): Pod {
  const pod: Pod = {
    metadata: { uid, namespace, name },
    spec: { containers: [], terminationGracePeriodSeconds: 30 },
  };
  if (isStatic) pod.metadata!.annotations = { "kubernetes.io/config.source": "file" };
  return pod;
}

function newPodWithPhase(uid: string, name: string, phase: string): Pod {
  return { ...newNamedPod(uid, "ns", name), status: { phase } };
}

function withDeletionTimestamp(pod: Pod, at: string, gracePeriod?: number): Pod {
  const metadata = { ...pod.metadata, deletionTimestamp: at };
  return {
    ...pod,
    metadata: gracePeriod === undefined ? metadata : { ...metadata, deletionGracePeriodSeconds: gracePeriod },
  };
}

function withLabel(pod: Pod, key: string, value: string): Pod {
  pod.metadata!.labels = { ...pod.metadata!.labels, [key]: value };
  return pod;
}

/** An expected status: every field defaulted, as Go's zero values. */
function syncStatus(fields: Partial<PodSyncStatus>, hasContext = true): PodSyncStatus {
  return {
    abort: hasContext ? (expect.any(AbortController) as AbortController) : undefined,
    fullname: "",
    working: false,
    pendingUpdate: undefined,
    activeUpdate: undefined,
    syncedAt: 0,
    startedAt: 0,
    terminatingAt: 0,
    terminatedAt: 0,
    gracePeriod: 0,
    notifyPostTerminating: [],
    statusPostTerminating: [],
    startedTerminating: false,
    deleted: false,
    evicted: false,
    finished: false,
    restartRequested: false,
    observedRuntime: false,
    ...fields,
  };
}

describe("updatePod: the per-UID state machine (upstream TestUpdatePod)", () => {
  const cases: {
    name: string;
    update: UpdatePodOptions;
    runtimeStatus?: FakeRuntimeStatus;
    prepare?: (w: ReturnType<typeof createTimeIncrementingPodWorkers>) => Promise<(() => void) | undefined>;
    expect: PodSyncStatus | undefined;
    expectBeforeWorker?: PodSyncStatus;
    expectKnownTerminated?: boolean;
  }[] = [
    {
      name: "a new pod is recorded and started",
      update: { updateType: "create", pod: newNamedPod("1", "ns", "running-pod") },
      expect: syncStatus({
        fullname: "running-pod_ns",
        syncedAt: 1 * second,
        startedAt: 3 * second,
        activeUpdate: { updateType: "sync", pod: newNamedPod("1", "ns", "running-pod") },
      }),
    },
    {
      name: "a new pod is recorded and started unless it is a duplicate of an existing terminating pod UID",
      update: {
        updateType: "create",
        pod: withLabel(newNamedPod("1", "ns", "running-pod"), "updated", "value"),
      },
      prepare: async (w) => {
        await w.updatePod({ updateType: "create", pod: newNamedPod("1", "ns", "running-pod") });
        w.pause("1");
        await w.updatePod({ updateType: "kill", pod: newNamedPod("1", "ns", "running-pod") });
        return () => w.release("1");
      },
      expect: syncStatus({
        fullname: "running-pod_ns",
        syncedAt: 1 * second,
        startedAt: 3 * second,
        terminatingAt: 3 * second,
        terminatedAt: 6 * second,
        gracePeriod: 30,
        startedTerminating: true,
        restartRequested: true, // a create arrived while terminating
        finished: true,
        activeUpdate: {
          updateType: "sync",
          pod: newNamedPod("1", "ns", "running-pod"),
          killPodOptions: { podTerminationGracePeriodSecondsOverride: 30 },
        },
      }),
      expectKnownTerminated: true,
    },
    {
      name: "a new pod is recorded and started and running pod is ignored",
      update: {
        updateType: "create",
        pod: newNamedPod("1", "ns", "running-pod"),
        runningPod: { id: "1", name: "orphaned-pod", namespace: "ns" },
      },
      expect: syncStatus({
        fullname: "running-pod_ns",
        syncedAt: 1 * second,
        startedAt: 3 * second,
        activeUpdate: { updateType: "sync", pod: newNamedPod("1", "ns", "running-pod") },
      }),
    },
    {
      name: "a running pod is terminated when an update contains a deletionTimestamp",
      update: {
        updateType: "update",
        pod: withDeletionTimestamp(newNamedPod("1", "ns", "running-pod"), "1970-01-01T00:00:01Z", 15),
      },
      prepare: async (w) => {
        await w.updatePod({ updateType: "create", pod: newNamedPod("1", "ns", "running-pod") });
        return undefined;
      },
      expect: syncStatus({
        fullname: "running-pod_ns",
        syncedAt: 1 * second,
        startedAt: 3 * second,
        terminatingAt: 3 * second,
        terminatedAt: 5 * second,
        gracePeriod: 15,
        startedTerminating: true,
        finished: true,
        deleted: true,
        activeUpdate: {
          updateType: "sync",
          pod: withDeletionTimestamp(newNamedPod("1", "ns", "running-pod"), "1970-01-01T00:00:01Z", 15),
          killPodOptions: { podTerminationGracePeriodSecondsOverride: 15 },
        },
      }),
      expectKnownTerminated: true,
    },
    {
      name: "a running pod is terminated when an eviction is requested",
      update: {
        updateType: "kill",
        pod: newNamedPod("1", "ns", "running-pod"),
        killPodOptions: { evict: true },
      },
      prepare: async (w) => {
        await w.updatePod({ updateType: "create", pod: newNamedPod("1", "ns", "running-pod") });
        return undefined;
      },
      expect: syncStatus({
        fullname: "running-pod_ns",
        syncedAt: 1 * second,
        startedAt: 3 * second,
        terminatingAt: 3 * second,
        terminatedAt: 5 * second,
        gracePeriod: 30,
        startedTerminating: true,
        finished: true,
        evicted: true,
        activeUpdate: {
          updateType: "sync",
          pod: newNamedPod("1", "ns", "running-pod"),
          killPodOptions: { podTerminationGracePeriodSecondsOverride: 30, evict: true },
        },
      }),
      expectKnownTerminated: true,
    },
    {
      name: "a pod that is terminal and has never started must be terminated if the runtime does not have a cached terminal state",
      update: { updateType: "create", pod: newPodWithPhase("1", "done-pod", "Succeeded") },
      expect: syncStatus({
        fullname: "done-pod_ns",
        syncedAt: 1 * second,
        terminatingAt: 1 * second,
        startedAt: 3 * second,
        terminatedAt: 3 * second,
        activeUpdate: {
          updateType: "sync",
          pod: newPodWithPhase("1", "done-pod", "Succeeded"),
          killPodOptions: { podTerminationGracePeriodSecondsOverride: 30 },
        },
        gracePeriod: 30,
        startedTerminating: true,
        finished: true,
      }),
      expectKnownTerminated: true,
    },
    {
      name: "a pod that is terminal and has never started advances to finished if the runtime has a cached terminal state",
      update: { updateType: "create", pod: newPodWithPhase("1", "done-pod", "Succeeded") },
      runtimeStatus: { id: "1" },
      expectBeforeWorker: syncStatus(
        {
          fullname: "done-pod_ns",
          syncedAt: 1 * second,
          terminatingAt: 1 * second,
          terminatedAt: 1 * second,
          pendingUpdate: { updateType: "create", pod: newPodWithPhase("1", "done-pod", "Succeeded") },
          // not finished yet, so that syncTerminatedPod still runs
          finished: false,
          startedTerminating: true,
          working: true,
        },
        false,
      ),
      expect: syncStatus({
        fullname: "done-pod_ns",
        syncedAt: 1 * second,
        terminatingAt: 1 * second,
        terminatedAt: 1 * second,
        startedAt: 3 * second,
        startedTerminating: true,
        finished: true,
        activeUpdate: { updateType: "sync", pod: newPodWithPhase("1", "done-pod", "Succeeded") },
        // a pod never seen before cannot be restarted
        restartRequested: false,
      }),
      expectKnownTerminated: true,
    },
    {
      name: "an orphaned running pod we have not seen is marked terminating and advances to finished and then is removed",
      update: { updateType: "kill", runningPod: { id: "1", name: "orphaned-pod", namespace: "ns" } },
      expectBeforeWorker: syncStatus(
        {
          fullname: "orphaned-pod_ns",
          syncedAt: 1 * second,
          terminatingAt: 1 * second,
          pendingUpdate: {
            updateType: "kill",
            runningPod: { id: "1", name: "orphaned-pod", namespace: "ns" },
            killPodOptions: { podTerminationGracePeriodSecondsOverride: 1 },
          },
          gracePeriod: 1,
          deleted: true,
          observedRuntime: true,
          working: true,
        },
        false,
      ),
      // a fully terminated runtime pod is not remembered: it has no config
      expect: undefined,
      expectKnownTerminated: false,
    },
    {
      name: "an orphaned running pod with a non-kill update type does nothing",
      update: { updateType: "create", runningPod: { id: "1", name: "orphaned-pod", namespace: "ns" } },
      expect: undefined,
    },
  ];

  for (const tc of cases) {
    it(tc.name, async () => {
      const uid = tc.update.pod?.metadata?.uid ?? tc.update.runningPod!.id;
      const w = createTimeIncrementingPodWorkers();
      const afterFns: (() => void)[] = [];
      const seenBeforeWorker: (PodSyncStatus | undefined)[] = [];
      if (tc.expectBeforeWorker) {
        afterFns.push(() => seenBeforeWorker.push(structuredClone(w.workers.inspectStatus(uid))));
      }
      if (tc.prepare) {
        const fn = await tc.prepare(w);
        if (fn) afterFns.push(fn);
      }
      // the runtime status is visible to updatePod only, then reset before workers read the cache
      if (tc.runtimeStatus) w.cache.statuses.set(uid, tc.runtimeStatus);
      afterFns.push(() => w.cache.statuses.clear());

      await w.updatePod(tc.update, ...afterFns);

      if (tc.expectBeforeWorker) expect(seenBeforeWorker[0]).toEqual(tc.expectBeforeWorker);
      expect(w.workers.isPodKnownTerminated(uid)).toBe(tc.expectKnownTerminated ?? false);
      expect(w.workers.inspectStatus(uid)).toEqual(tc.expect);
    });
  }
});

describe("coalescing updates", () => {
  it("syncs each pod at most once per update and always syncs the latest (TestUpdatePodParallel)", async () => {
    const { workers, processed, drain } = createPodWorkers();
    const numPods = 20;
    for (let i = 0; i < numPods; i++) {
      for (let j = i; j < numPods; j++) {
        workers.updatePod({ updateType: "create", pod: newNamedPod(String(j), "ns", String(i)) });
      }
    }
    await drain();
    expect(processed.size).toBe(numPods);
    for (let i = 0; i < numPods; i++) {
      const events = processed.get(String(i))!;
      expect(events.length).toBeGreaterThanOrEqual(1);
      expect(events.length).toBeLessThanOrEqual(i + 1);
      expect(events.at(-1)!.name).toBe(String(i));
    }
  });

  it("updates arriving during a sync replace each other: only the latest is synced next", async () => {
    const { workers, syncer, processed, drain } = createPodWorkers();
    const first = gate();
    const original = syncer.syncPod;
    let calls = 0;
    syncer.syncPod = async (...args) => {
      calls++;
      if (calls === 1) await first.promise;
      return original(...args);
    };
    workers.updatePod({ updateType: "create", pod: newNamedPod("1", "ns", "v1") });
    await turn();
    expect(calls).toBe(1); // the first sync is in flight
    for (const name of ["v2", "v3", "v4"])
      workers.updatePod({ updateType: "update", pod: newNamedPod("1", "ns", name) });
    first.open();
    await drain();
    expect(processed.get("1")).toEqual([
      { name: "v1", updateType: "create" },
      { name: "v4", updateType: "update" },
    ]);
  });

  it("never runs two syncs of one UID at once", async () => {
    const { workers, syncer, drain } = createPodWorkers();
    let inFlight = 0;
    let maxInFlight = 0;
    syncer.syncPod = async () => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await turn();
      inFlight--;
      return false;
    };
    for (let i = 0; i < 50; i++) {
      workers.updatePod({ updateType: "update", pod: newNamedPod("1", "ns", `v${i}`) });
      if (i % 5 === 0) await turn();
    }
    await drain();
    expect(maxInFlight).toBe(1);
  });
});

describe("kills are never lost", () => {
  it("create, kill, update in quick succession end terminated and never sync the update as running (TestUpdatePodDoesNotForgetSyncPodKill)", async () => {
    const { workers, processed, drain } = createPodWorkers();
    const numPods = 20;
    for (let i = 0; i < numPods; i++) {
      const pod = newNamedPod(String(i), "ns", String(i));
      workers.updatePod({ updateType: "create", pod });
      workers.updatePod({ updateType: "kill", pod });
      workers.updatePod({ updateType: "update", pod });
    }
    await drain();
    expect(processed.size).toBe(numPods);
    for (let i = 0; i < numPods; i++) {
      const name = String(i);
      const history = processed.get(name);
      const compressed = [
        { name, updateType: "kill", gracePeriod: 30 },
        { name, terminated: true },
      ];
      const full = [{ name, updateType: "create" }, ...compressed];
      expect([compressed, full]).toContainEqual(history);
    }
  });

  it("a kill during a sync cancels it, and later updates are still run as terminating", async () => {
    const { workers, syncer, processed, drain } = createPodWorkers();
    let aborted = false;
    const original = syncer.syncPod;
    syncer.syncPod = async (signal, ...rest) => {
      await original(signal, ...rest);
      if (processed.get("1")!.length === 1) {
        try {
          await untilAborted(signal);
        } finally {
          aborted = signal.aborted;
        }
      }
      return false;
    };
    workers.updatePod({ updateType: "create", pod: newNamedPod("1", "ns", "p") });
    await turn();
    workers.updatePod({ updateType: "kill", pod: newNamedPod("1", "ns", "p") });
    workers.updatePod({ updateType: "update", pod: newNamedPod("1", "ns", "p") });
    await drain();
    expect(aborted).toBe(true);
    expect(processed.get("1")).toEqual([
      { name: "p", updateType: "create" },
      { name: "p", updateType: "kill", gracePeriod: 30 },
      { name: "p", terminated: true },
    ]);
    expect(workers.inspectStatus("1")).toMatchObject({ finished: true, startedTerminating: true });
  });

  it("a kill's completion is reported once terminating completes, and at once for a terminated pod", async () => {
    const { workers, syncer, drain } = createPodWorkers();
    const release = gate();
    syncer.syncTerminatedPod = async () => {
      await release.promise;
    };
    const completed: string[] = [];
    workers.updatePod({ updateType: "create", pod: newNamedPod("1", "ns", "p") });
    await drain();
    workers.updatePod({
      updateType: "kill",
      pod: newNamedPod("1", "ns", "p"),
      killPodOptions: { onCompleted: () => completed.push("first") },
    });
    expect(completed).toEqual([]);
    await turn();
    await turn();
    expect(workers.isPodKnownTerminated("1")).toBe(true);
    expect(completed).toEqual(["first"]);
    // terminated (syncTerminatedPod still running): a new kill completes immediately
    workers.updatePod({
      updateType: "kill",
      pod: newNamedPod("1", "ns", "p"),
      killPodOptions: { onCompleted: () => completed.push("second") },
    });
    expect(completed).toEqual(["first", "second"]);
    release.open();
    await drain();
  });

  it("kill options sent to a pod that is not terminating complete at once and are dropped", () => {
    const { workers } = createPodWorkers();
    const completed: string[] = [];
    workers.updatePod({
      updateType: "update",
      pod: newNamedPod("1", "ns", "p"),
      killPodOptions: {
        onCompleted: () => completed.push("done"),
        podTerminationGracePeriodSecondsOverride: 3,
      },
    });
    expect(completed).toEqual(["done"]);
    expect(workers.inspectStatus("1")!.pendingUpdate!.killPodOptions).toBeUndefined();
  });
});

describe("the state handed to syncs", () => {
  it("keeps the last mirror pod and a known pod's spec across updates that lack them (mergeLastUpdate)", async () => {
    const { workers, drain } = createPodWorkers();
    const staticPod = newNamedPod("s", "kube-system", "etcd", true);
    const mirrorPod = newNamedPod("m", "kube-system", "etcd");
    workers.updatePod({ updateType: "create", pod: staticPod, mirrorPod });
    await drain();
    workers.updatePod({
      updateType: "update",
      pod: withLabel(newNamedPod("s", "kube-system", "etcd", true), "v", "2"),
    });
    await drain();
    expect(workers.inspectStatus("s")!.activeUpdate).toEqual({
      updateType: "sync",
      pod: withLabel(newNamedPod("s", "kube-system", "etcd", true), "v", "2"),
      mirrorPod,
    });
  });

  it("coalesced updates keep the earliest start time", () => {
    const { workers } = createPodWorkers();
    workers.updatePod({ updateType: "create", pod: newNamedPod("1", "ns", "p"), startTime: 500 });
    workers.updatePod({ updateType: "update", pod: newNamedPod("1", "ns", "p"), startTime: 900 });
    expect(workers.inspectStatus("1")!.pendingUpdate).toMatchObject({ updateType: "update", startTime: 500 });
  });

  it("an eviction makes the pod's content removable even before it terminates", async () => {
    const { workers, syncer, drain } = createPodWorkers();
    const release = gate();
    syncer.syncTerminatingPod = async () => {
      await release.promise;
    };
    workers.updatePod({ updateType: "create", pod: newNamedPod("1", "ns", "p") });
    await drain();
    workers.updatePod({
      updateType: "kill",
      pod: newNamedPod("1", "ns", "p"),
      killPodOptions: { evict: true },
    });
    await turn();
    expect(workers.shouldPodContentBeRemoved("1")).toBe(true);
    expect(workers.shouldPodRuntimeBeRemoved("1")).toBe(false);
    expect(workers.couldHaveRunningContainers("1")).toBe(true);
    release.open();
    await drain();
    expect(workers.shouldPodRuntimeBeRemoved("1")).toBe(true);
  });
});

describe("grace periods only shrink", () => {
  it("a shorter grace period cancels the in-flight terminating sync and re-runs it with the shorter one", async () => {
    const { workers, syncer, processed, drain } = createPodWorkers();
    const original = syncer.syncTerminatingPod;
    let cancelled = 0;
    syncer.syncTerminatingPod = async (signal, pod, status, gracePeriod, fn) => {
      await original(signal, pod, status, gracePeriod, fn);
      if (gracePeriod === 30) {
        await untilAborted(signal).catch((error: unknown) => {
          cancelled++;
          throw error;
        });
      }
    };
    workers.updatePod({ updateType: "create", pod: newNamedPod("1", "ns", "p") });
    await drain();
    workers.updatePod({
      updateType: "update",
      pod: withDeletionTimestamp(newNamedPod("1", "ns", "p"), "1970-01-01T00:00:01Z", 30),
    });
    await turn();
    // a longer grace period changes nothing and cancels nothing
    workers.updatePod({
      updateType: "kill",
      pod: newNamedPod("1", "ns", "p"),
      killPodOptions: { podTerminationGracePeriodSecondsOverride: 60 },
    });
    await turn();
    expect(cancelled).toBe(0);
    expect(workers.inspectStatus("1")!.gracePeriod).toBe(30);
    workers.updatePod({
      updateType: "kill",
      pod: newNamedPod("1", "ns", "p"),
      killPodOptions: { podTerminationGracePeriodSecondsOverride: 5 },
    });
    await drain();
    expect(cancelled).toBe(1);
    expect(workers.inspectStatus("1")!.gracePeriod).toBe(5);
    expect(processed.get("1")).toEqual([
      { name: "p", updateType: "create" },
      { name: "p", updateType: "kill", gracePeriod: 30 },
      { name: "p", updateType: "kill", gracePeriod: 5 },
      { name: "p", terminated: true },
    ]);
  });

  it("the latest kill's status function is applied by the terminating sync", async () => {
    const { workers, syncer, drain } = createPodWorkers();
    const applied: PodStatus[] = [];
    syncer.syncTerminatingPod = async (_signal, _pod, _status, _grace, fn) => {
      const status: PodStatus = { phase: "Running" };
      fn?.(status);
      applied.push(status);
    };
    const setPhase =
      (reason: string): PodStatusFunc =>
      (status) => {
        status.phase = "Failed";
        status.reason = reason;
      };
    workers.updatePod({ updateType: "create", pod: newNamedPod("1", "ns", "p") });
    await drain();
    workers.updatePod({
      updateType: "kill",
      pod: newNamedPod("1", "ns", "p"),
      killPodOptions: { podStatusFunc: setPhase("Preempted") },
    });
    workers.updatePod({
      updateType: "kill",
      pod: newNamedPod("1", "ns", "p"),
      killPodOptions: { podStatusFunc: setPhase("Evicted") },
    });
    await drain();
    expect(applied).toEqual([{ phase: "Failed", reason: "Evicted" }]);
  });

  const pod = (deletionGracePeriodSeconds?: number, terminationGracePeriodSeconds?: number): ConfigPod => {
    const p: Pod = {
      metadata:
        deletionGracePeriodSeconds === undefined ? { uid: "1" } : { uid: "1", deletionGracePeriodSeconds },
      spec: { containers: [] },
    };
    if (terminationGracePeriodSeconds !== undefined)
      p.spec!.terminationGracePeriodSeconds = terminationGracePeriodSeconds;
    return p;
  };
  it.each([
    {
      name: "the spec's value when nothing else is set",
      current: 0,
      pod: pod(undefined, 30),
      override: undefined,
      expected: [30, false],
    },
    { name: "1 when nothing is set", current: 0, pod: pod(), override: undefined, expected: [1, false] },
    {
      name: "the deletion grace period first",
      current: 0,
      pod: pod(10, 30),
      override: undefined,
      expected: [10, false],
    },
    { name: "a smaller override", current: 0, pod: pod(10, 30), override: 5, expected: [5, false] },
    { name: "never a larger override", current: 0, pod: pod(10, 30), override: 20, expected: [10, false] },
    {
      name: "shortening an earlier grace period",
      current: 30,
      pod: pod(undefined, 30),
      override: 2,
      expected: [2, true],
    },
    {
      name: "keeping an earlier, shorter grace period",
      current: 2,
      pod: pod(10, 30),
      override: 5,
      expected: [2, false],
    },
    // upstream's quirk: an override of 0 on a fresh kill falls back to the spec, not to 1
    {
      name: "an override of 0 on a fresh kill falls back to the spec",
      current: 0,
      pod: pod(undefined, 30),
      override: 0,
      expected: [30, false],
    },
    // and a deletion grace period of 0 also falls back to the spec, even over a shorter one already granted
    {
      name: "a deletion grace period of 0 falls back to the spec",
      current: 5,
      pod: pod(0, 30),
      override: undefined,
      expected: [30, true],
    },
    {
      name: "a deletion grace period of 0 without a spec value is raised to 1",
      current: 0,
      pod: pod(0),
      override: undefined,
      expected: [1, false],
    },
  ])("calculateEffectiveGracePeriod: $name", ({ current, pod, override, expected }) => {
    const result = calculateEffectiveGracePeriod(
      current,
      pod,
      override === undefined ? undefined : { podTerminationGracePeriodSecondsOverride: override },
    );
    expect([result.gracePeriod, result.shortened]).toEqual(expected);
  });
});

describe("runtime pods", () => {
  it("a runtime pod is only ever killed, through syncTerminatingRuntimePod (TestUpdatePodForRuntimePod)", async () => {
    const { workers, processed, drain } = createPodWorkers();
    workers.updatePod({ updateType: "create", runningPod: { id: "1", name: "1", namespace: "test" } });
    await drain();
    expect(processed.size).toBe(0);
    workers.updatePod({ updateType: "kill", runningPod: { id: "1", name: "1", namespace: "test" } });
    await drain();
    expect(processed.get("1")).toEqual([{ name: "1", updateType: "kill", runningPod: true }]);
    expect(workers.inspectStatus("1")).toBeUndefined();
  });

  it("a runtime pod kill for a terminated pod is ignored until its worker finishes (TestUpdatePodForTerminatedRuntimePod)", async () => {
    const { workers, syncer, processed, drain } = createPodWorkers();
    syncer.syncTerminatedPod = async () => {
      throw new Error("volumes still attached");
    };
    workers.updatePod({ updateType: "create", pod: newNamedPod("1", "ns", "1") });
    await drain();
    workers.updatePod({ updateType: "kill", pod: newNamedPod("1", "ns", "1") });
    await drain();
    expect(workers.inspectStatus("1")).toMatchObject({ finished: false });
    expect(workers.isPodKnownTerminated("1")).toBe(true);
    processed.clear();
    workers.updatePod({ updateType: "kill", runningPod: { id: "1", name: "1", namespace: "ns" } });
    await drain();
    expect(processed.size).toBe(0);
    expect(workers.inspectStatus("1")!.pendingUpdate).toBeUndefined();
  });

  it("a runtime pod kill for a known pod terminates the known pod's spec", async () => {
    const { workers, processed, drain } = createPodWorkers();
    workers.updatePod({ updateType: "create", pod: newNamedPod("1", "ns", "configured") });
    await drain();
    workers.updatePod({ updateType: "kill", runningPod: { id: "1", name: "runtime-name", namespace: "ns" } });
    await drain();
    expect(processed.get("1")).toEqual([
      { name: "configured", updateType: "create" },
      { name: "configured", updateType: "kill", gracePeriod: 30 },
      { name: "configured", terminated: true },
    ]);
    expect(workers.inspectStatus("1")).toMatchObject({
      observedRuntime: true,
      deleted: true,
      finished: true,
    });
  });
});

describe("terminal phase", () => {
  it("syncPod reporting a terminal pod moves it to terminating and terminated (TestTerminalPhaseTransition)", async () => {
    const { workers, syncer, drain } = createPodWorkers();
    const original = syncer.syncPod;
    const terminal = new Set<string>();
    syncer.syncPod = async (...args) => (await original(...args)) || terminal.has(args[2].metadata!.uid!);
    workers.updatePod({ updateType: "update", pod: newNamedPod("1", "test1", "pod1") });
    await drain();
    expect(workers.isPodKnownTerminated("1")).toBe(false);
    workers.updatePod({ updateType: "update", pod: newNamedPod("1", "test1", "pod1") });
    await drain();
    expect(workers.isPodKnownTerminated("1")).toBe(false);
    terminal.add("1");
    workers.updatePod({ updateType: "update", pod: newNamedPod("1", "test1", "pod1") });
    await drain();
    expect(workers.isPodTerminationRequested("1")).toBe(true);
    expect(workers.isPodKnownTerminated("1")).toBe(true);
  });
});

describe("static pods", () => {
  it("one static pod per full name runs at a time, in arrival order (TestStaticPodExclusion)", async () => {
    const holds = new Map<string, { promise: Promise<void>; open: () => void }>();
    const env = createPodWorkers({
      hooks: {
        async workerWake(uid) {
          await holds.get(uid)?.promise;
        },
      },
    });
    const { workers, processed, queue, drain } = env;
    const update = (uid: string, updateType: SyncPodType, isStatic = true) =>
      workers.updatePod({ updateType, pod: newNamedPod(uid, "test1", "pod1", isStatic) });

    // two pods with the same name: one static, one from the API server
    update("1-normal", "update", false);
    update("2-static", "update");
    await drain();
    expect(workers.isPodKnownTerminated("1-normal")).toBe(false);
    expect(workers.isPodKnownTerminated("2-static")).toBe(false);
    expect(processed.size).toBe(2);
    expect(processed.get("2-static")).toEqual([{ name: "pod1", updateType: "update" }]);
    expect(workers.inspectStartedStaticPods()).toEqual(new Map([["pod1_test1", "2-static"]]));

    // a second and third static pod cannot start
    update("3-static", "update");
    update("4-static", "update");
    await drain();
    expect(processed.size).toBe(2);
    expect(processed.get("3-static")).toBeUndefined();
    expect(processed.get("4-static")).toBeUndefined();
    expect(workers.inspectStartedStaticPods()).toEqual(new Map([["pod1_test1", "2-static"]]));
    expect(workers.inspectWaitingStaticPods()).toEqual(new Map([["pod1_test1", ["3-static", "4-static"]]]));
    expect(queue.set()).toEqual(new Set(["1-normal", "2-static", "3-static", "4-static"]));

    // an update for 3-static: still waiting behind 2-static, retried later
    queue.getWork();
    update("3-static", "update");
    await drain();
    expect(workers.inspectStartedStaticPods()).toEqual(new Map([["pod1_test1", "2-static"]]));
    expect(workers.inspectWaitingStaticPods()).toEqual(new Map([["pod1_test1", ["3-static", "4-static"]]]));
    expect(new Set(queue.getWork())).toEqual(new Set(["3-static"]));

    // killing 3-static before it started finishes it without any sync
    update("3-static", "kill");
    await drain();
    expect(workers.isPodKnownTerminated("3-static")).toBe(true);
    expect(queue.getWork()).toEqual([]);
    expect(workers.inspectStartedStaticPods()).toEqual(new Map([["pod1_test1", "2-static"]]));
    expect(workers.inspectWaitingStaticPods()).toEqual(new Map([["pod1_test1", ["3-static", "4-static"]]]));

    // terminating 2-static frees the name
    update("2-static", "kill");
    await drain();
    expect(workers.isPodKnownTerminated("2-static")).toBe(true);
    expect(workers.inspectStartedStaticPods()).toEqual(new Map());
    expect(workers.inspectWaitingStaticPods()).toEqual(new Map([["pod1_test1", ["3-static", "4-static"]]]));

    // the next periodic sync starts 4-static: 3-static has terminated
    update("4-static", "update");
    await drain();
    expect(workers.isPodKnownTerminated("4-static")).toBe(false);
    expect(workers.inspectStartedStaticPods()).toEqual(new Map([["pod1_test1", "4-static"]]));
    expect(workers.inspectWaitingStaticPods()).toEqual(new Map());

    const desired = (...uids: string[]) =>
      uids.map((uid) => newNamedPod(uid, "test1", "pod1", uid !== "1-normal"));
    let state = workers.syncKnownPods(desired("1-normal", "2-static", "3-static", "4-static"));
    await drain();
    expect(state).toEqual(
      new Map([
        ["1-normal", { state: "sync", orphan: false, hasConfig: true, static: false }],
        ["2-static", { state: "terminated", orphan: false, hasConfig: true, static: true }],
        ["3-static", { state: "terminated", orphan: false, hasConfig: false, static: false }],
        ["4-static", { state: "sync", orphan: false, hasConfig: true, static: true }],
      ]),
    );
    expect(workers.inspectStatus("3-static")).toMatchObject({ finished: true, working: false });
    expect(workers.inspectStatus("3-static")!.terminatedAt).not.toBe(0);

    // 3-static leaves the config: its finished worker is forgotten
    state = workers.syncKnownPods(desired("1-normal", "2-static", "4-static"));
    await drain();
    expect(state).toEqual(
      new Map([
        ["1-normal", { state: "sync", orphan: false, hasConfig: true, static: false }],
        ["2-static", { state: "terminated", orphan: false, hasConfig: true, static: true }],
        ["4-static", { state: "sync", orphan: false, hasConfig: true, static: true }],
      ]),
    );
    expect(workers.inspectStatus("3-static")).toBeUndefined();

    // 5-static is killed while its worker is held, then 6-static arrives
    update("5-static", "update");
    await drain();
    holds.set("5-static", gate());
    update("5-static", "kill");
    update("6-static", "update");
    await drain("5-static");
    expect(workers.isPodTerminationRequested("5-static")).toBe(true);
    expect(workers.isPodKnownTerminated("5-static")).toBe(false);
    expect(workers.inspectStartedStaticPods()).toEqual(new Map([["pod1_test1", "4-static"]]));
    expect(workers.inspectWaitingStaticPods()).toEqual(new Map([["pod1_test1", ["5-static", "6-static"]]]));

    // terminating 4-static lets 6-static start, skipping the terminating 5-static
    update("4-static", "kill");
    await drain("5-static");
    update("6-static", "update");
    await drain("5-static");
    expect(workers.isPodKnownTerminated("5-static")).toBe(false);
    expect(workers.inspectStartedStaticPods()).toEqual(new Map([["pod1_test1", "6-static"]]));
    expect(workers.inspectWaitingStaticPods()).toEqual(new Map());
    expect(processed.get("6-static")).toEqual([{ name: "pod1", updateType: "update" }]);

    // 5-static's held worker finishes it without ever syncing
    holds.get("5-static")!.open();
    holds.delete("5-static");
    await drain();
    expect(workers.isPodKnownTerminated("5-static")).toBe(true);
    expect(processed.get("5-static")).toBeUndefined();

    // three more; 6-static is killed and re-created with the same UID
    update("7-static", "update");
    update("8-static", "update");
    update("9-static", "update");
    await drain();
    update("6-static", "kill");
    await drain();
    update("6-static", "create");
    await drain();
    update("8-static", "update");
    await drain();
    expect(workers.inspectStatus("6-static")!.restartRequested).toBe(true);
    expect(workers.inspectStartedStaticPods()).toEqual(new Map());
    // only 7-static may start now, but it has had no event since
    expect(workers.inspectWaitingStaticPods()).toEqual(
      new Map([["pod1_test1", ["7-static", "8-static", "9-static"]]]),
    );
    expect(processed.get("7-static")).toBeUndefined();
    expect(processed.get("8-static")).toBeUndefined();
    expect(processed.get("9-static")).toBeUndefined();

    // terminating 7-static lets 8-static start
    update("7-static", "kill");
    await drain();
    update("8-static", "update");
    await drain();
    expect(processed.get("8-static")).toEqual([{ name: "pod1", updateType: "update" }]);

    state = workers.syncKnownPods(desired("8-static"));
    await drain();
    expect(state).toEqual(
      new Map([
        ["1-normal", { state: "terminating", orphan: true, hasConfig: true, static: false }],
        ["8-static", { state: "sync", orphan: false, hasConfig: true, static: true }],
      ]),
    );
  });

  // upstream's Test_allowPodStart table
  const newStaticPod = (uid: string, name: string): Pod => ({
    metadata: { uid, name, annotations: { "kubernetes.io/config.source": "file" } },
    spec: { containers: [], terminationGracePeriodSeconds: 30 },
  });
  const st = (fullname: string, fields: { terminatingAt?: number; terminatedAt?: number } = {}) => ({
    fullname,
    terminatingAt: fields.terminatingAt ?? 0,
    terminatedAt: fields.terminatedAt ?? 0,
  });
  it.each([
    {
      desc: "non-static pod",
      pod: newNamedPod("uid-0", "ns", "test"),
      statuses: { "uid-0": st("test_"), "uid-1": st("test_") },
      started: {},
      waiting: {},
      expectedStarted: {},
      expectedWaiting: {},
      allowed: true,
      allowedEver: true,
    },
    {
      desc: "non-static pod when there is a started static pod with the same full name",
      pod: newNamedPod("uid-0", "ns", "test"),
      statuses: { "uid-0": st("test_"), "uid-1": st("test_") },
      started: { test_: "uid-1" },
      waiting: {},
      expectedStarted: { test_: "uid-1" },
      expectedWaiting: {},
      allowed: true,
      allowedEver: true,
    },
    {
      desc: "static pod when there are no started static pods with the same full name",
      pod: newStaticPod("uid-0", "foo"),
      statuses: { "uid-0": st("foo_"), "uid-1": st("bar_") },
      started: { bar_: "uid-1" },
      waiting: {},
      expectedStarted: { foo_: "uid-0", bar_: "uid-1" },
      expectedWaiting: {},
      allowed: true,
      allowedEver: true,
    },
    {
      desc: "static pod when there is a started static pod with the same full name",
      pod: newStaticPod("uid-0", "foo"),
      statuses: { "uid-0": st("foo_"), "uid-1": st("foo_") },
      started: { foo_: "uid-1" },
      waiting: {},
      expectedStarted: { foo_: "uid-1" },
      expectedWaiting: {},
      allowed: false,
      allowedEver: true,
    },
    {
      desc: "static pod if the static pod has already started",
      pod: newStaticPod("uid-0", "foo"),
      statuses: { "uid-0": st("foo_") },
      started: { foo_: "uid-0" },
      waiting: {},
      expectedStarted: { foo_: "uid-0" },
      expectedWaiting: {},
      allowed: true,
      allowedEver: true,
    },
    {
      desc: "static pod if the static pod is the first pod waiting to start",
      pod: newStaticPod("uid-0", "foo"),
      statuses: { "uid-0": st("foo_") },
      started: {},
      waiting: { foo_: ["uid-0"] },
      expectedStarted: { foo_: "uid-0" },
      expectedWaiting: {},
      allowed: true,
      allowedEver: true,
    },
    {
      desc: "static pod if the static pod is not the first pod waiting to start",
      pod: newStaticPod("uid-0", "foo"),
      statuses: { "uid-0": st("foo_"), "uid-1": st("foo_") },
      started: {},
      waiting: { foo_: ["uid-1", "uid-0"] },
      expectedStarted: {},
      expectedWaiting: { foo_: ["uid-1", "uid-0"] },
      allowed: false,
      allowedEver: true,
    },
    {
      desc: "static pod if the static pod is the first valid pod waiting to start / clean up until picking the first valid pod",
      pod: newStaticPod("uid-0", "foo"),
      statuses: { "uid-0": st("foo_"), "uid-1": st("foo_") },
      started: {},
      waiting: { foo_: ["uid-2", "uid-2", "uid-3", "uid-0", "uid-1"] },
      expectedStarted: { foo_: "uid-0" },
      expectedWaiting: { foo_: ["uid-1"] },
      allowed: true,
      allowedEver: true,
    },
    {
      desc: "static pod if the static pod is the first pod that is not termination requested and waiting to start",
      pod: newStaticPod("uid-0", "foo"),
      statuses: {
        "uid-0": st("foo_"),
        "uid-1": st("foo_"),
        "uid-2": st("foo_", { terminatingAt: 1 }),
        "uid-3": st("foo_", { terminatedAt: 1 }),
      },
      started: {},
      waiting: { foo_: ["uid-2", "uid-3", "uid-0", "uid-1"] },
      expectedStarted: { foo_: "uid-0" },
      expectedWaiting: { foo_: ["uid-1"] },
      allowed: true,
      allowedEver: true,
    },
    {
      desc: "static pod if there is no sync status for the pod should be denied",
      pod: newStaticPod("uid-0", "foo"),
      statuses: {
        "uid-1": st("foo_"),
        "uid-2": st("foo_", { terminatingAt: 1 }),
        "uid-3": st("foo_", { terminatedAt: 1 }),
      },
      started: {},
      waiting: { foo_: ["uid-1"] },
      expectedStarted: {},
      expectedWaiting: { foo_: ["uid-1"] },
      allowed: false,
      allowedEver: false,
    },
    {
      desc: "static pod if the static pod is terminated should not be allowed",
      pod: newStaticPod("uid-0", "foo"),
      statuses: { "uid-0": st("foo_", { terminatingAt: 1 }) },
      started: {},
      waiting: { foo_: ["uid-2", "uid-3", "uid-0", "uid-1"] },
      expectedStarted: {},
      expectedWaiting: { foo_: ["uid-2", "uid-3", "uid-0", "uid-1"] },
      allowed: false,
      allowedEver: false,
    },
  ])("allowPodStart: $desc", (tc) => {
    const state = {
      podSyncStatuses: new Map(Object.entries(tc.statuses)),
      startedStaticPodsByFullname: new Map<string, string>(Object.entries(tc.started)),
      waitingToStartStaticPodsByFullname: new Map<string, string[]>(Object.entries(tc.waiting)),
    };
    expect(allowPodStart(tc.pod, state)).toEqual({ canStart: tc.allowed, canEverStart: tc.allowedEver });
    expect(state.startedStaticPodsByFullname).toEqual(new Map(Object.entries(tc.expectedStarted)));
    expect(state.waitingToStartStaticPodsByFullname).toEqual(new Map(Object.entries(tc.expectedWaiting)));
  });

  it("isPodForMirrorPodTerminatingByFullName is true only while the started static pod terminates", async () => {
    const { workers, syncer, drain } = createPodWorkers();
    const release = gate();
    syncer.syncTerminatingPod = async () => {
      await release.promise;
    };
    workers.updatePod({ updateType: "create", pod: newNamedPod("s", "kube-system", "etcd", true) });
    await drain();
    expect(workers.isPodForMirrorPodTerminatingByFullName("etcd_kube-system")).toBe(false);
    workers.updatePod({ updateType: "kill", pod: newNamedPod("s", "kube-system", "etcd", true) });
    await turn();
    expect(workers.isPodForMirrorPodTerminatingByFullName("etcd_kube-system")).toBe(true);
    expect(workers.isPodForMirrorPodTerminatingByFullName("other_kube-system")).toBe(false);
    release.open();
    await drain();
    expect(workers.isPodForMirrorPodTerminatingByFullName("etcd_kube-system")).toBe(false);
  });
});

describe("syncKnownPods", () => {
  it("answers the query methods and forgets finished workers no longer desired (TestSyncKnownPods)", async () => {
    const { workers, drain } = createPodWorkers();
    const numPods = 20;
    for (let i = 0; i < numPods; i++) {
      workers.updatePod({ updateType: "update", pod: newNamedPod(String(i), "ns", "name") });
    }
    await drain();
    expect(workers.inspectChannels()).toHaveLength(numPods);

    const desired = new Set(["2", "14"]);
    const desiredPods = [newNamedPod("2", "ns", "name"), newNamedPod("14", "ns", "name")];
    // kill all but the desired pods; the even ones were deleted in the API
    for (let i = 0; i < numPods; i++) {
      if (desired.has(String(i))) continue;
      let pod = newNamedPod(String(i), "ns", "name");
      if (i % 2 === 0) pod = withDeletionTimestamp(pod, "1970-01-01T00:00:01Z");
      workers.updatePod({ updateType: "kill", pod });
    }
    await drain();

    expect(workers.shouldPodContainersBeTerminating("0")).toBe(true);
    expect(workers.shouldPodContainersBeTerminating("1")).toBe(true);
    expect(workers.shouldPodContainersBeTerminating("2")).toBe(false);
    expect(workers.isPodTerminationRequested("0")).toBe(true);
    expect(workers.isPodTerminationRequested("2")).toBe(false);
    expect(workers.couldHaveRunningContainers("0")).toBe(false);
    expect(workers.couldHaveRunningContainers("1")).toBe(false);
    expect(workers.couldHaveRunningContainers("2")).toBe(true);
    // deleted and terminated / terminated but not deleted / not terminated
    expect(workers.shouldPodContentBeRemoved("0")).toBe(true);
    expect(workers.shouldPodContentBeRemoved("1")).toBe(false);
    expect(workers.shouldPodContentBeRemoved("2")).toBe(false);
    expect(workers.shouldPodBeFinished("0")).toBe(true);
    expect(workers.shouldPodBeFinished("2")).toBe(false);
    // an unknown pod before the first syncKnownPods may still be running
    expect(workers.shouldPodContainersBeTerminating("abc")).toBe(false);
    expect(workers.couldHaveRunningContainers("abc")).toBe(true);
    expect(workers.shouldPodContentBeRemoved("abc")).toBe(false);
    expect(workers.shouldPodRuntimeBeRemoved("abc")).toBe(false);
    expect(workers.shouldPodBeFinished("abc")).toBe(false);
    expect(workers.isPodKnownTerminated("abc")).toBe(false);

    workers.syncKnownPods(desiredPods);
    expect(workers.inspectChannels().sort()).toEqual(["14", "2"]);
    expect(workers.isPodTerminationRequested("2")).toBe(false);
    // after it, an unknown pod is known to be gone
    expect(workers.shouldPodContainersBeTerminating("abc")).toBe(true);
    expect(workers.couldHaveRunningContainers("abc")).toBe(false);
    expect(workers.shouldPodContentBeRemoved("abc")).toBe(true);
    expect(workers.shouldPodRuntimeBeRemoved("abc")).toBe(true);
    expect(workers.shouldPodBeFinished("abc")).toBe(true);
    expect(workers.isPodKnownTerminated("abc")).toBe(false);

    // running workers no longer desired are terminated by the workers themselves
    workers.syncKnownPods([]);
    await drain();
    expect(workers.inspectChannels()).toEqual([]);
    expect(workers.inspectUIDs().sort()).toEqual(["14", "2"]);
    expect(workers.isPodKnownTerminated("2")).toBe(true);
    expect(workers.shouldPodContentBeRemoved("2")).toBe(true); // orphans count as deleted

    // once finished they are forgotten
    workers.syncKnownPods([]);
    expect(workers.inspectChannels()).toEqual([]);
    expect(workers.inspectUIDs()).toEqual([]);
  });

  it("an orphaned started pod is terminated with its pod's grace period, an unstarted one forgotten at once", async () => {
    const holds = new Map<string, { promise: Promise<void>; open: () => void }>();
    const { workers, processed, drain } = createPodWorkers({
      hooks: { workerWake: (uid) => holds.get(uid)?.promise },
    });
    const started = newNamedPod("started", "ns", "a");
    started.spec!.terminationGracePeriodSeconds = 12;
    workers.updatePod({ updateType: "create", pod: started });
    await drain();
    holds.set("unstarted", gate());
    workers.updatePod({ updateType: "create", pod: newNamedPod("unstarted", "ns", "b") });

    const state = workers.syncKnownPods([]);
    expect(state).toEqual(
      new Map([["started", { state: "terminating", orphan: true, hasConfig: true, static: false }]]),
    );
    expect(workers.inspectStatus("unstarted")).toBeUndefined();
    expect(workers.inspectStatus("started")).toMatchObject({ deleted: true, gracePeriod: 12 });
    holds.get("unstarted")!.open();
    await drain();
    // the replayed update carries no kill options, so the syncer falls back to the pod's own
    // grace period, as upstream's does
    expect(processed.get("started")).toEqual([
      { name: "a", updateType: "create" },
      { name: "a", updateType: "kill", gracePeriod: undefined },
      { name: "a", terminated: true },
    ]);
    expect(processed.get("unstarted")).toBeUndefined();
    expect(workers.syncKnownPods([])).toEqual(new Map());
  });

  it("a UID re-created while terminating starts again only after syncKnownPods forgets it", async () => {
    const { workers, processed, drain } = createPodWorkers();
    const pod = newNamedPod("1", "ns", "p");
    workers.updatePod({ updateType: "create", pod });
    await drain();
    workers.updatePod({ updateType: "kill", pod });
    workers.updatePod({ updateType: "create", pod });
    await drain();
    expect(workers.inspectStatus("1")).toMatchObject({ restartRequested: true, finished: true });
    // still finished: further updates are ignored
    workers.updatePod({ updateType: "update", pod });
    await drain();
    expect(processed.get("1")).toHaveLength(3);

    // the pod is still desired, but a restart was requested: the worker is forgotten
    expect(workers.syncKnownPods([pod])).toEqual(new Map());
    expect(workers.inspectStatus("1")).toBeUndefined();
    workers.updatePod({ updateType: "create", pod });
    await drain();
    expect(processed.get("1")).toEqual([
      { name: "p", updateType: "create" },
      { name: "p", updateType: "kill", gracePeriod: 30 },
      { name: "p", terminated: true },
      { name: "p", updateType: "create" },
    ]);
    expect(workers.couldHaveRunningContainers("1")).toBe(true);
  });

  it("a finished pod still desired is kept, so it is never restarted", async () => {
    const { workers, drain } = createPodWorkers();
    const pod = newPodWithPhase("1", "done", "Succeeded");
    workers.updatePod({ updateType: "create", pod });
    await drain();
    expect(workers.syncKnownPods([pod])).toEqual(
      new Map([["1", { state: "terminated", orphan: false, hasConfig: true, static: false }]]),
    );
    expect(workers.shouldPodBeFinished("1")).toBe(true);
  });
});

describe("completeWork requeues through the work queue", () => {
  it("resync after success, backoff after an error, about a second when the network is not ready, at once on a phase change", async () => {
    const { workers, syncer, queue, drain } = createPodWorkers({
      random: () => 0.5,
      resyncIntervalMs: 60 * second,
      backOffPeriodMs: 10 * second,
    });
    let next: Error | undefined;
    const original = syncer.syncPod;
    syncer.syncPod = async (...args) => {
      await original(...args);
      if (next) throw next;
      return false;
    };
    const pod = newNamedPod("1", "ns", "p");
    workers.updatePod({ updateType: "create", pod });
    await drain();
    next = new Error("failed to pull image");
    workers.updatePod({ updateType: "sync", pod });
    await drain();
    next = new Error(
      "network is not ready: container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady",
    );
    workers.updatePod({ updateType: "sync", pod });
    await drain();
    next = undefined;
    workers.updatePod({ updateType: "kill", pod });
    await drain();
    expect(queue.items).toEqual([
      { uid: "1", delayMs: 75 * second }, // 60 s + 50% × 0.5
      { uid: "1", delayMs: 12.5 * second }, // 10 s + 50% × 0.5
      { uid: "1", delayMs: 1.25 * second }, // 1 s + 50% × 0.5
      { uid: "1", delayMs: 0 }, // terminating → terminated
    ]);
  });

  it("a status that cannot be determined records FailedSync and backs off", async () => {
    const { workers, cache, queue, recorder, processed, drain } = createPodWorkers({
      backOffPeriodMs: 10 * second,
    });
    cache.getNewerThanError = new Error("rpc error: runtime down");
    workers.updatePod({ updateType: "create", pod: newNamedPod("1", "ns", "p") });
    await drain();
    expect(processed.size).toBe(0);
    expect(recorder.events).toEqual(["Warning FailedSync error determining status: rpc error: runtime down"]);
    expect(queue.items).toEqual([{ uid: "1", delayMs: 10 * second }]);
  });

  it("each sync waits for a cache newer than the previous sync", async () => {
    const { workers, cache, clock, drain } = createPodWorkers();
    const pod = newNamedPod("1", "ns", "p");
    workers.updatePod({ updateType: "create", pod });
    await drain();
    clock.setTime(5 * second);
    workers.updatePod({ updateType: "update", pod });
    await drain();
    expect(cache.getNewerThanCalls).toEqual([
      { uid: "1", minTime: 0 },
      { uid: "1", minTime: 1 * second },
    ]);
  });
});

describe("metrics", () => {
  it("observes how long each update took until acted on, and the containers of each started pod", async () => {
    const durations: [string, number][] = [];
    const containers: number[] = [];
    const { workers, syncer, clock, drain } = createPodWorkers({
      metrics: {
        observePodWorkerDuration: (type, seconds) => durations.push([type, seconds]),
        observeContainersPerPod: (count) => containers.push(count),
      },
    });
    const original = syncer.syncPod;
    syncer.syncPod = async (...args) => {
      clock.setTime(clock.now() + 2 * second);
      return original(...args);
    };
    const pod: Pod = { ...newNamedPod("1", "ns", "p"), spec: { containers: [{ name: "a" }, { name: "b" }] } };
    workers.updatePod({ updateType: "create", pod, startTime: clock.now() });
    await drain();
    workers.updatePod({ updateType: "kill", pod, startTime: clock.now() - 500 });
    await drain();
    // the update replayed into the terminated phase has no start time (upstream does not copy it)
    expect(durations).toEqual([
      ["create", 2],
      ["kill", 0.5],
    ]);
    expect(containers).toEqual([2]);
  });

  it("a throwing metrics provider neither stops the worker nor loses the update", async () => {
    const { workers, processed, drain } = createPodWorkers({
      metrics: {
        observeContainersPerPod: () => {
          throw new Error("registry closed");
        },
      },
    });
    workers.updatePod({ updateType: "create", pod: newNamedPod("1", "ns", "p"), startTime: 1 });
    await drain();
    expect(processed.get("1")).toEqual([{ name: "p", updateType: "create" }]);
  });
});

describe("killPodNow", () => {
  it("resolves once the pod is terminated (TestKillPodNowFunc)", async () => {
    const { workers, processed, drain, recorder, clock } = createPodWorkers();
    const kill = killPodNow(workers, recorder, clock);
    const pod = newNamedPod("test", "ns", "test");
    await kill(pod, false, 0, (status) => {
      status.phase = "Failed";
      status.reason = "reason";
      status.message = "message";
    });
    await drain();
    expect(processed.get("test")).toEqual([
      { name: "test", updateType: "kill", gracePeriod: 30 },
      { name: "test", terminated: true },
    ]);
    expect(recorder.events).toEqual([]);
  });

  it("gives up after 1.5 grace periods (at least 10 s) with an ExceededGracePeriod warning", async () => {
    const { workers, syncer, recorder, clock } = createPodWorkers();
    syncer.syncTerminatingPod = (signal) => untilAborted(signal);
    const kill = killPodNow(workers, recorder, clock);
    const pod = newNamedPod("1", "ns", "p");
    pod.spec!.terminationGracePeriodSeconds = 20;
    let outcome: unknown;
    const killing = kill(pod, true).then(
      () => "resolved",
      (error: Error) => error.message,
    );
    void killing.then((value) => {
      outcome = value;
    });
    await clock.advance(29_999);
    expect(outcome).toBeUndefined();
    await clock.advance(1);
    expect(await killing).toBe("timeout waiting to kill pod");
    expect(recorder.events).toEqual([
      "Warning ExceededGracePeriod Container runtime did not kill the pod within specified grace period.",
    ]);
    expect(workers.inspectStatus("1")).toMatchObject({ evicted: true });
  });
});

describe("run", () => {
  it("aborting stops every worker: in-flight syncs are aborted and awaited, later updates ignored", async () => {
    const { workers, syncer, processed, drain } = createPodWorkers();
    const events: string[] = [];
    syncer.syncPod = async (signal) => {
      events.push("sync started");
      try {
        await untilAborted(signal);
      } finally {
        await turn();
        events.push("sync stopped");
      }
      return false;
    };
    const controller = new AbortController();
    const running = workers.run({ signal: controller.signal }).then(() => events.push("run resolved"));
    workers.updatePod({ updateType: "create", pod: newNamedPod("1", "ns", "p") });
    await turn();
    controller.abort();
    await running;
    expect(events).toEqual(["sync started", "sync stopped", "run resolved"]);
    workers.updatePod({ updateType: "create", pod: newNamedPod("2", "ns", "q") });
    await drain();
    expect(workers.inspectStatus("2")).toBeUndefined();
    expect(processed.size).toBe(0);
  });

  it("an update pending at the stop is never synced", async () => {
    const { workers, syncer, processed } = createPodWorkers();
    const original = syncer.syncPod;
    syncer.syncPod = async (signal, ...rest) => {
      await original(signal, ...rest);
      return untilAborted(signal);
    };
    const controller = new AbortController();
    const running = workers.run({ signal: controller.signal });
    workers.updatePod({ updateType: "create", pod: newNamedPod("1", "ns", "v1") });
    await turn();
    workers.updatePod({ updateType: "update", pod: newNamedPod("1", "ns", "v2") });
    controller.abort();
    await running;
    for (let i = 0; i < 5; i++) await turn();
    expect(processed.get("1")).toEqual([{ name: "v1", updateType: "create" }]);
  });

  it("resolves at once with no workers when the signal is already aborted", async () => {
    const { workers } = createPodWorkers();
    await expect(workers.run({ signal: AbortSignal.abort() })).resolves.toBeUndefined();
  });
});

it("ignores an update for a pod without a UID", async () => {
  const { workers, processed, drain } = createPodWorkers();
  workers.updatePod({
    updateType: "create",
    pod: { metadata: { name: "p", namespace: "ns" }, spec: { containers: [] } },
  });
  await drain();
  expect(workers.inspectUIDs()).toEqual([]);
  expect(processed.size).toBe(0);
});

it("rejects a negative or infinite resync interval", () => {
  expect(
    () =>
      new DefaultPodWorkers({
        podSyncer: {} as Syncer,
        podCache: new FakeCache(),
        isPodStatusTerminal: () => true,
        workQueue: new FakeQueue(),
        resyncIntervalMs: Number.POSITIVE_INFINITY,
      }),
  ).toThrow("resyncIntervalMs must be a finite number of milliseconds ≥ 0, got Infinity");
});
