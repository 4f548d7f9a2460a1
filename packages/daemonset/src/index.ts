export { DaemonSetController, type DaemonSetControllerOptions } from "./daemonset-controller.js";
export { cleanupHistory, constructHistory, matchesRevision, maxRevision } from "./daemonset-history.js";
export {
  addDaemonPodTolerations,
  createPodTemplate,
  daemonPodTolerations,
  daemonSetRevisionLabel,
  isPodUpdated,
  nodeShouldRunDaemonPod,
  replaceNodeNameAffinity,
  targetNodeName,
  templateGenerationAnnotation,
  templateGenerationLabel,
} from "./daemonset-util.js";
export { shouldIgnoreNodeUpdate } from "./node-events.js";
export {
  findUpdatedPodsOnNode,
  type RollingUpdateStep,
  rollingUpdateStep,
  updatedDesiredNodeCounts,
} from "./rolling-update.js";
