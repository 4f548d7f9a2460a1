import {
  type DeepReadonly,
  errorMessage,
  hasStatusCause,
  isAlreadyExists,
  type Namespace,
  namespaces,
  type RunOptions,
  serviceAccounts,
} from "@reconcile/api";
import type { Client } from "@reconcile/client";
import {
  type ControllerContext,
  type ControllerHarness,
  type ControllerInformer,
  defineController,
  objectFromTombstone,
  type SyncResult,
} from "@reconcile/controller";
import type { RateLimitingInterface } from "@reconcile/workqueue";
import type { ServiceAccount } from "kubernetes-types/core/v1.js";

export interface ServiceAccountsControllerOptions extends ControllerContext {
  /** Where ServiceAccounts are created. Required. */
  client: Client;
  namespaceInformer: ControllerInformer<Namespace>;
  serviceAccountInformer: ControllerInformer<ServiceAccount>;
  /** The ServiceAccounts every active namespace gets, by name. Default `["default"]`. */
  serviceAccounts?: readonly string[] | undefined;
  /** Default: a rate-limiting queue named `serviceaccount`. */
  queue?: RateLimitingInterface<string> | undefined;
}

/**
 * kube-controller-manager's ServiceAccounts controller
 * (`serviceaccount-controller`): every Active namespace has the `default`
 * ServiceAccount; one deleted is created again. Namespaces being terminated
 * are left alone. It emits no Events, as upstream's does not.
 */
export class ServiceAccountsController {
  readonly queue: RateLimitingInterface<string>;
  readonly #harness: ControllerHarness<string>;
  readonly #client: Client;
  readonly #namespaces: ControllerInformer<Namespace>;
  readonly #serviceAccounts: ControllerInformer<ServiceAccount>;
  readonly #names: readonly string[];

  constructor(options: ServiceAccountsControllerOptions) {
    this.#client = options.client;
    this.#namespaces = options.namespaceInformer;
    this.#serviceAccounts = options.serviceAccountInformer;
    this.#names = options.serviceAccounts ?? ["default"];
    this.#harness = defineController({
      name: "serviceaccount",
      context: options,
      informers: { namespaces: this.#namespaces, serviceAccounts: this.#serviceAccounts },
      queues: [{ name: "serviceaccount", queue: options.queue, sync: (key) => this.syncNamespace(key) }],
    });
    this.queue = this.#harness.queue;
    const enqueue = (namespace: DeepReadonly<Namespace>, reason: string) =>
      this.#harness.enqueue(namespace.metadata?.name ?? "", reason);
    this.#namespaces.addEventHandler({
      onAdd: (namespace) => enqueue(namespace, "namespace added"),
      onUpdate: (_, namespace) => enqueue(namespace, "namespace updated"),
    });
    // Only deletions matter: a deleted ServiceAccount is made again (`serviceAccountDeleted`).
    this.#serviceAccounts.addEventHandler({
      onDelete: (obj) => {
        const namespace = objectFromTombstone(obj).metadata?.namespace;
        if (namespace) this.#harness.enqueue(namespace, "ServiceAccount deleted");
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
  run(options: RunOptions & { workers?: number | undefined }): Promise<void> {
    return this.#harness.run(options);
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
        if (isAlreadyExists(error) || hasStatusCause(error, "NamespaceTerminating")) continue;
        failures.push(errorMessage(error));
      }
    }
    if (failures.length > 0)
      throw new Error(failures.length === 1 ? failures[0]! : `[${failures.join(", ")}]`);
  }
}
