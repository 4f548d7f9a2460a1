// Failover time: how long after the leader stops until another participant
// leads, on the real clock, against the embedded API server in process.
//  - "stops without releasing": the leader's run is cancelled without
//    releaseOnCancel (as a crashed process); expected ≈ leaseDuration + up to
//    one acquire retry (retryPeriod × (1 + [0, 1.2))).
//  - "graceful release": cancelled with releaseOnCancel; expected ≤ one
//    acquire retry.
// With the default settings one crash sample takes ~20 s, so that
// configuration runs 3 samples and no warm-up.
import { ApiServer } from "@reconcile/apiserver";
import { type Measurement, measure, writeResults } from "../../../tools/bench/index.js";
import { LeaderElector, LeaseLock } from "../src/index.js";

interface Settings {
  label: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  samples: number;
}

const settings: Settings[] = [
  {
    label: "defaults 15 s / 10 s / 2 s",
    leaseDurationMs: 15_000,
    renewDeadlineMs: 10_000,
    retryPeriodMs: 2_000,
    samples: 3,
  },
  {
    label: "fast 2 s / 1.5 s / 0.5 s",
    leaseDurationMs: 2_000,
    renewDeadlineMs: 1_500,
    retryPeriodMs: 500,
    samples: 5,
  },
];

/** One failover: returns ms from the leader's stop to the successor's onStartedLeading. */
async function failover(s: Settings, release: boolean): Promise<number> {
  const server = new ApiServer();
  const client = server.client();
  const participant = (identity: string, onLeading: () => void) => {
    const controller = new AbortController();
    const elector = new LeaderElector({
      lock: new LeaseLock({ client, namespace: "kube-system", name: "bench", identity }),
      leaseDurationMs: s.leaseDurationMs,
      renewDeadlineMs: s.renewDeadlineMs,
      retryPeriodMs: s.retryPeriodMs,
      releaseOnCancel: release,
      callbacks: { onStartedLeading: onLeading, onStoppedLeading() {} },
    });
    return { controller, done: elector.run({ signal: controller.signal }) };
  };

  let leaderUp!: () => void;
  const leading = new Promise<void>((resolve) => (leaderUp = resolve));
  const leader = participant("leader", () => leaderUp());
  await leading;

  let successorAt = 0;
  let successorUp!: () => void;
  const succeeded = new Promise<void>((resolve) => (successorUp = resolve));
  const successor = participant("successor", () => {
    successorAt = performance.now();
    successorUp();
  });
  // Let the leader renew at least once while the successor watches.
  await new Promise((resolve) => setTimeout(resolve, s.retryPeriodMs * 1.5));

  const stoppedAt = performance.now();
  leader.controller.abort();
  await leader.done;
  await succeeded;
  successor.controller.abort();
  await successor.done;
  await server.close();
  return successorAt - stoppedAt;
}

const results: Measurement[] = [];
for (const s of settings) {
  for (const release of [false, true]) {
    results.push(
      await measure(
        {
          name: `${s.label}: failover after the leader ${release ? "releases on cancel" : "stops without releasing"}`,
          unit: "ms",
          higherIsBetter: false,
          runs: s.samples,
          warmups: 0,
        },
        () => failover(s, release),
      ),
    );
  }
}

writeResults("leader-election-failover", results, {
  transport: "in process (embedded ApiServer client)",
  clock: "real",
  expected: {
    stopsWithoutReleasing: "≈ leaseDuration + up to retryPeriod × 2.2 (first acquire attempt after expiry)",
    gracefulRelease: "≤ retryPeriod × 2.2 (the successor's next acquire attempt)",
  },
});
