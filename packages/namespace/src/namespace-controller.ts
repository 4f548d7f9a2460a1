import {
  type DeepReadonly,
  errorMessage,
  isConflict,
  isMethodNotSupported,
  isNotFound,
  type KubeObject,
  type Namespace,
  namespaces,
  type Pod,
  type ResourceDescriptor,
  type RunOptions,
  rfc3339,
} from "@reconcile/api";
import type { Client } from "@reconcile/client";
import { type DiscoveredResources, discoveryFromClient, type ResourceDiscovery } from "@reconcile/client";
import {
  type ControllerContext,
  type ControllerHarness,
  type ControllerInformer,
  defineController,
  type SyncResult,
} from "@reconcile/controller";
import { ItemExponentialFailureRateLimiter, type RateLimitingInterface } from "@reconcile/workqueue";
import type { NamespaceCondition } from "kubernetes-types/core/v1.js";

/** The finalizer this controller owns on `spec.finalizers` (`api.FinalizerKubernetes`). */
export const kubernetesFinalizer = "kubernetes";
/** How long a deleted namespace waits before its first sync, so every apiserver sees the deletion (`namespaceDeletionGracePeriod`). */
export const namespaceDeletionGracePeriodMs = 5_000;
/** The estimate used while remaining objects carry finalizers (`finalizerEstimateSeconds`). */
export const finalizerEstimateSeconds = 15;

export interface NamespaceControllerOptions extends ControllerContext {
  /** Where namespaces are read, finalized and emptied. Required. */
  client: Client;
  namespaceInformer: ControllerInformer<Namespace>;
  /** Lists what a namespace may hold. Default: {@link discoveryFromClient} of `client`. */
  discoverResources?: ResourceDiscovery | undefined;
  /** Default: a queue named `namespace` with upstream's 5 ms → 60 s per-item backoff. */
  queue?: RateLimitingInterface<string> | undefined;
}

/**
 * kube-controller-manager's namespace controller (`namespace-controller`):
 * once a namespace is marked for deletion it deletes everything in it, of
 * every namespaced kind discovery lists (custom kinds included), records
 * upstream's deletion conditions, waits while objects remain (graceful pod
 * termination, finalizers), then removes the `kubernetes` finalizer through
 * the `finalize` subresource so the API server removes the namespace.
 */
export class NamespaceController {
  readonly queue: RateLimitingInterface<string>;
  readonly #harness: ControllerHarness<string>;
  readonly #client: Client;
  readonly #namespaces: ControllerInformer<Namespace>;
  readonly #discover: ResourceDiscovery;
  /** Resources whose deletecollection was refused, so they are deleted one by one from then on. */
  readonly #noDeleteCollection = new Set<string>();

  constructor(options: NamespaceControllerOptions) {
    this.#client = options.client;
    this.#namespaces = options.namespaceInformer;
    this.#discover = options.discoverResources ?? discoveryFromClient(options.client);
    this.#harness = defineController({
      name: "namespace",
      context: options,
      informers: { namespaces: this.#namespaces },
      queues: [
        {
          name: "namespace",
          queue: options.queue,
          rateLimiter: () => new ItemExponentialFailureRateLimiter({ baseDelayMs: 5, maxDelayMs: 60_000 }),
          workers: 10,
          sync: (key) => this.syncNamespace(key),
        },
      ],
    });
    this.queue = this.#harness.queue;
    const enqueue = (namespace: DeepReadonly<Namespace>, reason: string) => {
      // Only namespaces being deleted are work, and not at once (`enqueueNamespace`).
      if (namespace.metadata?.deletionTimestamp === undefined) return;
      this.#harness.enqueueAfter(namespace.metadata.name ?? "", namespaceDeletionGracePeriodMs, reason);
    };
    this.#namespaces.addEventHandler({
      onAdd: (namespace) => enqueue(namespace, "namespace added being deleted"),
      onUpdate: (_, namespace) => enqueue(namespace, "namespace being deleted"),
    });
  }

  /** Builds the controller on a `SharedInformerFactory`'s namespace informer. */
  static fromInformerFactory(
    factory: { forResource(resource: typeof namespaces): ControllerInformer<Namespace> },
    options: Omit<NamespaceControllerOptions, "namespaceInformer">,
  ): NamespaceController {
    return new NamespaceController({ ...options, namespaceInformer: factory.forResource(namespaces) });
  }

  /** Runs `workers` workers (default 10, `--concurrent-namespace-syncs`) until `signal` aborts; settles after a full stop. */
  run(options: RunOptions & { workers?: number | undefined }): Promise<void> {
    return this.#harness.run(options);
  }

  /**
   * One pass over the namespace `name` (`syncNamespaceFromKey` and the
   * deleter's `Delete`): empties it, and finalizes it once nothing is left.
   * Returns a requeue after `estimate / 2 + 1` s while content remains.
   */
  async syncNamespace(name: string): Promise<SyncResult> {
    if (this.#namespaces.getIndexer().getByKey(name) === undefined) return;
    const client = this.#client.resource(namespaces);
    let namespace: Namespace;
    try {
      namespace = await client.get(name);
    } catch (error) {
      if (isNotFound(error)) return;
      throw error;
    }
    if (namespace.metadata?.deletionTimestamp === undefined) return;
    if (namespace.status?.phase !== "Terminating") {
      try {
        namespace = await client.updateStatus({
          ...namespace,
          status: { ...namespace.status, phase: "Terminating" },
        });
      } catch (error) {
        if (isNotFound(error)) return;
        throw error;
      }
    }
    if (!(namespace.spec?.finalizers ?? []).includes(kubernetesFinalizer)) return;
    const estimate = await this.#deleteAllContent(namespace);
    if (estimate > 0) {
      this.#harness.logger.info(
        { namespace: name, estimate },
        `some content remains in the namespace, estimate ${estimate} seconds before it is removed`,
      );
      return { requeueAfterMs: (Math.floor(estimate / 2) + 1) * 1000 };
    }
    await this.#finalize(name);
  }

  /** Removes `kubernetes` from spec.finalizers through `/finalize`, other finalizers kept, sorted. */
  async #finalize(name: string): Promise<void> {
    const client = this.#client.resource(namespaces);
    if (client.finalize === undefined)
      throw new Error("namespace controller: the client cannot finalize namespaces");
    for (;;) {
      let namespace: Namespace;
      try {
        namespace = await client.get(name);
      } catch (error) {
        if (isNotFound(error)) return;
        throw error;
      }
      const finalizers = [...new Set(namespace.spec?.finalizers ?? [])]
        .filter((finalizer) => finalizer !== kubernetesFinalizer)
        .sort();
      try {
        await client.finalize({ ...namespace, spec: { ...namespace.spec, finalizers } });
        return;
      } catch (error) {
        if (isNotFound(error)) return;
        if (!isConflict(error)) throw error;
      }
    }
  }

  /**
   * Deletes every namespaced object of the namespace (`deleteAllContent`),
   * records the deletion conditions, and returns the seconds to wait for
   * what remains. Throws the aggregated errors after recording them.
   */
  async #deleteAllContent(namespace: Namespace): Promise<number> {
    const name = namespace.metadata?.name ?? "";
    const deletedAt = Date.parse(namespace.metadata?.deletionTimestamp ?? "");
    const errors: string[] = [];
    let discovered: DiscoveredResources;
    try {
      discovered = await this.#discover();
    } catch (error) {
      discovered = { resources: [], failedGroups: new Map([["", errorMessage(error)]]) };
    }
    const conditions = new ConditionUpdater();
    if (discovered.failedGroups.size > 0) {
      const failing = [...discovered.failedGroups]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([gv, message]) => (gv ? `${gv}: ${message}` : message));
      const error = `unable to retrieve the complete list of server APIs: ${failing.join(", ")}`;
      errors.push(error);
      conditions.discoveryFailed(discovered.failedGroups.size, error);
    }
    const deletable = discovered.resources
      .filter(({ resource, verbs }) => resource.namespaced && verbs.includes("delete"))
      .map(({ resource, verbs }) => ({ resource, deleteCollection: verbs.includes("deletecollection") }));
    let estimate = 0;
    const remainingByResource = new Map<string, number>();
    const remainingByFinalizer = new Map<string, number>();
    const contentErrors: string[] = [];
    for (const { resource, deleteCollection } of deletable) {
      try {
        const result = await this.#deleteAllOf(resource, deleteCollection, name, deletedAt);
        // What remains counts even when the resource failed (upstream keeps both).
        if (result.error !== undefined) contentErrors.push(result.error);
        estimate = Math.max(estimate, result.estimate);
        if (result.remaining > 0) {
          const gr = `${resource.plural}.${resource.group}`;
          remainingByResource.set(gr, (remainingByResource.get(gr) ?? 0) + result.remaining);
        }
        for (const [finalizer, count] of result.finalizers)
          remainingByFinalizer.set(finalizer, (remainingByFinalizer.get(finalizer) ?? 0) + count);
      } catch (error) {
        contentErrors.push(errorMessage(error));
      }
    }
    if (contentErrors.length > 0) conditions.contentFailed(contentErrors);
    conditions.contentTotals(remainingByResource, remainingByFinalizer);
    await this.#writeConditions(name, conditions);
    errors.push(...contentErrors);
    if (errors.length > 0) throw new Error(aggregate(errors));
    return estimate;
  }

  /** Deletes the objects of one resource in the namespace (`deleteAllContentForGroupVersionResource`). */
  async #deleteAllOf(
    resource: ResourceDescriptor,
    deleteCollection: boolean,
    namespace: string,
    deletedAt: number,
  ): Promise<{ estimate: number; remaining: number; finalizers: Map<string, number>; error?: string }> {
    const client = this.#client.resource(resource, namespace);
    let estimate = 0;
    if (resource.group === "" && resource.plural === "pods")
      estimate = estimateForPods((await client.list()).items as Pod[]);
    // The estimate holds only until that long after the namespace's deletion.
    if ((this.#harness.clock.now() - deletedAt) / 1000 >= estimate) estimate = 0;
    const key = `${resource.plural}.${resource.group}`;
    let collectionDone = false;
    if (deleteCollection && !this.#noDeleteCollection.has(key)) {
      try {
        await client.deleteCollection({ propagationPolicy: "Background" });
        collectionDone = true;
      } catch (error) {
        if (!isMethodNotSupported(error) && !isNotFound(error)) throw error;
        this.#noDeleteCollection.add(key);
      }
    }
    if (!collectionDone) {
      for (const item of (await client.list()).items) {
        try {
          await client.delete(item.metadata?.name ?? "", { propagationPolicy: "Background" });
        } catch (error) {
          if (!isNotFound(error)) throw error;
        }
      }
    }
    const left = (await client.list()).items as KubeObject[];
    const finalizers = new Map<string, number>();
    for (const item of left)
      for (const finalizer of item.metadata?.finalizers ?? [])
        finalizers.set(finalizer, (finalizers.get(finalizer) ?? 0) + 1);
    // Nothing left: done, whatever the pods' estimate said.
    if (left.length === 0) return { estimate: 0, remaining: 0, finalizers };
    if (estimate > 0) return { estimate, remaining: left.length, finalizers };
    // Objects with finalizers are normal (the garbage collector, other controllers): give them time.
    if (finalizers.size > 0)
      return { estimate: finalizerEstimateSeconds, remaining: left.length, finalizers };
    return {
      estimate,
      remaining: left.length,
      finalizers,
      error: `unexpected items still remain in namespace: ${namespace} for gvr: ${resource.group}/${resource.version}, Resource=${resource.plural}`,
    };
  }

  /** Writes the conditions if any changed (the deleter's `UpdateStatus` after `deleteAllContent`). */
  async #writeConditions(name: string, updater: ConditionUpdater): Promise<void> {
    const client = this.#client.resource(namespaces);
    for (;;) {
      let namespace: Namespace;
      try {
        namespace = await client.get(name);
      } catch (error) {
        if (isNotFound(error)) return;
        throw error;
      }
      const now = rfc3339(this.#harness.clock.now());
      const conditions = updater.apply(namespace.status?.conditions ?? [], now);
      if (conditions === undefined) return;
      try {
        await client.updateStatus({ ...namespace, status: { ...namespace.status, conditions } });
        return;
      } catch (error) {
        if (isNotFound(error)) return;
        if (!isConflict(error)) throw error;
      }
    }
  }
}

/** The longest grace period of the pods not yet terminal (`estimateGracefulTerminationForPods`). */
function estimateForPods(pods: readonly Pod[]): number {
  let estimate = 0;
  for (const pod of pods) {
    const phase = pod.status?.phase;
    if (phase === "Succeeded" || phase === "Failed") continue;
    const grace = pod.spec?.terminationGracePeriodSeconds;
    if (grace !== undefined && grace > estimate) estimate = grace;
  }
  return estimate;
}

/** utilerrors.NewAggregate(...).Error(): one message alone, several in brackets. */
function aggregate(messages: readonly string[]): string {
  return messages.length === 1 ? messages[0]! : `[${messages.join(", ")}]`;
}

/** The condition types upstream keeps on a namespace being deleted, in its order. */
export const namespaceConditionTypes = [
  "NamespaceDeletionDiscoveryFailure",
  "NamespaceDeletionGroupVersionParsingFailure",
  "NamespaceDeletionContentFailure",
  "NamespaceContentRemaining",
  "NamespaceFinalizersRemaining",
] as const;

type ConditionType = (typeof namespaceConditionTypes)[number];

/** The "all is well" state of each condition. */
const okConditions: Readonly<Record<ConditionType, { reason: string; message: string }>> = {
  NamespaceDeletionDiscoveryFailure: {
    reason: "ResourcesDiscovered",
    message: "All resources successfully discovered",
  },
  NamespaceDeletionGroupVersionParsingFailure: {
    reason: "ParsedGroupVersions",
    message: "All legacy kube types successfully parsed",
  },
  NamespaceDeletionContentFailure: {
    reason: "ContentDeleted",
    message: "All content successfully deleted, may be waiting on finalization",
  },
  NamespaceContentRemaining: { reason: "ContentRemoved", message: "All content successfully removed" },
  NamespaceFinalizersRemaining: {
    reason: "ContentHasNoFinalizers",
    message: "All content-preserving finalizers finished",
  },
};

/** Collects the conditions of one pass (upstream's `namespaceConditionUpdater`). */
class ConditionUpdater {
  readonly #failures = new Map<ConditionType, { reason: string; message: string }>();

  discoveryFailed(failing: number, error: string): void {
    this.#failures.set("NamespaceDeletionDiscoveryFailure", {
      reason: "DiscoveryFailed",
      message: `Discovery failed for some groups, ${failing} failing: ${error}`,
    });
  }

  contentFailed(errors: readonly string[]): void {
    this.#failures.set("NamespaceDeletionContentFailure", {
      reason: "ContentDeletionFailed",
      message: `Failed to delete all resource types, ${errors.length} remaining: ${aggregate(errors)}`,
    });
  }

  contentTotals(byResource: ReadonlyMap<string, number>, byFinalizer: ReadonlyMap<string, number>): void {
    const resources = [...byResource]
      .filter(([, count]) => count > 0)
      .map(([gr, count]) => `${gr} has ${count} resource instances`)
      .sort();
    if (resources.length > 0)
      this.#failures.set("NamespaceContentRemaining", {
        reason: "SomeResourcesRemain",
        message: `Some resources are remaining: ${resources.join(", ")}`,
      });
    const finalizers = [...byFinalizer]
      .filter(([, count]) => count > 0)
      .map(([finalizer, count]) => `${finalizer} in ${count} resource instances`)
      .sort();
    if (finalizers.length > 0)
      this.#failures.set("NamespaceFinalizersRemaining", {
        reason: "SomeFinalizersRemain",
        message: `Some content in the namespace has finalizers remaining: ${finalizers.join(", ")}`,
      });
  }

  /** The conditions after this pass, or undefined when nothing changed; lastTransitionTime moves only when a status flips. */
  apply(current: readonly NamespaceCondition[], now: string): NamespaceCondition[] | undefined {
    const others = current.filter((c) => !(namespaceConditionTypes as readonly string[]).includes(c.type));
    const next: NamespaceCondition[] = [...others];
    let changed = false;
    for (const type of namespaceConditionTypes) {
      const failure = this.#failures.get(type);
      const status = failure === undefined ? "False" : "True";
      const { reason, message } = failure ?? okConditions[type];
      const old = current.find((c) => c.type === type);
      const lastTransitionTime =
        old !== undefined && old.status === status ? (old.lastTransitionTime ?? now) : now;
      const condition: NamespaceCondition = { type, status, lastTransitionTime, reason, message };
      if (
        old === undefined ||
        old.status !== status ||
        old.reason !== reason ||
        old.message !== message ||
        old.lastTransitionTime !== lastTransitionTime
      )
        changed = true;
      next.push(condition);
    }
    return changed ? next : undefined;
  }
}
