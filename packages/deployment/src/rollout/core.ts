import {
  type DeepReadonly,
  type Deployment,
  deployments,
  type Pod,
  type ReplicaSet,
  replicaSets,
} from "@reconcile/api";
import type { Client } from "@reconcile/client";
import type { Clock } from "@reconcile/clock";
import { type EventRecorder, type Logger, noopLogger } from "@reconcile/controller";
import type { DeploymentStatus } from "kubernetes-types/apps/v1.js";
import { replicaSetToDeploymentCondition } from "../deployment-conditions.js";
import {
  type AnyReplicaSet,
  defaultDeploymentUniqueLabelKey,
  getActualReplicaCountForReplicaSets,
  semanticEqual,
} from "../deployment-util.js";

/** The pods of a Deployment by the uid of the ReplicaSet that controls them (upstream `getPodMapForDeployment`). */
export type PodMap = ReadonlyMap<string, readonly DeepReadonly<Pod>[]>;

export interface DeploymentRolloutOptions {
  /** Writes ReplicaSets and Deployments. Required. */
  client: Client;
  /** Where ScalingReplicaSet and rollback Events go. Required. */
  recorder: EventRecorder;
  /** Time of conditions and of the progress deadline. Required. */
  clock: Clock;
  /** Reads a ReplicaSet from the cache (after a create answers AlreadyExists). Default: none found. */
  getReplicaSet?: ((namespace: string, name: string) => DeepReadonly<ReplicaSet> | undefined) | undefined;
  /** Looks at a Deployment again after `ms` (the progress deadline). Default: nothing. */
  enqueueAfter?: ((key: string, ms: number) => void) | undefined;
  /** Looks at a Deployment again soon, through the rate limiter. Default: nothing. */
  enqueueRateLimited?: ((key: string) => void) | undefined;
  /** Aborts in-flight writes (the worker stopping). */
  signal?: AbortSignal | undefined;
  logger?: Logger | undefined;
}

/** What a scaling call did: whether the size changed, and the ReplicaSet as it now is. */
export interface ScaleResult {
  scaled: boolean;
  rs: AnyReplicaSet;
}

/**
 * What every part of a rollout shares (the `dc *DeploymentController` receiver
 * of upstream's rollout files): the client, recorder, clock and options, the
 * ReplicaSets this sync wrote, and the writes themselves. Each upstream file
 * is one class on top of the last: sync → progress → rolling → recreate →
 * rollback, the last being `DeploymentRollout`.
 */
export abstract class RolloutCore {
  protected readonly client: Client;
  protected readonly recorder: EventRecorder;
  protected readonly clock: Clock;
  protected readonly options: DeploymentRolloutOptions;
  protected readonly logger: Logger;
  // ReplicaSets as this sync wrote them: a later step reads them instead of
  // the cache's older copy, which would only meet a 409 Conflict.
  protected readonly written = new Map<string, ReplicaSet>();

  constructor(options: DeploymentRolloutOptions) {
    this.client = options.client;
    this.recorder = options.recorder;
    this.clock = options.clock;
    this.options = options;
    this.logger = options.logger ?? noopLogger;
  }

  /** Writes a ReplicaSet, remembering it for the rest of this sync. */
  protected async updateReplicaSet(rs: ReplicaSet): Promise<ReplicaSet> {
    const updated = await this.client
      .resource(replicaSets, rs.metadata?.namespace ?? "")
      .update(rs, this.callOptions());
    this.written.set(updated.metadata?.uid ?? "", updated);
    return updated;
  }

  /** Writes the Deployment's status; the copy takes the new resourceVersion. */
  protected async updateStatus(d: Deployment): Promise<void> {
    const updated = await this.client
      .resource(deployments, d.metadata?.namespace ?? "")
      .updateStatus(d, this.callOptions());
    // Later writes in this sync build on this one, instead of meeting a conflict.
    adoptMetadata(d, updated);
  }

  protected callOptions(): { signal?: AbortSignal } {
    return this.options.signal === undefined ? {} : { signal: this.options.signal };
  }
}

/**
 * Whether any pod of an old ReplicaSet may still run: an old ReplicaSet
 * reports replicas, or a pod under any ReplicaSet but the new one is not
 * Succeeded or Failed (terminating ones count).
 */
export function oldPodsRunning(
  newRS: AnyReplicaSet | undefined,
  oldRSs: readonly AnyReplicaSet[],
  podMap: PodMap,
): boolean {
  if (getActualReplicaCountForReplicaSets(oldRSs) > 0) return true;
  for (const [rsUID, pods] of podMap) {
    if (newRS !== undefined && newRS.metadata?.uid === rsUID) continue;
    for (const pod of pods) {
      const phase = pod.status?.phase;
      if (phase === "Failed" || phase === "Succeeded") continue;
      return true;
    }
  }
  return false;
}

/** The ReplicaFailure conditions of the new ReplicaSet, or else of any ReplicaSet, as Deployment conditions. */
export function getReplicaFailures(
  allRSs: readonly (AnyReplicaSet | undefined)[],
  newRS: AnyReplicaSet | undefined,
): ReturnType<typeof replicaSetToDeploymentCondition>[] {
  const fromNew = (newRS?.status?.conditions ?? [])
    .filter((c) => c.type === "ReplicaFailure")
    .map(replicaSetToDeploymentCondition);
  if (fromNew.length > 0) return fromNew;
  const conditions: ReturnType<typeof replicaSetToDeploymentCondition>[] = [];
  for (const rs of allRSs) {
    for (const c of rs?.status?.conditions ?? []) {
      if (c.type === "ReplicaFailure") conditions.push(replicaSetToDeploymentCondition(c));
    }
  }
  return conditions;
}

/** Copies a ReplicaSet's template into the Deployment without its pod-template-hash label. */
export function setFromReplicaSetTemplate(d: Deployment, rs: AnyReplicaSet): void {
  const template = structuredClone(rs.spec?.template ?? {}) as NonNullable<
    ReplicaSet["spec"]
  >["template"] & {};
  const labels = template.metadata?.labels;
  if (labels !== undefined) delete labels[defaultDeploymentUniqueLabelKey];
  (d.spec ??= { selector: {}, template: {} }).template = template;
}

/** Deep equality of two statuses, a missing count being 0 as in Go. */
export function statusEqual(
  a: DeploymentStatus | DeepReadonly<DeploymentStatus> | undefined,
  b: DeploymentStatus | DeepReadonly<DeploymentStatus> | undefined,
): boolean {
  return semanticEqual(normalizeStatus(a), normalizeStatus(b));
}

function normalizeStatus(status: DeploymentStatus | DeepReadonly<DeploymentStatus> | undefined): unknown {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(status ?? {})) {
    if (value === 0 && key !== "collisionCount") continue;
    out[key] = value;
  }
  return out;
}

type CountField =
  | "observedGeneration"
  | "replicas"
  | "updatedReplicas"
  | "readyReplicas"
  | "availableReplicas"
  | "unavailableReplicas";

export function setCount(status: DeploymentStatus, field: CountField, value: number): void {
  if (value !== 0) status[field] = value;
}

export function adoptMetadata(d: Deployment, updated: Deployment): void {
  const meta = (d.metadata ??= {}) as { resourceVersion?: string; generation?: number };
  if (updated.metadata?.resourceVersion !== undefined)
    meta.resourceVersion = updated.metadata.resourceVersion;
  if (updated.metadata?.generation !== undefined) meta.generation = updated.metadata.generation;
}

/** What a ReplicaSet's controllerRef names. */
export const deploymentKind = { group: "apps", version: "v1", kind: "Deployment" } as const;

/** The object Events are recorded about: cached objects may lack apiVersion and kind. */
export function eventTarget(d: Deployment | DeepReadonly<Deployment>): Deployment {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: d.metadata as Deployment["metadata"],
  } as Deployment;
}

export function deploymentKey(d: Deployment): string {
  const namespace = d.metadata?.namespace;
  return namespace ? `${namespace}/${d.metadata?.name}` : (d.metadata?.name ?? "");
}
