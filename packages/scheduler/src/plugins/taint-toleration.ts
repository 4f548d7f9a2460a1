import { type DeepReadonly, toleratesTaint } from "@reconcile/api";
import type { Taint, Toleration } from "kubernetes-types/core/v1.js";
import { defaultNormalizeScore, type Plugin, successStatus, unresolvable } from "../framework.js";

// Upstream's `Toleration.ToleratesTaint`, shared with the node lifecycle controllers.
export { toleratesTaint };

/** The first taint, among those `inScope` accepts, that no toleration tolerates (upstream `FindMatchingUntoleratedTaint`). */
export function findUntoleratedTaint(
  taints: readonly DeepReadonly<Taint>[],
  tolerations: readonly DeepReadonly<Toleration>[],
  inScope: (taint: DeepReadonly<Taint>) => boolean,
): DeepReadonly<Taint> | undefined {
  for (const taint of taints) {
    if (!inScope(taint)) continue;
    if (!tolerations.some((toleration) => toleratesTaint(toleration, taint))) return taint;
  }
  return undefined;
}

const preScoreKey = "PreScoreTaintToleration";

const noScheduleOrNoExecute = (taint: DeepReadonly<Taint>) =>
  taint.effect === "NoSchedule" || taint.effect === "NoExecute";

/**
 * TaintToleration: a pod fits a node only if it tolerates every NoSchedule and
 * NoExecute taint; among feasible nodes, fewer untolerated PreferNoSchedule
 * taints score higher.
 */
export const taintToleration: Plugin = {
  name: "TaintToleration",
  weight: 3,
  events: ["NodeAdd", "NodeTaintChange", "PodTolerationChange"],
  filter(_state, pod, nodeInfo) {
    const taints = nodeInfo.node?.spec?.taints;
    if (taints === undefined || taints.length === 0) return successStatus;
    const taint = findUntoleratedTaint(taints, pod.spec?.tolerations ?? [], noScheduleOrNoExecute);
    if (taint === undefined) return successStatus;
    return unresolvable(`node(s) had untolerated taint {${taint.key}: ${taint.value ?? ""}}`);
  },
  preScore(state, pod) {
    // The tolerations that can tolerate PreferNoSchedule taints, once per cycle.
    state.set(
      preScoreKey,
      (pod.spec?.tolerations ?? []).filter(
        (toleration) => !toleration.effect || toleration.effect === "PreferNoSchedule",
      ),
    );
    return successStatus;
  },
  score(state, pod, nodeInfo) {
    const taints = nodeInfo.node?.spec?.taints;
    if (taints === undefined || taints.length === 0) return 0;
    const tolerations =
      (state.get(preScoreKey) as readonly DeepReadonly<Toleration>[] | undefined) ??
      pod.spec?.tolerations ??
      [];
    let count = 0;
    for (const taint of taints) {
      if (taint.effect !== "PreferNoSchedule") continue;
      if (!tolerations.some((toleration) => toleratesTaint(toleration, taint))) count++;
    }
    return count;
  },
  normalizeScore(_state, _pod, scores) {
    defaultNormalizeScore(scores, true);
  },
};
