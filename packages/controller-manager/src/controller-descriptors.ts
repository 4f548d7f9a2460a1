import type { Runnable, RunOptions } from "@reconcile/api";
import type { Client } from "@reconcile/client";
import type { Clock } from "@reconcile/clock";
import type { Logger, ControllerContext as SharedControllerContext } from "@reconcile/controller";
import type { SharedInformerFactory } from "@reconcile/informer";
import type { MetricsProvider } from "@reconcile/workqueue";
import type { Registry } from "prom-client";

/**
 * What every controller initializer gets (kube-controller-manager's
 * `ControllerContext`): the shared parts every controller defaults from
 * (`@reconcile/controller`'s context), always set here, plus the client, the
 * factory and the registry. Pass it whole as a controller's options.
 */
export interface ControllerContext extends SharedControllerContext {
  /** The client the controller writes with. */
  readonly client: Client;
  /** The shared informer factory; it is started after every controller has been built. */
  readonly informerFactory: SharedInformerFactory;
  readonly clock: Clock;
  /** The manager's logger; controllers bind their own `controller` key. */
  readonly logger: Logger;
  /** For the controller's named work queue (`workqueue_*{name}`). */
  readonly queueMetricsProvider: MetricsProvider;
  /** The manager's `/metrics` registry, for a controller's own families. */
  readonly registry: Registry;
  /** Concurrent workers of this controller (`--concurrent-*-syncs`), from the manager's `workers` option or the descriptor's default. */
  readonly workers: number;
}

/** A built controller: the one lifecycle shape, whose `run` also takes `workers`. */
export type RunnableController = Runnable<RunOptions & { workers?: number | undefined }>;

/**
 * One entry of the controller table (kube-controller-manager's
 * `ControllerDescriptor`): a canonical name such as `deployment-controller`,
 * the short names that `--controllers` also accepts, and the constructor.
 */
export interface ControllerDescriptor {
  /** Canonical name, e.g. `replicaset-controller`. */
  readonly name: string;
  /** Other names `--controllers` accepts for it (the pre-1.29 short names), e.g. `replicaset`. */
  readonly aliases?: readonly string[] | undefined;
  /** Left out of `*`; runs only when named. Default false. */
  readonly disabledByDefault?: boolean | undefined;
  /**
   * The ServiceAccount in kube-system whose credentials the controller writes
   * with under `--use-service-account-credentials` (bound to its
   * `system:controller:<name>` role); undefined: the manager's own client.
   */
  readonly serviceAccount?: string | undefined;
  /** Workers when the manager's options name none. Default 5. */
  readonly defaultWorkers?: number | undefined;
  /** Builds the controller; informers asked of the factory here are started with it. */
  readonly construct: (context: ControllerContext) => RunnableController;
}

/**
 * The controller table, validated as upstream's `register` does: a
 * duplicate name, an alias used twice or equal to a canonical name, or an
 * empty name is a programming error and throws at once.
 */
export class ControllerDescriptors {
  readonly #byName = new Map<string, ControllerDescriptor>();
  readonly #aliases = new Map<string, string>();

  constructor(descriptors: readonly ControllerDescriptor[] = []) {
    for (const descriptor of descriptors) this.register(descriptor);
  }

  register(descriptor: ControllerDescriptor): void {
    const name = descriptor?.name;
    if (typeof name !== "string" || name === "") {
      throw new TypeError("ControllerDescriptors: a controller descriptor needs a non-empty name");
    }
    if (typeof descriptor.construct !== "function") {
      throw new TypeError(`ControllerDescriptors: controller "${name}" has no construct function`);
    }
    if (this.#byName.has(name) || this.#aliases.has(name)) {
      throw new Error(`ControllerDescriptors: controller name "${name}" is registered twice`);
    }
    for (const alias of descriptor.aliases ?? []) {
      if (this.#byName.has(alias) || this.#aliases.has(alias) || alias === name) {
        throw new Error(
          `ControllerDescriptors: alias "${alias}" of "${name}" is already a controller name or alias`,
        );
      }
    }
    this.#byName.set(name, descriptor);
    for (const alias of descriptor.aliases ?? []) this.#aliases.set(alias, name);
  }

  /** The descriptors in registration order. */
  all(): readonly ControllerDescriptor[] {
    return [...this.#byName.values()];
  }

  get(name: string): ControllerDescriptor | undefined {
    return this.#byName.get(name);
  }

  /** The canonical name of a name or alias; undefined if neither. */
  canonicalName(nameOrAlias: string): string | undefined {
    if (this.#byName.has(nameOrAlias)) return nameOrAlias;
    return this.#aliases.get(nameOrAlias);
  }

  /** Canonical names, sorted (the `--controllers` help text). */
  knownControllers(): string[] {
    return [...this.#byName.keys()].sort();
  }

  /** Canonical names left out of `*`, sorted. */
  disabledByDefaultControllers(): string[] {
    return this.all()
      .filter((d) => d.disabledByDefault)
      .map((d) => d.name)
      .sort();
  }
}
