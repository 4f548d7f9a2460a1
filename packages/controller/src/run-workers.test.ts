import { FakeClock, seededRandom } from "@reconcile/clock";
import { RateLimitingQueue } from "@reconcile/workqueue";
import { describe, expect, it } from "vitest";
import type { Logger } from "./logger.js";
import { EnqueueReasons, runWorkers, type SyncContext } from "./run-workers.js";
import { type ReconcileRecord, type SyncOutcome, TerminalError } from "./sync-result.js";

function setup() {
  const clock = new FakeClock();
  const queue = new RateLimitingQueue<string>({ clock });
  const controller = new AbortController();
  return { clock, queue, controller };
}

// Each worker yields one macrotask before a sync: let a few pass.
async function settle(clock: FakeClock): Promise<void> {
  for (let i = 0; i < 5; i++) await clock.flush();
}

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

interface LogRecord {
  level: string;
  bindings: Record<string, unknown>;
  obj: Record<string, unknown>;
  msg: string | undefined;
}

function recordingLogger(records: LogRecord[], bindings: Record<string, unknown> = {}): Logger {
  const at =
    (level: string) =>
    (obj: Record<string, unknown>, msg?: string): void => {
      records.push({ level, bindings, obj, msg });
    };
  return {
    debug: at("debug"),
    info: at("info"),
    warn: at("warn"),
    error: at("error"),
    child: (more) => recordingLogger(records, { ...bindings, ...more }),
  };
}

describe("runWorkers", () => {
  it("syncs each key and forgets it on success", async () => {
    const { clock, queue, controller } = setup();
    const synced: string[] = [];
    queue.add("ns/a");
    queue.add("ns/b");
    const run = runWorkers({
      queue,
      signal: controller.signal,
      sync: async (key) => {
        synced.push(key);
      },
    });
    await settle(clock);
    expect(synced).toEqual(["ns/a", "ns/b"]);
    expect(queue.numRequeues("ns/a")).toBe(0);
    expect(queue.len()).toBe(0);
    controller.abort();
    await run;
  });

  it("tells the observer of each finished sync: its key, reason, ID, outcome, error and requested delay", async () => {
    const { clock, queue, controller } = setup();
    const records: ReconcileRecord[] = [];
    const reasons = new EnqueueReasons<string>();
    reasons.note("ns/a", "object added");
    queue.add("ns/a");
    queue.add("ns/b");
    queue.add("ns/c");
    const boom = new Error("boom");
    const run = runWorkers({
      queue,
      signal: controller.signal,
      name: "web",
      clock,
      reasons,
      random: seededRandom(1),
      observer: (record) => records.push(record),
      sync: async (key) => {
        if (key === "ns/b") throw boom;
        if (key === "ns/c") return { requeueAfterMs: 30_000 };
      },
    });
    await settle(clock);
    controller.abort();
    await run;
    const ids = records.map((r) => r.reconcileID);
    expect(new Set(ids).size).toBe(3);
    for (const id of ids)
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(records.map(({ reconcileID: _, ...rest }) => rest)).toEqual([
      {
        controller: "web",
        key: "ns/a",
        reason: "object added",
        outcome: "success",
        error: undefined,
        requeueAfterMs: undefined,
        startedAt: 0,
        endedAt: 0,
      },
      {
        controller: "web",
        key: "ns/b",
        reason: undefined,
        outcome: "error",
        error: boom,
        requeueAfterMs: undefined,
        startedAt: 0,
        endedAt: 0,
      },
      {
        controller: "web",
        key: "ns/c",
        reason: undefined,
        outcome: "requeue_after",
        error: undefined,
        requeueAfterMs: 30_000,
        startedAt: 0,
        endedAt: 0,
      },
    ]);
  });

  it("requeues a failed key through the rate limiter and forgets it once it succeeds", async () => {
    const { clock, queue, controller } = setup();
    let attempts = 0;
    queue.add("ns/a");
    const run = runWorkers({
      queue,
      signal: controller.signal,
      sync: async () => {
        attempts++;
        if (attempts <= 2) throw new Error("conflict");
      },
    });
    await settle(clock);
    expect(attempts).toBe(1);
    expect(queue.numRequeues("ns/a")).toBe(1);
    await clock.advance(4); // the first retry comes after 5 ms
    await settle(clock);
    expect(attempts).toBe(1);
    await clock.advance(1);
    await settle(clock);
    expect(attempts).toBe(2);
    await clock.advance(10); // the second after 10 ms more
    await settle(clock);
    expect(attempts).toBe(3);
    expect(queue.numRequeues("ns/a")).toBe(0);
    controller.abort();
    await run;
  });

  it("a logger that throws on a failed sync neither loses the key nor kills the worker", async () => {
    const { clock, queue, controller } = setup();
    const throwingLogger: Logger = {
      debug() {},
      info() {},
      warn() {},
      error() {
        throw new Error("logger broke");
      },
      child: () => throwingLogger,
    };
    let attempts = 0;
    queue.add("ns/a");
    const run = runWorkers({
      queue,
      signal: controller.signal,
      logger: throwingLogger,
      sync: async () => {
        attempts++;
        if (attempts === 1) throw new Error("conflict");
      },
    });
    let settled = false;
    run.then(
      () => (settled = true),
      () => (settled = true),
    );
    await settle(clock);
    expect(attempts).toBe(1);
    expect(settled).toBe(false);
    await clock.advance(5); // the retry after 5 ms
    await settle(clock);
    expect(attempts).toBe(2);
    expect(queue.numRequeues("ns/a")).toBe(0);
    controller.abort();
    await expect(run).resolves.toBeUndefined();
  });

  it("drops a key after maxRetries requeues and logs it", async () => {
    const { clock, queue, controller } = setup();
    const records: LogRecord[] = [];
    let attempts = 0;
    queue.add("ns/a");
    const run = runWorkers({
      queue,
      signal: controller.signal,
      maxRetries: 2,
      logger: recordingLogger(records),
      name: "test",
      sync: async () => {
        attempts++;
        throw new Error("always");
      },
    });
    for (let i = 0; i < 20; i++) {
      await clock.advance(50);
      await settle(clock);
    }
    expect(attempts).toBe(3);
    expect(queue.numRequeues("ns/a")).toBe(0);
    expect(clock.pendingTimers()).toEqual([]);
    expect(records.map((r) => r.msg)).toEqual([
      "Reconciler error",
      "Reconciler error",
      "Dropping key out of the queue after too many retries",
    ]);
    controller.abort();
    await run;
  });

  it("runs up to `workers` syncs at once and never one key twice at once", async () => {
    const { clock, queue, controller } = setup();
    const gates = new Map<string, ReturnType<typeof deferred>>();
    let running = 0;
    let maxRunning = 0;
    const runningKeys = new Set<string>();
    let overlap = false;
    const run = runWorkers({
      queue,
      signal: controller.signal,
      workers: 3,
      sync: async (key) => {
        if (runningKeys.has(key)) overlap = true;
        runningKeys.add(key);
        running++;
        maxRunning = Math.max(maxRunning, running);
        const gate = deferred();
        gates.set(key, gate);
        await gate.promise;
        running--;
        runningKeys.delete(key);
      },
    });
    for (const key of ["a", "b", "c", "d"]) queue.add(key);
    await settle(clock);
    expect(running).toBe(3);
    queue.add("a"); // dirty while processing: handed out again only after done
    await settle(clock);
    gates.get("a")!.resolve();
    await settle(clock);
    expect(running).toBe(3);
    for (const key of ["b", "c", "d", "a"]) gates.get(key)?.resolve();
    await settle(clock);
    for (const gate of gates.values()) gate.resolve();
    await settle(clock);
    expect(maxRunning).toBe(3);
    expect(overlap).toBe(false);
    controller.abort();
    await run;
  });

  it("on abort lets the running sync finish, takes no new key and shuts the queue down", async () => {
    const { clock, queue, controller } = setup();
    const gate = deferred();
    const synced: string[] = [];
    queue.add("ns/a");
    queue.add("ns/b");
    let settled = false;
    const run = runWorkers({
      queue,
      signal: controller.signal,
      sync: async (key) => {
        synced.push(key);
        await gate.promise;
      },
    }).then(() => {
      settled = true;
    });
    await settle(clock);
    controller.abort();
    await settle(clock);
    expect(settled).toBe(false);
    expect(queue.shuttingDown()).toBe(true);
    gate.resolve();
    await run;
    expect(synced).toEqual(["ns/a"]);
  });

  it("when a worker fails, shuts the queue down and settles only after the other workers stopped", async () => {
    const { clock, queue, controller } = setup();
    const gate = deferred();
    const quiet = { debug() {}, info() {}, warn() {}, error() {} };
    const perSync: Logger = { ...quiet, child: () => perSync };
    const logger: Logger = {
      ...quiet,
      child: () => ({
        ...quiet,
        child: (bindings) => {
          if (bindings.name === "b") throw new Error("child broke");
          return perSync;
        },
      }),
    };
    queue.add("ns/a");
    queue.add("ns/b");
    let settled = false;
    const run = runWorkers({
      queue,
      signal: controller.signal,
      workers: 2,
      logger,
      sync: async () => {
        await gate.promise;
      },
    });
    run.then(
      () => (settled = true),
      () => (settled = true),
    );
    await settle(clock);
    expect(queue.shuttingDown()).toBe(true);
    expect(settled).toBe(false);
    gate.resolve();
    await expect(run).rejects.toThrow("child broke");
  });

  it("returns at once for an aborted signal", async () => {
    const { queue } = setup();
    const controller = new AbortController();
    controller.abort();
    let calls = 0;
    queue.add("a");
    await runWorkers({
      queue,
      signal: controller.signal,
      sync: async () => {
        calls++;
      },
    });
    expect(calls).toBe(0);
    expect(queue.shuttingDown()).toBe(true);
  });

  it("hands each sync a logger bound to controller, namespace, name and reconcileID", async () => {
    const { clock, queue, controller } = setup();
    const records: LogRecord[] = [];
    const contexts: SyncContext[] = [];
    queue.add("prod/web");
    queue.add("cluster-thing");
    const run = runWorkers({
      queue,
      signal: controller.signal,
      logger: recordingLogger(records),
      name: "replicaset",
      sync: async (_key, context) => {
        contexts.push(context);
        context.logger.info({}, "syncing");
      },
    });
    await settle(clock);
    expect(records.map((r) => r.bindings)).toEqual([
      { controller: "replicaset", namespace: "prod", name: "web", reconcileID: contexts[0]!.reconcileID },
      { controller: "replicaset", name: "cluster-thing", reconcileID: contexts[1]!.reconcileID },
    ]);
    expect(contexts[0]!.reconcileID).not.toBe(contexts[1]!.reconcileID);
    controller.abort();
    await run;
  });

  it.each([
    [{ workers: 0 }, "runWorkers: workers must be a positive integer, got 0"],
    [{ maxRetries: -1 }, "runWorkers: maxRetries must be a non-negative integer, got -1"],
  ])("rejects %j", async (bad, message) => {
    const { queue, controller } = setup();
    await expect(
      runWorkers({ queue, signal: controller.signal, sync: async () => {}, ...bad }),
    ).rejects.toThrow(message);
  });

  it("a result with requeueAfterMs adds the key again after that delay, with its backoff reset", async () => {
    const { clock, queue, controller } = setup();
    let attempts = 0;
    queue.add("ns/a");
    const run = runWorkers({
      queue,
      signal: controller.signal,
      sync: async () => {
        attempts++;
        if (attempts === 1) throw new Error("conflict");
        return attempts === 2 ? { requeueAfterMs: 30_000 } : undefined;
      },
    });
    await settle(clock);
    await clock.advance(5);
    await settle(clock);
    expect(attempts).toBe(2);
    expect(queue.numRequeues("ns/a")).toBe(0);
    await clock.advance(29_999);
    await settle(clock);
    expect(attempts).toBe(2);
    await clock.advance(1);
    await settle(clock);
    expect(attempts).toBe(3);
    await clock.advance(60_000);
    await settle(clock);
    expect(attempts).toBe(3);
    controller.abort();
    await run;
  });

  it("a TerminalError is logged and counted but not retried; the next add syncs the key again", async () => {
    const { clock, queue, controller } = setup();
    const records: LogRecord[] = [];
    const outcomes: [string, SyncOutcome][] = [];
    let attempts = 0;
    queue.add("ns/a");
    const run = runWorkers({
      queue,
      signal: controller.signal,
      name: "replicaset",
      logger: recordingLogger(records),
      metrics: { observeSync: (name, outcome) => outcomes.push([name, outcome]) },
      sync: async () => {
        attempts++;
        if (attempts === 1) throw new TerminalError("selector is invalid");
      },
    });
    await settle(clock);
    expect(attempts).toBe(1);
    expect(queue.numRequeues("ns/a")).toBe(0);
    await clock.advance(60_000);
    await settle(clock);
    expect(attempts).toBe(1);
    expect(
      records.filter((r) => r.level === "error").map((r) => [r.msg, (r.obj.err as Error).message]),
    ).toEqual([["Reconciler error (terminal, not retried)", "selector is invalid"]]);
    queue.add("ns/a");
    await settle(clock);
    expect(attempts).toBe(2);
    expect(outcomes).toEqual([
      ["replicaset", "terminal_error"],
      ["replicaset", "success"],
    ]);
    controller.abort();
    await run;
  });

  it("reports each sync's outcome and duration on the clock to metrics", async () => {
    const { clock, queue, controller } = setup();
    const observed: [SyncOutcome, number][] = [];
    queue.add("ns/slow");
    queue.add("ns/fail");
    queue.add("ns/later");
    const run = runWorkers({
      queue,
      signal: controller.signal,
      clock,
      metrics: { observeSync: (_name, outcome, seconds) => observed.push([outcome, seconds]) },
      sync: async (key) => {
        if (key === "ns/slow") await clock.sleep(1500);
        if (key === "ns/fail") throw new Error("boom");
        if (key === "ns/later") return { requeueAfterMs: 1000 };
        return undefined;
      },
    });
    await settle(clock);
    await clock.advance(1500);
    await settle(clock);
    expect(observed.slice(0, 3)).toEqual([
      ["success", 1.5],
      ["error", 0],
      ["requeue_after", 0],
    ]);
    controller.abort();
    await run;
  });

  it("a metrics sink that throws does not end the worker", async () => {
    const { clock, queue, controller } = setup();
    const synced: string[] = [];
    queue.add("ns/a");
    queue.add("ns/b");
    const run = runWorkers({
      queue,
      signal: controller.signal,
      metrics: {
        observeSync() {
          throw new Error("sink broke");
        },
      },
      sync: async (key) => {
        synced.push(key);
      },
    });
    await settle(clock);
    expect(synced).toEqual(["ns/a", "ns/b"]);
    controller.abort();
    await expect(run).resolves.toBeUndefined();
  });
});

describe("TerminalError", () => {
  it("wraps any error once, keeping it as cause, and is recognised across copies by its marker", () => {
    const cause = new Error("bad selector");
    const wrapped = TerminalError.wrap(cause);
    expect(wrapped.message).toBe("bad selector");
    expect(wrapped.cause).toBe(cause);
    expect(wrapped.code).toBe("controller.terminal");
    expect(TerminalError.wrap(wrapped)).toBe(wrapped);
    expect(TerminalError.isTerminal(wrapped)).toBe(true);
    expect(TerminalError.isTerminal(cause)).toBe(false);
    const foreign = Object.assign(new Error("x"), {
      [Symbol.for("reconcile.controller.terminal-error")]: true,
    });
    expect(TerminalError.isTerminal(foreign)).toBe(true);
  });
});
