import {
  type DeepReadonly,
  defineResource,
  errorMessage,
  isAlreadyExists,
  type Namespace,
  namespaces,
  StatusError,
} from "@reconcile/api";
import type { Client } from "@reconcile/client";
import { type Clock, realClock } from "@reconcile/clock";
import {
  type ControllerInformer,
  type Logger,
  noopLogger,
  objectFromTombstone,
  runController,
  type SyncResult,
} from "@reconcile/controller";
import { type RateLimitingInterface, RateLimitingQueue } from "@reconcile/workqueue";
import type { ServiceAccount } from "kubernetes-types/core/v1.js";

/** `core/v1` ServiceAccounts. */
export const serviceAccounts = defineResource<ServiceAccount>({
  group: "",
  version: "v1",
  kind: "ServiceAccount",
  plural: "serviceaccounts",
  namespaced: true,
  shortNames: ["sa"],
});

export interface ServiceAccountsControllerOptions {
  /** Where ServiceAccounts are created. Required. */
  client: Client;
  namespaceInformer: ControllerInformer<Namespace>;
  serviceAccountInformer: ControllerInformer<ServiceAccount>;
  /** The ServiceAccounts every active namespace gets, by name. Default `["default"]`. */
  serviceAccounts?: readonly string[] | undefined;
  /** Default `realClock`. */
  clock?: Clock | undefined;
  /** Default: a rate-limiting queue named `serviceaccount`. */
  queue?: RateLimitingInterface<string> | undefined;
  /** Default: silent. */
  logger?: Logger | undefined;
}

/**
 * kube-controller-manager's ServiceAccounts controller
 * (`serviceaccount-controller`): every Active namespace has the `default`
 * ServiceAccount; one deleted is created again. Namespaces being terminated
 * are left alone. It emits no Events, as upstream's does not.
 */
export class ServiceAccountsController {
  readonly queue: RateLimitingInterface<string>;
  readonly #client: Client;
  readonly #namespaces: ControllerInformer<Namespace>;
  readonly #serviceAccounts: ControllerInformer<ServiceAccount>;
  readonly #names: readonly string[];
  readonly #clock: Clock;
  readonly #logger: Logger;

  constructor(options: ServiceAccountsControllerOptions) {
    this.#client = options.client;
    this.#namespaces = options.namespaceInformer;
    this.#serviceAccounts = options.serviceAccountInformer;
    this.#names = options.serviceAccounts ?? ["default"];
    this.#clock = options.clock ?? realClock;
    this.#logger = options.logger ?? noopLogger;
    this.queue =
      options.queue ?? new RateLimitingQueue<string>({ name: "serviceaccount", clock: this.#clock });
    const enqueue = (namespace: DeepReadonly<Namespace>) => this.queue.add(namespace.metadata?.name ?? "");
    this.#namespaces.addEventHandler({ onAdd: enqueue, onUpdate: (_, namespace) => enqueue(namespace) });
    // Only deletions matter: a deleted ServiceAccount is made again (`serviceAccountDeleted`).
    this.#serviceAccounts.addEventHandler({
      onDelete: (obj) => {
        const namespace = objectFromTombstone(obj).metadata?.namespace;
        if (namespace) this.queue.add(namespace);
      },
    });
  }

  /** Builds the controller on a `SharedInformerFactory`: its namespace and ServiceAccount informers. */
  static fromInformerFactory(
    factory: {
      forResource(resource: typeof namespaces): ControllerInformer<Namespace>;
      forResource(resource: typeof serviceAccounts): ControllerInformer<ServiceAccount>;
    },
    options: Omit<ServiceAccountsControllerOptions, "namespaceInformer" | "serviceAccountInformer">,
  ): ServiceAccountsController {
    return new ServiceAccountsController({
      ...options,
      namespaceInformer: factory.forResource(namespaces),
      serviceAccountInformer: factory.forResource(serviceAccounts),
    });
  }

  /** Runs `workers` workers (default 1, as upstream) until `signal` aborts; settles after a full stop. */
  run(options: { signal: AbortSignal; workers?: number | undefined }): Promise<void> {
    return runController({
      name: "serviceaccount",
      signal: options.signal,
      informers: { namespaces: this.#namespaces, serviceAccounts: this.#serviceAccounts },
      queue: this.queue,
      workers: options.workers ?? 1,
      clock: this.#clock,
      logger: this.#logger,
      sync: (key) => this.syncNamespace(key),
    });
  }

  /** Creates the missing ServiceAccounts of the namespace `name` if it is Active. */
  async syncNamespace(name: string): Promise<SyncResult> {
    const namespace = this.#namespaces.getIndexer().getByKey(name);
    if (namespace === undefined || namespace.status?.phase !== "Active") return;
    const failures: string[] = [];
    const indexer = this.#serviceAccounts.getIndexer();
    for (const saName of this.#names) {
      if (indexer.getByKey(`${name}/${saName}`) !== undefined) continue;
      try {
        await this.#client
          .resource(serviceAccounts, name)
          .create({ metadata: { name: saName, namespace: name } });
      } catch (error) {
        // Already there, or the namespace is going away: nothing to do.
        if (isAlreadyExists(error) || namespaceTerminating(error)) continue;
        failures.push(errorMessage(error));
      }
    }
    if (failures.length > 0)
      throw new Error(failures.length === 1 ? failures[0]! : `[${failures.join(", ")}]`);
  }
}

/** The create was refused because the namespace is being terminated (`NamespaceTerminatingCause`). */
function namespaceTerminating(error: unknown): boolean {
  return (
    StatusError.isInstance(error) &&
    (error.status.details?.causes ?? []).some((cause) => cause.reason === "NamespaceTerminating")
  );
}
