import { newConflict, newInternalError, newServiceUnavailable } from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import type { Client } from "@reconcile/client";
import { FakeClock } from "@reconcile/clock";
import { describe, expect, it } from "vitest";
import { LeaderElector } from "./leader-elector.js";
import { LeaseLock } from "./lease-lock.js";
import { FakeLeaseClient, InterceptingClient, SkewedClock } from "./testing/index.js";

/**
 * Randomized simulation: several participants, each a succession of
 * processes (new identity per restart) that start, run for a while and stop
 * (releasing or not), on clocks that disagree by up to an hour, over a
 * client that fails, delays, answers late, refuses writes with conflicts,
 * holds writes in flight past the client's timeout, and is cut off for
 * stretches. The property: at no instant do two participants act as leader
 * (hold an unaborted leading signal).
 */

const start = Date.UTC(2026, 10, 22, 18, 0, 0);
const leaseGroupResource = { group: "coordination.k8s.io", resource: "leases" };

interface Timing {
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  maxLatencyMs: number;
}

const timings: Timing[] = [
  { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000, maxLatencyMs: 3_000 },
  { leaseDurationMs: 2_000, renewDeadlineMs: 1_500, retryPeriodMs: 500, maxLatencyMs: 400 },
];

interface Outcome {
  violations: string[];
  leaderships: number;
}

/** mulberry32: a small deterministic PRNG. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function simulate(
  seed: number,
  options: {
    makeServer: (clock: FakeClock) => { client: Client; close(): Promise<void> };
    separateLeases?: boolean;
  },
): Promise<Outcome> {
  const random = prng(seed);
  const timing = timings[seed % timings.length]!;
  const { leaseDurationMs: lease, maxLatencyMs } = timing;
  const clock = new FakeClock(start);
  const { client: server, close } = options.makeServer(clock);
  const slots = 2 + Math.floor(random() * 5);
  const durationMs = 25 * lease;
  const stopping = new AbortController();
  const acting = new Set<string>();
  const outcome: Outcome = { violations: [], leaderships: 0 };
  const t = () => clock.now() - start;

  /** Partition windows per slot: requests fail or hang while one is open. */
  const partitions = Array.from({ length: slots }, () => ({ until: 0, hang: false }));
  for (let slot = 0; slot < slots; slot++) {
    for (let k = 0; k < 4; k++) {
      clock.setTimeout(() => {
        partitions[slot] = { until: clock.now() + random() * 2 * lease, hang: random() < 0.5 };
      }, random() * durationMs);
    }
  }

  const sleep = (ms: number, signal?: AbortSignal) => clock.sleep(ms, { signal });

  async function runSlot(slot: number) {
    for (let generation = 0; !stopping.signal.aborted; generation++) {
      await sleep(random() * lease).catch(() => {});
      if (stopping.signal.aborted) return;
      const id = `p${slot}.${generation}`;
      const client = new InterceptingClient(server, async (call, next) => {
        const partition = partitions[slot]!;
        if (clock.now() < partition.until) {
          if (!partition.hang) throw newServiceUnavailable("network unreachable");
          return new Promise((_, reject) =>
            call.signal?.addEventListener("abort", () => reject(call.signal?.reason), { once: true }),
          );
        }
        const roll = random();
        if (roll < 0.05) throw newInternalError("etcdserver: request timed out");
        if (roll < 0.1 && call.verb === "update") throw newConflict(leaseGroupResource, call.name);
        if (roll < 0.13) {
          // Stuck in flight: lands long after the client gave up on it.
          await sleep(random() * 2 * lease);
          return next();
        }
        await sleep(random() * maxLatencyMs * 0.5, call.signal);
        const answer = await next();
        if (random() < 0.05) throw newServiceUnavailable("connection reset after the write landed");
        await sleep(random() * maxLatencyMs * 0.5, call.signal);
        return answer;
      });
      const controller = new AbortController();
      const onStop = () => controller.abort();
      stopping.signal.addEventListener("abort", onStop, { once: true });
      const lifetime = clock.setTimeout(() => controller.abort(), random() * 8 * lease);
      const elector = new LeaderElector({
        lock: new LeaseLock({
          client,
          namespace: "kube-system",
          name: options.separateLeases ? `lease-${slot}` : "controller-manager",
          identity: id,
        }),
        clock: new SkewedClock(clock, (random() - 0.5) * 3_600_000),
        random,
        leaseDurationMs: timing.leaseDurationMs,
        renewDeadlineMs: timing.renewDeadlineMs,
        // Participants may differ in how eagerly they poll: eager candidates attempt right at expiry.
        retryPeriodMs: random() < 0.5 ? timing.retryPeriodMs : timing.retryPeriodMs / 5,
        releaseOnCancel: random() < 0.5,
        callbacks: {
          onStartedLeading: (signal) => {
            if (acting.size > 0) outcome.violations.push(`${t()}ms: ${id} started while ${[...acting]} lead`);
            acting.add(id);
            outcome.leaderships++;
            // Often cut the new leader off soon, so that takeovers race its renew deadline.
            if (random() < 0.6) {
              clock.setTimeout(
                () => {
                  partitions[slot] = {
                    until: clock.now() + lease * (0.5 + random() * 2),
                    hang: random() < 0.5,
                  };
                },
                random() * 2 * lease,
              );
            }
            signal.addEventListener(
              "abort",
              () => {
                acting.delete(id);
              },
              { once: true },
            );
          },
          onStoppedLeading() {},
        },
      });
      await elector.run({ signal: controller.signal });
      clock.clearTimeout(lifetime);
      stopping.signal.removeEventListener("abort", onStop);
    }
  }

  const loops = Array.from({ length: slots }, (_, slot) => runSlot(slot));
  await clock.advance(durationMs);
  stopping.abort();
  await clock.advance(4 * lease);
  await Promise.all(loops);
  await close();
  return outcome;
}

const fakeStore = (clock: FakeClock) => ({ client: new FakeLeaseClient({ clock }), close: async () => {} });
const embeddedServer = (clock: FakeClock) => {
  const server = new ApiServer({ clock });
  return { client: server.client(), close: () => server.close() };
};

const seeds = Array.from({ length: 50 }, (_, i) => i + 1);

const apiServerSeeds = Array.from({ length: 30 }, (_, i) => 1000 + i);

describe("randomized simulation", () => {
  it(`never has two participants acting as leader at once (${seeds.length} seeds, the fake Lease store)`, async () => {
    let leaderships = 0;
    for (const seed of seeds) {
      const outcome = await simulate(seed, { makeServer: fakeStore });
      expect(outcome.violations, `seed ${seed}`).toEqual([]);
      expect(outcome.leaderships, `seed ${seed}: someone led`).toBeGreaterThan(0);
      leaderships += outcome.leaderships;
    }
    // Leadership changed hands many times: the property was exercised, not vacuous.
    expect(leaderships).toBeGreaterThan(seeds.length * 3);
  });

  it(`never has two participants acting as leader at once (${apiServerSeeds.length} seeds, the embedded ApiServer)`, async () => {
    let leaderships = 0;
    for (const seed of apiServerSeeds) {
      const outcome = await simulate(seed, { makeServer: embeddedServer });
      expect(outcome.violations, `seed ${seed}`).toEqual([]);
      expect(outcome.leaderships, `seed ${seed}: someone led`).toBeGreaterThan(0);
      leaderships += outcome.leaderships;
    }
    expect(leaderships).toBeGreaterThan(apiServerSeeds.length * 3);
  });

  it("the overlap detector does catch two leaders (each participant on its own lease)", async () => {
    const outcome = await simulate(1, {
      makeServer: fakeStore,
      separateLeases: true,
    });
    expect(outcome.violations.length).toBeGreaterThan(0);
  });
});
