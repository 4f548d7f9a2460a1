import type { DeepReadonly, KubeObject, ResourceDescriptor } from "@reconcile/api";
import type { ApiServerOptions, ClientUser } from "@reconcile/apiserver";
import type { Client } from "@reconcile/client";
import type { Clock, Random } from "@reconcile/clock";
import type { Logger, ReconcileObserver } from "@reconcile/controller";
import type { SharedInformerFactory } from "@reconcile/informer";
import type { Fault, FaultFilter, FaultSpec } from "./faults.js";
import type { TraceEntry } from "./trace.js";

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
  /**
   * Takes this component's next decision at a point of its own (a simulated
   * node's container starts): the fault that strikes there, traced, or
   * undefined. `on` names what it struck in the trace.
   */
  readonly faultAt: (point: "container", on: string) => Fault | undefined;
  /**
   * Another client of this component, acting as `user` (a controller's own
   * ServiceAccount): traced and faulted as `client` is, authorized as `user`.
   */
  readonly clientAs: (user: ClientUser) => Client;
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
  /** The Lease this component must hold to write (anything but the Lease itself and Events): checked after each of its writes. */
  readonly leaderElection?: { readonly namespace: string; readonly name: string } | undefined;
  /**
   * Who the component's `client` acts as: its calls are judged by the API
   * server's authorizers (RBAC, the Node authorizer) and admitted as that
   * user's, and a call it is denied breaks the `authorized` invariant — an
   * operator's missing RBAC rule shows up as a finding. Default: the server's
   * own client, which may do anything.
   */
  readonly user?: ClientUser | undefined;
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
  /** Kills a component now, as a crash would (its state is lost); it starts again after `restartAfterMs` (default 1 000). */
  crash(component: string, restartAfterMs?: number): void;
}

export interface SimulationOptions {
  /** Fixes everything that varies: uids, names, jitter, and which faults strike where. Required. */
  seed: number;
  /** Built-in controllers by `--controllers` name (`replicaset`, `deployment-controller`, …), run in one controller manager component. */
  builtins?: readonly string[] | undefined;
  /**
   * How many controller managers run the built-ins: with more than one they
   * elect a leader on the Lease `kube-system/kube-controller-manager` with
   * upstream's timings (15 s lease, 10 s renew deadline, 2 s retry), and a
   * write by one that does not hold the Lease is a violation
   * (`leader:<component>`). A manager that loses the Lease exits and is
   * restarted, as kube-controller-manager under its supervisor. Default 1 (no election).
   */
  builtinReplicas?: number | undefined;
  /**
   * Simulated nodes: a `kube-scheduler` component and one kubelet component
   * per node (`node-1`, …) on the simulated container runtime, so pods are
   * bound, started and made Ready as on a cluster. A node is a component like
   * any other: faults strike its calls, and `cluster.crash("node-2", ms)`
   * stops its heartbeats for that long. Default 0.
   */
  nodes?: number | undefined;
  /** Controllers of your own. */
  controllers?: readonly SimComponent[] | undefined;
  /** Objects to start from, written before any controller starts. */
  setup?: ((cluster: SimCluster) => Promise<void>) | undefined;
  /** What the user does while the controllers run (scale, delete, update); may `cluster.sleep`. */
  scenario?: ((cluster: SimCluster) => Promise<void>) | undefined;
  /** Checked after every step (every moment virtual time stops at). */
  invariants?: Readonly<Record<string, Invariant>> | undefined;
  /**
   * Checked once the cluster is quiet after the faults stopped; one that does not hold yet is
   * checked again as time runs on (a controller may act on a timer of its own), and is a
   * violation if it still does not hold at the end of `settleBudgetMs`.
   */
  eventually?: Readonly<Record<string, Invariant>> | undefined;
  /** The faults: rates (default {@link defaultFaultRates}), a plan to replay, or `false` for none. */
  faults?: FaultSpec | undefined;
  /** Where faults may strike (a component, a verb, a kind of point). Default: everywhere. */
  faultsWhere?: FaultFilter | undefined;
  /** Virtual ms from the start during which faults strike. Default 60 000. */
  faultWindowMs?: number | undefined;
  /** After the faults stop, virtual ms with no write and no failed reconcile that counts as steady. Default 30 000. */
  quietMs?: number | undefined;
  /** After the faults stop, virtual ms the cluster has to become steady and right. Default 900 000 (15 min: longer than a Deployment's 10-minute progress deadline). */
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
  /** The behaviours reached (see `Trace.coverage`). */
  readonly coverage: ReadonlySet<string>;
  /** Virtual ms the run lasted. */
  readonly elapsedMs: number;
}

/** Where every run's virtual time starts. */
export const simulationEpoch = Date.parse("2026-01-01T00:00:00Z");
