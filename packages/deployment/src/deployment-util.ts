import type { DeepReadonly, Deployment, PodTemplateSpec, ReplicaSet } from "@reconcile/api";
import type { DeploymentStatus } from "kubernetes-types/apps/v1.js";
import { getDeploymentCondition } from "./deployment-conditions.js";

// Upstream pkg/controller/deployment/util/deployment_util.go, as pure functions.

/** A Deployment as written by a user or read from a cache. */
export type AnyDeployment = Deployment | DeepReadonly<Deployment>;
/** A ReplicaSet as written by a user or read from a cache. */
export type AnyReplicaSet = ReplicaSet | DeepReadonly<ReplicaSet>;

/** `int | "N%"`, as `maxSurge` and `maxUnavailable`. */
import { getScaledValueFromIntOrPercent, type IntOrPercent } from "@reconcile/api";

/** Re-exported from `@reconcile/api`, where int-or-percent values now live. */
export { getScaledValueFromIntOrPercent, type IntOrPercent };

/** The label (and selector term) a Deployment adds to each of its ReplicaSets' pods. */
export const defaultDeploymentUniqueLabelKey = "pod-template-hash";
export const revisionAnnotation = "deployment.kubernetes.io/revision";
export const revisionHistoryAnnotation = "deployment.kubernetes.io/revision-history";
export const desiredReplicasAnnotation = "deployment.kubernetes.io/desired-replicas";
export const maxReplicasAnnotation = "deployment.kubernetes.io/max-replicas";
/** The rollback request of the deprecated `extensions/v1beta1` rollback API, kept as an annotation. */
export const deprecatedRollbackToAnnotation = "deprecated.deployment.rollback.to";
export const lastAppliedConfigAnnotation = "kubectl.kubernetes.io/last-applied-configuration";
/** Upstream `maxRevHistoryLengthInChars`: the longest `revision-history` annotation. */
export const maxRevisionHistoryLengthInChars = 2000;

/** Progressing reasons. */
export const replicaSetUpdatedReason = "ReplicaSetUpdated";
export const failedRSCreateReason = "ReplicaSetCreateError";
export const newReplicaSetReason = "NewReplicaSetCreated";
export const foundNewRSReason = "FoundNewReplicaSet";
export const newRSAvailableReason = "NewReplicaSetAvailable";
export const timedOutReason = "ProgressDeadlineExceeded";
export const pausedDeployReason = "DeploymentPaused";
export const resumedDeployReason = "DeploymentResumed";
/** Available reasons. */
export const minimumReplicasAvailable = "MinimumReplicasAvailable";
export const minimumReplicasUnavailable = "MinimumReplicasUnavailable";
/** Rollback event reasons. */
export const rollbackRevisionNotFound = "DeploymentRollbackRevisionNotFound";
export const rollbackTemplateUnchanged = "DeploymentRollbackTemplateUnchanged";
export const rollbackDone = "DeploymentRollback";

const maxInt32 = 2147483647;

// Annotations the Deployment keeps to itself (upstream `annotationsToSkip`).
const annotationsToSkip = new Set([
  lastAppliedConfigAnnotation,
  revisionAnnotation,
  revisionHistoryAnnotation,
  desiredReplicasAnnotation,
  maxReplicasAnnotation,
  deprecatedRollbackToAnnotation,
]);

// --- fenceposts -------------------------------------------------------------

/**
 * `[surge, unavailable]` for `desired` replicas (upstream `ResolveFenceposts`):
 * surge rounds up, unavailable rounds down, and when both come to 0
 * unavailable is 1, so a rollout can always make progress.
 */
export function resolveFenceposts(
  maxSurge: IntOrPercent | undefined,
  maxUnavailable: IntOrPercent | undefined,
  desired: number,
): [surge: number, unavailable: number] {
  const surge = getScaledValueFromIntOrPercent(maxSurge ?? 0, desired, true);
  let unavailable = getScaledValueFromIntOrPercent(maxUnavailable ?? 0, desired, false);
  if (surge === 0 && unavailable === 0) unavailable = 1;
  return [surge, unavailable];
}

export function isRollingUpdate(d: AnyDeployment): boolean {
  return (d.spec?.strategy?.type ?? "RollingUpdate") === "RollingUpdate";
}

/** How many pods above `spec.replicas` a rolling update may run; 0 for Recreate. */
export function maxSurge(d: AnyDeployment): number {
  if (!isRollingUpdate(d)) return 0;
  const rollingUpdate = d.spec?.strategy?.rollingUpdate;
  try {
    return resolveFenceposts(rollingUpdate?.maxSurge, rollingUpdate?.maxUnavailable, replicasOf(d))[0];
  } catch {
    return 0;
  }
}

/** How many pods below `spec.replicas` may be unavailable; at most `spec.replicas`, 0 for Recreate. */
export function maxUnavailable(d: AnyDeployment): number {
  const replicas = replicasOf(d);
  if (!isRollingUpdate(d) || replicas === 0) return 0;
  const rollingUpdate = d.spec?.strategy?.rollingUpdate;
  let unavailable: number;
  try {
    unavailable = resolveFenceposts(rollingUpdate?.maxSurge, rollingUpdate?.maxUnavailable, replicas)[1];
  } catch {
    return 0;
  }
  return Math.min(unavailable, replicas);
}

/** The fewest available pods a rolling update keeps; 0 for Recreate. */
export function minAvailable(d: AnyDeployment): number {
  if (!isRollingUpdate(d)) return 0;
  return replicasOf(d) - maxUnavailable(d);
}

/**
 * The size the new ReplicaSet may grow to now (upstream `NewRSNewReplicas`):
 * for a rolling update, as far as `replicas + maxSurge` pods in total allow,
 * never past `replicas`; for Recreate, `replicas` at once.
 */
export function newRSNewReplicas(
  d: AnyDeployment,
  allRSs: readonly (AnyReplicaSet | undefined)[],
  newRS: AnyReplicaSet,
): number {
  const strategy = d.spec?.strategy?.type ?? "RollingUpdate";
  const replicas = replicasOf(d);
  if (strategy === "Recreate") return replicas;
  if (strategy !== "RollingUpdate") throw new Error(`deployment type ${strategy} isn't supported`);
  // An absent maxSurge is 0, as in resolveFenceposts (the API server defaults it to 25%).
  const surge = getScaledValueFromIntOrPercent(
    d.spec?.strategy?.rollingUpdate?.maxSurge ?? 0,
    replicas,
    true,
  );
  const currentPodCount = getReplicaCountForReplicaSets(allRSs);
  const maxTotalPods = replicas + surge;
  const newReplicas = rsReplicas(newRS);
  if (currentPodCount >= maxTotalPods) return newReplicas;
  const scaleUpCount = Math.min(maxTotalPods - currentPodCount, replicas - newReplicas);
  return newReplicas + scaleUpCount;
}

// --- progress predicates ----------------------------------------------------

/** Whether the Deployment has a progress deadline (set and not MaxInt32). */
export function hasProgressDeadline(d: AnyDeployment): boolean {
  const seconds = d.spec?.progressDeadlineSeconds;
  return seconds !== undefined && seconds !== null && seconds !== maxInt32;
}

/** Whether a revision history limit applies (set and not MaxInt32). */
export function hasRevisionHistoryLimit(d: AnyDeployment): boolean {
  const limit = d.spec?.revisionHistoryLimit;
  return limit !== undefined && limit !== null && limit !== maxInt32;
}

/** Every replica updated, available, none old left, and the latest spec observed. */
export function deploymentComplete(d: AnyDeployment, status: DeepReadonly<DeploymentStatus>): boolean {
  const replicas = replicasOf(d);
  return (
    (status.updatedReplicas ?? 0) === replicas &&
    (status.replicas ?? 0) === replicas &&
    (status.availableReplicas ?? 0) === replicas &&
    (status.observedGeneration ?? 0) >= (d.metadata?.generation ?? 0)
  );
}

/**
 * Whether `status` shows progress over the Deployment's current status: more
 * updated, ready or available replicas, or fewer old ones.
 */
export function deploymentProgressing(d: AnyDeployment, status: DeepReadonly<DeploymentStatus>): boolean {
  const old = d.status ?? {};
  const oldOld = (old.replicas ?? 0) - (old.updatedReplicas ?? 0);
  const newOld = (status.replicas ?? 0) - (status.updatedReplicas ?? 0);
  return (
    (status.updatedReplicas ?? 0) > (old.updatedReplicas ?? 0) ||
    newOld < oldOld ||
    (status.readyReplicas ?? 0) > (old.readyReplicas ?? 0) ||
    (status.availableReplicas ?? 0) > (old.availableReplicas ?? 0)
  );
}

/**
 * Whether the rollout has gone `progressDeadlineSeconds` without progress,
 * judged by the Progressing condition in `status` at `nowMs` (strictly after
 * the deadline, as upstream's `Before`).
 */
export function deploymentTimedOut(
  d: AnyDeployment,
  status: DeepReadonly<DeploymentStatus>,
  nowMs: number,
): boolean {
  if (!hasProgressDeadline(d)) return false;
  const condition = getDeploymentCondition(status, "Progressing");
  if (condition === undefined) return false;
  if (condition.reason === newRSAvailableReason) return false;
  if (condition.reason === timedOutReason) return true;
  const from = Date.parse(condition.lastUpdateTime ?? "");
  if (Number.isNaN(from)) return false;
  return from + (d.spec?.progressDeadlineSeconds ?? 0) * 1000 < nowMs;
}

// --- revisions and annotations ----------------------------------------------

/**
 * The revision of a ReplicaSet (or Deployment): 0 without the annotation;
 * throws when the annotation is not an integer.
 */
export function revision(obj: AnyReplicaSet | AnyDeployment): number {
  const value = obj.metadata?.annotations?.[revisionAnnotation];
  if (value === undefined || value === "") return 0;
  if (!/^[+-]?\d+$/.test(value)) throw new Error(`invalid revision annotation "${value}"`);
  return Number.parseInt(value, 10);
}

export function revisionOrUndefined(rs: AnyReplicaSet | undefined): number | undefined {
  if (rs === undefined) return undefined;
  try {
    return revision(rs);
  } catch {
    return undefined;
  }
}

/** The highest revision among the ReplicaSets (unparsable ones skipped). */
export function maxRevision(rss: readonly (AnyReplicaSet | undefined)[]): number {
  let max = 0;
  for (const rs of rss) {
    const v = revisionOrUndefined(rs);
    if (v !== undefined && v > max) max = v;
  }
  return max;
}

/** The second highest revision, the one `rollout undo` goes back to (upstream `LastRevision`). */
export function lastRevision(rss: readonly (AnyReplicaSet | undefined)[]): number {
  let max = 0;
  let secondMax = 0;
  for (const rs of rss) {
    const v = revisionOrUndefined(rs);
    if (v === undefined) continue;
    if (v >= max) {
      secondMax = max;
      max = v;
    } else if (v > secondMax) {
      secondMax = v;
    }
  }
  return secondMax;
}

/** Whether an annotation stays on the Deployment instead of being copied to its ReplicaSets. */
export function skipCopyAnnotation(key: string): boolean {
  return annotationsToSkip.has(key);
}

/**
 * Brings a ReplicaSet's annotations up to date for revision `newRevision`
 * (upstream `SetNewReplicaSetAnnotations`): copies the Deployment's
 * annotations (except the skipped ones), raises the revision, records the
 * revision it had in `revision-history` when it is reused (a rollback), and
 * for a ReplicaSet about to be created sets the replica annotations. Returns
 * whether anything changed.
 */
export function setNewReplicaSetAnnotations(
  d: AnyDeployment,
  rs: ReplicaSet,
  newRevision: string,
  exists: boolean,
  revisionHistoryLimitInChars: number = maxRevisionHistoryLengthInChars,
): boolean {
  let changed = copyDeploymentAnnotationsToReplicaSet(d, rs);
  const meta = (rs.metadata ??= {});
  const annotations = (meta.annotations ??= {});
  const oldRevision = annotations[revisionAnnotation];
  const hadRevision = oldRevision !== undefined;
  let oldRevisionInt = 0;
  if (oldRevision !== undefined && oldRevision !== "") {
    if (!/^[+-]?\d+$/.test(oldRevision)) return false;
    oldRevisionInt = Number.parseInt(oldRevision, 10);
  }
  if (!/^[+-]?\d+$/.test(newRevision)) return false;
  const newRevisionInt = Number.parseInt(newRevision, 10);
  if (oldRevisionInt < newRevisionInt) {
    annotations[revisionAnnotation] = newRevision;
    changed = true;
  }
  // A ReplicaSet that had a revision and gets a newer one is being rolled back to: keep its history.
  if (hadRevision && oldRevisionInt < newRevisionInt) {
    const history = annotations[revisionHistoryAnnotation] ?? "";
    const oldRevisions = history.split(",");
    if (oldRevisions[0] === "") {
      annotations[revisionHistoryAnnotation] = oldRevision;
    } else {
      let totalLength = history.length + oldRevision.length + 1;
      let start = 0;
      while (totalLength > revisionHistoryLimitInChars && start < oldRevisions.length) {
        totalLength -= (oldRevisions[start]?.length ?? 0) + 1;
        start++;
      }
      if (totalLength <= revisionHistoryLimitInChars) {
        annotations[revisionHistoryAnnotation] = [...oldRevisions.slice(start), oldRevision].join(",");
      }
    }
  }
  if (!exists && setReplicasAnnotations(rs, replicasOf(d), replicasOf(d) + maxSurge(d))) changed = true;
  return changed;
}

function copyDeploymentAnnotationsToReplicaSet(d: AnyDeployment, rs: ReplicaSet): boolean {
  let changed = false;
  const meta = (rs.metadata ??= {});
  for (const [key, value] of Object.entries(d.metadata?.annotations ?? {})) {
    if (skipCopyAnnotation(key) || meta.annotations?.[key] === value) continue;
    (meta.annotations ??= {})[key] = value;
    changed = true;
  }
  return changed;
}

/**
 * Replaces the Deployment's annotations with the ReplicaSet's copyable ones,
 * keeping the Deployment's own skipped ones (upstream `SetDeploymentAnnotationsTo`,
 * used by a rollback so the change-cause comes back with the template).
 */
export function setDeploymentAnnotationsTo(d: Deployment, rollbackToRS: AnyReplicaSet): void {
  const annotations: Record<string, string> = {};
  for (const [key, value] of Object.entries(d.metadata?.annotations ?? {})) {
    if (skipCopyAnnotation(key)) annotations[key] = value;
  }
  for (const [key, value] of Object.entries(rollbackToRS.metadata?.annotations ?? {})) {
    if (!skipCopyAnnotation(key)) annotations[key] = value;
  }
  (d.metadata ??= {}).annotations = annotations;
}

/** Sets the Deployment's revision annotation; returns whether it changed. */
export function setDeploymentRevision(d: Deployment, value: string | undefined): boolean {
  const meta = (d.metadata ??= {});
  if (meta.annotations?.[revisionAnnotation] === value) return false;
  if (value === undefined) return false;
  (meta.annotations ??= {})[revisionAnnotation] = value;
  return true;
}

/** Sets desired-replicas and max-replicas; returns whether either changed. */
export function setReplicasAnnotations(
  rs: ReplicaSet,
  desiredReplicas: number,
  maxReplicas: number,
): boolean {
  const annotations = ((rs.metadata ??= {}).annotations ??= {});
  let updated = false;
  if (annotations[desiredReplicasAnnotation] !== String(desiredReplicas)) {
    annotations[desiredReplicasAnnotation] = String(desiredReplicas);
    updated = true;
  }
  if (annotations[maxReplicasAnnotation] !== String(maxReplicas)) {
    annotations[maxReplicasAnnotation] = String(maxReplicas);
    updated = true;
  }
  return updated;
}

export function replicasAnnotationsNeedUpdate(
  rs: AnyReplicaSet,
  desiredReplicas: number,
  maxReplicas: number,
): boolean {
  const annotations = rs.metadata?.annotations;
  if (annotations === undefined) return true;
  return (
    annotations[desiredReplicasAnnotation] !== String(desiredReplicas) ||
    annotations[maxReplicasAnnotation] !== String(maxReplicas)
  );
}

/** The desired-replicas annotation as a number, or undefined when absent or not an int32. */
export function getDesiredReplicasAnnotation(rs: AnyReplicaSet): number | undefined {
  return intAnnotation(rs, desiredReplicasAnnotation);
}

export function getMaxReplicasAnnotation(rs: AnyReplicaSet): number | undefined {
  return intAnnotation(rs, maxReplicasAnnotation);
}

function intAnnotation(rs: AnyReplicaSet, key: string): number | undefined {
  const value = rs.metadata?.annotations?.[key];
  if (value === undefined || !/^[+-]?\d+$/.test(value)) return undefined;
  const parsed = Number.parseInt(value, 10);
  return parsed > maxInt32 || parsed < -maxInt32 - 1 ? undefined : parsed;
}

/** The rollback revision requested through the deprecated annotation, or undefined (invalid ones ignored). */
export function getRollbackTo(d: AnyDeployment): number | undefined {
  const value = d.metadata?.annotations?.[deprecatedRollbackToAnnotation];
  if (value === undefined || value === "" || !/^[+-]?\d+$/.test(value)) return undefined;
  return Number.parseInt(value, 10);
}

// --- templates and ReplicaSet sets --------------------------------------------

/** Whether two pod templates are equal once their `pod-template-hash` labels are ignored. */
export function equalIgnoreHash(
  a: PodTemplateSpec | DeepReadonly<PodTemplateSpec> | undefined,
  b: PodTemplateSpec | DeepReadonly<PodTemplateSpec> | undefined,
): boolean {
  return semanticEqual(withoutHashLabel(a), withoutHashLabel(b));
}

function withoutHashLabel(template: PodTemplateSpec | DeepReadonly<PodTemplateSpec> | undefined): unknown {
  if (template === undefined) return {};
  const labels = template.metadata?.labels;
  if (labels === undefined || !(defaultDeploymentUniqueLabelKey in labels)) return template;
  const { [defaultDeploymentUniqueLabelKey]: _hash, ...rest } = labels;
  return { ...template, metadata: { ...template.metadata, labels: rest } };
}

/**
 * Deep equality where an absent field, `null`, an empty list and a map of
 * nothing but such are all the same (apimachinery's semantic equality treats
 * nil and empty alike, and JSON drops the difference anyway).
 */
export function semanticEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (isEmptyValue(a) && isEmptyValue(b)) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return false;
    return a.every((item, i) => semanticEqual(item, b[i]));
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = new Set([...Object.keys(left), ...Object.keys(right)]);
  for (const key of keys) if (!semanticEqual(left[key], right[key])) return false;
  return true;
}

function isEmptyValue(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === "object") return Object.values(value).every(isEmptyValue);
  return false;
}

/** The Deployment's current ReplicaSet: the oldest one whose template equals the Deployment's. */
export function findNewReplicaSet<R extends AnyReplicaSet>(
  d: AnyDeployment,
  rsList: readonly R[],
): R | undefined {
  const sorted = [...rsList].sort(byCreationTimestamp);
  return sorted.find((rs) => equalIgnoreHash(rs.spec?.template, d.spec?.template));
}

/** `[requiredToScaleDown, allOld]`: every ReplicaSet but the new one, and those of them with replicas. */
export function findOldReplicaSets<R extends AnyReplicaSet>(
  d: AnyDeployment,
  rsList: readonly R[],
): [required: R[], all: R[]] {
  const newRS = findNewReplicaSet(d, rsList);
  const all = rsList.filter((rs) => newRS === undefined || rs.metadata?.uid !== newRS.metadata?.uid);
  return [all.filter((rs) => rsReplicas(rs) !== 0), all];
}

/**
 * The one ReplicaSet that should take all replicas (upstream
 * `FindActiveOrLatest`): the only active one, or, with none active, the new
 * one or else the newest old one; undefined when several are active.
 */
export function findActiveOrLatest<R extends AnyReplicaSet>(
  newRS: R | undefined,
  oldRSs: readonly R[],
): R | undefined {
  if (newRS === undefined && oldRSs.length === 0) return undefined;
  const newestFirst = [...oldRSs].sort((a, b) => byCreationTimestamp(b, a));
  const active = filterActiveReplicaSets([...newestFirst, newRS]);
  if (active.length === 0) return newRS ?? newestFirst[0];
  if (active.length === 1) return active[0];
  return undefined;
}

/** ReplicaSets with `spec.replicas > 0` (missing ones skipped). */
export function filterActiveReplicaSets<R extends AnyReplicaSet>(rss: readonly (R | undefined)[]): R[] {
  return rss.filter((rs): rs is R => rs !== undefined && rsReplicas(rs) > 0);
}

/** Whether the new ReplicaSet holds every replica and all are available (upstream `IsSaturated`). */
export function isSaturated(d: AnyDeployment, rs: AnyReplicaSet | undefined): boolean {
  if (rs === undefined) return false;
  const desired = getDesiredReplicasAnnotation(rs);
  if (desired === undefined) return false;
  const replicas = replicasOf(d);
  return (
    rsReplicas(rs) === replicas && desired === replicas && (rs.status?.availableReplicas ?? 0) === replicas
  );
}

export function getReplicaCountForReplicaSets(rss: readonly (AnyReplicaSet | undefined)[]): number {
  let total = 0;
  for (const rs of rss) if (rs !== undefined) total += rsReplicas(rs);
  return total;
}

export function getActualReplicaCountForReplicaSets(rss: readonly (AnyReplicaSet | undefined)[]): number {
  let total = 0;
  for (const rs of rss) if (rs !== undefined) total += rs.status?.replicas ?? 0;
  return total;
}

export function getReadyReplicaCountForReplicaSets(rss: readonly (AnyReplicaSet | undefined)[]): number {
  let total = 0;
  for (const rs of rss) if (rs !== undefined) total += rs.status?.readyReplicas ?? 0;
  return total;
}

export function getAvailableReplicaCountForReplicaSets(rss: readonly (AnyReplicaSet | undefined)[]): number {
  let total = 0;
  for (const rs of rss) if (rs !== undefined) total += rs.status?.availableReplicas ?? 0;
  return total;
}

// --- proportional scaling -----------------------------------------------------

/**
 * How many of `toAdd` replicas (negative: to remove) this ReplicaSet takes,
 * given `added` already handed out (upstream `GetProportion`).
 */
export function getProportion(
  rs: AnyReplicaSet | undefined,
  d: AnyDeployment,
  toAdd: number,
  added: number,
): number {
  if (rs === undefined || rsReplicas(rs) === 0 || toAdd === 0 || toAdd === added) return 0;
  const fraction = getReplicaSetFraction(rs, d);
  const allowed = toAdd - added;
  return toAdd > 0 ? Math.min(fraction, allowed) : Math.max(fraction, allowed);
}

/**
 * The change in this ReplicaSet's size that keeps its share of the
 * Deployment when the Deployment is resized (upstream `getReplicaSetFraction`),
 * its share taken against the max-replicas annotation it was last sized for.
 */
export function getReplicaSetFraction(rs: AnyReplicaSet, d: AnyDeployment): number {
  const replicas = rsReplicas(rs);
  if (replicasOf(d) === 0) return -replicas;
  const deploymentReplicas = replicasOf(d) + maxSurge(d);
  const annotated = getMaxReplicasAnnotation(rs) ?? d.status?.replicas ?? 0;
  // Upstream divides by zero here ("should never happen"); hand out nothing instead.
  if (annotated === 0) return 0;
  return roundHalfAwayFromZero((replicas * deploymentReplicas) / annotated) - replicas;
}

function roundHalfAwayFromZero(value: number): number {
  return Math.sign(value) * Math.round(Math.abs(value));
}

// --- orderings ----------------------------------------------------------------

/** Creation time ascending, then name (upstream `ReplicaSetsByCreationTimestamp`). */
export function byCreationTimestamp(a: AnyReplicaSet, b: AnyReplicaSet): number {
  const ta = Date.parse(a.metadata?.creationTimestamp ?? "") || 0;
  const tb = Date.parse(b.metadata?.creationTimestamp ?? "") || 0;
  if (ta !== tb) return ta - tb;
  const na = a.metadata?.name ?? "";
  const nb = b.metadata?.name ?? "";
  return na < nb ? -1 : na > nb ? 1 : 0;
}

// --- small shared helpers ---------------------------------------------------------

/** `spec.replicas` of a Deployment, defaulting to 1 as the API server does. */
export function replicasOf(d: AnyDeployment): number {
  return d.spec?.replicas ?? 1;
}

/** `spec.replicas` of a ReplicaSet, defaulting to 1 as the API server does. */
export function rsReplicas(rs: AnyReplicaSet): number {
  return rs.spec?.replicas ?? 1;
}
