import { writeVerbs } from "@reconcile/client";
import type { Random } from "@reconcile/clock";

/**
 * What can go wrong, each drawn from the seed at a decision point:
 * - `serverError`, `unavailable`, `tooManyRequests` (with Retry-After),
 *   `conflict` (updates and patches) and `timeout`: the request is answered
 *   with that error and not applied;
 * - `lostResponse`: a write is applied, but its answer is lost on the way
 *   back (the caller sees a connection error and cannot tell);
 * - `crashAfterWrite`: the component dies right after a write was applied
 *   (Sieve's intermediate states), and restarts later with empty caches,
 *   queues and expectations;
 * - `watchCut`: a watch stream ends, and its resume is answered
 *   `410 Expired`, so the informer relists and never sees the states in
 *   between (Sieve's unobserved states);
 * - `staleRestart`: a restarted component's informers first list from an
 *   older resourceVersion (Sieve's stale states: an API server whose watch
 *   cache lags), then watch forward from there;
 * - `watchDelay`: a watch delivers its events late, so components see the
 *   world at different moments;
 * - `containerCrash`: a container a simulated node starts exits with code 1
 *   some seconds later (its kubelet restarts it, with CrashLoopBackOff);
 * - `containerUnready`: a container a simulated node starts fails its
 *   readiness probe for a while, from 2 s after it starts (its pod goes
 *   NotReady and comes back; only containers with a readiness probe notice);
 * - `clockSkew`: a leader-elected component's clock reads up to 30 s ahead
 *   of or behind the others' for that incarnation (the elector must judge a
 *   Lease by when it observed it, not by the time written in it).
 */
export type FaultKind =
  | "serverError"
  | "unavailable"
  | "tooManyRequests"
  | "conflict"
  | "timeout"
  | "lostResponse"
  | "crashAfterWrite"
  | "watchCut"
  | "staleRestart"
  | "watchDelay"
  | "containerCrash"
  | "containerUnready"
  | "clockSkew";

export const faultKinds: readonly FaultKind[] = [
  "serverError",
  "unavailable",
  "tooManyRequests",
  "conflict",
  "timeout",
  "lostResponse",
  "crashAfterWrite",
  "watchCut",
  "staleRestart",
  "watchDelay",
  "containerCrash",
  "containerUnready",
  "clockSkew",
];

/** The chance of each fault at each decision point where it can strike; a missing kind never strikes. */
export type FaultRates = Partial<Record<FaultKind, number>>;

/** Every fault on, at rates that strike a few times in a short run. */
export const defaultFaultRates: Readonly<Required<FaultRates>> = {
  serverError: 0.02,
  unavailable: 0.02,
  tooManyRequests: 0.02,
  conflict: 0.02,
  timeout: 0.01,
  lostResponse: 0.03,
  crashAfterWrite: 0.05,
  watchCut: 0.02,
  staleRestart: 0.5,
  watchDelay: 0.2,
  containerCrash: 0.1,
  containerUnready: 0.1,
  clockSkew: 0.5,
};

/**
 * Where a decision is taken: a component's nth API call, nth watch event,
 * nth start, (a node's) nth container start, or (an elected component's)
 * clock at its nth start.
 */
export type DecisionPoint = "call" | "event" | "start" | "container" | "clock";

/**
 * One fault that struck, named by where it struck: replaying a run with
 * exactly these faults (`faults: { plan }`) reproduces it, and a subset of
 * them is a smaller run.
 */
export interface Fault {
  readonly kind: FaultKind;
  /** The component it struck. */
  readonly component: string;
  readonly point: DecisionPoint;
  /** The component's count of that point: its 0th, 1st, … API call, watch event or start. */
  readonly index: number;
  /** `crashAfterWrite`: virtual ms until the restart; `watchDelay`: ms each event is late; `staleRestart`: resourceVersions back; `containerCrash`: ms until the container exits; `containerUnready`: ms it fails readiness; `clockSkew`: ms the clock is ahead (negative: behind). */
  readonly amount?: number | undefined;
}

/** The faults a run meets: drawn at random from rates, or exactly a plan. */
export type FaultSpec = false | FaultRates | { readonly plan: readonly Fault[] };

/**
 * Where faults may strike: return false to keep a decision point free of
 * them (`({ verb }) => verb !== "list" && verb !== "watch"` keeps every view
 * fresh; `({ component }) => component === "my-operator"` spares the rest).
 * `verb` is the API verb at calls (`create`, `watch`, …), `watch` at events,
 * `start` at starts.
 */
export type FaultFilter = (at: { component: string; point: DecisionPoint; verb: string }) => boolean;

/** The API verbs that write (where `lostResponse` and `crashAfterWrite` may strike). */
export { writeVerbs };

/** Which kinds may strike at a decision point. */
export function kindsAt(point: DecisionPoint, verb: string): readonly FaultKind[] {
  if (point === "event") return eventKinds;
  if (point === "start") return startKinds;
  if (point === "container") return containerKinds;
  if (point === "clock") return clockKinds;
  if (verb === "watch") return watchKinds;
  if (verb === "list" || verb === "get") return readKinds;
  if (verb === "update" || verb === "updateStatus" || verb === "patch") return updateKinds;
  return writeKinds;
}

const readKinds: readonly FaultKind[] = ["serverError", "unavailable", "tooManyRequests", "timeout"];
const watchKinds: readonly FaultKind[] = [...readKinds, "watchDelay"];
const writeKinds: readonly FaultKind[] = [...readKinds, "lostResponse", "crashAfterWrite"];
const updateKinds: readonly FaultKind[] = [...writeKinds, "conflict"];
const eventKinds: readonly FaultKind[] = ["watchCut"];
const startKinds: readonly FaultKind[] = ["staleRestart"];
const containerKinds: readonly FaultKind[] = ["containerCrash", "containerUnready"];
const clockKinds: readonly FaultKind[] = ["clockSkew"];

/**
 * Decides each decision point: from the plan when replaying, else one draw
 * of the fault stream per point (so the draws line up from run to run).
 */
export class FaultInjector {
  /** The faults that struck, in order. */
  readonly struck: Fault[] = [];
  readonly #rates: FaultRates | undefined;
  readonly #plan: Map<string, Fault> | undefined;
  readonly #random: Random;
  #enabled = true;
  readonly #where: FaultFilter | undefined;

  constructor(spec: FaultSpec, random: Random, where?: FaultFilter) {
    this.#random = random;
    this.#where = where;
    if (spec === false) this.#enabled = false;
    else if ("plan" in spec) this.#plan = new Map(spec.plan.map((f) => [planKey(f), f]));
    else this.#rates = spec;
  }

  /** Stops every fault from now on (the run's fault window is over). */
  disable(): void {
    this.#enabled = false;
  }

  get enabled(): boolean {
    return this.#enabled;
  }

  /** The fault at this point, if one strikes; it is recorded in `struck`. */
  decide(component: string, point: DecisionPoint, index: number, verb: string): Fault | undefined {
    if (!this.#enabled) return undefined;
    // Points left out take no draw, so a run and its replay agree as long as the filter does.
    if (this.#where !== undefined && !this.#where({ component, point, verb })) return undefined;
    const kinds = kindsAt(point, verb);
    let fault: Fault | undefined;
    if (this.#plan !== undefined) {
      const planned = this.#plan.get(planKey({ component, point, index }));
      if (planned !== undefined && kinds.includes(planned.kind)) fault = planned;
    } else {
      const rates = this.#rates!;
      const u = this.#random();
      let sum = 0;
      for (const kind of kinds) {
        sum += rates[kind] ?? 0;
        if (u < sum) {
          fault = { kind, component, point, index, amount: this.#amount(kind) };
          break;
        }
      }
    }
    if (fault !== undefined) this.struck.push(fault);
    return fault;
  }

  #amount(kind: FaultKind): number | undefined {
    switch (kind) {
      case "crashAfterWrite":
        return 1_000 + Math.floor(this.#random() * 9_000);
      case "watchDelay":
        return 10 + Math.floor(this.#random() * 2_000);
      case "staleRestart":
        return 1 + Math.floor(this.#random() * 20);
      case "containerCrash":
        return 1_000 + Math.floor(this.#random() * 29_000);
      case "containerUnready":
        return 5_000 + Math.floor(this.#random() * 25_000);
      case "clockSkew":
        return Math.floor(this.#random() * 60_001) - 30_000;
      default:
        return undefined;
    }
  }
}

function planKey(f: Pick<Fault, "component" | "point" | "index">): string {
  return `${f.component}\u0000${f.point}\u0000${f.index}`;
}

/** `crashAfterWrite kube-controller-manager call#17 (+3200 ms)`: a fault in a line. */
export function describeFault(f: Fault): string {
  const amount =
    f.amount === undefined
      ? ""
      : f.kind === "staleRestart"
        ? ` (${f.amount} versions back)`
        : f.kind === "clockSkew"
          ? ` (${f.amount >= 0 ? "+" : ""}${f.amount} ms)`
          : ` (${f.amount} ms)`;
  return `${f.kind} ${f.component} ${f.point}#${f.index}${amount}`;
}
