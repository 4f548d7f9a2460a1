import {
  amountsOf,
  configMaps,
  type DeepReadonly,
  isNotFound,
  jsonEqual,
  type KubeObject,
  type Pod,
  persistentVolumeClaims,
  podCountsForQuota,
  pods,
  Quantity,
  quotaResourcesFor,
  quotaScopesMatch,
  quotaUsage,
  type ResourceAmounts,
  type ResourceDescriptor,
  type RunOptions,
  replicationControllers,
  resourceListOf,
  resourceQuotas,
  secrets,
  services,
} from "@reconcile/api";
import type { Client } from "@reconcile/client";
import {
  type ControllerContext,
  type ControllerHarness,
  type ControllerInformer,
  defineController,
  ensureIndex,
  objectFromTombstone,
  type SyncResult,
} from "@reconcile/controller";
import type { ResourceQuota } from "kubernetes-types/core/v1.js";

/** The index under which every quota sits (value ""), for the resync. */
const allQuotas = "resourcequotaAll";

/** `--resource-quota-sync-period`'s default: every quota is recounted this often. */
export const defaultResyncPeriodMs = 5 * 60_000;

export interface ResourceQuotaControllerOptions extends ControllerContext {
  /** Lists what quotas count and writes their status. Required. */
  client: Client;
  quotaInformer: ControllerInformer<ResourceQuota>;
  /** Pods that finish or go free their quotas at once (replenishment). */
  podInformer: ControllerInformer<Pod>;
  /** Other kinds whose deletion frees quota at once; the rest wait for the resync. Default: none. */
  replenishingInformers?: readonly ControllerInformer<KubeObject>[] | undefined;
  /** How often every quota is recounted. Default 5 minutes. */
  resyncPeriodMs?: number | undefined;
  /**
   * The kinds `count/<resource>.<group>` may name, besides the core ones
   * the controller knows. Default: the built-in kinds of `@reconcile/api`.
   */
  countedResources?: readonly ResourceDescriptor[] | undefined;
}

/** The kinds a quota counts by default: their usage has a name of its own, or only `count/…`. */
const knownResources: readonly ResourceDescriptor[] = [
  pods,
  services,
  persistentVolumeClaims,
  configMaps,
  secrets,
  replicationControllers,
  resourceQuotas,
] as ResourceDescriptor[];

/**
 * kube-controller-manager's resource quota controller
 * (`resourcequota-controller`): each ResourceQuota's `status.hard` follows
 * its `spec.hard`, and `status.used` is recounted from the objects in its
 * namespace that its scopes select, when the quota changes, when a pod
 * finishes or something it counts is deleted, and every 5 minutes. The
 * ResourceQuota admission plugin enforces what this writes.
 */
export class ResourceQuotaController {
  readonly #harness: ControllerHarness<string>;
  readonly #client: Client;
  readonly #quotas: ControllerInformer<ResourceQuota>;
  readonly #counted: readonly ResourceDescriptor[];

  constructor(options: ResourceQuotaControllerOptions) {
    const { client, quotaInformer, podInformer } = options ?? {};
    this.#harness = defineController({
      name: "resourcequota",
      owner: "ResourceQuotaController",
      context: options,
      required: { client, quotaInformer, podInformer },
      informers: { quotas: quotaInformer, pods: podInformer },
      queues: [{ name: "resourcequota_primary", sync: (key) => this.syncResourceQuota(key) }],
      periodic: [
        {
          name: "resource quota resync",
          periodMs: options.resyncPeriodMs ?? defaultResyncPeriodMs,
          run: async () => this.#enqueueAll("resync"),
        },
      ],
    });
    [this.#client, this.#quotas] = [client, quotaInformer];
    ensureIndex(quotaInformer.getIndexer(), allQuotas, () => [""]);
    this.#counted = [...knownResources, ...(options.countedResources ?? [])];
    const enqueue = (quota: DeepReadonly<ResourceQuota>, reason: string) =>
      this.#harness.enqueue(`${quota.metadata?.namespace}/${quota.metadata?.name}`, reason);
    quotaInformer.addEventHandler({
      onAdd: (quota) => enqueue(quota, "quota added"),
      // Only a change of what it limits needs a recount; its own status writes do not.
      onUpdate: (old, quota) => {
        if (!jsonEqual(old.spec, quota.spec)) enqueue(quota, "quota changed");
        else if (!jsonEqual(quota.spec?.hard ?? {}, quota.status?.hard ?? {}))
          enqueue(quota, "quota status behind its spec");
      },
    });
    const now = () => this.#harness.clock.now();
    podInformer.addEventHandler({
      onUpdate: (old, pod) => {
        if (podCountsForQuota(old as Pod, now()) && !podCountsForQuota(pod as Pod, now()))
          this.#enqueueNamespace(pod.metadata?.namespace, "pod finished");
      },
      onDelete: (obj) => this.#enqueueNamespace(objectFromTombstone(obj).metadata?.namespace, "pod deleted"),
    });
    for (const informer of options.replenishingInformers ?? []) {
      informer.addEventHandler({
        onDelete: (obj) =>
          this.#enqueueNamespace(objectFromTombstone(obj).metadata?.namespace, "object deleted"),
      });
    }
  }

  /** Builds the controller on a `SharedInformerFactory`: its ResourceQuota and pod informers, Services and claims replenishing. */
  static fromInformerFactory(
    factory: { forResource<T extends KubeObject>(resource: ResourceDescriptor<T>): ControllerInformer<T> },
    options: Omit<ResourceQuotaControllerOptions, "quotaInformer" | "podInformer" | "replenishingInformers">,
  ): ResourceQuotaController {
    return new ResourceQuotaController({
      ...options,
      quotaInformer: factory.forResource(resourceQuotas as ResourceDescriptor<ResourceQuota>),
      podInformer: factory.forResource(pods),
      replenishingInformers: [
        factory.forResource(services as ResourceDescriptor),
        factory.forResource(persistentVolumeClaims as ResourceDescriptor),
      ],
    });
  }

  /** Runs `workers` workers (default 1) until `signal` aborts; settles after a full stop. */
  run(options: RunOptions & { workers?: number | undefined }): Promise<void> {
    return this.#harness.run(options);
  }

  /** Recounts one quota (`namespace/name`) and writes its status if it changed. */
  async syncResourceQuota(key: string): Promise<SyncResult> {
    const cached = this.#quotas.getIndexer().getByKey(key);
    if (cached === undefined) return;
    const quota = cached as ResourceQuota;
    const namespace = quota.metadata?.namespace ?? "";
    const hardNames = Object.keys(quota.spec?.hard ?? {});
    const used: ResourceAmounts = amountsOf(quota.status?.used);
    const counted = new Set<string>();
    for (const resource of this.#counted) {
      const names = quotaResourcesFor(resource, hardNames);
      if (names.length === 0) continue;
      const totals: ResourceAmounts = new Map();
      for (const name of names) totals.set(name, new Quantity(0));
      const items = (await this.#client.resource(resource, namespace).list()).items;
      for (const item of items) {
        if (!quotaScopesMatch(quota, resource, item)) continue;
        for (const [name, q] of quotaUsage(resource, item, this.#harness.clock.now()))
          if (totals.has(name)) totals.set(name, totals.get(name)!.add(q));
      }
      for (const [name, q] of totals) {
        used.set(name, q);
        counted.add(name);
      }
    }
    // What no known kind counts (`count/widgets.example.com` before its kind is known) starts at 0.
    for (const name of hardNames) if (!counted.has(name) && !used.has(name)) used.set(name, new Quantity(0));
    for (const name of [...used.keys()]) if (!hardNames.includes(name)) used.delete(name);
    const status = { hard: { ...quota.spec?.hard }, used: resourceListOf(used) };
    if (sameAmounts(status.hard, quota.status?.hard) && sameAmounts(status.used, quota.status?.used)) return;
    try {
      await this.#client.resource(resourceQuotas, namespace).updateStatus({ ...quota, status } as never);
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  #enqueueNamespace(namespace: string | undefined, reason: string): void {
    if (!namespace) return;
    for (const quota of this.#quotas.getIndexer().byIndex("namespace", namespace))
      this.#harness.enqueue(`${namespace}/${quota.metadata?.name}`, reason);
  }

  #enqueueAll(reason: string): void {
    for (const quota of this.#quotas.getIndexer().byIndex(allQuotas, ""))
      this.#harness.enqueue(`${quota.metadata?.namespace}/${quota.metadata?.name}`, reason);
  }
}

/** Whether two ResourceLists hold the same amounts, whatever the quantities' spelling. */
function sameAmounts(
  a: Record<string, unknown> | undefined,
  b: Record<string, unknown> | undefined,
): boolean {
  const x = amountsOf(a);
  const y = amountsOf(b);
  if (x.size !== y.size) return false;
  for (const [name, q] of x) if (!y.get(name)?.equal(q)) return false;
  return true;
}
