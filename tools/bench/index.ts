// Shared helpers for benchmarks: repeated runs, medians, and one JSON file per
// benchmark under bench-results/ at the repository root.
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const resultsDir = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "bench-results");

/**
 * The machine's 1, 5 and 15-minute load averages when the benchmark started
 * (this module is imported first) and when it wrote its results: a figure from
 * a loaded machine is visibly so.
 */
const loadAtStart = os.loadavg();
console.log(`load average at start: ${formatLoad(loadAtStart)} (${os.cpus().length} CPUs)`);

function formatLoad(load: readonly number[]): string {
  return load.map((value) => value.toFixed(2)).join(" ");
}

export function median(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError("median of no values");
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The nearest-rank percentile (`p` in 0–1) of `values`; NaN for none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
}

export interface Measurement {
  /** What is measured, e.g. "a: add+get/done 100k distinct keys". */
  readonly name: string;
  /** Unit of `runs` and `median`, e.g. "items/s". */
  readonly unit: string;
  /** Whether bigger is better. */
  readonly higherIsBetter: boolean;
  readonly runs: readonly number[];
  readonly median: number;
  /** Optional target from the issue, for the reader. */
  readonly target?: number;
  readonly extra?: Record<string, unknown>;
}

/** A measurement of values already taken, one per run; lower is better unless said. */
export function fromRuns(
  name: string,
  unit: string,
  values: readonly number[],
  options: { higherIsBetter?: boolean; target?: number | undefined } = {},
): Measurement {
  return {
    name,
    unit,
    higherIsBetter: options.higherIsBetter ?? false,
    runs: values,
    median: median(values),
    ...(options.target === undefined ? {} : { target: options.target }),
  };
}

/** Runs `fn` `warmups` times (discarded), then `runs` times, and returns the measurement. */
export async function measure(
  options: {
    name: string;
    unit: string;
    higherIsBetter: boolean;
    runs?: number;
    warmups?: number;
    target?: number;
  },
  fn: () => number | Promise<number>,
): Promise<Measurement> {
  const runs = options.runs ?? 5;
  for (let i = 0; i < (options.warmups ?? 1); i++) await fn();
  const values: number[] = [];
  for (let i = 0; i < runs; i++) values.push(await fn());
  const result: Measurement = {
    name: options.name,
    unit: options.unit,
    higherIsBetter: options.higherIsBetter,
    runs: values,
    median: median(values),
    ...(options.target === undefined ? {} : { target: options.target }),
  };
  const shown = Number.isInteger(result.median) ? result.median : result.median.toPrecision(4);
  console.log(`${result.name}: median ${shown} ${result.unit}`);
  return result;
}

/** Writes bench-results/<file>.json with the measurements and the machine they ran on. */
export function writeResults(
  file: string,
  measurements: readonly Measurement[],
  extra: Record<string, unknown> = {},
) {
  mkdirSync(resultsDir, { recursive: true });
  const path = join(resultsDir, `${file}.json`);
  const loadAtEnd = os.loadavg();
  console.log(`load average at end: ${formatLoad(loadAtEnd)}`);
  const body = {
    benchmark: file,
    date: new Date().toISOString(),
    node: process.version,
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    loadAverage: { start: loadAtStart, end: loadAtEnd },
    ...extra,
    measurements,
  };
  writeFileSync(path, JSON.stringify(body, null, 2) + "\n");
  console.log(`wrote ${path}`);
}
