import {
  isConflict,
  type KubeObject,
  leases,
  newConflict,
  newInternalError,
  newNotFound,
  ReconcileError,
} from "@reconcile/api";
import { FakeClock } from "@reconcile/clock";
import { afterEach, describe, expect, it } from "vitest";
import { LeaderElectionError } from "./errors.js";
import { HealthzAdaptor } from "./healthz-adaptor.js";
import { type LeaderElectionConfig, LeaderElector, runLeaderElection } from "./leader-elector.js";
import { LeaseLock } from "./lease-lock.js";
import { formatMicroTime, type LeaderElectionRecord, rawRecord } from "./record.js";
import type { LockRecord, ResourceLock } from "./resource-lock.js";
import { FakeLeaseClient, type InterceptedCall, InterceptingClient } from "./testing/index.js";

const start = Date.UTC(2026, 10, 22, 18, 0, 0);
const leaseGroupResource = { group: "coordination.k8s.io", resource: "leases" };

type React = (call: InterceptedCall, next: () => Promise<unknown>) => Promise<unknown>;

/** One elector "baz" on a fake Lease store, with every call, event and callback written down. */
function harness(options: { identity?: string; config?: Partial<LeaderElectionConfig> } = {}) {
  const clock = new FakeClock(start);
  const store = new FakeLeaseClient({ clock });
  const calls: string[] = [];
  const log: string[] = [];
  const events: string[] = [];
  const metrics: string[] = [];
  const h = {
    clock,
    store,
    calls,
    log,
    events,
    metrics,
    /** Replace to script the API server's answers; default passes through. */
    react: ((_call, next) => next()) as React,
    leading: undefined as AbortSignal | undefined,
    elector: undefined as unknown as LeaderElector,
    /** Writes the Lease as another participant would. */
    async seed(record: LeaderElectionRecord) {
      const other = new LeaseLock({ client: store, namespace: "foo", name: "bar", identity: "seeder" });
      try {
        await other.get();
        await other.update(record);
      } catch {
        await other.create(record);
      }
    },
    lease: () => store.stored("foo", "bar")?.spec,
  };
  const client = new InterceptingClient(store, (call, next) => {
    calls.push(call.verb);
    return h.react(call, next);
  });
  const lock = new LeaseLock({
    client,
    namespace: "foo",
    name: "bar",
    identity: options.identity ?? "baz",
    eventRecorder: {
      event: (_: KubeObject, type: string, reason: string, message: string) =>
        events.push(`${type} ${reason} ${message}`),
    },
  });
  h.elector = new LeaderElector({
    lock,
    clock,
    random: () => 0,
    name: "test",
    callbacks: {
      onStartedLeading: (signal) => {
        h.leading = signal;
        log.push(`started@${clock.now() - start}`);
        signal.addEventListener("abort", () => log.push(`leading aborted@${clock.now() - start}`));
      },
      onStoppedLeading: () => log.push(`stopped@${clock.now() - start}`),
      onNewLeader: (identity) => log.push(`new leader ${JSON.stringify(identity)}`),
    },
    metricsProvider: {
      newLeaderMetric: () => ({
        on: (name) => metrics.push(`on ${name}`),
        off: (name) => metrics.push(`off ${name}`),
        slowpathExercised: (name) => metrics.push(`slowpath ${name}`),
      }),
    },
    ...options.config,
  });
  return h;
}

const held = (
  holderIdentity: string,
  leaseDurationSeconds = 10,
  leaderTransitions = 0,
): LeaderElectionRecord => ({
  holderIdentity,
  leaseDurationSeconds,
  acquireTime: formatMicroTime(start - 60_000),
  renewTime: formatMicroTime(start - 1_000),
  leaderTransitions,
});

let running: { controller: AbortController; done: Promise<unknown> }[] = [];
afterEach(async () => {
  for (const r of running) r.controller.abort();
  await Promise.allSettled(running.map((r) => r.done));
  running = [];
});

/** Starts `run` and lets the first attempt finish. */
async function startRun(h: ReturnType<typeof harness>) {
  const controller = new AbortController();
  const done = h.elector.run({ signal: controller.signal });
  done.catch(() => {});
  running.push({ controller, done });
  await h.clock.flush();
  return { controller, done };
}

describe("LeaderElector config validation", () => {
  const lock = new LeaseLock({
    client: new FakeLeaseClient(),
    namespace: "foo",
    name: "bar",
    identity: "baz",
  });
  const callbacks = { onStartedLeading() {}, onStoppedLeading() {} };
  const valid: LeaderElectionConfig = {
    lock,
    leaseDurationMs: 15_000,
    renewDeadlineMs: 2_000,
    retryPeriodMs: 1_000,
    callbacks,
  };

  it("accepts a valid config, and the defaults 15 s / 10 s / 2 s", () => {
    expect(() => new LeaderElector(valid)).not.toThrow();
    expect(() => new LeaderElector({ lock, callbacks })).not.toThrow();
  });

  it.each<[string, Partial<LeaderElectionConfig>, string]>([
    [
      "lease equal to renew deadline",
      { leaseDurationMs: 2_000 },
      "leaseDuration must be greater than renewDeadline",
    ],
    [
      "lease and renew deadline both wrong and retry too long",
      { leaseDurationMs: 1_000, retryPeriodMs: 5_000 },
      "leaseDuration must be greater than renewDeadline",
    ],
    [
      "renew deadline within retryPeriod × 1.2",
      { renewDeadlineMs: 1_200 },
      "renewDeadline must be greater than retryPeriod*JitterFactor",
    ],
    [
      "zero retry period",
      { leaseDurationMs: 2_000, renewDeadlineMs: 1_000, retryPeriodMs: 0 },
      "retryPeriod must be greater than zero",
    ],
    [
      "negative everything",
      { leaseDurationMs: -1_000, renewDeadlineMs: -2_000, retryPeriodMs: -3_000 },
      "leaseDuration must be greater than zero",
    ],
    [
      "missing onStartedLeading",
      { callbacks: { onStoppedLeading() {} } as never },
      "OnStartedLeading callback must not be nil",
    ],
    [
      "missing onStoppedLeading",
      { callbacks: { onStartedLeading() {} } as never },
      "OnStoppedLeading callback must not be nil",
    ],
    ["missing callbacks", { callbacks: undefined as never }, "OnStartedLeading callback must not be nil"],
    ["missing lock", { lock: undefined as never }, "Lock must not be nil."],
    [
      "empty identity",
      { lock: new LeaseLock({ client: new FakeLeaseClient(), namespace: "foo", name: "bar", identity: "" }) },
      "Lock identity is empty",
    ],
    [
      "a lease duration that is not whole seconds",
      { leaseDurationMs: 2_500 },
      "leaseDuration must be a whole number of seconds (the Lease stores leaseDurationSeconds), got 2500ms",
    ],
    ["NaN", { retryPeriodMs: Number.NaN }, "retryPeriodMs must be a number of milliseconds, got NaN"],
    [
      "a string",
      { leaseDurationMs: "15s" as never },
      "leaseDurationMs must be a number of milliseconds, got 15s",
    ],
  ])("rejects %s with client-go's message", (_, change, message) => {
    let thrown: unknown;
    try {
      new LeaderElector({ ...valid, ...change });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(LeaderElectionError);
    expect((thrown as LeaderElectionError).message).toBe(message);
    expect((thrown as LeaderElectionError).code).toBe("leader-election.invalid-config");
    expect((thrown as LeaderElectionError).legacyCode).toBe("leaderelection.invalid-config");
    expect(LeaderElectionError.isInstance(thrown)).toBe(true);
    expect(LeaderElectionError.isInstance(new ReconcileError("informer.fifo-closed", "not this one"))).toBe(
      false,
    );
  });

  it("runLeaderElection rejects an invalid config without calling any callback", async () => {
    const stopped: string[] = [];
    await expect(
      runLeaderElection({
        ...valid,
        leaseDurationMs: 1_000,
        callbacks: { ...callbacks, onStoppedLeading: () => stopped.push("x") },
      }),
    ).rejects.toThrow("leaseDuration must be greater than renewDeadline");
    expect(stopped).toEqual([]);
  });
});

describe("tryAcquireOrRenew", () => {
  it("acquires when there is no lock object: get, create; holder baz, no transition", async () => {
    const h = harness();
    expect(await h.elector.tryAcquireOrRenew()).toBe(true);
    expect(h.calls).toEqual(["get", "create"]);
    expect(h.lease()).toEqual({
      holderIdentity: "baz",
      leaseDurationSeconds: 15,
      acquireTime: formatMicroTime(start),
      renewTime: formatMicroTime(start),
      leaseTransitions: 0,
    });
    expect(h.elector.isLeader()).toBe(true);
    expect(h.elector.getLeader()).toBe("baz");
  });

  it("acquires an object without a spec at once, counting a transition", async () => {
    const h = harness();
    await h.store.resource(leases, "foo").create({ metadata: { name: "bar" } });
    expect(await h.elector.tryAcquireOrRenew()).toBe(true);
    expect(h.calls).toEqual(["get", "update"]);
    expect(h.lease()?.leaseTransitions).toBe(1);
    expect(h.lease()?.holderIdentity).toBe("baz");
  });

  it("acquires a released (empty holder) lease at once, counting a transition", async () => {
    const h = harness();
    await h.seed({ ...held(""), leaseDurationSeconds: 1, leaderTransitions: 4 });
    expect(await h.elector.tryAcquireOrRenew()).toBe(true);
    expect(h.calls).toEqual(["get", "update"]);
    expect(h.lease()).toMatchObject({ holderIdentity: "baz", leaseTransitions: 5, leaseDurationSeconds: 15 });
  });

  it("leaves a lease held by another alone until its leaseDurationSeconds have passed on our clock", async () => {
    const h = harness();
    await h.seed(held("bing", 3, 2));
    expect(await h.elector.tryAcquireOrRenew()).toBe(false);
    expect(h.elector.getLeader()).toBe("bing");
    expect(h.elector.isLeader()).toBe(false);
    await h.clock.advance(2_999);
    expect(await h.elector.tryAcquireOrRenew()).toBe(false);
    await h.clock.advance(1);
    expect(await h.elector.tryAcquireOrRenew()).toBe(true);
    expect(h.calls).toEqual(["get", "get", "get", "update"]);
    expect(h.lease()).toMatchObject({ holderIdentity: "baz", leaseTransitions: 3 });
    // A takeover starts a new term: acquireTime is ours.
    expect(h.lease()?.acquireTime).toBe(formatMicroTime(start + 3_000));
  });

  it("ignores the timestamps in the record: an old renewTime does not make the lease expired", async () => {
    const h = harness();
    await h.seed({ ...held("bing", 10), renewTime: formatMicroTime(start - 3_600_000) });
    expect(await h.elector.tryAcquireOrRenew()).toBe(false);
  });

  it("restarts the wait whenever the record changes", async () => {
    const h = harness();
    await h.seed(held("bing", 10));
    expect(await h.elector.tryAcquireOrRenew()).toBe(false);
    await h.clock.advance(5_000);
    await h.seed({ ...held("bing", 10), renewTime: formatMicroTime(h.clock.now()) });
    expect(await h.elector.tryAcquireOrRenew()).toBe(false);
    await h.clock.advance(9_999);
    expect(await h.elector.tryAcquireOrRenew()).toBe(false);
    await h.clock.advance(1);
    expect(await h.elector.tryAcquireOrRenew()).toBe(true);
  });

  it("renews a lease that already names us (a restart with the same identity), keeping acquireTime and transitions", async () => {
    const h = harness();
    await h.seed(held("baz", 10, 7));
    expect(await h.elector.tryAcquireOrRenew()).toBe(true);
    expect(h.calls).toEqual(["get", "update"]);
    expect(h.lease()).toEqual({
      holderIdentity: "baz",
      leaseDurationSeconds: 15,
      acquireTime: held("baz").acquireTime,
      renewTime: formatMicroTime(start),
      leaseTransitions: 7,
    });
    expect(h.metrics).toEqual(["off test", "slowpath test"]);
  });

  it("renews on the fast path (a single update) while its lease is valid, keeping acquireTime", async () => {
    const h = harness();
    await h.elector.tryAcquireOrRenew();
    await h.clock.advance(2_000);
    expect(await h.elector.tryAcquireOrRenew()).toBe(true);
    expect(h.calls).toEqual(["get", "create", "update"]);
    expect(h.lease()).toMatchObject({
      acquireTime: formatMicroTime(start),
      renewTime: formatMicroTime(start + 2_000),
      leaseTransitions: 0,
    });
  });

  it("falls back to get and update when the fast-path update conflicts", async () => {
    const h = harness();
    await h.elector.tryAcquireOrRenew();
    let updates = 0;
    h.react = (call, next) =>
      call.verb === "update" && ++updates === 1
        ? Promise.reject(newConflict(leaseGroupResource, "bar"))
        : next();
    expect(await h.elector.tryAcquireOrRenew()).toBe(true);
    expect(h.calls).toEqual(["get", "create", "update", "get", "update"]);
    expect(h.metrics).toEqual(["off test", "slowpath test"]);
  });

  it("loses a race for an expired lease when the update conflicts, and reports the winner later", async () => {
    const h = harness();
    await h.seed(held("bing", 1));
    await h.elector.tryAcquireOrRenew();
    await h.clock.advance(1_000);
    h.react = async (call, next) => {
      if (call.verb === "update") {
        await h.seed(held("winner", 10, 1));
        throw newConflict(leaseGroupResource, "bar");
      }
      return next();
    };
    expect(await h.elector.tryAcquireOrRenew()).toBe(false);
    h.react = (_, next) => next();
    expect(await h.elector.tryAcquireOrRenew()).toBe(false);
    expect(h.elector.getLeader()).toBe("winner");
  });

  it("fails without writing when get fails with anything but NotFound", async () => {
    const h = harness();
    h.react = () => Promise.reject(newInternalError("etcd down"));
    expect(await h.elector.tryAcquireOrRenew()).toBe(false);
    expect(h.calls).toEqual(["get"]);
  });

  it("counts one leaderTransition per change of holder and none for renewals", async () => {
    const a = harness({ identity: "a" });
    expect(await a.elector.tryAcquireOrRenew()).toBe(true);
    await a.clock.advance(1_000);
    expect(await a.elector.tryAcquireOrRenew()).toBe(true);
    expect(a.lease()?.leaseTransitions).toBe(0);
    const b = new LeaderElector({
      lock: new LeaseLock({ client: a.store, namespace: "foo", name: "bar", identity: "b" }),
      clock: a.clock,
      callbacks: { onStartedLeading() {}, onStoppedLeading() {} },
    });
    expect(await b.tryAcquireOrRenew()).toBe(false);
    await a.clock.advance(15_000);
    expect(await b.tryAcquireOrRenew()).toBe(true);
    expect(a.lease()).toMatchObject({ holderIdentity: "b", leaseTransitions: 1 });
    expect(await a.elector.tryAcquireOrRenew()).toBe(false);
    await a.clock.advance(15_000);
    expect(await a.elector.tryAcquireOrRenew()).toBe(true);
    expect(a.lease()).toMatchObject({ holderIdentity: "a", leaseTransitions: 2 });
  });
});

describe("LeaderElector.run", () => {
  it("acquires, then renews on the fast path: get, create, update, update", async () => {
    const h = harness({ config: { leaseDurationMs: 15_000, renewDeadlineMs: 2_000, retryPeriodMs: 1_000 } });
    const { controller, done } = await startRun(h);
    await h.clock.advance(2_000);
    controller.abort();
    await done;
    expect(h.calls).toEqual(["get", "create", "update", "update"]);
    expect(h.clock.pendingTimers()).toEqual([]);
  });

  it("falls back to the slow path after a fast-path conflict: get, create, update, update, get, update, update", async () => {
    const h = harness({ config: { leaseDurationMs: 15_000, renewDeadlineMs: 2_000, retryPeriodMs: 1_000 } });
    let updates = 0;
    h.react = (call, next) =>
      call.verb === "update" && ++updates === 2
        ? Promise.reject(newConflict(leaseGroupResource, "bar"))
        : next();
    const { controller, done } = await startRun(h);
    await h.clock.advance(3_000);
    controller.abort();
    await done;
    expect(h.calls).toEqual(["get", "create", "update", "update", "get", "update", "update"]);
  });

  it("records 'became leader' then 'stopped leading', reports the new leader, and calls back in order", async () => {
    const h = harness();
    const { controller, done } = await startRun(h);
    await h.clock.advance(5_000);
    controller.abort();
    await done;
    expect(h.events).toEqual([
      "Normal LeaderElection baz became leader",
      "Normal LeaderElection baz stopped leading",
    ]);
    expect(h.log).toEqual(['new leader "baz"', "started@0", "leading aborted@5000", "stopped@5000"]);
    expect(h.metrics).toEqual(["off test", "on test", "off test"]);
  });

  it("calls onStoppedLeading exactly once even if it never led, and records no event", async () => {
    const h = harness();
    await h.seed(held("bing", 15));
    const { controller, done } = await startRun(h);
    await h.clock.advance(5_000);
    controller.abort();
    await done;
    expect(h.log).toEqual(['new leader "bing"', "stopped@5000"]);
    expect(h.events).toEqual([]);
    expect(h.clock.pendingTimers()).toEqual([]);
  });

  it("settles at once, calling onStoppedLeading, when started with an aborted signal", async () => {
    const h = harness();
    await h.elector.run(AbortSignal.abort());
    expect(h.log).toEqual(["stopped@0"]);
    expect(h.calls).toEqual([]);
  });

  it("retries acquisition every retryPeriod × (1 + random × 1.2)", async () => {
    const h = harness({ config: { random: () => 0.5 } });
    await h.seed(held("bing", 15));
    const attempts: number[] = [];
    h.react = (call, next) => {
      if (call.verb === "get") attempts.push(h.clock.now() - start);
      return next();
    };
    await startRun(h);
    await h.clock.advance(10_000);
    expect(attempts).toEqual([0, 3_200, 6_400, 9_600]);
  });

  it("takes over when the other holder stops renewing: leaseDuration after it last saw a change", async () => {
    const h = harness();
    await h.seed(held("bing", 15));
    await startRun(h);
    await h.clock.advance(14_999);
    expect(h.log).toEqual(['new leader "bing"']);
    // Attempts at 0, 2, 4, ... (random 0): the first one after 15 s is at 16 s.
    await h.clock.advance(1_001);
    expect(h.log).toEqual(['new leader "bing"', 'new leader "baz"', "started@16000"]);
    expect(h.lease()).toMatchObject({ holderIdentity: "baz", leaseTransitions: 1 });
  });

  it("a partitioned leader (every request fails) stops leading renewDeadline after its last successful attempt began", async () => {
    const h = harness();
    await startRun(h);
    await h.clock.advance(4_000); // renewed at 2 s and 4 s
    h.react = () => Promise.reject(newInternalError("connection refused"));
    await h.clock.advance(9_999);
    expect(h.leading?.aborted).toBe(false);
    await h.clock.advance(1);
    expect(h.leading?.aborted).toBe(true);
    expect(h.log).toEqual(['new leader "baz"', "started@0", "leading aborted@14000", "stopped@14000"]);
    expect(h.events.at(-1)).toBe("Normal LeaderElection baz stopped leading");
    expect(h.metrics.at(-1)).toBe("off test");
    // Not released: the record still names us, so isLeader() stays true and the health check can see it.
    expect(h.lease()?.holderIdentity).toBe("baz");
    expect(h.elector.isLeader()).toBe(true);
  });

  it("a leader whose requests hang abandons each after renewDeadline/2 and stops at the deadline all the same", async () => {
    const h = harness();
    const { done } = await startRun(h);
    await h.clock.advance(2_000);
    const abandoned: number[] = [];
    h.react = (call) =>
      new Promise((_, reject) =>
        call.signal?.addEventListener("abort", () => {
          abandoned.push(h.clock.now() - start);
          reject(call.signal?.reason);
        }),
      );
    await h.clock.advance(10_000);
    // Renew at 4 s: update hangs until 9 s, get until 14 s? No: the deadline (2 s + 10 s) cuts it at 12 s.
    expect(abandoned).toEqual([9_000, 12_000]);
    expect(h.log).toContain("leading aborted@12000");
    await done;
    expect(h.clock.pendingTimers()).toEqual([]);
  });

  it("a leader that finds someone else in the record stops leading at once", async () => {
    const h = harness();
    await startRun(h);
    await h.clock.advance(2_000);
    await h.seed(held("usurper", 15, 1));
    await h.clock.advance(2_000);
    expect(h.log).toEqual([
      'new leader "baz"',
      "started@0",
      "leading aborted@4000",
      'new leader "usurper"',
      "stopped@4000",
    ]);
    expect(h.calls).toEqual(["get", "create", "update", "update", "get"]);
  });

  it("releases on cancel: holder '', leaseDurationSeconds 1, transitions kept, and reports the empty leader", async () => {
    const h = harness({ config: { releaseOnCancel: true } });
    const { controller, done } = await startRun(h);
    await h.clock.advance(3_000);
    controller.abort();
    await done;
    expect(h.lease()).toEqual({
      holderIdentity: "",
      leaseDurationSeconds: 1,
      acquireTime: formatMicroTime(start + 3_000),
      renewTime: formatMicroTime(start + 3_000),
      leaseTransitions: 0,
    });
    expect(h.calls).toEqual(["get", "create", "update", "get", "update"]);
    await h.clock.flush();
    expect(h.log).toEqual([
      'new leader "baz"',
      "started@0",
      "leading aborted@3000",
      'new leader ""',
      "stopped@3000",
    ]);
    expect(h.elector.isLeader()).toBe(false);
    expect(h.clock.pendingTimers()).toEqual([]);
  });

  it("release retries after a conflict from an in-flight renew landing", async () => {
    const h = harness({ config: { releaseOnCancel: true } });
    const { controller, done } = await startRun(h);
    await h.clock.advance(2_000);
    let releaseUpdates = 0;
    h.react = (call, next) => {
      if (call.verb === "update" && controller.signal.aborted && ++releaseUpdates === 1) {
        return Promise.reject(newConflict(leaseGroupResource, "bar"));
      }
      return next();
    };
    controller.abort();
    await done;
    expect(h.calls).toEqual(["get", "create", "update", "get", "update", "get", "update"]);
    expect(h.lease()?.holderIdentity).toBe("");
  });

  it("cancelling during an in-flight renew aborts that request, then releases", async () => {
    const h = harness({ config: { releaseOnCancel: true } });
    const { controller, done } = await startRun(h);
    let aborted = 0;
    h.react = (call, next) => {
      if (call.verb === "update" && aborted === 0) {
        return new Promise((_, reject) =>
          call.signal?.addEventListener("abort", () => {
            aborted++;
            reject(call.signal?.reason);
          }),
        );
      }
      return next();
    };
    await h.clock.advance(2_500); // the renew at 2 s hangs
    controller.abort();
    await done;
    expect(aborted).toBe(1);
    expect(h.calls).toEqual(["get", "create", "update", "get", "update"]);
    expect(h.lease()).toMatchObject({ holderIdentity: "", leaseDurationSeconds: 1 });
    expect(h.events).toEqual([
      "Normal LeaderElection baz became leader",
      "Normal LeaderElection baz stopped leading",
    ]);
  });

  it("keeps electing when the event recorder throws", async () => {
    const h = harness();
    const errors: string[] = [];
    h.elector = new LeaderElector({
      lock: new LeaseLock({
        client: h.store,
        namespace: "foo",
        name: "bar",
        identity: "baz",
        eventRecorder: {
          event() {
            throw new Error("recorder broken");
          },
        },
      }),
      clock: h.clock,
      logger: { info() {}, error: (_, msg) => errors.push(msg ?? "") },
      callbacks: {
        onStartedLeading: () => void h.log.push("started"),
        onStoppedLeading: () => h.log.push("stopped"),
      },
    });
    const { controller, done } = await startRun(h);
    await h.clock.advance(4_000);
    controller.abort();
    await done;
    expect(h.log).toEqual(["started", "stopped"]);
    expect(errors).toEqual(["Failed to record event", "Failed to record event"]);
  });

  it("release gives up after repeated conflicts instead of spinning", async () => {
    const h = harness({ config: { releaseOnCancel: true } });
    const { controller, done } = await startRun(h);
    h.react = (call, next) =>
      call.verb === "update" ? Promise.reject(newConflict(leaseGroupResource, "bar")) : next();
    controller.abort();
    await done;
    expect(h.calls.filter((verb) => verb === "update")).toHaveLength(6);
    expect(h.lease()?.holderIdentity).toBe("baz");
  });

  it("does not release a lease someone else now holds", async () => {
    const h = harness({ config: { releaseOnCancel: true } });
    const { controller, done } = await startRun(h);
    await h.seed(held("other", 15, 1));
    controller.abort();
    await done;
    expect(h.lease()?.holderIdentity).toBe("other");
    expect(h.calls).toEqual(["get", "create", "get"]);
  });

  it("without releaseOnCancel, cancelling writes nothing", async () => {
    const h = harness();
    const { controller, done } = await startRun(h);
    controller.abort();
    await done;
    expect(h.calls).toEqual(["get", "create"]);
    expect(h.lease()?.holderIdentity).toBe("baz");
  });

  it("releases only after the work started by onStartedLeading has settled, and run waits for it", async () => {
    const h = harness({ config: { releaseOnCancel: true } });
    let finishWork!: () => void;
    const order: string[] = [];
    h.elector = new LeaderElector({
      lock: new LeaseLock({ client: h.store, namespace: "foo", name: "bar", identity: "baz" }),
      clock: h.clock,
      releaseOnCancel: true,
      callbacks: {
        onStartedLeading: (signal) =>
          new Promise<void>((resolve) => {
            finishWork = () => {
              order.push(`work done, signal aborted: ${signal.aborted}`);
              resolve();
            };
          }),
        onStoppedLeading: () => order.push(`stopped, holder ${JSON.stringify(h.lease()?.holderIdentity)}`),
      },
    });
    const { controller, done } = await startRun(h);
    let settled = false;
    void done.then(() => (settled = true));
    controller.abort();
    await h.clock.advance(60_000);
    expect(h.lease()?.holderIdentity).toBe("baz");
    expect(settled).toBe(false);
    finishWork();
    await done;
    expect(order).toEqual(["work done, signal aborted: true", 'stopped, holder ""']);
  });

  it("when onStartedLeading rejects, leadership ends (released if asked) and run rejects with that error", async () => {
    const h = harness();
    const boom = new Error("controllers crashed");
    h.elector = new LeaderElector({
      lock: new LeaseLock({ client: h.store, namespace: "foo", name: "bar", identity: "baz" }),
      clock: h.clock,
      releaseOnCancel: true,
      callbacks: {
        onStartedLeading: async () => {
          await h.clock.sleep(3_000);
          throw boom;
        },
        onStoppedLeading: () => h.log.push("stopped"),
      },
    });
    const { done } = await startRun(h);
    await h.clock.advance(3_000);
    await expect(done).rejects.toBe(boom);
    expect(h.log).toEqual(["stopped"]);
    expect(h.lease()?.holderIdentity).toBe("");
    expect(h.clock.pendingTimers()).toEqual([]);
  });

  it("run rejects with the error thrown by onStoppedLeading, after everything stopped", async () => {
    const h = harness();
    const boom = new Error("exit");
    h.elector = new LeaderElector({
      lock: new LeaseLock({ client: h.store, namespace: "foo", name: "bar", identity: "baz" }),
      clock: h.clock,
      callbacks: {
        onStartedLeading() {},
        onStoppedLeading() {
          throw boom;
        },
      },
    });
    const { controller, done } = await startRun(h);
    controller.abort();
    await expect(done).rejects.toBe(boom);
    expect(h.clock.pendingTimers()).toEqual([]);
  });

  it("refuses a second concurrent run", async () => {
    const h = harness();
    await startRun(h);
    await expect(h.elector.run()).rejects.toSatisfy(
      (e: unknown) => LeaderElectionError.isInstance(e) && e.code === "leader-election.already-running",
    );
  });

  it("can run again after a run has settled", async () => {
    const h = harness();
    const first = await startRun(h);
    first.controller.abort();
    await first.done;
    await h.clock.advance(1_000);
    await startRun(h);
    expect(h.log.filter((entry) => entry.startsWith("started"))).toEqual(["started@0", "started@1000"]);
  });
});

describe("any ResourceLock", () => {
  /** A lock kept in memory, no Lease behind it: the elector needs nothing more than the interface. */
  class MemoryLock implements ResourceLock {
    readonly ops: string[] = [];
    #stored: { record: LeaderElectionRecord; version: number } | undefined;
    #seen = -1;
    readonly events: string[] = [];

    async get(): Promise<LockRecord> {
      this.ops.push("get");
      if (this.#stored === undefined) throw newNotFound(leaseGroupResource, "memory");
      this.#seen = this.#stored.version;
      return { record: { ...this.#stored.record }, raw: rawRecord(this.#stored.record) };
    }
    async create(record: LeaderElectionRecord): Promise<void> {
      this.ops.push("create");
      this.#stored = { record: { ...record }, version: 0 };
      this.#seen = 0;
    }
    async update(record: LeaderElectionRecord): Promise<void> {
      this.ops.push("update");
      if (this.#stored === undefined || this.#stored.version !== this.#seen) {
        throw newConflict(leaseGroupResource, "memory");
      }
      this.#stored = { record: { ...record }, version: this.#stored.version + 1 };
      this.#seen = this.#stored.version;
    }
    recordEvent(message: string): void {
      this.events.push(`me ${message}`);
    }
    identity(): string {
      return "me";
    }
    describe(): string {
      return "memory";
    }
  }

  it("elects on a hand-written lock with the same call sequence: get, create, then fast-path updates", async () => {
    const clock = new FakeClock(start);
    const lock = new MemoryLock();
    const controller = new AbortController();
    const elector = new LeaderElector({
      lock,
      clock,
      callbacks: { onStartedLeading() {}, onStoppedLeading() {} },
    });
    const done = elector.run({ signal: controller.signal });
    await clock.advance(4_000);
    controller.abort();
    await done;
    expect(lock.ops).toEqual(["get", "create", "update", "update"]);
    expect(lock.events).toEqual(["me became leader", "me stopped leading"]);
  });
});

describe("LeaderElector.check and HealthzAdaptor", () => {
  it("is healthy while not leader, and while the leader renews", async () => {
    const h = harness();
    expect(h.elector.check(0)).toBeUndefined();
    await startRun(h);
    await h.clock.advance(60_000);
    expect(h.elector.check(0)).toBeUndefined();
  });

  it("reports a leader that has not renewed for longer than leaseDuration + the tolerance", async () => {
    const h = harness({ config: { name: "kube-controller-manager" } });
    await startRun(h);
    await h.clock.advance(2_000); // last renewal observed at 2 s
    h.react = () => Promise.reject(newInternalError("down"));
    await h.clock.advance(15_000 + 20_000);
    expect(h.elector.check(20_000)).toBeUndefined();
    await h.clock.advance(1);
    expect(h.elector.check(20_000)?.message).toBe(
      "failed election to renew leadership on lease kube-controller-manager",
    );
  });

  it("the adaptor is healthy until tied to an elector, then checks it with its timeout", async () => {
    const adaptor = new HealthzAdaptor({ timeoutMs: 1_000 });
    expect(adaptor.name).toBe("leaderElection");
    expect(adaptor.check()).toBeUndefined();
    const h = harness({ config: { watchDog: adaptor } });
    await startRun(h);
    h.react = () => Promise.reject(newInternalError("down"));
    await h.clock.advance(16_001);
    expect(adaptor.check()?.code).toBe("leader-election.renew-overdue");
  });

  it("the adaptor rejects a negative timeout", () => {
    expect(() => new HealthzAdaptor({ timeoutMs: -1 })).toThrow(
      "HealthzAdaptor: timeoutMs must be a non-negative number, got -1",
    );
  });
});

describe("isConflict on the fake", () => {
  it("the fake answers a stale update with a Conflict error", async () => {
    const h = harness();
    await h.elector.tryAcquireOrRenew();
    const stale = h.store.stored("foo", "bar")!;
    await h.seed(held("x"));
    await expect(h.store.resource(leases, "foo").update(stale)).rejects.toSatisfy(isConflict);
  });
});

describe("LeaderElector onNewLeader failures", () => {
  it("logs an onNewLeader that throws or rejects, and keeps leading", async () => {
    const errors: string[] = [];
    const logger = {
      info() {},
      error: (obj: Record<string, unknown>, msg: string) =>
        errors.push(`${msg}: ${(obj.err as Error).message}`),
    };
    const throwing = harness({
      config: {
        logger,
        callbacks: {
          onStartedLeading() {},
          onStoppedLeading() {},
          onNewLeader: () => {
            throw new Error("sync boom");
          },
        },
      },
    });
    const rejecting = harness({
      config: {
        logger,
        callbacks: {
          onStartedLeading() {},
          onStoppedLeading() {},
          onNewLeader: (async () => {
            throw new Error("async boom");
          }) as () => void,
        },
      },
    });
    await startRun(throwing);
    await startRun(rejecting);
    expect(errors).toEqual(["onNewLeader failed: sync boom", "onNewLeader failed: async boom"]);
    expect(throwing.elector.isLeader()).toBe(true);
    expect(rejecting.elector.isLeader()).toBe(true);
  });
});

describe("LeaderElector failures while leading", () => {
  it("aborts the leading signal before rejecting when renewing throws (a broken metrics provider)", async () => {
    const h = harness({
      config: {
        metricsProvider: {
          newLeaderMetric: () => ({
            on() {},
            off() {},
            slowpathExercised() {
              throw new Error("metrics broke");
            },
          }),
        },
      },
    });
    const { done } = await startRun(h);
    expect(h.log).toEqual(['new leader "baz"', "started@0"]);
    let updates = 0;
    h.react = (call, next) =>
      call.verb === "update" && ++updates === 1
        ? Promise.reject(newConflict(leaseGroupResource, "bar"))
        : next();
    await h.clock.advance(2_000); // the renewal: fast path conflicts, the slow path throws
    await expect(done).rejects.toThrow("metrics broke");
    expect(h.leading?.aborted).toBe(true);
    expect(h.log).toEqual(['new leader "baz"', "started@0", "leading aborted@2000", "stopped@2000"]);
  });
});
