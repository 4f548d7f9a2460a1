// `pnpm sim [scenario]`: the full run of our controllers under every fault,
// SEEDS seeds per scenario (default each scenario's fullSeeds: 10,000, or fewer for the
// slow ones), each failure shrunk; writes
// bench-results/sim-report.json and exits 1 if any scenario failed.
import { mkdirSync, writeFileSync } from "node:fs";
import { explore, formatReproducer } from "../src/index.js";
import { builtinScenarios } from "./builtin.js";

const seedsOverride = process.env.SEEDS === undefined ? undefined : Number(process.env.SEEDS);
const only = process.argv[2];
const report: Record<string, unknown>[] = [];
let failed = 0;
for (const { name, options, fullSeeds = 10_000 } of builtinScenarios) {
  if (only !== undefined && name !== only) continue;
  const seeds = seedsOverride ?? fullSeeds;
  const result = await explore({ ...options, seeds });
  const line = `${name}: ${result.runs} runs in ${(result.wallMs / 1000).toFixed(1)} s (${((result.runs / result.wallMs) * 60_000).toFixed(0)} runs/min)`;
  console.log(result.failure === undefined ? `${line}, every invariant held` : `${line}, FAILED`);
  if (result.failure !== undefined) {
    failed++;
    console.log(formatReproducer(result.failure, result.runs));
  }
  report.push({
    scenario: name,
    seeds,
    runs: result.runs,
    wallMs: Math.round(result.wallMs),
    faultsByKind: result.faultsByKind,
    failure:
      result.failure === undefined
        ? null
        : {
            seed: result.failure.seed,
            invariant: result.failure.violation.invariant,
            message: result.failure.violation.message,
            faults: result.failure.faults,
          },
  });
}
mkdirSync("bench-results", { recursive: true });
writeFileSync("bench-results/sim-report.json", `${JSON.stringify({ scenarios: report }, null, 2)}\n`);
console.log("wrote bench-results/sim-report.json");
process.exit(failed > 0 ? 1 : 0);
