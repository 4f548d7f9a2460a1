// The short run of our own controllers under every fault (`pnpm sim` runs 10,000 seeds each).
import { describe, expect, it } from "vitest";
import { builtinScenarios } from "../scenarios/builtin.js";
import { defaultFaultRates, explore, formatReproducer, simulate } from "./index.js";

const scenario = (name: string) => builtinScenarios.find((s) => s.name === name)!.options;

describe("our controllers under every fault", () => {
  for (const { name, shortSeeds = 40 } of builtinScenarios) {
    it(`${name}: ${shortSeeds} seeds hold every invariant`, async () => {
      const report = await explore({ ...scenario(name), seeds: shortSeeds });
      if (report.failure !== undefined) throw new Error(formatReproducer(report.failure, report.runs));
      expect(report.runs).toBe(shortSeeds);
      expect(Object.values(report.faultsByKind).reduce((a, b) => a + b, 0)).toBeGreaterThan(shortSeeds);
    });
  }

  // Found by this harness: a scale-down of the old ReplicaSet that fails (here two 429s) is swallowed, as
  // upstream's reconcileOldReplicaSets swallows it, and nothing else wakes the Deployment, so the
  // rollout waits at 3 new + 2 old pods until the progress deadline's requeue (600 s after the
  // last progress, at +36 s) retries it. Kept as the regression of that recovery.
  it("deployment: seed 109 resumes a rollout stalled by a failed scale-down at the progress deadline", async () => {
    const result = await simulate({
      ...scenario("deployment"),
      faults: { ...defaultFaultRates, staleRestart: 0 },
      seed: 109,
    });
    expect(result.ok).toBe(true);
    const resumed = result.trace.find(
      (e) =>
        e.type === "reconcile" &&
        e.controller === "deployment" &&
        e.reason === "requeue requested" &&
        e.t > 60_000,
    );
    expect(resumed?.t).toBe(636_000);
    expect(result.elapsedMs).toBe(666_000);
  });
});
