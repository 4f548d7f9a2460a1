import { type Plugin, skipStatus, successStatus, unschedulable } from "../framework.js";
import { type HostPort, hostPortsOf } from "../node-info.js";

export const errReasonNodePorts = "node(s) didn't have free ports for the requested pod ports";

const stateKey = "PreFilterNodePorts";

/**
 * Whether `wanted` collides with a port in use: the same protocol and port on
 * the same IP, or either side on 0.0.0.0 (upstream `HostPortInfo.CheckConflict`).
 */
export function portsConflict(used: readonly HostPort[], wanted: readonly HostPort[]): boolean {
  for (const want of wanted) {
    for (const have of used) {
      if (have.port !== want.port || have.protocol !== want.protocol) continue;
      if (want.ip === "0.0.0.0" || have.ip === "0.0.0.0" || have.ip === want.ip) return true;
    }
  }
  return false;
}

/** NodePorts: a pod's host ports must be free on the node. */
export const nodePorts: Plugin = {
  name: "NodePorts",
  events: ["NodeAdd", "AssignedPodDelete"],
  preFilter(state, pod) {
    const ports = hostPortsOf(pod);
    if (ports.length === 0) return skipStatus;
    state.set(stateKey, ports);
    return successStatus;
  },
  filter(state, _pod, nodeInfo) {
    const wanted = state.get(stateKey) as HostPort[] | undefined;
    if (wanted === undefined || wanted.length === 0) return successStatus;
    return portsConflict(nodeInfo.usedPorts, wanted) ? unschedulable(errReasonNodePorts) : successStatus;
  },
};
