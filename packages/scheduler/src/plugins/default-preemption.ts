import type { DeepReadonly, Pod } from "@reconcile/api";
import { type Diagnosis, fitErrorMessage } from "../fit-error.js";
import { type CycleState, cloneCycleState, type Plugin, runFilters, type Status } from "../framework.js";
import type { NodeInfo } from "../node-info.js";

// DefaultPreemption's PostFilter (upstream plugins/defaultpreemption), as far as this scheduler goes:
// it finds whether preemption could help and says why not, but evicts no pod.

/**
 * DefaultPreemption's text when no pod is preempted (this scheduler does not
 * preempt): over the nodes that failed with plain Unschedulable, removing
 * every lower-priority pod either still does not fit (that node's reasons)
 * or finds no victim. Undefined when preemption could help somewhere.
 */
export function preemptionMessage(
  pod: DeepReadonly<Pod>,
  allNodes: readonly NodeInfo[],
  diagnosis: Diagnosis,
  filters: readonly Plugin[],
  state: CycleState,
): string | undefined {
  if (pod.spec?.preemptionPolicy === "Never")
    return "preemption: not eligible due to preemptionPolicy=Never.";
  const priority = pod.spec?.priority ?? 0;
  const statuses = new Map<string, Status>();
  for (const nodeInfo of allNodes) {
    const status = diagnosis.nodeToStatus.get(nodeInfo.name);
    if (status === undefined || status.code !== "Unschedulable") continue;
    const victims = [...nodeInfo.pods.entries()].filter(
      ([, info]) => (info.pod.spec?.priority ?? 0) < priority,
    );
    if (victims.length === 0) {
      statuses.set(nodeInfo.name, {
        code: "UnschedulableAndUnresolvable",
        reasons: ["No preemption victims found for incoming pod"],
      });
      continue;
    }
    // Try the node without its lower-priority pods, on a copy of the cycle's state that the plugins'
    // RemovePod extensions have told of them, then put them back.
    const what = cloneCycleState(state);
    for (const [, info] of victims)
      for (const plugin of filters) plugin.removePod?.(what, pod, info, nodeInfo);
    for (const [uid] of victims) nodeInfo.removePod(uid);
    const after = runFilters(filters, what, pod, nodeInfo);
    for (const [uid, info] of victims) nodeInfo.addPod(info.pod, uid, info);
    if (after === undefined) return undefined; // a preemption candidate: not performed here
    statuses.set(nodeInfo.name, after);
  }
  const absent = allNodes.length - statuses.size;
  const histogram: Diagnosis = { nodeToStatus: statuses, unschedulablePlugins: new Set() };
  let message = fitErrorMessage(allNodes.length, histogram);
  if (absent > 0) {
    // Nodes where preemption cannot help are counted under one reason, as upstream's absent-nodes status.
    const withAbsent = new Map(statuses);
    for (let i = 0; i < absent; i++) {
      withAbsent.set(`\u0000absent-${i}`, {
        code: "UnschedulableAndUnresolvable",
        reasons: ["Preemption is not helpful for scheduling"],
      });
    }
    message = fitErrorMessage(allNodes.length, {
      nodeToStatus: withAbsent,
      unschedulablePlugins: new Set(),
    });
  }
  return `preemption: ${message}`;
}
