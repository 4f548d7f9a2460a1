import type { DeepReadonly, Pod, PodCondition, PodStatus } from "@reconcile/api";
import { type ControllerIndexer, ensureIndex } from "@reconcile/controller";

/** The pod index both controllers read pods through (upstream `nodeNameKeyIndex`). */
export const nodeNameIndex = "spec.nodeName";

/** Adds the {@link nodeNameIndex} to a pod cache unless it is there already (both controllers share one pod informer). */
export function ensureNodeNameIndex(indexer: ControllerIndexer<Pod>): void {
  ensureIndex(indexer, nodeNameIndex, (pod) => (pod.spec?.nodeName ? [pod.spec.nodeName] : []));
}

/** The cached pods bound to `nodeName` (upstream `getPodsAssignedToNode`). */
export function podsOnNode(indexer: ControllerIndexer<Pod>, nodeName: string): DeepReadonly<Pod>[] {
  return indexer.byIndex(nodeNameIndex, nodeName);
}

/**
 * Sets `condition` in `status` (upstream `podutil.UpdatePodCondition`): its
 * `lastTransitionTime` is `now` unless the status stays the same, when the
 * old one is kept. Returns whether anything changed.
 */
export function updatePodCondition(status: PodStatus, condition: PodCondition, now: string): boolean {
  const conditions = (status.conditions ??= []);
  const index = conditions.findIndex((c) => c.type === condition.type);
  const next: PodCondition = { ...condition, lastTransitionTime: now };
  if (index < 0) {
    conditions.push(next);
    return true;
  }
  const old = conditions[index] as PodCondition;
  if (old.status === next.status) {
    if (old.lastTransitionTime === undefined) delete next.lastTransitionTime;
    else next.lastTransitionTime = old.lastTransitionTime;
  }
  const same =
    old.status === next.status &&
    old.reason === next.reason &&
    old.message === next.message &&
    old.lastProbeTime === next.lastProbeTime &&
    old.lastTransitionTime === next.lastTransitionTime;
  conditions[index] = next;
  return !same;
}
