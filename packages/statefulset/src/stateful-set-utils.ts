import {
  type ControllerRevision,
  type DeepReadonly,
  isPodAvailable,
  isPodReady,
  type Pod,
  type StatefulSet,
} from "@reconcile/api";
import {
  getPodFromTemplate,
  newControllerRevision,
  templateOfRevision,
  templateRevisionData,
} from "@reconcile/controller";
import type { StatefulSetStatus } from "kubernetes-types/apps/v1.js";
import type { PersistentVolumeClaim, Volume } from "kubernetes-types/core/v1.js";

// A StatefulSet's identities, revisions and pod states (upstream
// `pkg/controller/statefulset/stateful_set_utils.go`).

export const controllerKind = { apiVersion: "apps/v1", kind: "StatefulSet" } as const;
/** The label naming a pod's revision (`apps.StatefulSetRevisionLabel`). */
export const statefulSetRevisionLabel = "controller-revision-hash";
/** The label naming the pod itself, for a Service per pod (`apps.StatefulSetPodNameLabel`). */
export const statefulSetPodNameLabel = "statefulset.kubernetes.io/pod-name";
/** The label holding the pod's ordinal (`apps.PodIndexLabel`). */
export const podIndexLabel = "apps.kubernetes.io/pod-index";

type Set = StatefulSet | DeepReadonly<StatefulSet>;
type AnyPod = Pod | DeepReadonly<Pod>;

const statefulPodPattern = /^(.*)-([0-9]+)$/;

/** The parent's name and the ordinal in a pod's name; `["", -1]` when it has none. */
export function parentNameAndOrdinal(pod: AnyPod): [string, number] {
  const match = statefulPodPattern.exec(pod.metadata?.name ?? "");
  if (match === null) return ["", -1];
  const ordinal = Number(match[2]);
  // strconv.ParseInt(s, 10, 32): past int32 the parent is known, the ordinal is not.
  return [match[1]!, ordinal <= 2147483647 ? ordinal : -1];
}

export function getOrdinal(pod: AnyPod): number {
  return parentNameAndOrdinal(pod)[1];
}

/** The first ordinal: `spec.ordinals.start`, else 0. */
export function startOrdinal(set: Set): number {
  return set.spec?.ordinals?.start ?? 0;
}

/** The last ordinal a replica has. */
export function endOrdinal(set: Set): number {
  return startOrdinal(set) + (set.spec?.replicas ?? 1) - 1;
}

export function podInOrdinalRange(pod: AnyPod, set: Set): boolean {
  const ordinal = getOrdinal(pod);
  return ordinal >= startOrdinal(set) && ordinal <= endOrdinal(set);
}

export function podName(set: Set, ordinal: number): string {
  return `${set.metadata?.name ?? ""}-${ordinal}`;
}

/** `<template name>-<set name>-<ordinal>`. */
export function claimName(set: Set, templateName: string, ordinal: number): string {
  return `${templateName}-${set.metadata?.name ?? ""}-${ordinal}`;
}

export function isMemberOf(set: Set, pod: AnyPod): boolean {
  return parentNameAndOrdinal(pod)[0] === set.metadata?.name;
}

/** Whether the pod's name, namespace and pod-name label are those of a member of `set`. */
export function identityMatches(set: Set, pod: AnyPod): boolean {
  const [parent, ordinal] = parentNameAndOrdinal(pod);
  const name = pod.metadata?.name;
  return (
    ordinal >= 0 &&
    parent === set.metadata?.name &&
    name === podName(set, ordinal) &&
    pod.metadata?.namespace === set.metadata?.namespace &&
    pod.metadata?.labels?.[statefulSetPodNameLabel] === name
  );
}

/** Whether the pod mounts, under each claim template's name, the claim of its ordinal. */
export function storageMatches(set: Set, pod: AnyPod): boolean {
  const ordinal = getOrdinal(pod);
  if (ordinal < 0) return false;
  const volumes = new Map((pod.spec?.volumes ?? []).map((volume) => [volume.name, volume]));
  return (set.spec?.volumeClaimTemplates ?? []).every((template) => {
    const name = template.metadata?.name ?? "";
    return volumes.get(name)?.persistentVolumeClaim?.claimName === claimName(set, name, ordinal);
  });
}

/** The claims of the pod's ordinal, by template name: the template, renamed, with the selector's labels. */
export function persistentVolumeClaims(set: Set, pod: AnyPod): Map<string, PersistentVolumeClaim> {
  const ordinal = getOrdinal(pod);
  const claims = new Map<string, PersistentVolumeClaim>();
  for (const template of set.spec?.volumeClaimTemplates ?? []) {
    const claim = structuredClone(template) as PersistentVolumeClaim;
    const name = template.metadata?.name ?? "";
    claim.apiVersion = "v1";
    claim.kind = "PersistentVolumeClaim";
    claim.metadata = {
      ...claim.metadata,
      name: claimName(set, name, ordinal),
      namespace: set.metadata?.namespace ?? "",
      labels: { ...claim.metadata?.labels, ...set.spec?.selector?.matchLabels },
    };
    claims.set(name, claim);
  }
  return claims;
}

/** Points the pod's volumes named after claim templates at its claims, keeping its other volumes. */
export function updateStorage(set: Set, pod: Pod): void {
  const claims = persistentVolumeClaims(set, pod);
  const volumes: Volume[] = [];
  for (const [name, claim] of claims)
    volumes.push({ name, persistentVolumeClaim: { claimName: claim.metadata?.name ?? "" } });
  for (const volume of pod.spec?.volumes ?? []) if (!claims.has(volume.name)) volumes.push(volume);
  (pod.spec ??= { containers: [] }).volumes = volumes;
}

/** Sets the name, namespace and identity labels from the ordinal in the pod's name. */
export function updateIdentity(set: Set, pod: Pod): void {
  const ordinal = getOrdinal(pod);
  const meta = (pod.metadata ??= {});
  meta.name = podName(set, ordinal);
  meta.namespace = set.metadata?.namespace ?? "";
  meta.labels = { ...meta.labels, [statefulSetPodNameLabel]: meta.name, [podIndexLabel]: String(ordinal) };
}

/** A new member for `ordinal`: the template, its identity, hostname and subdomain (set once), and storage. */
export function newStatefulSetPod(set: Set, ordinal: number): Pod {
  const meta = set.metadata ?? {};
  const pod = getPodFromTemplate(set.spec?.template ?? {}, set, {
    ...controllerKind,
    name: meta.name ?? "",
    uid: meta.uid ?? "",
    controller: true,
    blockOwnerDeletion: true,
  });
  delete pod.metadata!.generateName;
  pod.metadata!.name = podName(set, ordinal);
  updateIdentity(set, pod);
  pod.spec!.hostname = pod.metadata!.name;
  if (set.spec?.serviceName) pod.spec!.subdomain = set.spec.serviceName;
  updateStorage(set, pod);
  return pod;
}

export function podRevision(pod: AnyPod): string {
  return pod.metadata?.labels?.[statefulSetRevisionLabel] ?? "";
}

/**
 * A new member at the revision its ordinal belongs to: below the partition
 * (or, without one, below the current replicas) the current revision, else
 * the update revision (upstream `newVersionedStatefulSetPod`).
 */
export function newVersionedStatefulSetPod(
  currentSet: Set,
  updateSet: Set,
  currentRevision: string,
  updateRevision: string,
  ordinal: number,
): Pod {
  const strategy = currentSet.spec?.updateStrategy;
  const start = startOrdinal(currentSet);
  const atCurrent =
    (strategy?.type === "RollingUpdate" &&
      strategy.rollingUpdate === undefined &&
      ordinal < start + (currentSet.status?.currentReplicas ?? 0)) ||
    (strategy?.rollingUpdate !== undefined && ordinal < start + (strategy.rollingUpdate.partition ?? 0));
  const pod = newStatefulSetPod(atCurrent ? currentSet : updateSet, ordinal);
  pod.metadata!.labels = {
    ...pod.metadata!.labels,
    [statefulSetRevisionLabel]: atCurrent ? currentRevision : updateRevision,
  };
  return pod;
}

/** What a revision of the set stores: its template, as a patch that puts it back (upstream `getPatch`). */
export function revisionPatch(set: Set): { spec: { template: Record<string, unknown> } } {
  return templateRevisionData(set.spec?.template);
}

/** A new, unsaved revision of the set's template (upstream `newRevision`). */
export function newRevision(set: Set, revision: number, collisionCount: number): ControllerRevision {
  const created = newControllerRevision(
    set,
    controllerKind,
    set.spec?.template?.metadata?.labels,
    revisionPatch(set),
    revision,
    collisionCount,
  );
  const annotations = set.metadata?.annotations;
  if (annotations !== undefined) created.metadata!.annotations = { ...annotations };
  return created;
}

/** The set with the template a revision holds (upstream `ApplyRevision`). */
export function applyRevision(set: Set, revision: DeepReadonly<ControllerRevision>): StatefulSet {
  const clone = structuredClone(set) as StatefulSet;
  const template = templateOfRevision(revision);
  if (template !== undefined) clone.spec = { ...clone.spec!, template };
  return clone;
}

export const isCreated = (pod: AnyPod): boolean => (pod.status?.phase ?? "") !== "";
export const isPending = (pod: AnyPod): boolean => pod.status?.phase === "Pending";
export const isFailed = (pod: AnyPod): boolean => pod.status?.phase === "Failed";
export const isSucceeded = (pod: AnyPod): boolean => pod.status?.phase === "Succeeded";
export const isTerminating = (pod: AnyPod): boolean => pod.metadata?.deletionTimestamp != null;

/** Running and Ready (upstream `isRunningAndReady`). */
export function isRunningAndReady(pod: AnyPod): boolean {
  return pod.status?.phase === "Running" && isPodReady(pod);
}

/** Running and available for `minReadySeconds` (upstream `isRunningAndAvailable`). */
export function isRunningAndAvailable(pod: AnyPod, minReadySeconds: number, now: number): boolean {
  return isPodAvailable(pod, minReadySeconds, now);
}

/** Not running-and-ready, being deleted, or not yet available (upstream `isUnavailable`). */
export function isUnavailable(pod: AnyPod, minReadySeconds: number, now: number): boolean {
  return !(isRunningAndReady(pod) && !isTerminating(pod)) || !isPodAvailable(pod, minReadySeconds, now);
}

/** Pods may be created and deleted all at once (`podManagementPolicy: Parallel`). */
export function allowsBurst(set: Set): boolean {
  return set.spec?.podManagementPolicy === "Parallel";
}

/** Once every wanted replica exists, updated and ready, the update revision becomes the current one (upstream `completeRollingUpdate`). */
export function completeRollingUpdate(set: Set, status: StatefulSetStatus): void {
  // Against spec.replicas: a pod deleted for the update and not yet back must not end the update.
  const replicas = set.spec?.replicas ?? 1;
  if (
    set.spec?.updateStrategy?.type === "RollingUpdate" &&
    status.updatedReplicas === replicas &&
    status.readyReplicas === replicas &&
    status.replicas === replicas
  ) {
    status.currentReplicas = status.updatedReplicas;
    if (status.updateRevision !== undefined) status.currentRevision = status.updateRevision;
  }
}

/** Whether `status` says something the set's status does not (upstream `inconsistentStatus`). */
export function inconsistentStatus(set: Set, status: StatefulSetStatus): boolean {
  const old = set.status;
  return (
    (status.observedGeneration ?? 0) > (old?.observedGeneration ?? 0) ||
    old?.observedGeneration === undefined ||
    status.replicas !== (old?.replicas ?? 0) ||
    (status.currentReplicas ?? 0) !== (old?.currentReplicas ?? 0) ||
    (status.readyReplicas ?? 0) !== (old?.readyReplicas ?? 0) ||
    (status.updatedReplicas ?? 0) !== (old?.updatedReplicas ?? 0) ||
    (status.availableReplicas ?? 0) !== (old?.availableReplicas ?? 0) ||
    (status.currentRevision ?? "") !== (old?.currentRevision ?? "") ||
    (status.updateRevision ?? "") !== (old?.updateRevision ?? "")
  );
}
