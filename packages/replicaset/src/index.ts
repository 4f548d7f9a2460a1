/** Re-exported from `@reconcile/api`, where it now lives. */
export { podKey } from "@reconcile/api";
export type { ControllerIndexer, ControllerInformer } from "./informer-types.js";
export {
  burstReplicas,
  controllerUIDIndex,
  getPodsToDelete,
  podsByControllerIndex,
  ReplicaSetController,
  type ReplicaSetControllerOptions,
  type ReplicaSetExpectations,
} from "./replica-set-controller.js";
export {
  calculateStatus,
  replicaSetReplicaFailure,
  statusUpdateRetries,
  updateReplicaSetStatus,
} from "./replica-set-status.js";
