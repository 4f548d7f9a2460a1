import { type DeepReadonly, type KubeObject, type ResourceDescriptor, StatusError } from "@reconcile/api";
import { ApiServer, type ApiServerOptions } from "@reconcile/apiserver";
import type { Client } from "@reconcile/client";
import { type Clock, FakeClock, type Random, seededRandom } from "@reconcile/clock";
import { type Logger, noopLogger, type ReconcileObserver } from "@reconcile/controller";
import { ControllerManager } from "@reconcile/controller-manager";
import { SharedInformerFactory } from "@reconcile/informer";
import {
  type ClientHost,
  ComponentClient,
  type ComponentCounters,
  type Incarnation,
} from "./component-client.js";
import { defaultFaultRates, type Fault, FaultInjector, type FaultSpec } from "./faults.js";
import { settle } from "./run-loop.js";
import { Trace, type TraceEntry } from "./trace.js";

/** What a component's constructor gets, fresh for each incarnation (each start after a crash). */
export interface SimContext {
  /** The component's own client: traced, and where its faults strike. */
  readonly client: Client;
  /** The simulation's virtual clock. */
  readonly clock: Clock;
  /** This incarnation's seeded random source. */
  readonly random: Random;
  /** Error lines go into the trace. */
  readonly logger: Logger;
  /** Pass to the controller (`ControllerContext.reconcileObserver`, `ManagerOptions.reconcileObserver`): reconciles go into the trace. */
  readonly reconcileObserver: ReconcileObserver;
  /** A fresh informer factory on `client`; the simulation starts it before `run` and checks its caches. */
  readonly informerFactory: SharedInformerFactory;
  /** 1 for the first start, 2 after the first crash, … */
  readonly incarnation: number;
}

/** A built component: what `run` does until the signal aborts. */
export interface SimRunnable {
  run(options: { signal: AbortSignal }): Promise<unknown>;
  /** Informer factories of its own (a runtime `Manager`'s `informers`) whose caches the simulation checks. */
  readonly informers?: SharedInformerFactory | undefined;
}

/** A controller under test: built anew on every start, from a context the simulation makes. */
export interface SimComponent {
  /** Names it in the trace and in faults. Required, unique. */
  readonly name: string;
  readonly construct: (context: SimContext) => SimRunnable;
}

/** A check of the cluster: a message when it is violated, nothing when it holds. */
export type Invariant = (cluster: SimCluster) => string | undefined | Promise<string | undefined>;

/** The cluster as setup, scenario and invariants see it. */
export interface SimCluster {
  /** A client free of faults, traced as `user`: the test's own writes. */
  readonly client: Client;
  readonly clock: Clock;
  /** The objects stored now (read past every fault and trace). */
  list<T extends KubeObject>(
    resource: ResourceDescriptor<T>,
    namespace?: string,
  ): Promise<readonly DeepReadonly<T>[]>;
  /** Waits `ms` of virtual time. */
  sleep(ms: number): Promise<void>;
  /** Adds a line to the trace. */
  note(text: string): void;
}

export interface SimulationOptions {
  /** Fixes everything that varies: uids, names, jitter, and which faults strike where. Required. */
  seed: number;
  /** Built-in controllers by `--controllers` name (`replicaset`, `deployment-controller`, …), run in one controller manager component. */
  builtins?: readonly string[] | undefined;
  /** Controllers of your own. */
  controllers?: readonly SimComponent[] | undefined;
  /** Objects to start from, written before any controller starts. */
  setup?: ((cluster: SimCluster) => Promise<void>) | undefined;
  /** What the user does while the controllers run (scale, delete, update); may `cluster.sleep`. */
  scenario?: ((cluster: SimCluster) => Promise<void>) | undefined;
  /** Checked after every step (every moment virtual time stops at). */
  invariants?: Readonly<Record<string, Invariant>> | undefined;
  /** Checked once the cluster is steady after the faults stopped. */
  eventually?: Readonly<Record<string, Invariant>> | undefined;
  /** The faults: rates (default {@link defaultFaultRates}), a plan to replay, or `false` for none. */
  faults?: FaultSpec | undefined;
  /** Virtual ms from the start during which faults strike. Default 60 000. */
  faultWindowMs?: number | undefined;
  /** After the faults stop, virtual ms with no write and no failed reconcile that counts as steady. Default 30 000. */
  quietMs?: number | undefined;
  /** After the faults stop, virtual ms the cluster has to become steady. Default 600 000. */
  settleBudgetMs?: number | undefined;
  /** Keep every trace entry (for the story and the JSON trace); the hash is kept either way. Default true. */
  keepTrace?: boolean | undefined;
  /** More options for the embedded API server (its clock and random source are the simulation's). */
  apiServer?: Omit<ApiServerOptions, "clock" | "random"> | undefined;
}

/** A broken invariant, or a component that failed. */
export interface Violation {
  /** The invariant's name, or `component:<name>`, `steady-state`, `cache:<component>`, `livelock`, `scenario`. */
  readonly invariant: string;
  readonly message: string;
  /** Virtual ms since the start. */
  readonly at: number;
}

export interface SimulationResult {
  readonly seed: number;
  readonly ok: boolean;
  readonly violation: Violation | undefined;
  /** The faults that struck, in order: `faults: { plan }` with these replays the run. */
  readonly faults: readonly Fault[];
  /** The sha256 of the trace: equal for equal seeds, code and options. */
  readonly traceHash: string;
  /** The entries, when kept. */
  readonly trace: readonly TraceEntry[];
  readonly traceLength: number;
  /** Virtual ms the run lasted. */
  readonly elapsedMs: number;
}

/** Where every run's virtual time starts. */
export const simulationEpoch = Date.parse("2026-01-01T00:00:00Z");

interface ComponentState {
  readonly spec: SimComponent;
  readonly counters: ComponentCounters;
  incarnations: number;
  current:
    | { incarnation: Incarnation; abort: AbortController; factories: SharedInformerFactory[] }
    | undefined;
  pendingRestart: boolean;
}

/**
 * Runs a cluster and controllers on virtual time from one seed: the API
 * server, the chosen built-in controllers and your own, with faults drawn
 * from the seed, invariants checked after every step, and a trace whose
 * hash is the same for the same seed and code. Resolves with the outcome;
 * it rejects only when the harness itself is misused.
 */
export async function simulate(options: SimulationOptions): Promise<SimulationResult> {
  const seed = options.seed;
  if (!Number.isInteger(seed)) throw new TypeError(`simulate: seed must be an integer, got ${seed}`);
  const clock = new FakeClock(simulationEpoch);
  const elapsed = () => clock.now() - simulationEpoch;
  const trace = new Trace(options.keepTrace ?? true);
  const faults = new FaultInjector(options.faults ?? defaultFaultRates, seededRandom(mix(seed, 1)));
  const faultWindowMs = options.faultWindowMs ?? 60_000;
  const quietMs = options.quietMs ?? 30_000;
  const settleBudgetMs = options.settleBudgetMs ?? 600_000;
  const server = new ApiServer({ ...options.apiServer, clock, random: seededRandom(mix(seed, 2)) });
  const direct = server.client();
  let violation: Violation | undefined;
  const fail = (invariant: string, message: string) => {
    violation ??= { invariant, message, at: elapsed() };
  };
  let lastWrite = 0;
  /** `component controller key` of each reconcile whose last attempt failed, with its error. */
  const failing = new Map<string, string>();
  const components: ComponentState[] = [];
  const runs: Promise<unknown>[] = [];
  let stopping = false;

  const host: ClientHost = {
    clock,
    trace,
    faults,
    elapsed,
    wrote: () => {
      lastWrite = elapsed();
    },
    crash: (name, restartAfterMs) => {
      const state = components.find((c) => c.spec.name === name);
      const current = state?.current;
      if (state === undefined || current === undefined || current.incarnation.dead) return;
      current.incarnation.dead = true;
      current.abort.abort();
      state.current = undefined;
      for (const key of [...failing.keys()]) if (key.startsWith(`${name} `)) failing.delete(key);
      trace.add({
        t: elapsed(),
        type: "lifecycle",
        component: name,
        what: "crash",
        incarnation: current.incarnation.number,
      });
      state.pendingRestart = true;
      clock.setTimeout(() => {
        state.pendingRestart = false;
        if (!stopping && violation === undefined) start(state);
      }, restartAfterMs);
    },
  };

  const userIncarnation: Incarnation = {
    component: "user",
    number: 1,
    signal: new AbortController().signal,
    dead: false,
    expireNextWatch: new Set(),
    staleLists: new Map(),
    staleDepth: undefined,
  };
  const userClient = new ComponentClient(
    host,
    direct,
    { calls: 0, events: 0, starts: 0 },
    userIncarnation,
    false,
  );
  const cluster: SimCluster = {
    client: userClient,
    clock,
    list: async (resource, namespace) => (await direct.resource(resource, namespace).list()).items as never,
    sleep: (ms) => clock.sleep(ms),
    note: (text) => trace.add({ t: elapsed(), type: "note", text }),
  };

  const start = (state: ComponentState) => {
    const name = state.spec.name;
    const number = ++state.incarnations;
    const abort = new AbortController();
    const incarnation: Incarnation = {
      component: name,
      number,
      signal: abort.signal,
      dead: false,
      expireNextWatch: new Set(),
      staleLists: new Map(),
      staleDepth: undefined,
    };
    const index = state.counters.starts++;
    if (number > 1) {
      const fault = faults.decide(name, "start", index, "start");
      if (fault !== undefined) {
        trace.add({ t: elapsed(), type: "fault", fault });
        incarnation.staleDepth = fault.amount;
      }
    }
    const client = new ComponentClient(host, direct, state.counters, incarnation, true);
    const random = seededRandom(mix(mix(seed, 3 + number), hashName(name)));
    const informerFactory = new SharedInformerFactory({
      client,
      clock,
      random,
      watchErrorHandler: () => undefined,
    });
    const context: SimContext = {
      client,
      clock,
      random,
      logger: traceLogger(trace, name, elapsed),
      reconcileObserver: (record) => {
        // A reconcile that keeps failing is not steady either, however long its backoff.
        const failingKey = `${name} ${record.controller} ${String(record.key)}`;
        if (incarnation.dead) {
          // The dying process's last words: its keys are the next incarnation's to settle.
        } else if (record.outcome === "error") {
          host.wrote();
          failing.set(failingKey, errorText(record.error));
        } else failing.delete(failingKey);
        trace.add({
          t: elapsed(),
          type: "reconcile",
          component: name,
          controller: record.controller,
          key: String(record.key),
          reason: record.reason,
          outcome: record.outcome,
          error: record.error === undefined ? undefined : errorText(record.error),
        });
      },
      informerFactory,
      incarnation: number,
    };
    let built: SimRunnable;
    try {
      built = state.spec.construct(context);
    } catch (error) {
      // A component that cannot be built at all is a mistake in the test, not a finding.
      if (number === 1)
        throw new Error(`simulate: component "${name}" failed to construct: ${errorText(error)}`, {
          cause: error,
        });
      fail(`component:${name}`, `construct failed: ${errorText(error)}`);
      return;
    }
    const factories = [informerFactory, ...(built.informers === undefined ? [] : [built.informers])];
    state.current = { incarnation, abort, factories };
    trace.add({ t: elapsed(), type: "lifecycle", component: name, what: "start", incarnation: number });
    runs.push(
      (async () => {
        informerFactory.start(abort.signal);
        try {
          await built.run({ signal: abort.signal });
        } finally {
          await informerFactory.shutdown();
        }
      })().catch((error) => {
        if (!incarnation.dead && !stopping) fail(`component:${name}`, `run failed: ${errorText(error)}`);
      }),
    );
  };

  try {
    await options.setup?.(cluster);
  } catch (error) {
    throw new Error(`simulate: setup failed: ${errorText(error)}`, { cause: error });
  }
  const specs: SimComponent[] = [];
  if (options.builtins !== undefined && options.builtins.length > 0)
    specs.push(builtinComponent(options.builtins));
  specs.push(...(options.controllers ?? []));
  const names = new Set<string>();
  for (const spec of specs) {
    if (names.has(spec.name) || spec.name === "user")
      throw new Error(`simulate: component name "${spec.name}" is taken`);
    names.add(spec.name);
    const state: ComponentState = {
      spec,
      counters: { calls: 0, events: 0, starts: 0 },
      incarnations: 0,
      current: undefined,
      pendingRestart: false,
    };
    components.push(state);
    start(state);
  }

  let scenarioDone = options.scenario === undefined;
  if (options.scenario !== undefined) {
    options.scenario(cluster).then(
      () => {
        scenarioDone = true;
      },
      (error) => {
        scenarioDone = true;
        fail("scenario", errorText(error));
      },
    );
  }

  let settleStart: number | undefined;
  for (;;) {
    if (!(await settle())) {
      fail(
        "livelock",
        "work kept running without ever waiting for time (an endless loop of immediate requeues?)",
      );
      break;
    }
    if (violation !== undefined) break;
    for (const [name, check] of Object.entries(options.invariants ?? {})) {
      const message = await runInvariant(check, cluster);
      if (message !== undefined) {
        fail(name, message);
        break;
      }
    }
    if (violation !== undefined) break;
    const now = elapsed();
    if (faults.enabled && now >= faultWindowMs) faults.disable();
    if (!faults.enabled && settleStart === undefined) {
      settleStart = Math.max(now, faultWindowMs);
      trace.add({ t: now, type: "note", text: "faults stop" });
    }
    const restarting = components.some((c) => c.pendingRestart);
    const quiet =
      scenarioDone &&
      !restarting &&
      failing.size === 0 &&
      settleStart !== undefined &&
      now - Math.max(lastWrite, settleStart) >= quietMs;
    if (quiet) break;
    if (settleStart !== undefined && now - settleStart > settleBudgetMs) {
      const [key, error] = [...failing][0] ?? [];
      fail(
        "steady-state",
        key === undefined
          ? `still writing ${settleBudgetMs} ms after the faults stopped (last write at +${lastWrite} ms)`
          : `still failing ${settleBudgetMs} ms after the faults stopped: ${key}: ${error}`,
      );
      break;
    }
    const next = clock.pendingTimers()[0];
    // Stop at the next timer, or at the moment the faults stop or the cluster would count as steady.
    const marks = [
      next?.at === undefined ? Number.POSITIVE_INFINITY : next.at - simulationEpoch,
      faults.enabled ? faultWindowMs : Number.POSITIVE_INFINITY,
      settleStart === undefined ? Number.POSITIVE_INFINITY : Math.max(lastWrite, settleStart) + quietMs,
    ];
    // A mark already passed (steady in time, but waiting on a failing reconcile or the scenario) is no stop.
    const target = Math.min(...marks.filter((mark) => mark > now));
    if (target === Number.POSITIVE_INFINITY) {
      if (!scenarioDone)
        fail("scenario", "the scenario waits on something that never happens (no timer is left)");
      break;
    }
    await clock.advance(Math.max(0, target - now));
  }

  if (violation === undefined) {
    for (const [name, check] of Object.entries(options.eventually ?? {})) {
      const message = await runInvariant(check, cluster);
      if (message !== undefined) {
        fail(name, message);
        break;
      }
    }
  }
  if (violation === undefined) await checkCaches(components, direct, fail);

  stopping = true;
  for (const state of components) {
    if (state.current === undefined) continue;
    state.current.incarnation.dead = true;
    state.current.abort.abort();
    trace.add({
      t: elapsed(),
      type: "lifecycle",
      component: state.spec.name,
      what: "stop",
      incarnation: state.current.incarnation.number,
    });
  }
  const stopped = Promise.all(runs);
  // Stopping may need time to pass (a sleep that ends on abort still needs its timer cleared).
  let done = false;
  void stopped.then(() => {
    done = true;
  });
  for (let i = 0; i < 100 && !done; i++) {
    await settle();
    if (!done && clock.pendingTimers().length > 0) await clock.advance(1_000);
  }
  await server.close();
  return {
    seed,
    ok: violation === undefined,
    violation,
    faults: [...faults.struck],
    traceHash: trace.digest(),
    trace: trace.entries,
    traceLength: trace.length,
    elapsedMs: elapsed(),
  };
}

/** The built-in controllers in one controller manager, without leader election. */
function builtinComponent(controllers: readonly string[]): SimComponent {
  return {
    name: "kube-controller-manager",
    construct: (context) => {
      const manager = new ControllerManager({
        client: context.client,
        clock: context.clock,
        random: context.random,
        reconcileObserver: context.reconcileObserver,
        logger: context.logger,
        controllers: [...controllers],
        leaderElection: false,
      });
      return { run: (o) => manager.run(o), informers: manager.manager.informers };
    },
  };
}

/**
 * Every informer of every live component holds what the server holds:
 * the same objects at the same resourceVersions.
 */
async function checkCaches(
  components: readonly ComponentState[],
  direct: Client,
  fail: (invariant: string, message: string) => void,
): Promise<void> {
  for (const state of components) {
    for (const factory of state.current?.factories ?? []) {
      for (const [key, informer] of factory.informers()) {
        const resource = informer.resource;
        if (resource === undefined) continue;
        if (!informer.hasSynced()) {
          fail(`cache:${state.spec.name}`, `the ${key} informer never synced`);
          return;
        }
        const server = (await direct.resource(resource).list()).items;
        const want = new Set(server.map(versionOf));
        const have = new Set(informer.getStore().list().map(versionOf));
        const missing = [...want].filter((v) => !have.has(v));
        const extra = [...have].filter((v) => !want.has(v));
        if (missing.length > 0 || extra.length > 0) {
          fail(
            `cache:${state.spec.name}`,
            `the ${key} informer's cache differs from the server: missing ${missing.slice(0, 5).join(", ") || "none"}; stale or extra ${extra.slice(0, 5).join(", ") || "none"}`,
          );
          return;
        }
      }
    }
  }
}

function versionOf(o: DeepReadonly<KubeObject>): string {
  const meta = o.metadata;
  return `${meta?.namespace ? `${meta.namespace}/` : ""}${meta?.name}@${meta?.resourceVersion}`;
}

async function runInvariant(check: Invariant, cluster: SimCluster): Promise<string | undefined> {
  try {
    const message = await check(cluster);
    return typeof message === "string" ? message : undefined;
  } catch (error) {
    return `the invariant threw: ${errorText(error)}`;
  }
}

function traceLogger(trace: Trace, component: string, elapsed: () => number): Logger {
  const logger: Logger = {
    ...noopLogger,
    error: (fields: Record<string, unknown>, message?: string) => {
      // Failed reconciles are traced as reconciles already.
      if (message?.startsWith("Reconciler error")) return;
      const err = fields?.err === undefined ? "" : `: ${errorText(fields.err)}`;
      trace.add({ t: elapsed(), type: "note", text: `${component} logs error "${message ?? ""}"${err}` });
    },
    child: () => logger,
  } as Logger;
  return logger;
}

export function errorText(error: unknown): string {
  if (error instanceof StatusError) return `${error.status.code} ${error.status.reason}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

/** A 32-bit mix of two numbers (for deriving independent seeded streams). */
export function mix(a: number, b: number): number {
  let h = Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(b + 0x632be5ab, 0xc2b2ae35);
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  return h >>> 0;
}

function hashName(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

export { defaultFaultRates };
