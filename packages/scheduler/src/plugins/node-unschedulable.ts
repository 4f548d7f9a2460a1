import { type Plugin, successStatus, unresolvable } from "../framework.js";
import { toleratesTaint } from "./taint-toleration.js";

export const errReasonUnschedulable = "node(s) were unschedulable";

const unschedulableTaint = {
  key: "node.kubernetes.io/unschedulable",
  value: "",
  effect: "NoSchedule",
} as const;

/** NodeUnschedulable: a cordoned node (`spec.unschedulable`) takes only pods that tolerate its taint. */
export const nodeUnschedulable: Plugin = {
  name: "NodeUnschedulable",
  events: ["NodeAdd", "NodeTaintChange", "PodTolerationChange"],
  filter(_state, pod, nodeInfo) {
    if (!nodeInfo.node?.spec?.unschedulable) return successStatus;
    const tolerated = (pod.spec?.tolerations ?? []).some((toleration) =>
      toleratesTaint(toleration, unschedulableTaint),
    );
    return tolerated ? successStatus : unresolvable(errReasonUnschedulable);
  },
};
