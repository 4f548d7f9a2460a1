import { type DaemonSet, type DeepReadonly, isPodAvailable, type Node, type Pod } from "@reconcile/api";
import {
  isPodUpdated,
  nodeShouldRunDaemonPod,
  surgeCount,
  templateGeneration,
  unavailableCount,
} from "./daemonset-util.js";

type DS = DeepReadonly<DaemonSet>;
type AnyPod = DeepReadonly<Pod>;

/** What a rolling-update step asks of `syncNodes`: pods to delete, nodes to create a pod on. */
export interface RollingUpdateStep {
  podsToDelete: string[];
  nodesNeedingPods: string[];
}

/**
 * The pod at the current template and the one at an older template on a
 * node, ignoring pods being deleted; `ok` false when there are two of either
 * (the manage loop cleans that up first) (upstream `findUpdatedPodsOnNode`).
 */
export function findUpdatedPodsOnNode(
  ds: DS,
  pods: readonly AnyPod[],
  hash: string,
): { newPod?: AnyPod | undefined; oldPod?: AnyPod | undefined; ok: boolean } {
  let newPod: AnyPod | undefined;
  let oldPod: AnyPod | undefined;
  const generation = templateGeneration(ds);
  for (const pod of pods) {
    if (pod.metadata?.deletionTimestamp != null) continue;
    if (isPodUpdated(pod, hash, generation)) {
      if (newPod !== undefined) return { ok: false };
      newPod = pod;
    } else {
      if (oldPod !== undefined) return { ok: false };
      oldPod = pod;
    }
  }
  return { newPod, oldPod, ok: true };
}

/**
 * The surge and unavailability budgets of an update over the nodes that
 * should run a pod, each such node added to `nodeToPods` (upstream
 * `updatedDesiredNodeCounts`). With neither set, one pod may be unavailable.
 */
export function updatedDesiredNodeCounts(
  ds: DS,
  nodes: readonly DeepReadonly<Node>[],
  nodeToPods: Map<string, AnyPod[]>,
): { maxSurge: number; maxUnavailable: number; desired: number } {
  let desired = 0;
  for (const node of nodes) {
    if (!nodeShouldRunDaemonPod(node, ds).shouldRun) continue;
    desired++;
    const name = node.metadata?.name ?? "";
    if (!nodeToPods.has(name)) nodeToPods.set(name, []);
  }
  const maxUnavailable = unavailableCount(ds, desired);
  const maxSurge = surgeCount(ds, desired);
  if (desired > 0 && maxUnavailable === 0 && maxSurge === 0) return { maxSurge, maxUnavailable: 1, desired };
  return { maxSurge, maxUnavailable, desired };
}

/**
 * One step of a RollingUpdate (upstream `rollingUpdate`). Without surge, old
 * pods are deleted while fewer than `maxUnavailable` nodes are unavailable,
 * and the manage loop puts new pods in their place. With surge, a new pod
 * is started beside an old one on up to `maxSurge` nodes (at once where the
 * old one is not available), and the old one goes once the new one is available.
 */
export function rollingUpdateStep(
  ds: DS,
  nodes: readonly DeepReadonly<Node>[],
  nodeToPods: Map<string, AnyPod[]>,
  hash: string,
  now: number,
): RollingUpdateStep {
  const { maxSurge, maxUnavailable, desired } = updatedDesiredNodeCounts(ds, nodes, nodeToPods);
  const minReady = ds.spec?.minReadySeconds ?? 0;
  const available = (pod: AnyPod) => isPodAvailable(pod, minReady, now);
  if (maxSurge === 0) {
    let unavailable = 0;
    const replacements: string[] = [];
    const candidates: string[] = [];
    for (const pods of nodeToPods.values()) {
      const { newPod, oldPod, ok } = findUpdatedPodsOnNode(ds, pods, hash);
      if (!ok || (oldPod === undefined) === (newPod === undefined)) {
        unavailable++;
      } else if (newPod !== undefined) {
        if (!available(newPod)) unavailable++;
      } else if (!available(oldPod!)) {
        replacements.push(oldPod!.metadata?.name ?? "");
      } else if (unavailable < maxUnavailable) {
        candidates.push(oldPod!.metadata?.name ?? "");
      }
    }
    const remaining = Math.min(Math.max(0, maxUnavailable - unavailable), candidates.length);
    return { podsToDelete: [...replacements, ...candidates.slice(0, remaining)], nodesNeedingPods: [] };
  }
  return surgeStep(ds, nodes, nodeToPods, hash, available, maxSurge, desired);
}

function surgeStep(
  ds: DS,
  nodes: readonly DeepReadonly<Node>[],
  nodeToPods: Map<string, AnyPod[]>,
  hash: string,
  available: (pod: AnyPod) => boolean,
  maxSurge: number,
  desired: number,
): RollingUpdateStep {
  const byName = new Map(nodes.map((node) => [node.metadata?.name ?? "", node]));
  const shouldRun = (name: string) => {
    const node = byName.get(name);
    return node !== undefined && nodeShouldRunDaemonPod(node, ds).shouldRun;
  };
  const oldPodsToDelete: string[] = [];
  const shouldNotRun: AnyPod[] = [];
  const candidates: string[] = [];
  const allowed: string[] = [];
  let surging = 0;
  let numAvailable = 0;
  for (const [nodeName, pods] of nodeToPods) {
    const { newPod, oldPod, ok } = findUpdatedPodsOnNode(ds, pods, hash);
    if (!ok) {
      surging++;
      continue;
    }
    if (oldPod !== undefined ? available(oldPod) : newPod !== undefined && available(newPod)) numAvailable++;
    if (oldPod === undefined) continue;
    if (newPod === undefined) {
      if (!available(oldPod)) {
        if (!shouldRun(nodeName)) oldPodsToDelete.push(oldPod.metadata?.name ?? "");
        else allowed.push(nodeName);
      } else if (!shouldRun(nodeName)) {
        shouldNotRun.push(oldPod);
      } else if (surging < maxSurge) {
        candidates.push(nodeName);
      }
      continue;
    }
    // Surged here already: the old pod goes once the new one is available.
    if (!available(newPod)) surging++;
    else oldPodsToDelete.push(oldPod.metadata?.name ?? "");
  }
  // Pods on nodes the set no longer selects go only while enough pods elsewhere are available.
  const deletable = Math.min(Math.max(0, numAvailable - desired), shouldNotRun.length);
  for (const pod of shouldNotRun.slice(0, deletable))
    if (pod.metadata?.deletionTimestamp == null) oldPodsToDelete.push(pod.metadata?.name ?? "");
  const remaining = Math.min(Math.max(0, maxSurge - surging), candidates.length);
  return { podsToDelete: oldPodsToDelete, nodesNeedingPods: [...allowed, ...candidates.slice(0, remaining)] };
}
