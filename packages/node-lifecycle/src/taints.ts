import {
  type DeepReadonly,
  isConflict,
  matchTaint,
  type Node,
  nodes,
  rfc3339,
  taintExists,
  toleratesTaint,
} from "@reconcile/api";
import type { Client } from "@reconcile/client";
import type { Clock } from "@reconcile/clock";
import type { Taint, Toleration } from "kubernetes-types/core/v1.js";

/** `node.kubernetes.io/not-ready`: the node's Ready condition is False. */
export const taintNodeNotReady = "node.kubernetes.io/not-ready";
/** `node.kubernetes.io/unreachable`: the node's Ready condition is Unknown (its kubelet went quiet). */
export const taintNodeUnreachable = "node.kubernetes.io/unreachable";
/** `node.kubernetes.io/unschedulable`: the node is cordoned (`spec.unschedulable`). */
export const taintNodeUnschedulable = "node.kubernetes.io/unschedulable";
export const taintNodeMemoryPressure = "node.kubernetes.io/memory-pressure";
export const taintNodeDiskPressure = "node.kubernetes.io/disk-pressure";
export const taintNodePIDPressure = "node.kubernetes.io/pid-pressure";
export const taintNodeNetworkUnavailable = "node.kubernetes.io/network-unavailable";

/** The NoExecute taint of an unreachable node (upstream `UnreachableTaintTemplate`). */
export const unreachableTaintTemplate: Readonly<Taint> = Object.freeze({
  key: taintNodeUnreachable,
  effect: "NoExecute",
});
/** The NoExecute taint of a not-ready node (upstream `NotReadyTaintTemplate`). */
export const notReadyTaintTemplate: Readonly<Taint> = Object.freeze({
  key: taintNodeNotReady,
  effect: "NoExecute",
});

// The taint and toleration predicates are @reconcile/api's (k8s.io/api/core/v1's helpers upstream).
export { matchTaint, taintExists, toleratesTaint };

type AnyTaint = Taint | DeepReadonly<Taint>;
type AnyToleration = Toleration | DeepReadonly<Toleration>;

/**
 * Whether every taint is tolerated, and the tolerations that do it: for each
 * taint the first toleration that tolerates it (upstream
 * `GetMatchingTolerations`). No taints: tolerated, by nothing.
 */
export function getMatchingTolerations<T extends AnyToleration>(
  taints: readonly AnyTaint[],
  tolerations: readonly T[],
): { allTolerated: boolean; used: T[] } {
  if (taints.length === 0) return { allTolerated: true, used: [] };
  const used: T[] = [];
  for (const taint of taints) {
    const toleration = tolerations.find((t) => toleratesTaint(t, taint));
    if (toleration === undefined) return { allTolerated: false, used: [] };
    used.push(toleration);
  }
  return { allTolerated: true, used };
}

/**
 * How long a pod may stay, in ms, given the tolerations it uses: the
 * shortest `tolerationSeconds` (a value ≤ 0 means at once, as does using no
 * toleration at all); -1 when none sets a limit — the pod stays for ever
 * (upstream `getMinTolerationTime`).
 */
export function getMinTolerationTimeMs(tolerations: readonly AnyToleration[]): number {
  if (tolerations.length === 0) return 0;
  let min = Number.POSITIVE_INFINITY;
  for (const toleration of tolerations) {
    const seconds = toleration.tolerationSeconds;
    if (seconds === undefined || seconds === null) continue;
    if (seconds <= 0) return 0;
    if (seconds < min) min = seconds;
  }
  return min === Number.POSITIVE_INFINITY ? -1 : min * 1000;
}

/** The node's NoExecute taints (upstream `getNoExecuteTaints`). */
export function getNoExecuteTaints(taints: readonly DeepReadonly<Taint>[] | undefined): Taint[] {
  return (taints ?? []).filter((t) => t.effect === "NoExecute").map((t) => ({ ...t }) as Taint);
}

/** The taints of `a` that `b` lacks, and those of `b` that `a` lacks, matched by key and effect (upstream `TaintSetDiff`). */
export function taintSetDiff(
  a: readonly AnyTaint[],
  b: readonly AnyTaint[],
): { toAdd: Taint[]; toRemove: Taint[] } {
  return {
    toAdd: a.filter((t) => !taintExists(b, t)).map((t) => ({ ...t }) as Taint),
    toRemove: b.filter((t) => !taintExists(a, t)).map((t) => ({ ...t }) as Taint),
  };
}

/**
 * Adds `toAdd` (stamped with `timeAdded` now) and removes `toRemove` from the
 * node's taints in one write, re-reading the node and retrying on a conflict
 * (upstream `SwapNodeControllerTaint`, which adds, then removes). A taint
 * already there with the same key and effect is replaced only if its value
 * differs. Writes nothing when nothing changes; resolves false when the node
 * is gone.
 */
export async function swapNodeTaints(
  client: Client,
  clock: Clock,
  node: DeepReadonly<Node>,
  toAdd: readonly AnyTaint[],
  toRemove: readonly AnyTaint[],
  signal?: AbortSignal,
): Promise<boolean> {
  const nodeClient = client.resource(nodes);
  const name = node.metadata?.name ?? "";
  const now = rfc3339(clock.now());
  let current: DeepReadonly<Node> = node;
  for (let attempt = 0; ; attempt++) {
    const taints: Taint[] = (current.spec?.taints ?? []).map((t) => ({ ...t }) as Taint);
    let changed = false;
    for (const add of toAdd) {
      const index = taints.findIndex((t) => matchTaint(t, add));
      if (index >= 0 && (taints[index]?.value ?? "") === (add.value ?? "")) continue;
      const stamped: Taint = { ...(add as Taint), timeAdded: now };
      if (index >= 0) taints[index] = stamped;
      else taints.push(stamped);
      changed = true;
    }
    const kept = taints.filter((t) => !taintExists(toRemove, t));
    if (kept.length !== taints.length) changed = true;
    if (!changed) return true;
    const updated = structuredClone(current) as Node;
    updated.spec = { ...updated.spec };
    if (kept.length > 0) updated.spec.taints = kept;
    else delete updated.spec.taints;
    try {
      await nodeClient.update(updated, signal === undefined ? {} : { signal });
      return true;
    } catch (error) {
      // Upstream retries a conflicting taint patch five times on a fresh read.
      if (!isConflict(error) || attempt >= 4) throw error;
    }
    current = await nodeClient.get(name, signal === undefined ? {} : { signal });
  }
}
