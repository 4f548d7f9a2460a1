export {
  DeploymentController,
  type DeploymentControllerOptions,
  maxRetries,
  replicaSetsByControllerIndex,
} from "./deployment-controller.js";
export * from "./deployment-util.js";
export {
  DeploymentRollout,
  type DeploymentRolloutOptions,
  getReplicaFailures,
  oldPodsRunning,
  type PodMap,
  type ScaleResult,
  setFromReplicaSetTemplate,
  statusEqual,
} from "./rollout.js";
export { computeHash, safeEncodeString } from "./template-hash.js";
