import {
  type DeepReadonly,
  type Deployment,
  deployments,
  errorMessage,
  getControllerOf,
  getScaledValueFromIntOrPercent,
  isPodReady,
  jsonEqual,
  metaNamespaceKeyFunc,
  nonEmptySelectorMatches,
  type Pod,
  podDisruptionBudgets,
  pods,
  type ReplicaSet,
  type RunOptions,
  replicaSets,
  replicationControllers,
  rfc3339,
  statefulSets,
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
import type { StatefulSet } from "kubernetes-types/apps/v1.js";
import type { ReplicationController } from "kubernetes-types/core/v1.js";
import type { PodDisruptionBudget, PodDisruptionBudgetStatus } from "kubernetes-types/policy/v1.js";

/** How long an evicted pod may take to be deleted before it counts again (`DeletionTimeout`). */
export const deletionTimeoutMs = 2 * 60_000;

export interface DisruptionControllerOptions extends ControllerContext {
  /** Writes PodDisruptionBudget status and Events. Required. */
  client: Client;
  podInformer: ControllerInformer<Pod>;
  pdbInformer: ControllerInformer<PodDisruptionBudget>;
  replicaSetInformer: ControllerInformer<ReplicaSet>;
  deploymentInformer: ControllerInformer<Deployment>;
  statefulSetInformer: ControllerInformer<StatefulSet>;
  replicationControllerInformer: ControllerInformer<ReplicationController>;
}

/**
 * The disruption controller (upstream `pkg/controller/disruption`): keeps
 * each PodDisruptionBudget's status — `expectedPods`, `desiredHealthy`,
 * `currentHealthy`, `disruptionsAllowed`, `disruptedPods` and the
 * `DisruptionAllowed` condition — from the pods it selects and, for
 * `maxUnavailable` or a percentage, the scale of their controllers
 * (ReplicaSets counted through their Deployment, StatefulSets,
 * ReplicationControllers). The eviction subresource reads that status to
 * allow or refuse an eviction.
 */
export class DisruptionController {
  readonly #harness: ControllerHarness<string>;
  readonly #client: Client;
  readonly #options: DisruptionControllerOptions;

  constructor(options: DisruptionControllerOptions) {
    const { client, podInformer, pdbInformer, replicaSetInformer, deploymentInformer } = options ?? {};
    const { statefulSetInformer, replicationControllerInformer } = options ?? {};
    this.#harness = defineController({
      name: "disruption",
      owner: "DisruptionController",
      context: options,
      required: {
        client,
        podInformer,
        pdbInformer,
        replicaSetInformer,
        deploymentInformer,
        statefulSetInformer,
        replicationControllerInformer,
      },
      events: { component: "controllermanager", client },
      informers: {
        pods: podInformer,
        poddisruptionbudgets: pdbInformer,
        replicasets: replicaSetInformer,
        deployments: deploymentInformer,
        statefulsets: statefulSetInformer,
        replicationcontrollers: replicationControllerInformer,
      },
      queues: [{ name: "disruption", sync: (key) => this.syncBudget(key) }],
    });
    this.#client = client;
    this.#options = options;
    const enqueue = (pdb: DeepReadonly<PodDisruptionBudget>, reason: string) =>
      this.#harness.enqueue(metaNamespaceKeyFunc(pdb), reason);
    pdbInformer.addEventHandler({
      onAdd: (pdb) => enqueue(pdb, "PodDisruptionBudget added"),
      onUpdate: (_, pdb) => enqueue(pdb, "PodDisruptionBudget updated"),
      onDelete: (obj) => {
        const pdb = objectFromTombstone(obj);
        if (pdb?.metadata !== undefined) enqueue(pdb, "PodDisruptionBudget deleted");
      },
    });
    const podChanged = (pod: DeepReadonly<Pod> | undefined, reason: string) => {
      if (pod?.metadata === undefined) return;
      for (const pdb of this.#budgetsFor(pod)) enqueue(pdb, reason);
    };
    podInformer.addEventHandler({
      onAdd: (pod) => podChanged(pod, "Pod added"),
      onUpdate: (old, pod) => {
        podChanged(pod, "Pod updated");
        if (!jsonEqual(old.metadata?.labels, pod.metadata?.labels)) podChanged(old, "Pod relabelled");
      },
      onDelete: (obj) => podChanged(objectFromTombstone(obj), "Pod deleted"),
    });
  }

  static fromInformerFactory(
    factory: {
      forResource(resource: typeof pods): ControllerInformer<Pod>;
      forResource(resource: typeof podDisruptionBudgets): ControllerInformer<PodDisruptionBudget>;
      forResource(resource: typeof replicaSets): ControllerInformer<ReplicaSet>;
      forResource(resource: typeof deployments): ControllerInformer<Deployment>;
      forResource(resource: typeof statefulSets): ControllerInformer<StatefulSet>;
      forResource(resource: typeof replicationControllers): ControllerInformer<ReplicationController>;
    },
    options: Pick<DisruptionControllerOptions, "client"> & ControllerContext,
  ): DisruptionController {
    return new DisruptionController({
      ...options,
      podInformer: factory.forResource(pods),
      pdbInformer: factory.forResource(podDisruptionBudgets),
      replicaSetInformer: factory.forResource(replicaSets),
      deploymentInformer: factory.forResource(deployments),
      statefulSetInformer: factory.forResource(statefulSets),
      replicationControllerInformer: factory.forResource(replicationControllers),
    });
  }

  run(options: RunOptions & { workers?: number | undefined }): Promise<void> {
    return this.#harness.run(options);
  }

  /** The budgets in the pod's namespace whose non-empty selector matches it. */
  #budgetsFor(pod: DeepReadonly<Pod>): DeepReadonly<PodDisruptionBudget>[] {
    const labels = pod.metadata?.labels ?? {};
    return this.#options.pdbInformer
      .getIndexer()
      .byIndex("namespace", pod.metadata?.namespace ?? "")
      .filter((pdb) => nonEmptySelectorMatches(pdb.spec?.selector, labels));
  }

  /** Reconciles one budget's status (upstream `sync`/`trySync`); a failure writes the fail-safe status. */
  async syncBudget(key: string): Promise<SyncResult> {
    const pdb = this.#options.pdbInformer.getIndexer().getByKey(key);
    if (pdb === undefined) return;
    const namespace = pdb.metadata?.namespace ?? "";
    const selected = this.#options.podInformer
      .getIndexer()
      .byIndex("namespace", namespace)
      .filter((pod) => nonEmptySelectorMatches(pdb.spec?.selector, pod.metadata?.labels));
    if (selected.length === 0)
      this.#harness.recorder.event(pdb, "Normal", "NoPods", "No matching pods found");
    let counts: { expected: number; desiredHealthy: number };
    try {
      counts = this.#expectedCounts(pdb, selected);
    } catch (error) {
      this.#harness.recorder.event(
        pdb,
        "Warning",
        "CalculateExpectedPodCountFailed",
        `Failed to calculate the number of expected pods: ${errorMessage(error)}`,
      );
      await this.#write(pdb, failSafeStatus(pdb, errorMessage(error), this.#harness.clock.now()));
      throw error;
    }
    const now = this.#harness.clock.now();
    const { disrupted, recheckAt } = disruptedPods(pdb, selected, now);
    let healthy = 0;
    for (const pod of selected) {
      if (pod.metadata?.deletionTimestamp != null || disrupted[pod.metadata?.name ?? ""] !== undefined)
        continue;
      if (isPodReady(pod)) healthy++;
    }
    const allowed = counts.expected <= 0 ? 0 : Math.max(0, healthy - counts.desiredHealthy);
    const status: PodDisruptionBudgetStatus = {
      observedGeneration: pdb.metadata?.generation ?? 0,
      disruptionsAllowed: allowed,
      currentHealthy: healthy,
      desiredHealthy: counts.desiredHealthy,
      expectedPods: counts.expected,
      ...(Object.keys(disrupted).length > 0 ? { disruptedPods: disrupted } : {}),
      conditions: withCondition(
        pdb,
        allowed > 0 ? "True" : "False",
        allowed > 0 ? "SufficientPods" : "InsufficientPods",
        "",
        now,
      ),
    };
    await this.#write(pdb, status);
    return recheckAt === undefined ? undefined : { requeueAfterMs: Math.max(0, recheckAt - now) };
  }

  /** `expectedPods` and `desiredHealthy` (upstream `getExpectedPodCount`). */
  #expectedCounts(
    pdb: DeepReadonly<PodDisruptionBudget>,
    selected: readonly DeepReadonly<Pod>[],
  ): { expected: number; desiredHealthy: number } {
    const { maxUnavailable, minAvailable } = pdb.spec ?? {};
    if (maxUnavailable != null) {
      const expected = this.#expectedScale(selected);
      const unavailable = getScaledValueFromIntOrPercent(maxUnavailable, expected, true);
      return { expected, desiredHealthy: Math.max(0, expected - unavailable) };
    }
    if (minAvailable != null) {
      if (typeof minAvailable === "number")
        return { expected: selected.length, desiredHealthy: minAvailable };
      const expected = this.#expectedScale(selected);
      return { expected, desiredHealthy: getScaledValueFromIntOrPercent(minAvailable, expected, true) };
    }
    return { expected: selected.length, desiredHealthy: 0 };
  }

  /** The sum of the scales of the pods' controllers, each counted once (`getExpectedScale`). */
  #expectedScale(selected: readonly DeepReadonly<Pod>[]): number {
    const scales = new Map<string, number>();
    for (const pod of selected) {
      const ref = getControllerOf(pod);
      if (ref === undefined)
        throw new Error(`found no controller ref for pod ${JSON.stringify(pod.metadata?.name ?? "")}`);
      if (scales.has(ref.uid)) continue;
      const found = this.#scaleOf(pod.metadata?.namespace ?? "", ref);
      if (found === undefined)
        throw new Error(`found no controllers for pod ${JSON.stringify(pod.metadata?.name ?? "")}`);
      scales.set(found.uid, found.replicas);
    }
    let total = 0;
    for (const replicas of scales.values()) total += replicas;
    return total;
  }

  /** A pod controller's replicas, a ReplicaSet's through the Deployment that owns it. */
  #scaleOf(
    namespace: string,
    ref: { kind: string; name: string; uid: string },
  ): { uid: string; replicas: number } | undefined {
    const key = `${namespace}/${ref.name}`;
    const same = <T extends DeepReadonly<{ metadata?: { uid?: string } }>>(object: T | undefined) =>
      object !== undefined && object.metadata?.uid === ref.uid ? object : undefined;
    if (ref.kind === "ReplicaSet") {
      const rs = same(this.#options.replicaSetInformer.getIndexer().getByKey(key));
      if (rs === undefined) return undefined;
      const owner = getControllerOf(rs);
      // The Deployment's scale, as upstream finds it (its replicas are the target of all its ReplicaSets).
      if (owner?.kind === "Deployment") {
        const deployment = this.#options.deploymentInformer
          .getIndexer()
          .getByKey(`${namespace}/${owner.name}`);
        if (deployment?.metadata?.uid !== owner.uid) return undefined;
        return { uid: owner.uid, replicas: deployment.spec?.replicas ?? 1 };
      }
      return { uid: ref.uid, replicas: rs.spec?.replicas ?? 1 };
    }
    if (ref.kind === "StatefulSet") {
      const sts = same(this.#options.statefulSetInformer.getIndexer().getByKey(key));
      return sts === undefined ? undefined : { uid: ref.uid, replicas: sts.spec?.replicas ?? 1 };
    }
    if (ref.kind === "ReplicationController") {
      const rc = same(this.#options.replicationControllerInformer.getIndexer().getByKey(key));
      return rc === undefined ? undefined : { uid: ref.uid, replicas: rc.spec?.replicas ?? 1 };
    }
    return undefined;
  }

  async #write(pdb: DeepReadonly<PodDisruptionBudget>, status: PodDisruptionBudgetStatus): Promise<void> {
    if (jsonEqual(normalise(pdb.status), normalise(status))) return;
    await this.#client
      .resource(podDisruptionBudgets, pdb.metadata?.namespace)
      .updateStatus({ ...(pdb as PodDisruptionBudget), status });
  }
}

/** The evicted pods still expected to go, and when the first of them times out (`buildDisruptedPodMap`). */
function disruptedPods(
  pdb: DeepReadonly<PodDisruptionBudget>,
  selected: readonly DeepReadonly<Pod>[],
  now: number,
): { disrupted: Record<string, string>; recheckAt: number | undefined } {
  const disrupted: Record<string, string> = {};
  let recheckAt: number | undefined;
  const byName = new Map(selected.map((pod) => [pod.metadata?.name ?? "", pod]));
  for (const [name, at] of Object.entries(pdb.status?.disruptedPods ?? {})) {
    const pod = byName.get(name);
    // Gone, or its deletion started: the disruption happened.
    if (pod === undefined || pod.metadata?.deletionTimestamp != null) continue;
    const expectedBy = Date.parse(at) + deletionTimeoutMs;
    if (expectedBy <= now) continue;
    disrupted[name] = at;
    recheckAt = recheckAt === undefined ? expectedBy : Math.min(recheckAt, expectedBy);
  }
  return { disrupted, recheckAt };
}

function withCondition(
  pdb: DeepReadonly<PodDisruptionBudget>,
  status: "True" | "False",
  reason: string,
  message: string,
  now: number,
): NonNullable<PodDisruptionBudgetStatus["conditions"]> {
  const generation = pdb.metadata?.generation ?? 0;
  const existing = pdb.status?.conditions?.find((c) => c.type === "DisruptionAllowed");
  const unchanged = existing?.status === status && existing.reason === reason && existing.message === message;
  const condition = {
    type: "DisruptionAllowed",
    status,
    reason,
    message,
    observedGeneration: generation,
    lastTransitionTime: unchanged && existing !== undefined ? existing.lastTransitionTime : rfc3339(now),
  };
  return [...(pdb.status?.conditions ?? []).filter((c) => c.type !== "DisruptionAllowed"), condition];
}

/** What a budget whose sync failed reports: no disruptions allowed, condition `SyncFailed` (`failSafe`). */
function failSafeStatus(
  pdb: DeepReadonly<PodDisruptionBudget>,
  message: string,
  now: number,
): PodDisruptionBudgetStatus {
  return {
    ...(pdb.status as PodDisruptionBudgetStatus | undefined),
    observedGeneration: pdb.metadata?.generation ?? 0,
    disruptionsAllowed: 0,
    currentHealthy: pdb.status?.currentHealthy ?? 0,
    desiredHealthy: pdb.status?.desiredHealthy ?? 0,
    expectedPods: pdb.status?.expectedPods ?? 0,
    conditions: withCondition(pdb, "False", "SyncFailed", message, now),
  };
}

function normalise(status: DeepReadonly<PodDisruptionBudgetStatus> | undefined): unknown {
  return JSON.parse(JSON.stringify(status ?? {}), (_, value) =>
    Array.isArray(value) && value.length === 0 ? undefined : value,
  );
}
