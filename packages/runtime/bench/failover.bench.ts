// A standby's first reconcile after failover (issue 32 §4), on the embedded
// API server through its in-process client, with real time:
//
// Two managers elect a leader on one Lease (lease 2 s, renew 1.5 s, retry
// 50 ms), each with the same builder controller over 10,000 ConfigMaps. Once
// the first leads and has reconciled them all, and the second's caches have
// synced, the leader stops (releasing the Lease, as a clean shutdown does).
// Measured: ms from the moment the standby leads until its first reconcile,
// (a) with its caches warm (informers run on standbys, the default, as
//     controller-runtime's) — goal ≤ 100 ms;
// (b) with `informersNeedLeaderElection` (caches started only once elected),
//     for comparison: the new leader lists everything first.
// Also the whole handover, from the leader's stop to that reconcile.
// Each variant: 1 warm-up, then 7 measured failovers alternating with the other's, a new server each.
import { configMaps } from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import { type Measurement, median, writeResults } from "../../../tools/bench/index.js";
import { Manager, newControllerManagedBy } from "../src/index.js";

const objects = Number(process.env.OBJECTS ?? 10_000);
const rounds = Number(process.env.ROUNDS ?? 7);

interface Participant {
  manager: Manager;
  stop: AbortController;
  running: Promise<void>;
  reconciles: number;
  /** performance.now() when it began to lead (its gated runnables started), once it has. */
  electedAt: number | undefined;
  /** performance.now() of its first reconcile, once it has made one. */
  firstReconcileAt: number | undefined;
}

function participant(server: ApiServer, identity: string, coldCaches: boolean): Participant {
  const manager = new Manager({
    client: server.client(),
    leaderElection: {
      name: "failover-bench",
      identity,
      leaseDurationMs: 2000,
      renewDeadlineMs: 1500,
      retryPeriodMs: 50,
    },
    informersNeedLeaderElection: coldCaches,
  });
  const self: Participant = {
    manager,
    stop: new AbortController(),
    running: Promise.resolve(),
    reconciles: 0,
    electedAt: undefined,
    firstReconcileAt: undefined,
  };
  // Gated as the controller is and added before it: started the moment this manager leads.
  manager.add({
    name: "elected",
    needLeaderElection: true,
    run: async ({ signal }) => {
      self.electedAt = performance.now();
      await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
    },
  });
  newControllerManagedBy(manager)
    .for(configMaps)
    .withOptions({ workers: 4 })
    .complete(async () => {
      self.reconciles++;
      self.firstReconcileAt ??= performance.now();
    });
  self.running = manager.run({ signal: self.stop.signal }).catch(() => {});
  return self;
}

async function until(check: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/** One failover: ms from the standby's election to its first reconcile, and from the leader's stop to it. */
async function failover(coldCaches: boolean): Promise<{ afterElection: number; handover: number }> {
  const server = new ApiServer();
  const client = server.client().resource(configMaps, "default");
  for (let i = 0; i < objects; i++)
    await client.create({ metadata: { name: `cm-${i}` }, data: { value: "x".repeat(200) } });
  const leader = participant(server, "first", coldCaches);
  await until(
    () => leader.manager.isLeader() && leader.reconciles >= objects,
    "the first leader's reconciles",
  );
  const standby = participant(server, "second", coldCaches);
  if (!coldCaches)
    await until(
      () => standby.manager.informers.informers().every(([, informer]) => informer.hasSynced()),
      "the standby's caches",
    );
  const stopped = performance.now();
  leader.stop.abort();
  await leader.running;
  await until(() => standby.firstReconcileAt !== undefined, "the standby's first reconcile");
  const first = standby.firstReconcileAt!;
  const elected = standby.electedAt!;
  standby.stop.abort();
  await standby.running;
  await server.close();
  return { afterElection: first - elected, handover: first - stopped };
}

const variants = [
  ["a: warm caches (informers run on standbys)", false],
  ["b: cold caches (informersNeedLeaderElection)", true],
] as const;
const results = new Map<string, { afterElection: number; handover: number }[]>(
  variants.map(([label]) => [label, []]),
);
// A warm-up of each, then the variants alternate round by round, so that load from elsewhere hits them alike.
for (const [, cold] of variants) await failover(cold);
for (let r = 0; r < rounds; r++)
  for (const [label, cold] of variants) results.get(label)!.push(await failover(cold));
const measurements: Measurement[] = [];
for (const [label, cold] of variants) {
  const afterElection = results.get(label)!.map((result) => result.afterElection);
  const handover = results.get(label)!.map((result) => result.handover);
  measurements.push(
    {
      name: `${label}: ms from election to the first reconcile (${objects} ConfigMaps)`,
      unit: "ms",
      higherIsBetter: false,
      runs: afterElection,
      median: median(afterElection),
      ...(cold ? {} : { target: 100 }),
    },
    {
      name: `${label}: ms from the leader's stop to the standby's first reconcile`,
      unit: "ms",
      higherIsBetter: false,
      runs: handover,
      median: median(handover),
    },
  );
  console.log(
    `${label}: election → first reconcile median ${median(afterElection).toFixed(1)} ms (${afterElection.map((v) => v.toFixed(1)).join(", ")}); stop → first reconcile median ${median(handover).toFixed(1)} ms`,
  );
}
writeResults("runtime-failover", measurements, { objects, rounds, lease: "2 s / 1.5 s / 50 ms" });
