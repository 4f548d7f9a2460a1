// Simulated runs per minute of wall time on one core: a ReplicaSet of 3
// under the built-in ReplicaSet controller (the embedded API server, the
// controller manager, every fault on), scaled to 5 after 5 virtual seconds,
// checked after every step and until steady (about 90 s of virtual time per
// run). Each round runs SEEDS seeds; ROUNDS rounds after a warm-up round,
// medians reported. The goal: ≥ 1,000 runs per minute.
import { getControllerOf, isPodActive, type Pod, pods, replicaSets } from "@reconcile/api";
import { median, writeResults } from "../../../tools/bench/index.js";
import { webReplicaSet } from "../scenarios/builtin.js";
import { type SimCluster, type SimulationOptions, simulate } from "../src/index.js";

const seeds = Number(process.env.SEEDS ?? 200);
const rounds = Number(process.env.ROUNDS ?? 5);

async function active(cluster: SimCluster): Promise<number> {
  const [rs] = await cluster.list(replicaSets, "default");
  return (await cluster.list(pods, "default")).filter(
    (p) => isPodActive(p as Pod) && getControllerOf(p)?.uid === rs?.metadata?.uid,
  ).length;
}

const scenario: Omit<SimulationOptions, "seed"> = {
  builtins: ["replicaset"],
  keepTrace: false,
  setup: async (cluster) => {
    await cluster.client.resource(replicaSets, "default").create(webReplicaSet(3));
  },
  scenario: async (cluster) => {
    await cluster.sleep(5_000);
    const rs = await cluster.client.resource(replicaSets, "default").get("web");
    await cluster.client
      .resource(replicaSets, "default")
      .update({ ...rs, spec: { ...rs.spec!, replicas: 5 } });
  },
  eventually: {
    "exactly the replicas": async (cluster) => {
      const n = await active(cluster);
      return n === 5 ? undefined : `${n} active pods`;
    },
  },
};

async function round(
  first: number,
): Promise<{ runsPerMinute: number; msPerRun: number; failures: number; faults: number }> {
  const started = performance.now();
  let failures = 0;
  let faults = 0;
  for (let seed = first; seed < first + seeds; seed++) {
    const result = await simulate({ ...scenario, seed });
    if (!result.ok) failures++;
    faults += result.faults.length;
  }
  const ms = performance.now() - started;
  return { runsPerMinute: (seeds / ms) * 60_000, msPerRun: ms / seeds, failures, faults };
}

await round(1_000_000);
const results: Awaited<ReturnType<typeof round>>[] = [];
for (let i = 0; i < rounds; i++) {
  const r = await round(1 + i * seeds);
  console.log(
    `round ${i + 1}: ${seeds} runs, ${r.runsPerMinute.toFixed(0)} runs/min (${r.msPerRun.toFixed(1)} ms each), ${r.faults} faults, ${r.failures} failed`,
  );
  results.push(r);
}
writeResults("sim", [
  {
    name: "simulated runs per minute, ReplicaSet of 3 → 5 with every fault on (one core)",
    unit: "runs/min",
    higherIsBetter: true,
    runs: results.map((r) => r.runsPerMinute),
    median: median(results.map((r) => r.runsPerMinute)),
  },
  {
    name: "wall ms per simulated run",
    unit: "ms",
    higherIsBetter: false,
    runs: results.map((r) => r.msPerRun),
    median: median(results.map((r) => r.msPerRun)),
  },
]);
