import { setMaxListeners } from "node:events";
import http from "node:http";
import { hostname } from "node:os";
import {
  type DeepReadonly,
  type KubeObject,
  ReconcileError,
  type ResourceDescriptor,
  type Runnable,
} from "@reconcile/api";
import { type Client, loopbackHostAllowed } from "@reconcile/client";
import { type Clock, type Random, realClock, uuidFrom } from "@reconcile/clock";
import {
  ClientEventRecorder,
  type ControllerContext,
  type EventRecorder,
  Introspection,
  type Logger,
  type MachinerySnapshot,
  type ReconcileObserver,
} from "@reconcile/controller";
import { SharedInformerFactory } from "@reconcile/informer";
import { HealthzAdaptor, LeaderElector, LeaseLock } from "@reconcile/leader-election";
import type { MetricsProvider } from "@reconcile/workqueue";
import { Registry } from "prom-client";
import { type HealthCheck, healthResponse, pingCheck } from "./health.js";
import { jsonLogger } from "./json-logger.js";
import {
  prometheusLeaderElectionMetrics,
  prometheusReconcileMetrics,
  prometheusWorkqueueMetrics,
  type ReconcileMetrics,
} from "./prometheus.js";
import type { ServingAuthorizer } from "./serving-auth.js";
import { WebhookServer } from "./webhook/server.js";

/** Something the manager runs: the one lifecycle shape, with a name. */
export type { Runnable };

const leaderElectionLostMarker = Symbol.for("reconcile.runtime.leader-election-lost");

/** Leadership was lost while running: the manager stops everything and `run` rejects with this (kube-controller-manager exits 1, `leaderelection lost`). `code` is `"runtime.leader-election-lost"`. */
export class LeaderElectionLostError extends ReconcileError<"runtime.leader-election-lost"> {
  readonly [leaderElectionLostMarker] = true;
  constructor() {
    super("runtime.leader-election-lost", "leaderelection lost");
    this.name = "LeaderElectionLostError";
  }

  static override isInstance(error: unknown): error is LeaderElectionLostError {
    return ReconcileError.hasMarker(error, leaderElectionLostMarker);
  }
}

/** What {@link Manager.controllerContext} gives: the shared parts a controller defaults from, each set. */
export interface ManagerControllerContext extends ControllerContext {
  readonly client: Client;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly queueMetricsProvider: MetricsProvider;
  readonly cacheSyncTimeoutMs: number;
}

export interface ManagerLeaderElectionOptions {
  /** Name of the Lease. Required. */
  name: string;
  /** Namespace of the Lease. Default `default`. */
  namespace?: string | undefined;
  /** This participant's identity. Default: hostname and a random suffix. */
  identity?: string | undefined;
  /** Default 15000 (controller-runtime's). */
  leaseDurationMs?: number | undefined;
  /** Default 10000. */
  renewDeadlineMs?: number | undefined;
  /** Default 2000. */
  retryPeriodMs?: number | undefined;
  /** Give the Lease up on a clean stop, so a standby takes over at once. Default true. */
  releaseOnCancel?: boolean | undefined;
}

export interface ManagerOptions {
  /** The client every informer and controller uses. Required. */
  client: Client;
  /** Leader election on a Lease gating the controllers. Default: none (every controller runs at once). */
  leaderElection?: ManagerLeaderElectionOptions | undefined;
  /** Cache only this namespace. Default: all namespaces. */
  namespace?: string | undefined;
  /** Resync period of the informers; 0 never. Default 0. */
  resyncPeriodMs?: number | undefined;
  /** How long a controller waits for its caches before failing. Default 120000, as controller-runtime. */
  cacheSyncTimeoutMs?: number | undefined;
  /** Default `realClock`. */
  clock?: Clock | undefined;
  /** The jitter of informers and leader election, reconcile IDs and the default identity. Default `Math.random`. */
  random?: Random | undefined;
  /** Told of every finished reconcile of every controller (`@reconcile/sim` traces them). Default: nobody. */
  reconcileObserver?: ReconcileObserver | undefined;
  /** Default: no logging. */
  logger?: Logger | undefined;
  /** Where metrics are registered and `/metrics` reads from. Default: a new prom-client registry. */
  registry?: Registry | undefined;
  /**
   * The cache's informers take the client's objects frozen (`acceptFrozen`):
   * on an API server in the same process they then share one frozen copy of
   * each object with every other such informer instead of each holding its
   * own. Handlers and cache readers get objects whose members are frozen
   * (a mutation throws). Default false.
   */
  acceptFrozen?: boolean | undefined;
  /**
   * Start the shared informers only once this manager leads, and stop them
   * with its term (kube-controller-manager's way: a standby holds no cache
   * and is ready). Default false: caches warm on standbys too, as
   * controller-runtime's.
   */
  informersNeedLeaderElection?: boolean | undefined;
  /** While leading, `/healthz` has one passing check per running gated runnable, named after it (kube-controller-manager's per-controller checks). Default false. */
  runnableHealthChecks?: boolean | undefined;
  /** The webhook server `getWebhookServer` returns. Default: one on port 9443 with the certificate of `<tmp>/k8s-webhook-server/serving-certs`. */
  webhookServer?: WebhookServer | undefined;
}

/** How long a cache sync may take before the Manager says it is waiting. */
const slowCacheSyncMs = 5_000;

/**
 * controller-runtime's `Manager`: one shared informer cache for every
 * controller, leader election gating the controllers, Events, `/metrics`,
 * `/healthz` and `/readyz`, and one `run({ signal })` that settles after
 * everything has stopped.
 */
export class Manager {
  readonly client: Client;
  readonly clock: Clock;
  readonly #random: Random | undefined;
  readonly #reconcileObserver: ReconcileObserver | undefined;
  readonly logger: Logger;
  /** The shared informers: ask for one with `informers.forResource(kind)`, read with `informers.lister(kind)`. */
  readonly informers: SharedInformerFactory;
  readonly registry: Registry;
  readonly cacheSyncTimeoutMs: number;
  /** This participant's identity in the election and the Events' host. */
  readonly identity: string;
  /** @internal the workqueue families, shared by every controller's queues. */
  readonly workqueueMetrics: MetricsProvider;
  /** Where the manager's controllers show their queues and last reconciles (see {@link machinery}). */
  readonly introspection = new Introspection();
  #reconcileMetrics: ReconcileMetrics | undefined;
  readonly #election: ManagerLeaderElectionOptions | undefined;
  readonly #informersNeedLeaderElection: boolean;
  readonly #runnableHealthChecks: boolean;
  readonly #runnables: (Runnable & { name: string })[] = [];
  readonly #webhookServerOption: WebhookServer | undefined;
  #webhookServer: WebhookServer | undefined;
  #runningChecks: HealthCheck[] = [];
  // One lookup per descriptor: getCached runs once per reconcile.
  readonly #indexers = new WeakMap<ResourceDescriptor, { getByKey(key: string): unknown }>();
  readonly #recorders: ClientEventRecorder[] = [];
  readonly #healthzAdaptor = new HealthzAdaptor();
  readonly #healthChecks: HealthCheck[] = [];
  readonly #readyChecks: HealthCheck[] = [];
  #leaderMetrics;
  #elector: LeaderElector | undefined;
  #leading = false;
  #cachesSynced = false;
  #running = false;

  constructor(options: ManagerOptions) {
    if (options?.client === undefined) throw new TypeError("Manager: client is required");
    this.client = options.client;
    this.clock = options.clock ?? realClock;
    this.#random = options.random;
    this.#reconcileObserver = options.reconcileObserver;
    // As controller-runtime's zap default: a reconcile error is never silent. `logger: noopLogger` opts out.
    this.logger = options.logger ?? jsonLogger();
    this.cacheSyncTimeoutMs = options.cacheSyncTimeoutMs ?? 120_000;
    this.#election = options.leaderElection;
    this.identity = options.leaderElection?.identity || `${hostname()}_${uuidFrom(options.random)}`;
    this.registry = options.registry ?? new Registry();
    this.workqueueMetrics = prometheusWorkqueueMetrics(this.registry);
    this.#leaderMetrics = prometheusLeaderElectionMetrics(this.registry);
    this.#informersNeedLeaderElection = options.informersNeedLeaderElection ?? false;
    this.#runnableHealthChecks = options.runnableHealthChecks ?? false;
    this.#webhookServerOption = options.webhookServer;
    this.informers = new SharedInformerFactory({
      client: this.client,
      clock: this.clock,
      random: options.random,
      namespace: options.namespace,
      resyncPeriodMs: options.resyncPeriodMs,
      acceptFrozen: options.acceptFrozen ?? false,
      // managedFields are never read by a controller, so never cached (as controller-runtime's default transform).
      transform: (obj: KubeObject) => {
        if (obj.metadata?.managedFields === undefined) return obj;
        const { managedFields: _, ...metadata } = obj.metadata;
        return { ...obj, metadata };
      },
      // Watch errors at warn (routine 410s not at all), handler errors at error, as client-go logs them.
      logger: this.logger,
    });
  }

  /** @internal the reconcile families (`controller_runtime_reconcile_*`), registered on first use by a builder's controller. */
  get reconcileMetrics(): ReconcileMetrics {
    this.#reconcileMetrics ??= prometheusReconcileMetrics(this.registry);
    return this.#reconcileMetrics;
  }

  /**
   * What every controller on this manager defaults from
   * (`@reconcile/controller`'s `ControllerContext`, as controller-runtime's
   * `NewUnmanaged` takes from the manager): its clock, logger, queue metrics
   * and the cache-sync timeout. Pass it (spread) as a controller's options.
   */
  controllerContext(): ManagerControllerContext {
    return {
      client: this.client,
      clock: this.clock,
      logger: this.logger,
      queueMetricsProvider: this.workqueueMetrics,
      cacheSyncTimeoutMs: this.cacheSyncTimeoutMs,
      random: this.#random,
      reconcileObserver: this.#reconcileObserver,
      introspection: this.introspection,
    };
  }

  /**
   * What runs inside this manager now, as `/debug/machinery` serves it: its
   * election (identity, whether it leads, the holder it last saw), each
   * shared informer (objects cached, synced, last resourceVersion) and each
   * controller built on its context (queues, keys in flight and waiting,
   * last reconciles).
   */
  machinery(): MachinerySnapshot[] {
    const own: MachinerySnapshot[] = [
      {
        kind: "manager",
        name: this.identity,
        state: {
          leaderElection:
            this.#election === undefined
              ? undefined
              : {
                  lease: `${this.#election.namespace ?? "default"}/${this.#election.name}`,
                  leading: this.#leading,
                  holder: this.leader() ?? "",
                },
          cachesSynced: this.#cachesSynced,
          runnables: this.#runnables.map((r) => r.name),
        },
      },
    ];
    for (const [key, informer] of this.informers.informers()) {
      own.push({
        kind: "informer",
        name: key,
        state: {
          cached: informer.getStore().listKeys().length,
          synced: informer.hasSynced(),
          resourceVersion: informer.lastSyncResourceVersion(),
          // Its lag: changes received but not yet cached, and cached but not yet handled.
          backlog: informer.backlog(),
          stopped: informer.isStopped(),
        },
      });
    }
    return [...own, ...this.introspection.snapshot()];
  }

  /**
   * The object named by `request` in the shared informer of `resource`, or
   * undefined when it is not cached. Creates the informer on first use (call
   * before `run`, or it is not started).
   */
  getCached<T extends KubeObject>(
    resource: ResourceDescriptor<T>,
    request: { namespace: string; name: string },
  ): DeepReadonly<T> | undefined {
    const key = resource.namespaced ? `${request.namespace}/${request.name}` : request.name;
    let indexer = this.#indexers.get(resource);
    if (indexer === undefined) {
      indexer = this.informers.forResource(resource).getIndexer();
      this.#indexers.set(resource, indexer);
    }
    return indexer.getByKey(key) as DeepReadonly<T> | undefined;
  }

  /**
   * The manager's webhook server (controller-runtime's `GetWebhookServer`),
   * added as a runnable on every replica and as the `webhook` readiness check
   * on first use. Webhook builders register on it.
   */
  getWebhookServer(): WebhookServer {
    if (this.#webhookServer === undefined) {
      const server = this.#webhookServerOption ?? new WebhookServer({ logger: this.logger });
      this.#webhookServer = server;
      this.add(server);
      this.addReadyzCheck("webhook", () =>
        server.started ? undefined : new Error("webhook server has not been started yet"),
      );
    }
    return this.#webhookServer;
  }

  /** Adds a runnable; controllers from the builder add themselves. Call before `run`. */
  add(runnable: Runnable & { name: string }): void {
    if (this.#running) throw new Error(`Manager.add(${runnable.name}): the manager is already running`);
    this.#runnables.push(runnable);
  }

  /** An Event recorder writing as `component` (controller-runtime's `GetEventRecorderFor`); flushed on stop. */
  eventRecorderFor(component: string): EventRecorder {
    const recorder = new ClientEventRecorder({
      client: this.client,
      component,
      host: this.identity,
      clock: this.clock,
      logger: this.logger,
    });
    this.#recorders.push(recorder);
    return recorder;
  }

  /** Adds a `/healthz` check (`AddHealthzCheck`). */
  addHealthzCheck(name: string, check: () => Error | undefined): void {
    this.#healthChecks.push({ name, check });
  }

  /** Adds a `/readyz` check (`AddReadyzCheck`). */
  addReadyzCheck(name: string, check: () => Error | undefined): void {
    this.#readyChecks.push({ name, check });
  }

  /** Whether the controllers run now: leading, or always without election. */
  isLeader(): boolean {
    return this.#leading;
  }

  /**
   * Starts the informers, then the runnables (those needing leader election
   * once this manager leads), and runs until `signal` aborts. Settles after
   * every runnable, Event write, informer and the election have stopped.
   * Rejects with `LeaderElectionLostError` if leadership is lost, after the
   * same full stop, and with a runnable's error if one fails (the others are
   * then stopped).
   */
  async run(options: { signal: AbortSignal }): Promise<void> {
    if (this.#running) throw new Error("Manager.run is already running");
    this.#running = true;
    const stop = new AbortController();
    // Every runnable listens to it (one listener each): no limit, as many controllers share it.
    setMaxListeners(0, stop.signal);
    const onAbort = () => stop.abort();
    options.signal.addEventListener("abort", onAbort, { once: true });
    if (options.signal.aborted) stop.abort();
    const failures: unknown[] = [];
    const runAll = async (runnables: Runnable[], signal: AbortSignal) => {
      await Promise.all(
        runnables.map((runnable) =>
          runnable.run({ signal }).catch((error: unknown) => {
            this.logger.error({ runnable: runnable.name, err: String(error) }, "runnable failed");
            failures.push(error);
            stop.abort();
          }),
        ),
      );
    };
    let syncWatch: Promise<void> = Promise.resolve();
    const startInformers = () => {
      this.informers.start(stop.signal);
      // A sync that takes more than a few seconds (a large cluster, RBAC denying a list) is worth a line.
      let waited = false;
      const slow = this.clock.setTimeout(() => {
        waited = true;
        this.logger.info({ waitedSeconds: slowCacheSyncMs / 1000 }, "Waiting for caches to sync");
      }, slowCacheSyncMs);
      syncWatch = this.informers.waitForCacheSync(stop.signal).then((state) => {
        this.clock.clearTimeout(slow);
        this.#cachesSynced = Object.values(state).every(Boolean);
        // Each controller says when its caches are synced; this closes the slow wait's line.
        if (this.#cachesSynced && waited) this.logger.info({}, "Caches are synced");
      });
    };
    const free = this.#runnables.filter((r) => r.needLeaderElection === false);
    const gated = this.#runnables.filter((r) => r.needLeaderElection !== false);
    // While leading: the informers (if they wait for it), the per-runnable checks, then the gated runnables.
    const lead = async (signal: AbortSignal) => {
      if (this.#informersNeedLeaderElection) startInformers();
      this.#leading = true;
      if (this.#runnableHealthChecks) this.#runningChecks = gated.map((r) => pingCheck(r.name));
      try {
        await runAll(gated, signal);
        // A runnable that returns early (or none at all, a manager of webhooks only) leaves the
        // manager running, as controller-runtime's does, until it is stopped.
        if (!signal.aborted)
          await new Promise<void>((resolve) =>
            signal.addEventListener("abort", () => resolve(), { once: true }),
          );
      } finally {
        this.#leading = false;
        this.#runningChecks = [];
      }
    };
    try {
      if (!this.#informersNeedLeaderElection) startInformers();
      const freeRun = runAll(free, stop.signal);
      let lost = false;
      if (this.#election === undefined) await lead(stop.signal);
      else lost = await this.#runElected(this.#election, lead, stop);
      stop.abort();
      await Promise.all([freeRun, syncWatch]);
      if (failures.length > 0) throw failures[0];
      if (lost && !options.signal.aborted) {
        this.logger.error({}, "leaderelection lost");
        throw new LeaderElectionLostError();
      }
    } finally {
      this.#leading = false;
      stop.abort();
      options.signal.removeEventListener("abort", onAbort);
      await Promise.all(this.#recorders.map((r) => r.flush()));
      await this.informers.shutdown();
      this.#cachesSynced = false;
      this.#running = false;
    }
  }

  /** Runs the election; the gated runnables run while leading. Resolves true when leadership was lost. */
  async #runElected(
    election: ManagerLeaderElectionOptions,
    lead: (signal: AbortSignal) => Promise<void>,
    stop: AbortController,
  ): Promise<boolean> {
    const recorder = this.eventRecorderFor(election.name);
    const elector = new LeaderElector({
      lock: new LeaseLock({
        client: this.client,
        namespace: election.namespace ?? "default",
        name: election.name,
        identity: this.identity,
        eventRecorder: recorder,
      }),
      leaseDurationMs: election.leaseDurationMs ?? 15_000,
      renewDeadlineMs: election.renewDeadlineMs ?? 10_000,
      retryPeriodMs: election.retryPeriodMs ?? 2_000,
      releaseOnCancel: election.releaseOnCancel ?? true,
      name: election.name,
      clock: this.clock,
      random: this.#random,
      watchDog: this.#healthzAdaptor,
      metricsProvider: this.#leaderMetrics,
      logger: this.logger,
      callbacks: {
        onStartedLeading: (leading) => {
          const term = AbortSignal.any([leading, stop.signal]);
          setMaxListeners(0, term);
          return lead(term);
        },
        onStoppedLeading: () => {},
        // An empty identity is a released Lease, not a leader.
        onNewLeader: (identity) => {
          if (identity !== "") this.logger.info({ identity }, "new leader elected");
        },
      },
    });
    this.#elector = elector;
    await elector.run({ signal: stop.signal });
    return !stop.signal.aborted;
  }

  /** The holder of the Lease as last observed; undefined without election. */
  leader(): string | undefined {
    return this.#elector?.getLeader();
  }

  /**
   * Answers `/metrics` (Prometheus text), `/healthz[/<check>]` (the
   * `leaderElection` watchdog with election, and added checks) and
   * `/readyz[/<check>]` (added checks and `informer-sync`, failing until the
   * caches synced), `/debug/machinery` ({@link machinery} as JSON); anything
   * else is a 404.
   */
  async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://localhost");
    const [, endpoint = "", ...rest] = url.pathname.split("/");
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { "content-type": "text/plain; charset=utf-8" }).end("method not allowed\n");
      return;
    }
    if (endpoint === "metrics" && rest.length === 0) {
      const body = await this.registry.metrics();
      res.writeHead(200, { "content-type": this.registry.contentType }).end(body);
      return;
    }
    if (endpoint === "debug" && rest.length === 1 && rest[0] === "machinery") {
      res
        .writeHead(200, { "content-type": "application/json", "cache-control": "no-store" })
        .end(
          `${JSON.stringify({ component: this.identity, at: this.clock.now(), sources: this.machinery() })}\n`,
        );
      return;
    }
    if (endpoint === "healthz" || endpoint === "readyz") {
      const checks: HealthCheck[] = [];
      if (endpoint === "healthz") {
        if (this.#election !== undefined) {
          checks.push({ name: this.#healthzAdaptor.name, check: () => this.#healthzAdaptor.check() });
        }
        checks.push(...this.#healthChecks, ...this.#runningChecks);
      } else {
        // A standby whose informers wait for leadership has nothing to sync, so it is ready.
        const waiting = this.#informersNeedLeaderElection && !this.#leading;
        checks.push({
          name: "informer-sync",
          check: () => (this.#cachesSynced || waiting ? undefined : new Error("informers not synced")),
        });
        checks.push(...this.#readyChecks);
      }
      const answer = healthResponse(endpoint, rest.join("/"), url.searchParams.has("verbose"), checks);
      res
        .writeHead(answer.status, {
          "content-type": "text/plain; charset=utf-8",
          "x-content-type-options": "nosniff",
        })
        .end(answer.body);
      return;
    }
    res.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end("404 page not found\n");
  }

  /**
   * Serves {@link handle} on `host` (default 127.0.0.1) and `port` (default 0:
   * a free one). With `authorizer` (e.g. {@link delegatedAuthorizer}) each
   * request must pass it, as upstream's metrics filter. On a loopback address
   * only IP literals and `localhost` are answered as `Host` (no DNS rebinding).
   */
  async listen(
    options: { host?: string; port?: number; authorizer?: ServingAuthorizer | undefined } = {},
  ): Promise<{ url: string; close(): Promise<void> }> {
    const host = options.host ?? "127.0.0.1";
    const loopback = host === "127.0.0.1" || host === "::1" || host === "localhost";
    const authorizer = options.authorizer;
    const guarded = async (req: http.IncomingMessage, res: http.ServerResponse) => {
      if (loopback && !loopbackHostAllowed(req.headers.host)) {
        res
          .writeHead(403, { "content-type": "text/plain; charset=utf-8" })
          .end("forbidden: host not allowed\n");
        return;
      }
      if (authorizer !== undefined) {
        const verdict = await authorizer(req, new URL(req.url ?? "/", "http://localhost").pathname);
        if (!verdict.allowed) {
          res
            .writeHead(verdict.status, { "content-type": "text/plain; charset=utf-8" })
            .end(`${verdict.message}\n`);
          return;
        }
      }
      await this.handle(req, res);
    };
    const server = http.createServer((req, res) => {
      guarded(req, res).catch((error) => {
        this.logger.error({ err: String(error) }, "serving a health or metrics request failed");
        if (!res.headersSent) res.writeHead(500).end();
        else res.destroy();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(options.port ?? 0, host, () => resolve());
    });
    const address = server.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    const url = `http://${host}:${port}`;
    this.logger.info({ url }, "serving metrics and health probes");
    return {
      url,
      close: () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
    };
  }
}
