import { leases, StatusError } from "@reconcile/api";
import { ApiServer, type ClientUser, embeddedAdmissionPlugins } from "@reconcile/apiserver";
import type { Client } from "@reconcile/client";
import { type Clock, FakeClock, seededRandom } from "@reconcile/clock";
import { deliveryText, type Logger, noopLogger } from "@reconcile/controller";
import { LeaderElectionLostError } from "@reconcile/controller-manager";
import { SharedInformerFactory } from "@reconcile/informer";
import { checkCaches } from "./caches.js";
import {
  type ClientHost,
  ComponentClient,
  type ComponentCounters,
  type Incarnation,
  newIncarnation,
} from "./component-client.js";
import { builtinComponent, kubeletComponent, schedulerComponent } from "./components.js";
import { defaultFaultRates, FaultInjector } from "./faults.js";
import { garbageCollectorCheck } from "./gc-check.js";
import { settle } from "./run-loop.js";
import { Trace } from "./trace.js";
import {
  type Invariant,
  type SimCluster,
  type SimComponent,
  type SimContext,
  type SimRunnable,
  type SimulationOptions,
  type SimulationResult,
  simulationEpoch,
  type Violation,
} from "./types.js";

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
  if (!Number.isInteger(options.seed))
    throw new TypeError(`simulate: seed must be an integer, got ${options.seed}`);
  const run = new SimulationRun(options);
  try {
    await run.begin();
  } catch (error) {
    // A misused harness (a setup that fails, a component that cannot be built) still stops cleanly.
    await run.stop();
    throw error;
  }
  await run.advanceUntilSteady();
  return run.finish();
}

/** One run's state: the cluster, its components, and what has been seen. */
class SimulationRun {
  readonly seed: number;
  readonly options: SimulationOptions;
  readonly clock = new FakeClock(simulationEpoch);
  readonly trace: Trace;
  readonly faults: FaultInjector;
  readonly faultWindowMs: number;
  readonly quietMs: number;
  readonly settleBudgetMs: number;
  readonly server: ApiServer;
  readonly direct: Client;
  violation: Violation | undefined;
  lastWrite = 0;
  /** `component controller key` of each reconcile whose last attempt failed, with its error. */
  readonly failing = new Map<string, string>();
  readonly components: ComponentState[] = [];
  readonly runs: Promise<unknown>[] = [];
  stopping = false;
  scenarioDone = false;
  settleStart: number | undefined;
  readonly host: ClientHost;
  readonly cluster: SimCluster;

  constructor(options: SimulationOptions) {
    this.options = options;
    this.seed = options.seed;
    this.trace = new Trace(options.keepTrace ?? true);
    this.faults = new FaultInjector(
      options.faults ?? defaultFaultRates,
      seededRandom(mix(this.seed, 1)),
      options.faultsWhere,
    );
    this.faultWindowMs = options.faultWindowMs ?? 60_000;
    this.quietMs = options.quietMs ?? 30_000;
    this.settleBudgetMs = options.settleBudgetMs ?? 900_000;
    const gcCheck = garbageCollectorCheck(
      () => this.server,
      (message) => this.fail("gc", message),
    );
    this.server = new ApiServer({
      ...options.apiServer,
      admissionPlugins: [...(options.apiServer?.admissionPlugins ?? embeddedAdmissionPlugins), gcCheck],
      clock: this.clock,
      random: seededRandom(mix(this.seed, 2)),
    });
    this.direct = this.server.client();
    // A component's call its identity may not make is a finding: the component lacks a permission.
    this.server.auth.onDenied((attributes, reason) => {
      const what = attributes.resourceRequest
        ? `${attributes.verb} ${attributes.resource}${attributes.subresource ? `/${attributes.subresource}` : ""}`
        : `${attributes.verb} ${attributes.path}`;
      this.fail(
        "authorized",
        `${attributes.user.username} was denied ${what}${attributes.resourceRequest && attributes.namespace ? ` in ${attributes.namespace}` : ""}${reason ? `: ${reason}` : ""}`,
      );
    });
    this.host = {
      clock: this.clock,
      trace: this.trace,
      faults: this.faults,
      elapsed: () => this.elapsed(),
      wrote: (component, resource) => {
        // Lease renewals are heartbeats, not work: a cluster that only renews is quiet.
        if (resource !== "leases.coordination.k8s.io") this.lastWrite = this.elapsed();
        if (component !== undefined && resource !== undefined) void this.#checkLeader(component, resource);
      },
      crash: (name, restartAfterMs) => {
        const state = this.components.find((c) => c.spec.name === name);
        const current = state?.current;
        if (state === undefined || current === undefined || current.incarnation.dead) return;
        current.incarnation.dead = true;
        current.abort.abort();
        state.current = undefined;
        for (const key of [...this.failing.keys()]) if (key.startsWith(`${name} `)) this.failing.delete(key);
        this.trace.add({
          t: this.elapsed(),
          type: "lifecycle",
          component: name,
          what: "crash",
          incarnation: current.incarnation.number,
        });
        state.pendingRestart = true;
        this.clock.setTimeout(() => {
          state.pendingRestart = false;
          if (!this.stopping && this.violation === undefined) this.start(state);
        }, restartAfterMs);
      },
    };

    const userIncarnation = newIncarnation("user", 1, new AbortController().signal);
    const userClient = new ComponentClient(
      this.host,
      this.direct,
      { calls: 0, events: 0, starts: 0, containers: 0 },
      userIncarnation,
      false,
    );
    this.cluster = {
      client: userClient,
      clock: this.clock,
      list: async (resource, namespace) =>
        (await this.direct.resource(resource, namespace).list()).items as never,
      sleep: (ms) => this.clock.sleep(ms),
      note: (text) => this.trace.add({ t: this.elapsed(), type: "note", text }),
      crash: (component, restartAfterMs) => {
        if (!this.components.some((c) => c.spec.name === component))
          throw new Error(`simulate: there is no component "${component}"`);
        this.host.crash(component, restartAfterMs ?? 1_000);
      },
    };
  }

  /** A write by an elected component that does not hold its Lease breaks the election's promise. */
  async #checkLeader(component: string, resource: string): Promise<void> {
    const election = this.components.find((c) => c.spec.name === component)?.spec.leaderElection;
    if (election === undefined || resource === "leases.coordination.k8s.io" || resource === "events") return;
    let holder: string | undefined;
    try {
      const lease = await this.direct.resource(leases, election.namespace).get(election.name);
      holder = lease.spec?.holderIdentity ?? undefined;
    } catch {
      holder = undefined;
    }
    if (holder !== component) {
      this.fail(
        `leader:${component}`,
        `${component} wrote ${resource} while the Lease ${election.namespace}/${election.name} was held by ${holder ?? "nobody"}`,
      );
    }
  }

  elapsed(): number {
    return this.clock.now() - simulationEpoch;
  }

  fail(invariant: string, message: string): void {
    this.violation ??= { invariant, message, at: this.elapsed() };
  }

  /** Writes the setup, starts every component, and sets the scenario going. */
  async begin(): Promise<void> {
    try {
      await this.options.setup?.(this.cluster);
    } catch (error) {
      throw new Error(`simulate: setup failed: ${errorText(error)}`, { cause: error });
    }
    const specs: SimComponent[] = [];
    if (this.options.builtins !== undefined && this.options.builtins.length > 0) {
      const replicas = this.options.builtinReplicas ?? 1;
      if (replicas === 1)
        specs.push(builtinComponent(this.options.builtins, "kube-controller-manager", false));
      else
        for (let i = 1; i <= replicas; i++)
          specs.push(builtinComponent(this.options.builtins, `kube-controller-manager-${i}`, true));
    }
    const nodes = this.options.nodes ?? 0;
    if (nodes > 0) {
      specs.push(schedulerComponent());
      for (let i = 1; i <= nodes; i++) specs.push(kubeletComponent(`node-${i}`, i));
    }
    specs.push(...(this.options.controllers ?? []));
    const names = new Set<string>();
    for (const spec of specs) {
      if (names.has(spec.name) || spec.name === "user")
        throw new Error(`simulate: component name "${spec.name}" is taken`);
      names.add(spec.name);
      const state: ComponentState = {
        spec,
        counters: { calls: 0, events: 0, starts: 0, containers: 0 },
        incarnations: 0,
        current: undefined,
        pendingRestart: false,
      };
      this.components.push(state);
      this.start(state);
    }

    this.scenarioDone = this.options.scenario === undefined;
    if (this.options.scenario !== undefined) {
      this.options.scenario(this.cluster).then(
        () => {
          this.scenarioDone = true;
        },
        (error) => {
          this.scenarioDone = true;
          this.fail("scenario", errorText(error));
        },
      );
    }
  }

  start(state: ComponentState): void {
    const name = state.spec.name;
    const number = ++state.incarnations;
    const abort = new AbortController();
    const incarnation = newIncarnation(name, number, abort.signal);
    const index = state.counters.starts++;
    if (number > 1) {
      const fault = this.faults.decide(name, "start", index, "start");
      if (fault !== undefined) {
        this.trace.add({ t: this.elapsed(), type: "fault", fault });
        incarnation.staleDepth = fault.amount;
      }
    }
    // An elected component may see the time skewed for this incarnation.
    let clock: Clock = this.clock;
    if (state.spec.leaderElection !== undefined) {
      const skew = this.faults.decide(name, "clock", index, "clock");
      if (skew !== undefined) {
        this.trace.add({ t: this.elapsed(), type: "fault", fault: skew });
        clock = skewedClock(this.clock, skew.amount ?? 0);
      }
    }
    const clientAs = (user: ClientUser | undefined) =>
      new ComponentClient(
        this.host,
        user === undefined ? this.direct : this.server.client({ user }),
        state.counters,
        incarnation,
        true,
      );
    const client = clientAs(state.spec.user);
    const random = seededRandom(mix(mix(this.seed, 3 + number), hashName(name)));
    const informerFactory = new SharedInformerFactory({
      client,
      clock,
      random,
      watchErrorHandler: () => undefined,
    });
    const context: SimContext = {
      faultAt: (point, on) => {
        if (incarnation.dead) return undefined;
        const fault = this.faults.decide(name, point, state.counters.containers++, point);
        if (fault !== undefined) this.trace.add({ t: this.elapsed(), type: "fault", fault, on });
        return fault;
      },
      client,
      clock,
      random,
      logger: traceLogger(this.trace, name, () => this.elapsed()),
      reconcileObserver: (record) => {
        // A reconcile that keeps failing is not steady either, however long its backoff.
        const failingKey = `${name} ${record.controller} ${String(record.key)}`;
        if (incarnation.dead) {
          // The dying process's last words: its keys are the next incarnation's to settle.
        } else if (record.outcome === "error") {
          this.host.wrote();
          this.failing.set(failingKey, errorText(record.error));
        } else this.failing.delete(failingKey);
        this.trace.add({
          t: this.elapsed(),
          type: "reconcile",
          component: name,
          controller: record.controller,
          key: String(record.key),
          reason: record.reason,
          outcome: record.outcome,
          error: record.error === undefined ? undefined : errorText(record.error),
          trigger: record.trigger === undefined ? undefined : deliveryText(record.trigger),
        });
      },
      informerFactory,
      incarnation: number,
      clientAs,
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
      this.fail(`component:${name}`, `construct failed: ${errorText(error)}`);
      return;
    }
    const factories = [informerFactory, ...(built.informers === undefined ? [] : [built.informers])];
    state.current = { incarnation, abort, factories };
    this.trace.add({
      t: this.elapsed(),
      type: "lifecycle",
      component: name,
      what: "start",
      incarnation: number,
    });
    this.runs.push(
      (async () => {
        informerFactory.start(abort.signal);
        try {
          await built.run({ signal: abort.signal });
        } finally {
          await informerFactory.shutdown();
        }
      })().catch((error) => {
        if (incarnation.dead || this.stopping) return;
        // kube-controller-manager exits when it loses the Lease; its supervisor starts it again.
        if (LeaderElectionLostError.isInstance(error)) {
          this.trace.add({ t: this.elapsed(), type: "note", text: `${name} lost the Lease and exits` });
          this.host.crash(name, 1_000);
        } else this.fail(`component:${name}`, `run failed: ${errorText(error)}`);
      }),
    );
  }

  /** Steps virtual time until the cluster is steady after the faults, or an invariant breaks. */
  async advanceUntilSteady(): Promise<void> {
    let unmet: { invariant: string; message: string } | undefined;
    for (;;) {
      if (!(await settle())) {
        this.fail(
          "livelock",
          "work kept running without ever waiting for time (an endless loop of immediate requeues?)",
        );
        break;
      }
      if (this.violation !== undefined) break;
      for (const [name, check] of Object.entries(this.options.invariants ?? {})) {
        const message = await runInvariant(check, this.cluster);
        if (message !== undefined) {
          this.fail(name, message);
          break;
        }
      }
      if (this.violation !== undefined) break;
      const now = this.elapsed();
      if (this.faults.enabled && now >= this.faultWindowMs) this.faults.disable();
      if (!this.faults.enabled && this.settleStart === undefined) {
        this.settleStart = Math.max(now, this.faultWindowMs);
        this.trace.add({ t: now, type: "note", text: "faults stop" });
      }
      const restarting = this.components.some((c) => c.pendingRestart);
      const quiet =
        this.scenarioDone &&
        !restarting &&
        this.failing.size === 0 &&
        this.settleStart !== undefined &&
        now - Math.max(this.lastWrite, this.settleStart) >= this.quietMs;
      // Quiet, and every eventual check holds: done. Quiet but not yet right: a controller may
      // still act on a timer of its own (a progress deadline, a requeue), so time runs on.
      if (quiet) {
        unmet = await this.#unmetEventually();
        if (unmet === undefined) break;
      }
      if (this.settleStart !== undefined && now - this.settleStart > this.settleBudgetMs) {
        const [key, error] = [...this.failing][0] ?? [];
        unmet = await this.#unmetEventually();
        if (unmet !== undefined) {
          this.fail(unmet.invariant, unmet.message);
          break;
        }
        this.fail(
          "steady-state",
          key === undefined
            ? `still writing ${this.settleBudgetMs} ms after the faults stopped (last write at +${this.lastWrite} ms)`
            : `still failing ${this.settleBudgetMs} ms after the faults stopped: ${key}: ${error}`,
        );
        break;
      }
      const next = this.clock.pendingTimers()[0];
      // Stop at the next timer, or at the moment the faults stop or the cluster would count as steady.
      const marks = [
        next?.at === undefined ? Number.POSITIVE_INFINITY : next.at - simulationEpoch,
        this.faults.enabled ? this.faultWindowMs : Number.POSITIVE_INFINITY,
        this.settleStart === undefined
          ? Number.POSITIVE_INFINITY
          : Math.max(this.lastWrite, this.settleStart) + this.quietMs,
      ];
      // A mark already passed (steady in time, but waiting on a failing reconcile or the scenario) is no stop.
      const target = Math.min(...marks.filter((mark) => mark > now));
      if (target === Number.POSITIVE_INFINITY) {
        if (!this.scenarioDone)
          this.fail("scenario", "the scenario waits on something that never happens (no timer is left)");
        else if (unmet !== undefined) this.fail(unmet.invariant, unmet.message);
        break;
      }
      await this.clock.advance(Math.max(0, target - now));
    }
  }

  /** The first eventual check (yours, then the caches') that does not hold yet. */
  async #unmetEventually(): Promise<{ invariant: string; message: string } | undefined> {
    for (const [invariant, check] of Object.entries(this.options.eventually ?? {})) {
      const message = await runInvariant(check, this.cluster);
      if (message !== undefined) return { invariant, message };
    }
    // Every cache agrees with the server (a watch still late delivers what it holds in time).
    return checkCaches(this.components, this.direct);
  }

  /** A full stop, and the result. */
  async finish(): Promise<SimulationResult> {
    await this.stop();
    return {
      seed: this.seed,
      ok: this.violation === undefined,
      violation: this.violation,
      faults: [...this.faults.struck],
      traceHash: this.trace.digest(),
      trace: this.trace.entries,
      traceLength: this.trace.length,
      coverage: this.trace.coverage,
      elapsedMs: this.elapsed(),
    };
  }

  /** Stops every component, lets them finish on virtual time, and closes the API server. */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const state of this.components) {
      if (state.current === undefined) continue;
      state.current.incarnation.dead = true;
      state.current.abort.abort();
      this.trace.add({
        t: this.elapsed(),
        type: "lifecycle",
        component: state.spec.name,
        what: "stop",
        incarnation: state.current.incarnation.number,
      });
    }
    const stopped = Promise.all(this.runs);
    // Stopping may need time to pass (a sleep that ends on abort still needs its timer cleared).
    let done = false;
    void stopped.then(() => {
      done = true;
    });
    for (let i = 0; i < 100 && !done; i++) {
      await settle();
      if (!done && this.clock.pendingTimers().length > 0) await this.clock.advance(1_000);
    }
    await this.server.close();
  }
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

/** `base` read `offsetMs` ahead (behind when negative); timers and sleeps run on `base` unchanged. */
function skewedClock(base: Clock, offsetMs: number): Clock {
  return {
    now: () => base.now() + offsetMs,
    setTimeout: (callback, ms) => base.setTimeout(callback, ms),
    clearTimeout: (handle) => base.clearTimeout(handle),
    sleep: (ms, options) => base.sleep(ms, options),
  };
}
