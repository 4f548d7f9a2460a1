// The Deployment controller's rollout, one module per upstream file under rollout/.
export {
  type DeploymentRolloutOptions,
  eventTarget,
  getReplicaFailures,
  oldPodsRunning,
  type PodMap,
  type ScaleResult,
  setFromReplicaSetTemplate,
  statusEqual,
} from "./rollout/core.js";
export { DeploymentRollout } from "./rollout/rollback.js";
