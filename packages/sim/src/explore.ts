import { join } from "node:path";
import { seededRandom } from "@reconcile/clock";
import { type Fault, type FaultSpec, kindsAt, writeVerbs } from "./faults.js";
import { simulate } from "./simulate.js";
import { story } from "./trace.js";
import { writeTraceFile } from "./trace-file.js";
import type { SimulationOptions, SimulationResult } from "./types.js";

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
  /**
   * How runs are chosen:
   * - `random` (default): each seed draws its own faults from the rates;
   * - `systematic`: one fault-free run of `firstSeed`, then one run per
   *   Sieve pattern and point of it: a crash after each write
   *   (intermediate states), the same followed by a restart on a stale list
   *   (stale states), a cut before each watch event (unobserved states);
   * - `coverage`: random seeds, and mutations of the fault lists of earlier
   *   runs that reached a reconcile outcome or error no run had reached.
   */
  strategy?: "random" | "systematic" | "coverage" | undefined;
  /** The components whose writes, events and restarts `systematic` perturbs. Default: all of them. */
  targets?: readonly string[] | undefined;
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
  /** Where the shrunk run's whole trace was written, when `RECONCILE_SIM_TRACE_DIR` is set. */
  readonly traceFile?: string | undefined;
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
  if (options.strategy === "systematic") return exploreSystematically(options);
  if (options.strategy === "coverage") return exploreByCoverage(options);
  const tally = new Tally(options);
  for (const seed of seedsOf(options)) {
    if (tally.outOfTime()) break;
    const result = await simulate({ ...options, seed, keepTrace: false });
    tally.count(result);
    if (!result.ok) return tally.report(result);
  }
  return tally.report();
}

/**
 * The seeds to run: `RECONCILE_SIM_SEED` alone when set (replaying one from
 * the command line: `RECONCILE_SIM_SEED=42 npx vitest run my.sim.test.ts`),
 * else `options.seeds`, with `RECONCILE_SIM_SEEDS` overriding a count (a
 * longer run without editing the test).
 */
function seedsOf(options: ExploreOptions): number[] {
  const one = process.env.RECONCILE_SIM_SEED;
  if (one !== undefined && one !== "") return [Number(one)];
  if (typeof options.seeds === "object") return [...options.seeds];
  const count = Number(process.env.RECONCILE_SIM_SEEDS || options.seeds || 100);
  return Array.from({ length: count }, (_, i) => (options.firstSeed ?? 1) + i);
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
  const dir = process.env.RECONCILE_SIM_TRACE_DIR;
  const traceFile =
    dir === undefined || dir === ""
      ? undefined
      : join(dir, `seed-${failed.seed}-${invariant.replace(/[^A-Za-z0-9]+/g, "-").slice(0, 60)}.json`);
  if (traceFile !== undefined) writeTraceFile(traceFile, final);
  return {
    traceFile,
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
    ...(failure.traceFile === undefined
      ? []
      : [`trace: ${failure.traceFile} (npx reconcile-sim story ${failure.traceFile})`]),
    "what happened (last steps):",
    failure.story,
  ];
  return lines.join("\n");
}

/** What every strategy counts and how it ends: the first failure, shrunk. */
class Tally {
  readonly started = performance.now();
  readonly faultsByKind: Record<string, number> = {};
  runs = 0;

  constructor(readonly options: ExploreOptions) {}

  outOfTime(): boolean {
    const limit = this.options.timeLimitMs;
    return limit !== undefined && performance.now() - this.started > limit;
  }

  count(result: SimulationResult): void {
    this.runs++;
    for (const fault of result.faults)
      this.faultsByKind[fault.kind] = (this.faultsByKind[fault.kind] ?? 0) + 1;
  }

  async report(failed?: SimulationResult): Promise<ExploreReport> {
    const failure = failed === undefined ? undefined : await reproduce(this.options, failed);
    return {
      runs: this.runs,
      wallMs: performance.now() - this.started,
      faultsByKind: this.faultsByKind,
      failure,
    };
  }
}

/** Sieve's three patterns, one run per point of a fault-free run. */
async function exploreSystematically(options: ExploreOptions): Promise<ExploreReport> {
  const tally = new Tally(options);
  const seed = options.firstSeed ?? 1;
  const reference = await simulate({ ...options, seed, faults: false, keepTrace: true });
  tally.count(reference);
  if (!reference.ok) return tally.report(reference);
  const targets = options.targets === undefined ? undefined : new Set(options.targets);
  const aimed = (component: string) =>
    component !== "user" && (targets === undefined || targets.has(component));
  const plans: Fault[][] = [];
  for (const entry of reference.trace) {
    if (entry.type !== "call" || !aimed(entry.component) || entry.code >= 300) continue;
    if (!writeVerbs.has(entry.verb.split("/")[0]!)) continue;
    const crash: Fault = {
      kind: "crashAfterWrite",
      component: entry.component,
      point: "call",
      index: entry.index,
      amount: 1_000,
    };
    plans.push([crash]);
    for (const depth of [1, 5, 20]) {
      plans.push([
        crash,
        { kind: "staleRestart", component: entry.component, point: "start", index: 1, amount: depth },
      ]);
    }
  }
  for (const entry of reference.trace) {
    if (entry.type !== "event" || !aimed(entry.component)) continue;
    plans.push([{ kind: "watchCut", component: entry.component, point: "event", index: entry.index }]);
  }
  for (const plan of plans) {
    if (tally.outOfTime()) break;
    const result = await simulate({ ...options, seed, faults: { plan }, keepTrace: false });
    tally.count(result);
    if (!result.ok) return tally.report(result);
  }
  return tally.report();
}

/**
 * Random seeds, plus mutations of the fault lists of runs that reached
 * something new (AFL's loop, with reconcile outcomes and failed calls as
 * the coverage): a mutation moves a fault to a nearby point, changes its
 * kind, drops it, or adds a copy of it a few points later.
 */
async function exploreByCoverage(options: ExploreOptions): Promise<ExploreReport> {
  const tally = new Tally(options);
  const seeds = seedsOf(options);
  const first = seeds[0] ?? 1;
  const random = seededRandom(first);
  const seen = new Set<string>();
  const corpus: { seed: number; plan: readonly Fault[] }[] = [];
  for (let i = 0; i < seeds.length && !tally.outOfTime(); i++) {
    const parent =
      corpus.length > 0 && random() < 0.5 ? corpus[Math.floor(random() * corpus.length)] : undefined;
    const seed = parent?.seed ?? seeds[i]!;
    const faults: FaultSpec | undefined =
      parent === undefined ? options.faults : { plan: mutate(parent.plan, random) };
    const result = await simulate({ ...options, seed, faults, keepTrace: false });
    tally.count(result);
    if (!result.ok) return tally.report(result);
    let novel = false;
    for (const behaviour of result.coverage) {
      if (seen.has(behaviour)) continue;
      seen.add(behaviour);
      novel = true;
    }
    if (novel && result.faults.length > 0) corpus.push({ seed, plan: result.faults });
  }
  return tally.report();
}

function mutate(plan: readonly Fault[], random: () => number): Fault[] {
  const next = [...plan];
  const at = Math.floor(random() * next.length);
  const fault = next[at]!;
  const shift = 1 + Math.floor(random() * 5);
  switch (Math.floor(random() * 4)) {
    case 0:
      next[at] = { ...fault, index: Math.max(0, fault.index + (random() < 0.5 ? -shift : shift)) };
      break;
    case 1: {
      const kinds = kindsAt(fault.point, fault.point === "call" ? "update" : fault.point);
      next[at] = {
        ...fault,
        kind: kinds[Math.floor(random() * kinds.length)]!,
        amount: fault.amount ?? 1_000,
      };
      break;
    }
    case 2:
      if (next.length > 1) next.splice(at, 1);
      break;
    default:
      next.push({ ...fault, index: fault.index + shift });
  }
  return next;
}
