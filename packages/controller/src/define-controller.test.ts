import { getEventListeners } from "node:events";
import { events } from "@reconcile/api";
import type { Client } from "@reconcile/client";
import { FakeClock } from "@reconcile/clock";
import { noopMetricsProvider, RateLimitingQueue } from "@reconcile/workqueue";
import { describe, expect, it } from "vitest";
import { defineController } from "./define-controller.js";
import { type EventRecorder, noopEventRecorder } from "./event-recorder.js";
import type { Logger } from "./logger.js";
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
});
