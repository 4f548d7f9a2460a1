import { isConflict, leases, newServiceUnavailable } from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import type { Client } from "@reconcile/client";
import { FakeClock } from "@reconcile/clock";
import { afterEach, describe, expect, it } from "vitest";
import { LeaderElector } from "./leader-elector.js";
import { LeaseLock } from "./lease-lock.js";
import { FakeLeaseClient, InterceptingClient, type Interceptor } from "./testing/index.js";

const start = Date.UTC(2026, 10, 22, 18, 0, 0);
const namespace = "kube-system";

interface Backend {
  name: string;
  make(clock: FakeClock): { client: Client; close(): Promise<void> };
}

const backends: Backend[] = [
  {
    name: "the embedded ApiServer",
    make: (clock) => {
      const server = new ApiServer({ clock });
      return { client: server.client(), close: () => server.close() };
    },
  },
  {
    name: "the fake Lease store",
    make: (clock) => ({ client: new FakeLeaseClient({ clock }), close: async () => {} }),
  },
];

/** A participant: an elector with its own lock and an interceptable client, recording when it acts as leader. */
interface Participant {
  id: string;
  elector: LeaderElector;
  /** Set to change what this participant's requests do. */
  intercept: Interceptor;
  /** [start, end) of each leadership, on the shared clock, ms since `start`; end undefined while leading. */
  terms: { from: number; to: number | undefined }[];
  controller: AbortController;
  done: Promise<void> | undefined;
  run(): void;
}

function setup(backend: Backend) {
  const clock = new FakeClock(start);
  const { client: server, close } = backend.make(clock);
  const participants: Participant[] = [];
  const t = () => clock.now() - start;

  function join(id: string, options: { releaseOnCancel?: boolean; random?: () => number } = {}): Participant {
    const p: Participant = {
      id,
      intercept: (_, next) => next(),
      terms: [],
      controller: new AbortController(),
      done: undefined,
      elector: undefined as unknown as LeaderElector,
      run() {
        p.done = p.elector.run({ signal: p.controller.signal });
      },
    };
    const client = new InterceptingClient(server, (call, next) => p.intercept(call, next));
    p.elector = new LeaderElector({
      lock: new LeaseLock({ client, namespace, name: "controller-manager", identity: id }),
      clock,
      random: options.random ?? (() => 0),
      releaseOnCancel: options.releaseOnCancel ?? false,
      callbacks: {
        onStartedLeading: (signal) => {
          const term = { from: t(), to: undefined as number | undefined };
          p.terms.push(term);
          signal.addEventListener("abort", () => (term.to = t()));
        },
        onStoppedLeading() {},
      },
    });
    participants.push(p);
    return p;
  }

  const actingAt = (ms: number) =>
    participants.filter((p) =>
      p.terms.some((term) => term.from <= ms && (term.to === undefined || ms < term.to)),
    );

  async function stopAll() {
    for (const p of participants) p.controller.abort();
    await clock.advance(30_000);
    await Promise.all(participants.map((p) => p.done));
    await close();
  }

  return { clock, server, join, participants, t, actingAt, stopAll };
}

/** Delays every call by `ms` before it reaches the server, so concurrent attempts really overlap. */
const latency =
  (clock: FakeClock, ms: number): Interceptor =>
  async (call, next) => {
    await clock.sleep(ms, { signal: call.signal });
    return next();
  };

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanup.map((stop) => stop()));
  cleanup = [];
});

describe.each(backends)("leader election against $name", (backend) => {
  function env() {
    const e = setup(backend);
    cleanup.push(e.stopAll);
    return e;
  }

  it.each([
    2, 5,
  ])("%i candidates racing for an expired lease: exactly one wins, the others see it", async (n) => {
    const e = env();
    const old = e.join("old");
    old.run();
    await e.clock.advance(1_000);
    old.controller.abort(); // stops renewing without releasing
    await old.done;
    const candidates = Array.from({ length: n }, (_, i) => e.join(`candidate-${i}`));
    const conflicts: string[] = [];
    for (const c of candidates) {
      const delayed = latency(e.clock, 10); // all Gets land before any Update
      c.intercept = (call, next) =>
        delayed(call, next).catch((error: unknown) => {
          if (isConflict(error)) conflicts.push(c.id);
          throw error;
        });
      c.run();
    }
    await e.clock.advance(30_000);
    const winners = candidates.filter((c) => c.terms.length > 0);
    expect(winners).toHaveLength(1);
    const winner = winners[0]!;
    expect(winner.terms).toEqual([{ from: expect.any(Number), to: undefined }]);
    for (const c of candidates) expect(c.elector.getLeader()).toBe(winner.id);
    // They did race: every loser's takeover write was refused by the resourceVersion precondition.
    expect(conflicts.sort()).toEqual(candidates.filter((c) => c !== winner).map((c) => c.id));
    const lease = await e.server.resource(leases, namespace).get("controller-manager");
    expect((lease as { spec: { leaseTransitions: number; holderIdentity: string } }).spec).toMatchObject({
      holderIdentity: winner.id,
      leaseTransitions: 1,
    });
  });

  it("a leader that stops renewing loses the lease only after leaseDuration", async () => {
    const e = env();
    const a = e.join("a");
    const b = e.join("b");
    a.run();
    await e.clock.advance(100);
    b.run();
    await e.clock.advance(5_000);
    // a renews at 2 s and 4 s; it dies (no release) at 5.05 s.
    a.controller.abort();
    await a.done;
    await e.clock.advance(30_000);
    expect(a.terms).toEqual([{ from: 0, to: 5_100 }]);
    // b last saw a change at its attempt at 4.1 s (a's 4 s renewal); it takes over at its first attempt
    // after 4.1 + 15 = 19.1 s: attempts run every 2 s from 0.1 s, so at 20.1 s.
    expect(b.terms).toEqual([{ from: 20_100, to: undefined }]);
  });

  it.each([
    "fail",
    "hang",
  ] as const)("a partitioned leader whose requests %s stops leading within renewDeadline, before anyone else acquires", async (mode) => {
    const e = env();
    const a = e.join("a");
    const b = e.join("b");
    a.run();
    await e.clock.advance(500);
    b.run();
    await e.clock.advance(6_000); // a renewed at 2, 4, 6 s
    a.intercept = (call) =>
      mode === "fail"
        ? Promise.reject(newServiceUnavailable("network unreachable"))
        : new Promise((_, reject) =>
            call.signal?.addEventListener("abort", () => reject(call.signal?.reason)),
          );
    await e.clock.advance(30_000);
    // Last successful attempt began at 6 s: leadership ends at 6 + 10 = 16 s.
    expect(a.terms).toEqual([{ from: 0, to: 16_000 }]);
    expect(b.terms).toHaveLength(1);
    // b saw a's 6 s renewal at 6.5 s: it may take over from 21.5 s, and does at its attempt at 22.5 s.
    expect(b.terms[0]).toEqual({ from: 22_500, to: undefined });
    for (let ms = 0; ms < 36_000; ms += 100) expect(e.actingAt(ms).length).toBeLessThanOrEqual(1);
  });

  it("release on cancel hands the lease over within one retryPeriod", async () => {
    const e = env();
    const a = e.join("a", { releaseOnCancel: true });
    const b = e.join("b");
    a.run();
    await e.clock.advance(700);
    b.run();
    await e.clock.advance(10_000);
    a.controller.abort();
    await a.done;
    expect(a.terms).toEqual([{ from: 0, to: 10_700 }]);
    await e.clock.advance(2_000);
    // b's attempts run at 0.7 + 2k s: the one at 12.7 s takes the released lease.
    expect(b.terms).toEqual([{ from: 12_700, to: undefined }]);
    expect(b.terms[0]!.from - a.terms[0]!.to!).toBeLessThanOrEqual(2_000);
  });
});
