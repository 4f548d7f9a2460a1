import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { Fault } from "./faults.js";
import { story, type TraceEntry } from "./trace.js";
import type { SimulationResult, Violation } from "./types.js";

/** A run as a file: what `reconcile-sim story` reads and what a viewer can step through. */
export interface TraceFile {
  readonly format: "reconcile-sim-trace/v1";
  readonly seed: number;
  readonly violation: Violation | null;
  /** The faults that struck: `simulate({ seed, faults: { plan: faults } })` replays the run. */
  readonly faults: readonly Fault[];
  readonly traceHash: string;
  readonly trace: readonly TraceEntry[];
}

/** The run as a {@link TraceFile} (its trace must have been kept). */
export function traceFileOf(result: SimulationResult): TraceFile {
  return {
    format: "reconcile-sim-trace/v1",
    seed: result.seed,
    violation: result.violation ?? null,
    faults: result.faults,
    traceHash: result.traceHash,
    trace: result.trace,
  };
}

/** Writes the run to `path` as JSON (its folders made as needed). */
export function writeTraceFile(path: string, result: SimulationResult): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(traceFileOf(result))}\n`);
}

/** Reads a trace file, checking its format. */
export function readTraceFile(path: string): TraceFile {
  const file = JSON.parse(readFileSync(path, "utf8")) as Partial<TraceFile>;
  if (file?.format !== "reconcile-sim-trace/v1" || !Array.isArray(file.trace)) {
    throw new Error(`${path} is not a reconcile-sim trace (format reconcile-sim-trace/v1)`);
  }
  return file as TraceFile;
}

/**
 * `reconcile-sim story <trace.json> [--lines N] [--events]`: prints the
 * violation, the faults and the last steps of a run written by a failing
 * exploration (`RECONCILE_SIM_TRACE_DIR`). Returns the exit code.
 */
export function runSimCommand(args: readonly string[], out: (text: string) => void): number {
  const [command, path, ...rest] = args;
  if (command !== "story" || path === undefined) {
    out("usage: reconcile-sim story <trace.json> [--lines N] [--events]\n");
    return 2;
  }
  let lines = 60;
  let events = false;
  for (let i = 0; i < rest.length; i++) {
    if (rest[i] === "--events") events = true;
    else if (rest[i] === "--lines" && Number.isInteger(Number(rest[i + 1]))) lines = Number(rest[++i]);
    else {
      out(`reconcile-sim: unknown option ${rest[i]}\n`);
      return 2;
    }
  }
  let file: TraceFile;
  try {
    file = readTraceFile(path);
  } catch (error) {
    out(`reconcile-sim: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
  const v = file.violation;
  out(
    v === null
      ? `seed ${file.seed}: every invariant held\n`
      : `seed ${file.seed}: invariant "${v.invariant}" broken at +${(v.at / 1000).toFixed(3)}s: ${v.message}\n`,
  );
  out(`faults: ${file.faults.length}\n`);
  out(`${story(file.trace, { lines, events })}\n`);
  return 0;
}
