export {
  StatefulPodControl,
  type StatefulPodControlOptions,
  wantedOwnerRefs,
} from "./stateful-pod-control.js";
export {
  StatefulSetControl,
  type StatefulSetControlOptions,
  type StatefulSetUpdate,
} from "./stateful-set-control.js";
export { StatefulSetController, type StatefulSetControllerOptions } from "./stateful-set-controller.js";
export {
  applyRevision,
  getOrdinal,
  identityMatches,
  newRevision,
  newStatefulSetPod,
  parentNameAndOrdinal,
  podIndexLabel,
  revisionPatch,
  statefulSetPodNameLabel,
  statefulSetRevisionLabel,
  storageMatches,
} from "./stateful-set-utils.js";
