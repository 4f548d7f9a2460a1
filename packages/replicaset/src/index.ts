export type { ControllerIndexer, ControllerInformer } from "./informer-types.js";
export {
  burstReplicas,
  controllerUIDIndex,
  getPodsToDelete,
  podKey,
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
