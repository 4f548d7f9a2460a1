import { randomUUID } from "node:crypto";
import http from "node:http";
import { hostname } from "node:os";
import type { Client } from "@reconcile/client";
import { type Clock, realClock } from "@reconcile/clock";
import { ClientEventRecorder, type Logger, noopLogger } from "@reconcile/controller";
import { SharedInformerFactory } from "@reconcile/informer";
import { HealthzAdaptor, LeaderElector, LeaseLock } from "@reconcile/leader-election";
import { Registry } from "prom-client";
import type {
  ControllerContext,
  ControllerDescriptors,
  RunnableController,
} from "./controller-descriptors.js";
import { isControllerEnabled, parseControllersFlag } from "./controllers-flag.js";
import { newControllerDescriptors } from "./default-controllers.js";
import { type HealthCheck, healthResponse, pingCheck } from "./health.js";
import {
  prometheusLeaderElectionMetrics,
  prometheusWorkqueueMetrics,
  runningManagedControllersGauge,
} from "./metrics.js";

/** Leader election of the manager, with kube-controller-manager's defaults. */
export interface LeaderElectionOptions {
  /** Namespace of the Lease. Default `kube-system`. */
  namespace?: string | undefined;
  /** Name of the Lease. Default `kube-controller-manager`. */
  name?: string | undefined;
  /** This participant's identity. Default `<hostname>_<random uuid>`. */
  identity?: string | undefined;
  /** Default 15000 (`--leader-elect-lease-duration`). */
  leaseDurationMs?: number | undefined;
  /** Default 10000 (`--leader-elect-renew-deadline`). */
  renewDeadlineMs?: number | undefined;
  /** Default 2000 (`--leader-elect-retry-period`). */
  retryPeriodMs?: number | undefined;
  /** Give the Lease up when `run`'s signal aborts, so a standby takes over at once. Default false, as upstream. */
  releaseOnCancel?: boolean | undefined;
}

export interface ControllerManagerOptions {
  /** The client every controller and the shared informers use. Required. */
  client: Client;
  /** A `--controllers` list: `*`, names, aliases, `-name` (a comma string or an array). Default `*`. */
  controllers?: string | readonly string[] | undefined;
  /** The controller table. Default `newControllerDescriptors()`. */
  descriptors?: ControllerDescriptors | undefined;
  /** Workers per controller by canonical name (`--concurrent-*-syncs`). Default: each descriptor's default (5). */
  workers?: Readonly<Record<string, number>> | undefined;
  /** Elect a leader on a Lease before running any controller; `false` runs at once. Default: enabled with upstream's defaults. */
  leaderElection?: LeaderElectionOptions | false | undefined;
  /** Resync period of the shared informers. Default 0 (none). */
  resyncPeriodMs?: number | undefined;
  /** Default `realClock`. */
  clock?: Clock | undefined;
  /** pino-shaped logger. Default: silent. */
  logger?: Logger | undefined;
  /** Where `/metrics` families live. Default: a new prom-client `Registry`. */
  registry?: Registry | undefined;
}

interface ElectionSettings {
  namespace: string;
  name: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  releaseOnCancel: boolean;
}

/** Leadership was lost while running: kube-controller-manager exits 1 (`leaderelection lost`). */
export class LeaderElectionLostError extends Error {
  constructor() {
    super("leaderelection lost");
    this.name = "LeaderElectionLostError";
  }
}

/**
 * kube-controller-manager in miniature (`NewControllerManagerCommand` /
 * `Run` / `StartControllers`): validates the `--controllers` list at
 * construction, then `run` elects a leader on the Lease
 * `kube-system/kube-controller-manager` (unless disabled) and, while it
 * leads, builds every enabled controller on one shared informer factory,
 * starts the factory only after all are built, and runs them until the
 * signal aborts or leadership is lost. Serves `/healthz` (the
 * `leaderElection` check and one per started controller), `/readyz` and
 * `/metrics` through `handle` or `listen`.
 */
export class ControllerManager {
  /** The prom-client registry behind `/metrics`. */
  readonly registry: Registry;
  /** Canonical names of the controllers this manager runs when leading, in table order. */
  readonly enabledControllers: readonly string[];
  /** This participant's identity in the election (also the Events' host). */
  readonly identity: string;
  readonly #client: Client;
  readonly #descriptors: ControllerDescriptors;
  readonly #workers: Readonly<Record<string, number>>;
  readonly #leaderElection: ElectionSettings | undefined;
  readonly #resyncPeriodMs: number;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #queueMetrics;
  readonly #leaderMetrics;
  readonly #runningGauge;
  readonly #healthzAdaptor = new HealthzAdaptor();
  #controllerChecks: HealthCheck[] = [];
  #elector: LeaderElector | undefined;
  #leading = false;
  #synced = false;
  #running = false;

  constructor(options: ControllerManagerOptions) {
    if (options?.client === undefined) throw new TypeError("ControllerManager: client is required");
    this.#client = options.client;
    this.#descriptors = options.descriptors ?? newControllerDescriptors();
    const controllers = parseControllersFlag(options.controllers ?? "*", this.#descriptors);
    this.enabledControllers = this.#descriptors
      .all()
      .filter((d) => isControllerEnabled(d.name, d.disabledByDefault ?? false, controllers))
      .map((d) => d.name);
    this.#workers = options.workers ?? {};
    for (const [name, workers] of Object.entries(this.#workers)) {
      if (this.#descriptors.canonicalName(name) !== name) {
        throw new RangeError(`ControllerManager: workers names "${name}", which is not a known controller`);
      }
      if (!Number.isInteger(workers) || workers < 1) {
        throw new RangeError(
          `ControllerManager: workers of ${name} must be a positive integer, got ${workers}`,
        );
      }
    }
    const election = options.leaderElection;
    this.identity = (election ? election.identity : undefined) || `${hostname()}_${randomUUID()}`;
    this.#leaderElection =
      election === false
        ? undefined
        : {
            namespace: election?.namespace ?? "kube-system",
            name: election?.name ?? "kube-controller-manager",
            leaseDurationMs: election?.leaseDurationMs ?? 15_000,
            renewDeadlineMs: election?.renewDeadlineMs ?? 10_000,
            retryPeriodMs: election?.retryPeriodMs ?? 2_000,
            releaseOnCancel: election?.releaseOnCancel ?? false,
          };
    this.#resyncPeriodMs = options.resyncPeriodMs ?? 0;
    this.#clock = options.clock ?? realClock;
    this.#logger = options.logger ?? noopLogger;
    this.registry = options.registry ?? new Registry();
    this.#queueMetrics = prometheusWorkqueueMetrics(this.registry);
    this.#leaderMetrics = prometheusLeaderElectionMetrics(this.registry);
    this.#runningGauge = runningManagedControllersGauge(this.registry);
  }

  /** Whether this manager's controllers are running now (leading, or running without election). */
  isActing(): boolean {
    return this.#leading;
  }

  /** The holder of the Lease as last observed ("" before the first observation; undefined without election). */
  leader(): string | undefined {
    return this.#elector?.getLeader();
  }

  /**
   * Runs until `signal` aborts, then resolves once every controller, the
   * informers and the election have stopped. Rejects with
   * {@link LeaderElectionLostError} when leadership is lost (after the same
   * full stop), and with a controller's error if one failed.
   */
  async run(options: { signal: AbortSignal }): Promise<void> {
    const { signal } = options;
    if (this.#running) throw new Error("ControllerManager.run is already running");
    this.#running = true;
    try {
      if (this.#leaderElection === undefined) {
        await this.#runControllers(signal);
        return;
      }
      const election = this.#leaderElection;
      const eventRecorder = new ClientEventRecorder({
        client: this.#client,
        component: `${election.name}`,
        host: this.identity,
        clock: this.#clock,
        logger: this.#logger,
      });
      const elector = new LeaderElector({
        lock: new LeaseLock({
          client: this.#client,
          namespace: election.namespace,
          name: election.name,
          identity: this.identity,
          eventRecorder,
        }),
        leaseDurationMs: election.leaseDurationMs,
        renewDeadlineMs: election.renewDeadlineMs,
        retryPeriodMs: election.retryPeriodMs,
        releaseOnCancel: election.releaseOnCancel,
        name: election.name,
        clock: this.#clock,
        watchDog: this.#healthzAdaptor,
        metricsProvider: this.#leaderMetrics,
        logger: {
          info: (obj, msg) => this.#logger.info(obj, msg),
          error: (obj, msg) => this.#logger.error(obj, msg),
        },
        callbacks: {
          onStartedLeading: (leading) => this.#runControllers(leading),
          onStoppedLeading: () => {},
          onNewLeader: (identity) => this.#logger.info({ identity }, "new leader elected"),
        },
      });
      this.#elector = elector;
      try {
        await elector.run({ signal });
      } finally {
        await eventRecorder.flush();
      }
      if (!signal.aborted) {
        this.#logger.error({}, "leaderelection lost");
        throw new LeaderElectionLostError();
      }
    } finally {
      this.#running = false;
    }
  }

  /** The `/healthz` checks: `leaderElection` (with election) and one per started controller. */
  healthChecks(): HealthCheck[] {
    const checks: HealthCheck[] = [];
    if (this.#leaderElection !== undefined) {
      checks.push({ name: this.#healthzAdaptor.name, check: () => this.#healthzAdaptor.check() });
    }
    return [...checks, ...this.#controllerChecks];
  }

  /**
   * Answers `/healthz[/<check>]`, `/readyz[/<check>]` (the health checks
   * plus `informer-sync`, which fails while acting with caches not yet
   * synced) and `/metrics`; anything else is a 404. For mounting on a
   * server of your own; `listen` serves it.
   */
  async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://localhost");
    const [, endpoint = "", ...rest] = url.pathname.split("/");
    const verbose = url.searchParams.has("verbose");
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { "content-type": "text/plain; charset=utf-8" }).end("method not allowed\n");
      return;
    }
    if (endpoint === "metrics" && rest.length === 0) {
      const body = await this.registry.metrics();
      res.writeHead(200, { "content-type": this.registry.contentType }).end(body);
      return;
    }
    if (endpoint === "healthz" || endpoint === "readyz") {
      const checks = this.healthChecks();
      if (endpoint === "readyz") {
        checks.push({
          name: "informer-sync",
          check: () => (this.#leading && !this.#synced ? new Error("informers not synced") : undefined),
        });
      }
      const answer = healthResponse(endpoint, rest.join("/"), verbose, checks);
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
   * Serves {@link handle} over HTTP on `host` (default 127.0.0.1) and `port`
   * (default 0: a free one). `close()` stops the server and its connections.
   */
  async listen(
    options: { host?: string; port?: number } = {},
  ): Promise<{ url: string; close(): Promise<void> }> {
    const server = http.createServer((req, res) => {
      this.handle(req, res).catch((error) => {
        this.#logger.error({ err: String(error) }, "serving a health or metrics request failed");
        if (!res.headersSent) res.writeHead(500).end();
        else res.destroy();
      });
    });
    const host = options.host ?? "127.0.0.1";
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(options.port ?? 0, host, () => resolve());
    });
    const address = server.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    return {
      url: `http://${host}:${port}`,
      close: () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
    };
  }

  /**
   * One leadership term (or the whole run without election): build every
   * enabled controller on a fresh factory, start the factory, run them all,
   * and settle after they and the informers have stopped.
   */
  async #runControllers(signal: AbortSignal): Promise<void> {
    const factory = new SharedInformerFactory({
      client: this.#client,
      clock: this.#clock,
      resyncPeriodMs: this.#resyncPeriodMs,
      // As kube-controller-manager's informers: managedFields are never read, so never cached.
      transform: (obj) => {
        if (obj.metadata?.managedFields === undefined) return obj;
        const { managedFields: _, ...metadata } = obj.metadata;
        return { ...obj, metadata };
      },
    });
    const started: { name: string; controller: RunnableController; workers: number }[] = [];
    const checks: HealthCheck[] = [];
    for (const name of this.enabledControllers) {
      const descriptor = this.#descriptors.get(name)!;
      const workers = this.#workers[name] ?? descriptor.defaultWorkers ?? 5;
      const context: ControllerContext = {
        client: this.#client,
        informerFactory: factory,
        clock: this.#clock,
        logger: this.#logger,
        queueMetricsProvider: this.#queueMetrics,
        registry: this.registry,
        workers,
      };
      this.#logger.info({ controller: name }, "Starting controller");
      started.push({ name, controller: descriptor.construct(context), workers });
      checks.push(pingCheck(name));
    }
    this.#controllerChecks = checks;
    this.#leading = true;
    this.#synced = false;
    factory.start(signal);
    factory.waitForCacheSync(signal).then(
      (state) => {
        if (!signal.aborted) this.#synced = Object.values(state).every(Boolean);
      },
      () => {},
    );
    const runs = started.map(({ name, controller, workers }) => {
      this.#runningGauge.labels(name, "kube-controller-manager").set(1);
      return controller.run({ signal, workers }).finally(() => {
        this.#runningGauge.labels(name, "kube-controller-manager").set(0);
      });
    });
    try {
      const outcomes = await Promise.allSettled(runs);
      const failures = outcomes.flatMap((o, i) =>
        o.status === "rejected" ? [[started[i]!.name, o.reason]] : [],
      );
      for (const [name, reason] of failures) {
        this.#logger.error({ controller: name, err: String(reason) }, "controller failed");
      }
      if (failures.length > 0) throw failures[0]![1];
    } finally {
      await factory.shutdown();
      this.#leading = false;
      this.#synced = false;
      this.#controllerChecks = [];
    }
  }
}
