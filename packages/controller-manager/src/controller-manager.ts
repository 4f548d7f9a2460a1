import type http from "node:http";
import { isAlreadyExists, isNotFound, serviceAccounts } from "@reconcile/api";
import type { Client } from "@reconcile/client";
import type { Clock, Random } from "@reconcile/clock";
import type { Logger, ReconcileObserver } from "@reconcile/controller";
import { Manager, runningManagedControllersGauge, type ServingAuthorizer } from "@reconcile/runtime";
import type { Registry } from "prom-client";
import type { ControllerDescriptors } from "./controller-descriptors.js";
import { isControllerEnabled, parseControllersFlag } from "./controllers-flag.js";
import { newControllerDescriptors } from "./default-controllers.js";

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
  /**
   * `--use-service-account-credentials`: the client a controller writes with,
   * acting as its own ServiceAccount `kube-system/<name>` (each descriptor's
   * `serviceAccount`), so it holds only its `system:controller:<name>` role.
   * The manager creates the ServiceAccount when it starts the controller, as
   * upstream's client builder does. The shared informers keep `client`.
   * Default: every controller writes with `client`.
   */
  serviceAccountCredentials?: ((serviceAccount: string) => Client) | undefined;
  /** A `--controllers` list: `*`, names, aliases, `-name` (a comma string or an array). Default `*`. */
  controllers?: string | readonly string[] | undefined;
  /** The controller table. Default `newControllerDescriptors()`. */
  descriptors?: ControllerDescriptors | undefined;
  /** Workers per controller by canonical name (`--concurrent-*-syncs`). Default: each descriptor's default (5). */
  workers?: Readonly<Record<string, number>> | undefined;
  /** Elect a leader on a Lease before running any controller; `false` runs at once. Default: enabled with upstream's defaults. */
  leaderElection?: LeaderElectionOptions | false | undefined;
  /**
   * Keep the shared informers running and synced on a standby, not only
   * while leading, so that a new leader's controllers start on warm caches
   * (their queues already hold every object) and its first reconcile follows
   * the election at once, at the cost of a standby holding the caches too.
   * Default false: as kube-controller-manager, informers start once leading.
   */
  warmStandby?: boolean | undefined;
  /** The shared informers take the client's objects frozen and shared (see the runtime Manager's `acceptFrozen`). Default false. */
  acceptFrozen?: boolean | undefined;
  /** Resync period of the shared informers. Default 0 (none). */
  resyncPeriodMs?: number | undefined;
  /** Default `realClock`. */
  clock?: Clock | undefined;
  /** Jitter, reconcile IDs and the default identity draw from it. Default `Math.random`. */
  random?: Random | undefined;
  /** Told of every finished reconcile of every controller. Default: nobody. */
  reconcileObserver?: ReconcileObserver | undefined;
  /** pino-shaped logger. Default: silent. */
  logger?: Logger | undefined;
  /** Where `/metrics` families live. Default: a new prom-client `Registry`. */
  registry?: Registry | undefined;
}

/**
 * kube-controller-manager in miniature (`NewControllerManagerCommand` /
 * `Run` / `StartControllers`): a runtime {@link Manager} with
 * kube-controller-manager's election defaults (the Lease
 * `kube-system/kube-controller-manager`, kept on a clean stop), informers
 * that start only while leading (or on standbys too, `warmStandby`), and one runnable per enabled controller of
 * the descriptor table, all built on the manager's shared informers before
 * any starts. Serves `/healthz` (the `leaderElection` check and, while
 * leading, one per controller), `/readyz` and `/metrics` through `handle` or
 * `listen`.
 */
export class ControllerManager {
  /** The manager the controllers run on. */
  readonly manager: Manager;
  /** The prom-client registry behind `/metrics`. */
  readonly registry: Registry;
  /** Canonical names of the controllers this manager runs when leading, in table order. */
  readonly enabledControllers: readonly string[];
  /** This participant's identity in the election (also the Events' host). */
  readonly identity: string;

  constructor(options: ControllerManagerOptions) {
    if (options?.client === undefined) throw new TypeError("ControllerManager: client is required");
    const descriptors = options.descriptors ?? newControllerDescriptors();
    const controllers = parseControllersFlag(options.controllers ?? "*", descriptors);
    this.enabledControllers = descriptors
      .all()
      .filter((d) => isControllerEnabled(d.name, d.disabledByDefault ?? false, controllers))
      .map((d) => d.name);
    const workersByName = checkedWorkers(options.workers ?? {}, descriptors);
    const election = options.leaderElection;
    this.manager = new Manager({
      client: options.client,
      clock: options.clock,
      random: options.random,
      reconcileObserver: options.reconcileObserver,
      logger: options.logger,
      registry: options.registry,
      acceptFrozen: options.acceptFrozen,
      resyncPeriodMs: options.resyncPeriodMs ?? 0,
      // kube-controller-manager waits for its caches for ever.
      cacheSyncTimeoutMs: 0,
      informersNeedLeaderElection: !(options.warmStandby ?? false),
      runnableHealthChecks: true,
      leaderElection:
        election === false
          ? undefined
          : {
              namespace: election?.namespace ?? "kube-system",
              name: election?.name ?? "kube-controller-manager",
              identity: election?.identity,
              leaseDurationMs: election?.leaseDurationMs ?? 15_000,
              renewDeadlineMs: election?.renewDeadlineMs ?? 10_000,
              retryPeriodMs: election?.retryPeriodMs ?? 2_000,
              releaseOnCancel: election?.releaseOnCancel ?? false,
            },
    });
    this.registry = this.manager.registry;
    this.identity = this.manager.identity;
    const running = runningManagedControllersGauge(this.registry);
    for (const name of this.enabledControllers) {
      const descriptor = descriptors.get(name)!;
      const workers = workersByName[name] ?? descriptor.defaultWorkers ?? 5;
      const serviceAccount = options.serviceAccountCredentials && descriptor.serviceAccount;
      const context = this.manager.controllerContext();
      const controller = descriptor.construct({
        ...context,
        ...(serviceAccount ? { client: options.serviceAccountCredentials!(serviceAccount) } : {}),
        informerFactory: this.manager.informers,
        registry: this.registry,
        workers,
      });
      const gauge = running.labels(name, "kube-controller-manager");
      this.manager.add({
        name,
        // The controller logs its own start ("Starting controller", with its workers).
        run: async ({ signal }) => {
          if (serviceAccount)
            await ensureServiceAccount(context.client, context.clock, serviceAccount, signal);
          gauge.set(1);
          try {
            await controller.run({ signal, workers });
          } finally {
            gauge.set(0);
          }
        },
      });
    }
  }

  /** Whether this manager's controllers are running now (leading, or running without election). */
  isActing(): boolean {
    return this.manager.isLeader();
  }

  /** The holder of the Lease as last observed ("" before the first observation; undefined without election). */
  leader(): string | undefined {
    return this.manager.leader();
  }

  /**
   * Runs until `signal` aborts, then resolves once every controller, the
   * informers and the election have stopped. Rejects with
   * `LeaderElectionLostError` when leadership is lost (after the same full
   * stop), and with a controller's error if one failed (the others are then
   * stopped).
   */
  run(options: { signal: AbortSignal }): Promise<void> {
    return this.manager.run(options);
  }

  /** Answers `/healthz[/<check>]`, `/readyz[/<check>]` and `/metrics` (the manager's `handle`). */
  handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    return this.manager.handle(req, res);
  }

  /** Serves {@link handle} over HTTP on `host` (default 127.0.0.1) and `port` (default 0: a free one). */
  listen(
    options: { host?: string; port?: number; authorizer?: ServingAuthorizer | undefined } = {},
  ): Promise<{ url: string; close(): Promise<void> }> {
    return this.manager.listen(options);
  }
}

/** `--concurrent-*-syncs` by canonical name, each a positive integer. */
function checkedWorkers(
  workers: Readonly<Record<string, number>>,
  descriptors: ControllerDescriptors,
): Readonly<Record<string, number>> {
  for (const [name, count] of Object.entries(workers)) {
    if (descriptors.canonicalName(name) !== name) {
      throw new RangeError(`ControllerManager: workers names "${name}", which is not a known controller`);
    }
    if (!Number.isInteger(count) || count < 1) {
      throw new RangeError(`ControllerManager: workers of ${name} must be a positive integer, got ${count}`);
    }
  }
  return workers;
}

/**
 * Creates `kube-system/<name>` unless it exists, as upstream's
 * `SAControllerClientBuilder` does, trying again (100 ms, doubling to 10 s)
 * after any failure until it is there or `signal` aborts.
 */
async function ensureServiceAccount(
  client: Client,
  clock: Clock,
  name: string,
  signal: AbortSignal,
): Promise<void> {
  const api = client.resource(serviceAccounts, "kube-system");
  for (let delayMs = 100; !signal.aborted; delayMs = Math.min(delayMs * 2, 10_000)) {
    try {
      await api.get(name, { signal });
      return;
    } catch (error) {
      if (isNotFound(error)) {
        try {
          await api.create({ metadata: { name } }, { signal });
          return;
        } catch (created) {
          if (isAlreadyExists(created)) return;
        }
      }
    }
    await clock.sleep(delayMs, { signal }).catch(() => {});
  }
}
