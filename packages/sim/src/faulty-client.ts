import type { Client } from "@reconcile/client";
import { type Clock, realClock, seededRandom } from "@reconcile/clock";
import { ComponentClient, newIncarnation } from "./component-client.js";
import {
  defaultFaultRates,
  type Fault,
  type FaultFilter,
  FaultInjector,
  type FaultKind,
  type FaultRates,
  type FaultSpec,
} from "./faults.js";
import { story, Trace, type TraceEntry } from "./trace.js";

/** The faults a client can meet on its own: those that need no restart, node or election. */
export const clientFaultKinds: readonly FaultKind[] = [
  "serverError",
  "unavailable",
  "tooManyRequests",
  "conflict",
  "timeout",
  "lostResponse",
  "watchCut",
  "watchDelay",
];

export interface FaultyClientOptions {
  /** Fixes which faults strike at which call and watch event. Required. */
  seed: number;
  /** Rates per kind (only {@link clientFaultKinds} strike), `{ plan }` to replay, or `false`. Default: the simulation's rates of those kinds. */
  faults?: FaultSpec | undefined;
  /** Where faults may strike (`verb`, `point`). Default: everywhere. */
  faultsWhere?: FaultFilter | undefined;
  /** The clock of the environment (a `FakeClock` for virtual time): trace times and watch delays run on it. Default: the real clock. */
  clock?: Clock | undefined;
  /** Its name in the trace and in faults. Default `client`. */
  name?: string | undefined;
}

/** A client that faults strike, as a simulation's component client, around any other client. */
export interface FaultyClient {
  readonly client: Client;
  /** What it asked and was answered, the faults and the events its watches delivered. */
  readonly trace: readonly TraceEntry[];
  /** The faults that struck, in order: `faults: { plan }` with these replays them. */
  readonly faults: readonly Fault[];
  /** The last lines of the trace, as `reconcile-sim story` prints them. */
  story(lines?: number): string;
  /** No fault strikes from now on (let the controller settle before checking the end state). */
  calm(): void;
}

/**
 * Faults from a seed on the calls of a client you already have — an envtest
 * environment's, or one acting as your operator (`env.clientAs(...)`) — so
 * an operator's envtest suite meets 5xx and 429 answers, conflicts, lost
 * answers to applied writes, cut watches that force a relist and late watch
 * events, with a trace of every call. Give it the environment's `FakeClock`
 * (`startTestEnvironment({ clock })`) and drive time with `advanceUntil` for
 * runs that repeat. Crashes, stale restarts, nodes and elections need
 * `simulate`, which rebuilds components.
 */
export function faultyClient(inner: Client, options: FaultyClientOptions): FaultyClient {
  const clock = options.clock ?? realClock;
  const start = clock.now();
  const trace = new Trace(true);
  const injector = new FaultInjector(
    clientFaults(options.faults),
    seededRandom(options.seed),
    options.faultsWhere,
  );
  const name = options.name ?? "client";
  const incarnation = newIncarnation(name, 1, new AbortController().signal);
  const host = {
    clock,
    trace,
    faults: injector,
    elapsed: () => clock.now() - start,
    wrote: () => {},
    crash: () => {},
  };
  const client = new ComponentClient(
    host,
    inner,
    { calls: 0, events: 0, starts: 0, containers: 0 },
    incarnation,
    true,
  );
  return {
    client,
    trace: trace.entries,
    faults: injector.struck,
    story: (lines) => story(trace.entries, lines === undefined ? {} : { lines }),
    calm: () => injector.disable(),
  };
}

/** Only the kinds a lone client can meet: rates of the others are dropped, planned ones kept out. */
function clientFaults(spec: FaultSpec | undefined): FaultSpec {
  if (spec === false) return false;
  if (spec !== undefined && "plan" in spec)
    return { plan: spec.plan.filter((fault) => clientFaultKinds.includes(fault.kind)) };
  const rates: FaultRates = spec ?? defaultFaultRates;
  return Object.fromEntries(
    Object.entries(rates).filter(([kind]) => clientFaultKinds.includes(kind as FaultKind)),
  ) as FaultRates;
}
