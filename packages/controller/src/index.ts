export { Backoff } from "./backoff.js";
export {
  type SyncedInformer,
  type WaitForInformersSyncedOptions,
  waitForInformersSynced,
} from "./cache-sync.js";
export {
  BaseControllerRefManager,
  type CanAdoptFunc,
  type ClaimResult,
  ClientReplicaSetControl,
  type ControllerKind,
  type ControllerRefManagerOptions,
  PodControllerRefManager,
  type PodControllerRefManagerOptions,
  type ReplicaSetControl,
  ReplicaSetControllerRefManager,
  type ReplicaSetControllerRefManagerOptions,
  recheckDeletionTimestamp,
} from "./controller-ref-manager.js";
export {
  type ControllerContext,
  ControllerHarness,
  type ControllerQueueSpec,
  type ControllerSpec,
  type ControllerView,
  defineController,
  type PeriodicTask,
  type QueueView,
} from "./define-controller.js";
export {
  ClientEventRecorder,
  type ClientEventRecorderOptions,
  type EventDetails,
  type EventRecorder,
  type EventType,
  noopEventRecorder,
} from "./event-recorder.js";
export {
  ClientEventsV1Recorder,
  type ClientEventsV1RecorderOptions,
  eventSeriesFinishMs,
  eventSeriesRefreshMs,
} from "./events-v1-recorder.js";
export { canonicalJson, computeHash, hashControllerRevisionData, safeEncodeString } from "./hash.js";
export {
  ControllerRevisionControllerRefManager,
  type ControllerRevisionControllerRefManagerOptions,
  ControllerRevisionHistory,
  type ControllerRevisionHistoryOptions,
  controllerRevisionHashLabel,
  controllerRevisionName,
  equalRevision,
  findEqualRevisions,
  hashControllerRevision,
  newControllerRevision,
  nextRevision,
  sortControllerRevisions,
  templateOfRevision,
  templateRevisionData,
} from "./history.js";
export {
  type ControllerEventHandler,
  type ControllerIndexer,
  type ControllerInformer,
  ensureIndex,
} from "./informer-types.js";
export {
  deliveryText,
  Introspection,
  type MachinerySnapshot,
  type MachinerySource,
  RecentRing,
  ReconcileHistory,
  type ReconcileSummary,
} from "./introspection.js";
export { type Logger, noopLogger } from "./logger.js";
export {
  type OwnerEventHandlerOptions,
  type OwnerKind,
  objectFromTombstone,
  ownerEventHandler,
  ownersSelecting,
  resolveControllerRef,
  type SelectingOwner,
  sameOwnerRef,
} from "./owner-events.js";
export {
  ClientPodControl,
  type ClientPodControlOptions,
  failedCreatePodReason,
  failedDeletePodReason,
  getPodFromTemplate,
  type PodControl,
  type PodControlCallOptions,
  successfulCreatePodReason,
  successfulDeletePodReason,
  validateControllerRef,
} from "./pod-control.js";
export {
  activePodsWithRanksLess,
  getDeletionCostFromPodAnnotations,
  type PodDeletionOrderOptions,
  podDeletionCostAnnotation,
  rankPodsByRelatedPodsOnSameNode,
  sortActivePods,
  sortActivePodsWithRanks,
} from "./pod-ranking.js";
export { type RunControllerOptions, runController } from "./run-controller.js";
export {
  EnqueueReasons,
  type RunWorkersOptions,
  runWorkers,
  type SyncContext,
  type WorkerQueue,
} from "./run-workers.js";
export { type SlowStartBatchResult, slowStartBatch, slowStartInitialBatchSize } from "./slow-start-batch.js";
export {
  noopSyncMetrics,
  type ReconcileObserver,
  type ReconcileRecord,
  type SyncMetrics,
  type SyncOutcome,
  type SyncResult,
  TerminalError,
} from "./sync-result.js";
