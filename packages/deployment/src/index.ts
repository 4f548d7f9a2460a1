export { computeHash, safeEncodeString } from "@reconcile/controller";
export * from "./deployment-conditions.js";
export {
  DeploymentController,
  type DeploymentControllerOptions,
  maxRetries,
  replicaSetsByControllerIndex,
} from "./deployment-controller.js";
export * from "./deployment-util.js";
export * from "./replica-set-order.js";
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
