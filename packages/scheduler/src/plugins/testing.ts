import type { DeepReadonly, Node, Pod } from "@reconcile/api";
import type { CycleState, Plugin, Status } from "../framework.js";
import { NodeInfo } from "../node-info.js";

/** A NodeInfo for `node` holding `pods` (test helper). */
export function nodeInfoOf(node: Node, pods: Pod[] = []): NodeInfo {
  const info = new NodeInfo(node);
  pods.forEach((pod, i) => {
    info.addPod(pod, pod.metadata?.uid ?? `uid-${i}`);
  });
  return info;
}

/** NodeInfos for `nodes`, each holding the pods whose `spec.nodeName` names it (test helper). */
export function nodeInfosWith(nodes: Node[], pods: Pod[]): NodeInfo[] {
  return nodes.map((n) =>
    nodeInfoOf(
      n,
      pods.filter((p) => p.spec?.nodeName === n.metadata?.name),
    ),
  );
}

/** Runs a plugin's PreFilter (unless it skips) and Filter on one node, as a cycle would. */
export function runFilter(plugin: Plugin, pod: Pod, nodeInfo: NodeInfo): Status {
  const state: CycleState = new Map();
  const pre = plugin.preFilter?.(state, pod, [nodeInfo]);
  if (pre?.code === "Skip") return { code: "Success", reasons: [] };
  if (pre !== undefined && pre.code !== "Success") return pre;
  return plugin.filter!(state, pod, nodeInfo);
}

/** Runs PreScore, Score and NormalizeScore over the nodes; the normalized scores by node name. */
export function runScore(plugin: Plugin, pod: Pod, nodeInfos: NodeInfo[]): Record<string, number> | "skip" {
  const state: CycleState = new Map();
  plugin.preFilter?.(state, pod as DeepReadonly<Pod>, nodeInfos);
  const pre = plugin.preScore?.(state, pod, nodeInfos, nodeInfos);
  if (pre?.code === "Skip") return "skip";
  const scores = nodeInfos.map((info) => plugin.score!(state, pod, info));
  plugin.normalizeScore?.(state, pod, scores, nodeInfos);
  return Object.fromEntries(nodeInfos.map((info, i) => [info.name, scores[i]!]));
}

export function node(name: string, spec: Node["spec"] = {}, labels: Record<string, string> = {}): Node {
  return { metadata: { name, labels }, spec, status: { allocatable: { pods: "110" } } };
}
