import { getEventListeners } from "node:events";
import { events, type Pod, pods } from "@reconcile/api";
import { pod as buildPod } from "@reconcile/api/testing";
import type { Client } from "@reconcile/client";
import { FakeClock } from "@reconcile/clock";
import { SharedIndexInformer } from "@reconcile/informer";
import { FakeListerWatcher } from "@reconcile/informer/testing";
import { noopMetricsProvider, RateLimitingQueue } from "@reconcile/workqueue";
import { describe, expect, it } from "vitest";
import { type ControllerView, defineController } from "./define-controller.js";
import { type EventRecorder, noopEventRecorder } from "./event-recorder.js";
import { Introspection, RecentRing, ReconcileHistory } from "./introspection.js";
import type { Logger } from "./logger.js";
import type { ReconcileRecord } from "./sync-result.js";
import { RecordingClient } from "./testing/recording-client.js";

const synced = { hasSynced: () => true, whenSynced: () => Promise.resolve() };

async function settle(clock: FakeClock): Promise<void> {
  for (let i = 0; i < 5; i++) await clock.flush();
}

function recording(records: Record<string, unknown>[]): Logger {
  const make = (bound: Record<string, unknown>): Logger => ({
    debug: () => {},
    info: (obj, msg) => void records.push({ ...bound, ...obj, msg }),
    warn: () => {},
    error: (obj, msg) => void records.push({ ...bound, ...obj, msg }),
    child: (more) => make({ ...bound, ...more }),
  });
  return make({});
}

describe("defineController", () => {
  it("names the missing option after its owner", () => {
    expect(() =>
      defineController({
        name: "example",
        owner: "ExampleController",
        context: {},
        required: { client: {}, podInformer: undefined },
        informers: {},
        queues: [{ name: "example", sync: async () => {} }],
      }),
    ).toThrow(new TypeError("ExampleController: podInformer is required"));
  });

  it("makes a named queue on the context's clock and metrics, bound logger and no recorder without events", () => {
    const clock = new FakeClock();
    const names: string[] = [];
    const records: Record<string, unknown>[] = [];
    const harness = defineController({
      name: "example",
      context: {
        clock,
        logger: recording(records),
        queueMetricsProvider: {
          ...noopMetricsProvider,
          newDepthMetric: (name) => {
            names.push(name);
            return noopMetricsProvider.newDepthMetric(name);
          },
        },
      },
      informers: {},
      queues: [{ name: "example_queue", sync: async () => {} }],
    });
    expect(harness.clock).toBe(clock);
    expect(names).toEqual(["example_queue"]);
    harness.logger.info({}, "hello");
    expect(records).toEqual([{ controller: "example", msg: "hello" }]);
    expect([...harness.queues.keys()]).toEqual(["example_queue"]);
    expect(harness.recorder).toBe(noopEventRecorder);
  });

  it("owns a recorder as the events component when the context gives none, and writes its Events before run settles", async () => {
    const clock = new FakeClock(Date.parse("2026-01-02T03:04:05Z"));
    const client = new RecordingClient();
    const harness = defineController({
      name: "example",
      context: { clock },
      events: { component: "example-controller", client },
      informers: {},
      queues: [{ name: "example", sync: async () => {} }],
    });
    const abort = new AbortController();
    const run = harness.run({ signal: abort.signal });
    harness.recorder.event(
      { apiVersion: "v1", kind: "Pod", metadata: { name: "web", namespace: "prod", uid: "u1" } },
      "Normal",
      "Seen",
      "seen it",
    );
    abort.abort();
    await run;
    const written = client.actionsOf("create", events.plural);
    expect(written.map((a) => (a.body as { source?: { component?: string } }).source?.component)).toEqual([
      "example-controller",
    ]);
  });

  it("puts one listener on the caller's signal however many queues and passes listen, and takes it off when run settles", async () => {
    const clock = new FakeClock();
    const abort = new AbortController();
    const harness = defineController({
      name: "example",
      context: { clock },
      informers: { pods: synced },
      queues: [
        { name: "a", sync: async () => {} },
        { name: "b", sync: async () => {} },
        { name: "c", sync: async () => {} },
      ],
      periodic: Array.from({ length: 12 }, (_, i) => ({ name: `p${i}`, periodMs: 10, run: async () => {} })),
    });
    const run = harness.run({ signal: abort.signal, workers: 4 });
    await settle(clock);
    expect(getEventListeners(abort.signal, "abort")).toHaveLength(1);
    abort.abort();
    await run;
    expect(getEventListeners(abort.signal, "abort")).toHaveLength(0);
  });

  it("uses a queue and a recorder the caller gives, as they are", () => {
    const queue = new RateLimitingQueue<string>();
    const recorder: EventRecorder = { event() {}, eventf() {} } as unknown as EventRecorder;
    const harness = defineController({
      name: "example",
      context: { eventRecorder: recorder },
      events: { component: "example-controller", client: {} as Client },
      informers: {},
      queues: [{ name: "example", queue, sync: async () => {} }],
    });
    expect(harness.queue).toBe(queue);
    expect(harness.recorder).toBe(recorder);
  });

  it("runs every queue's workers and the periodic passes after the caches sync, with each enqueue's reason", async () => {
    const clock = new FakeClock();
    const seen: string[] = [];
    let passes = 0;
    const harness = defineController<string>({
      name: "example",
      context: { clock },
      informers: { pods: synced },
      queues: [
        {
          name: "main",
          sync: async (key, context) => void seen.push(`main ${key} ${context.reason ?? "-"}`),
        },
        {
          name: "side",
          sync: async (key, context) => void seen.push(`side ${key} ${context.reason ?? "-"}`),
        },
      ],
      periodic: [{ name: "tick", periodMs: 1_000, run: async () => void passes++ }],
    });
    harness.enqueue("ns/a", "object updated");
    harness.queues.get("side")!.add("ns/b");
    const abort = new AbortController();
    const run = harness.run({ signal: abort.signal, workers: 2 });
    await settle(clock);
    expect(seen.sort()).toEqual(["main ns/a object updated", "side ns/b -"]);
    expect(passes).toBe(1);
    await clock.advance(1_000);
    await settle(clock);
    expect(passes).toBe(2);
    abort.abort();
    await run;
    expect(harness.queue.shuttingDown()).toBe(true);
    expect(harness.queues.get("side")!.shuttingDown()).toBe(true);
  });

  it("a key requeued after an error or on request carries that reason to its next sync", async () => {
    const clock = new FakeClock();
    const reasons: (string | undefined)[] = [];
    const harness = defineController<string>({
      name: "example",
      context: { clock },
      informers: {},
      queues: [
        {
          name: "main",
          rateLimiter: () => ({ when: () => 10, forget() {}, numRequeues: () => 0 }),
          sync: async (_key, context) => {
            reasons.push(context.reason);
            if (reasons.length === 1) throw new Error("boom");
            if (reasons.length === 2) return { requeueAfterMs: 50 };
          },
        },
      ],
    });
    harness.enqueue("a", "owned Pod changed");
    const abort = new AbortController();
    const run = harness.run({ signal: abort.signal });
    await settle(clock);
    await clock.advance(10);
    await settle(clock);
    await clock.advance(50);
    await settle(clock);
    abort.abort();
    await run;
    expect(reasons).toEqual(["owned Pod changed", "retry after error", "requeue requested"]);
  });

  it("a pass that fails is logged and the next runs on time", async () => {
    const clock = new FakeClock();
    const records: Record<string, unknown>[] = [];
    let passes = 0;
    const harness = defineController({
      name: "example",
      context: { clock, logger: recording(records) },
      informers: {},
      queues: [{ name: "main", sync: async () => {} }],
      periodic: [
        {
          name: "health",
          periodMs: 100,
          run: async () => {
            passes++;
            throw new Error("no nodes");
          },
        },
      ],
    });
    const abort = new AbortController();
    const run = harness.run({ signal: abort.signal });
    await settle(clock);
    await clock.advance(100);
    await settle(clock);
    abort.abort();
    await run;
    expect(passes).toBe(2);
    expect(records.filter((r) => r.msg === "Periodic pass failed").map((r) => r.pass)).toEqual([
      "health",
      "health",
    ]);
  });

  it("rejects a second run while one is running, and workers that are not a positive integer", async () => {
    const harness = defineController({
      name: "example",
      context: {},
      informers: {},
      queues: [{ name: "main", sync: async () => {} }],
    });
    await expect(harness.run({ signal: AbortSignal.abort(), workers: 0 })).rejects.toThrow(
      "example: workers must be a positive integer, got 0",
    );
    const abort = new AbortController();
    const run = harness.run({ signal: abort.signal });
    await expect(harness.run({ signal: abort.signal })).rejects.toThrow("example: run is already running");
    abort.abort();
    await run;
  });

  it("shows its queues, keys in flight and retries, and its last reconciles in the introspection", async () => {
    const clock = new FakeClock();
    const introspection = new Introspection();
    const observed: string[] = [];
    let release!: () => void;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    const harness = defineController<string>({
      name: "example",
      context: {
        clock,
        introspection,
        random: () => 0.5,
        reconcileObserver: (record) => void observed.push(`${record.key} ${record.outcome}`),
      },
      informers: { pods: synced },
      queues: [
        {
          name: "example",
          sync: async (key) => {
            if (key === "ns/slow") await blocked;
            if (key === "ns/bad") throw new Error("boom");
            if (key === "ns/later") return { requeueAfterMs: 5_000 };
          },
        },
      ],
      inspect: () => ({ expectations: { "ns/a": { add: 1, del: 0 } } }),
    });
    const abort = new AbortController();
    const run = harness.run({ signal: abort.signal, workers: 2 });
    harness.enqueue("ns/slow", "object added");
    harness.enqueue("ns/bad", "object updated");
    harness.enqueue("ns/later", "object updated");
    await settle(clock);

    const [source] = introspection.snapshot();
    expect(source!.kind).toBe("controller");
    expect(source!.name).toBe("example");
    const view = source!.state as ControllerView;
    expect(view.running).toBe(true);
    expect(view.expectations).toEqual({ "ns/a": { add: 1, del: 0 } });
    expect(view.queues).toEqual([
      {
        name: "example",
        depth: 0,
        processing: ["ns/slow"],
        processingCount: 1,
        waiting: [
          { key: "ns/bad", dueInMs: 5, requeues: 1 },
          { key: "ns/later", dueInMs: 5_000, requeues: 0 },
        ],
        waitingCount: 2,
      },
    ]);
    expect(view.reconciles.total).toBe(2);
    expect(
      view.reconciles.recent.map(({ key, reason, outcome, error, requeueAfterMs, durationMs }) => ({
        key,
        reason,
        outcome,
        error,
        requeueAfterMs,
        durationMs,
      })),
    ).toEqual([
      {
        key: "ns/bad",
        reason: "object updated",
        outcome: "error",
        error: "boom",
        requeueAfterMs: undefined,
        durationMs: 0,
      },
      {
        key: "ns/later",
        reason: "object updated",
        outcome: "requeue_after",
        error: undefined,
        requeueAfterMs: 5_000,
        durationMs: 0,
      },
    ]);
    // The context's own observer still hears every reconcile.
    expect(observed).toEqual(["ns/bad error", "ns/later requeue_after"]);
    release();
    abort.abort();
    await run;
    expect((introspection.snapshot()[0]!.state as ControllerView).running).toBe(false);
  });

  it("records the informer delivery that queued a key as its reconcile's trigger", async () => {
    const clock = new FakeClock(1_000_000);
    const lw = new FakeListerWatcher<Pod>({ objects: [buildPod("a", { namespace: "ns" })] });
    const informer = new SharedIndexInformer<Pod>({
      listerWatcher: lw,
      resource: pods,
      clock,
      random: () => 0,
    });
    const records: ReconcileRecord[] = [];
    const harness = defineController<string>({
      name: "example",
      context: { clock, reconcileObserver: (record) => void records.push(record) },
      informers: { pods: informer },
      queues: [{ name: "example", sync: async () => {} }],
    });
    informer.addEventHandler({
      onAdd: (p) => harness.enqueue(`ns/${p.metadata?.name}`, "object added"),
      onUpdate: (_, p) => harness.enqueue(`ns/${p.metadata?.name}`, "object updated"),
    });
    const abort = new AbortController();
    const informing = informer.run({ signal: abort.signal });
    const running = harness.run({ signal: abort.signal });
    await settle(clock);
    lw.modify(buildPod("a", { namespace: "ns", labels: { v: "2" } }));
    await settle(clock);
    harness.enqueue("ns/a", "by hand");
    await settle(clock);
    abort.abort();
    await Promise.all([informing, running]);
    expect(records.map((r) => [r.reason, r.trigger])).toEqual([
      ["object added", { informer: "pods", type: "ADDED", key: "ns/a", resourceVersion: "1", initial: true }],
      [
        "object updated",
        { informer: "pods", type: "MODIFIED", key: "ns/a", resourceVersion: "2", initial: false },
      ],
      ["by hand", undefined],
    ]);
  });

  it("keeps no history and registers nowhere without an introspection", () => {
    const harness = defineController({
      name: "example",
      context: {},
      informers: {},
      queues: [{ name: "example", sync: async () => {} }],
    });
    harness.queue.add("ns/a");
    expect(harness.inspect()).toEqual({
      running: false,
      queues: [
        { name: "example", depth: 1, processing: [], processingCount: 0, waiting: [], waitingCount: 0 },
      ],
      reconciles: { total: 0, recent: [] },
    });
  });
});

describe("Introspection", () => {
  it("lists sources by kind and name, replaces one of the same name, reports a throwing one, and forgets an unregistered one", () => {
    const introspection = new Introspection();
    introspection.register({
      kind: "scheduler",
      name: "default-scheduler",
      snapshot: () => ({ pending: 1 }),
    });
    const first = introspection.register({ kind: "controller", name: "b", snapshot: () => 1 });
    introspection.register({
      kind: "controller",
      name: "a",
      snapshot: () => {
        throw new Error("broken");
      },
    });
    expect(introspection.snapshot()).toEqual([
      { kind: "controller", name: "a", state: { error: "broken" } },
      { kind: "controller", name: "b", state: 1 },
      { kind: "scheduler", name: "default-scheduler", state: { pending: 1 } },
    ]);
    const second = introspection.register({ kind: "controller", name: "b", snapshot: () => 2 });
    first(); // removing the replaced one leaves its successor
    expect(introspection.snapshot().map((s) => s.state)).toEqual([{ error: "broken" }, 2, { pending: 1 }]);
    second();
    expect(introspection.snapshot().map((s) => s.name)).toEqual(["a", "default-scheduler"]);
  });
});

describe("ReconcileHistory", () => {
  it("keeps the last entries in order and counts every one", () => {
    const history = new ReconcileHistory(2);
    for (const key of ["a", "b", "c"]) {
      history.record({
        controller: "x",
        key,
        reason: undefined,
        reconcileID: key,
        outcome: "success",
        startedAt: 10,
        endedAt: 12,
      });
    }
    expect(history.total).toBe(3);
    expect(history.list().map((r) => [r.key, r.durationMs])).toEqual([
      ["b", 2],
      ["c", 2],
    ]);
  });
});

describe("RecentRing", () => {
  it("keeps the last values oldest first, counts every push, and keeps nothing at capacity 0", () => {
    const ring = new RecentRing<number>(3);
    for (let i = 1; i <= 5; i++) ring.push(i);
    expect([ring.list(), ring.total]).toEqual([[3, 4, 5], 5]);
    const none = new RecentRing<number>(0);
    none.push(1);
    expect([none.list(), none.total]).toEqual([[], 1]);
    expect(() => new RecentRing(-1)).toThrow("RecentRing: capacity must be a whole number, got -1");
  });
});
