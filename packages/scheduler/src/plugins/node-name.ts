import { type Plugin, successStatus, unresolvable } from "../framework.js";

export const errReasonNodeName = "node(s) didn't match the requested node name";

/** NodeName: a pod that names a node fits only that node. */
export const nodeName: Plugin = {
  name: "NodeName",
  events: ["NodeAdd"],
  filter(_state, pod, nodeInfo) {
    const wanted = pod.spec?.nodeName;
    if (!wanted || wanted === nodeInfo.name) return successStatus;
    return unresolvable(errReasonNodeName);
  },
};
