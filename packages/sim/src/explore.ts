import type { Fault } from "./faults.js";
import { type SimulationOptions, type SimulationResult, simulate } from "./simulate.js";
import { story } from "./trace.js";

export interface ExploreOptions extends Omit<SimulationOptions, "seed"> {
  /** The seeds to run: a count (seeds `firstSeed`…), or a list. Default 100. */
  seeds?: number | readonly number[] | undefined;
  /** The first seed of a count. Default 1. */
  firstSeed?: number | undefined;
  /** Stop exploring after this much wall time, in ms. Default: no limit. */
  timeLimitMs?: number | undefined;
  /** Shrink the first failure to a minimal fault list. Default true. */
  shrink?: boolean | undefined;
  /** The most replays shrinking may spend. Default 200. */
  maxShrinkRuns?: number | undefined;
}

/** A failure, its reproducer shrunk, and the story of the shrunk run. */
export interface Reproducer {
  readonly seed: number;
  /** The violation of the shrunk run (the same invariant as the original's). */
  readonly violation: NonNullable<SimulationResult["violation"]>;
  /** The fewest faults found that still break the invariant: replay with `simulate({ seed, faults: { plan: faults } })`. */
  readonly faults: readonly Fault[];
  /** How many faults the original failing run met. */
  readonly originalFaults: number;
  /** The shrunk run's result, trace included. */
  readonly run: SimulationResult;
  /** What to paste to replay it. */
  readonly replay: string;
  /** The last steps of the shrunk run, as a story. */
  readonly story: string;
}

export interface ExploreReport {
  /** Seeds run (until the first failure, the seeds or the time ran out). */
  readonly runs: number;
  /** Wall ms spent, shrinking included. */
  readonly wallMs: number;
  /** Faults met across the runs, by kind. */
  readonly faultsByKind: Readonly<Record<string, number>>;
  /** The first failure, shrunk; undefined when every run held. */
  readonly failure: Reproducer | undefined;
}

/**
 * Runs many seeds of one simulation and stops at the first that breaks an
 * invariant, then shrinks its faults to a minimal list that still breaks
 * the same invariant (delta debugging over the faults that struck).
 */
export async function explore(options: ExploreOptions): Promise<ExploreReport> {
  const started = performance.now();
  const seeds =
    typeof options.seeds === "object"
      ? [...options.seeds]
      : Array.from({ length: options.seeds ?? 100 }, (_, i) => (options.firstSeed ?? 1) + i);
  const faultsByKind: Record<string, number> = {};
  let runs = 0;
  for (const seed of seeds) {
    if (options.timeLimitMs !== undefined && performance.now() - started > options.timeLimitMs) break;
    const result = await simulate({ ...options, seed, keepTrace: false });
    runs++;
    for (const fault of result.faults) faultsByKind[fault.kind] = (faultsByKind[fault.kind] ?? 0) + 1;
    if (result.ok) continue;
    const failure = await reproduce(options, result);
    return { runs, wallMs: performance.now() - started, faultsByKind, failure };
  }
  return { runs, wallMs: performance.now() - started, faultsByKind, failure: undefined };
}

/** Shrinks a failed run's faults (ddmin) and replays the smallest with its trace. */
export async function reproduce(
  options: Omit<ExploreOptions, "seeds">,
  failed: SimulationResult,
): Promise<Reproducer> {
  const invariant = failed.violation!.invariant;
  let budget = options.maxShrinkRuns ?? 200;
  const fails = async (plan: readonly Fault[]): Promise<SimulationResult | undefined> => {
    budget--;
    const result = await simulate({ ...options, seed: failed.seed, faults: { plan }, keepTrace: false });
    return result.violation?.invariant === invariant ? result : undefined;
  };
  let faults: readonly Fault[] = failed.faults;
  if (options.shrink ?? true) faults = await ddmin(faults, fails, () => budget > 0);
  const run = await simulate({ ...options, seed: failed.seed, faults: { plan: faults }, keepTrace: true });
  // A plan that no longer reproduces (the budget ran out mid-way) falls back to the original's faults.
  const final =
    run.violation?.invariant === invariant
      ? run
      : await simulate({ ...options, seed: failed.seed, faults: { plan: failed.faults }, keepTrace: true });
  const kept = final === run ? faults : failed.faults;
  return {
    seed: failed.seed,
    violation: final.violation ?? failed.violation!,
    faults: kept,
    originalFaults: failed.faults.length,
    run: final,
    replay: `simulate({ seed: ${failed.seed}, faults: { plan: ${JSON.stringify(kept)} }, … })`,
    story: story(final.trace, { lines: 40 }),
  };
}

/**
 * Zeller's ddmin: the smallest subset of `items` (1-minimal) for which
 * `test` still fails, trying complements of ever finer partitions.
 */
async function ddmin<T>(
  items: readonly T[],
  test: (subset: readonly T[]) => Promise<unknown>,
  more: () => boolean,
): Promise<readonly T[]> {
  let current = items;
  if (current.length > 0 && more() && (await test([]))) return [];
  let n = 2;
  while (current.length >= 2 && more()) {
    const size = Math.ceil(current.length / n);
    let reduced = false;
    for (let i = 0; i < current.length && more(); i += size) {
      const complement = [...current.slice(0, i), ...current.slice(i + size)];
      if (await test(complement)) {
        current = complement;
        n = Math.max(n - 1, 2);
        reduced = true;
        break;
      }
    }
    if (!reduced) {
      if (n >= current.length) break;
      n = Math.min(n * 2, current.length);
    }
  }
  return current;
}

/**
 * Throws an Error that tells the whole reproducer when the report has a
 * failure: for a test runner's `await expectNoViolation(explore(…))`.
 */
export async function expectNoViolation(report: ExploreReport | Promise<ExploreReport>): Promise<void> {
  const { failure, runs } = await report;
  if (failure === undefined) return;
  throw new Error(formatReproducer(failure, runs));
}

/** A failure as text: the invariant, the seed, the shrunk faults, the replay call and the story. */
export function formatReproducer(failure: Reproducer, runs?: number): string {
  const lines = [
    `invariant "${failure.violation.invariant}" broken at +${(failure.violation.at / 1000).toFixed(3)}s of seed ${failure.seed}${runs === undefined ? "" : ` (run ${runs})`}: ${failure.violation.message}`,
    `faults: ${failure.faults.length} (shrunk from ${failure.originalFaults})`,
    ...failure.faults.map(
      (f) =>
        `  - ${f.kind} ${f.component} ${f.point}#${f.index}${f.amount === undefined ? "" : ` (${f.amount})`}`,
    ),
    `replay: ${failure.replay}`,
    "what happened (last steps):",
    failure.story,
  ];
  return lines.join("\n");
}
