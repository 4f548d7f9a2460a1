export { type Logger, noopLogger } from "@reconcile/controller";
export {
  type BuiltController,
  ControllerBuilder,
  type ControllerOptions,
  type MapFunc,
  newControllerManagedBy,
  type ReconcileContext,
  type ReconcileRequest,
  type ReconcileResult,
  type Reconciler,
  type Request,
  requestOf,
  TerminalError,
  type WatchedKindOptions,
} from "./builder.js";
export {
  createOrPatch,
  createOrUpdate,
  mergePatchBetween,
  type OperationResult,
  setControllerReference,
} from "./create-or-update.js";
export {
  addFinalizer,
  type FinalizerOutcome,
  hasFinalizer,
  reconcileFinalizer,
  removeFinalizer,
} from "./finalizers.js";
export { type HealthCheck, type HealthResponse, healthResponse, pingCheck } from "./health.js";
export { type JsonLoggerOptions, jsonLogger } from "./json-logger.js";
export {
  LeaderElectionLostError,
  Manager,
  type ManagerControllerContext,
  type ManagerLeaderElectionOptions,
  type ManagerOptions,
  type Runnable,
} from "./manager.js";
export {
  annotationsChanged,
  generationChanged,
  labelSelector,
  labelsChanged,
  or,
  type Predicate,
  resourceVersionChanged,
} from "./predicates.js";
export {
  type ApiServerMetricsSeam,
  type KubeletMetricsSeam,
  prometheusApiServerMetrics,
  prometheusKubeletMetrics,
  prometheusLeaderElectionMetrics,
  prometheusReconcileMetrics,
  prometheusRestClientMetrics,
  prometheusSchedulerMetrics,
  prometheusWorkqueueMetrics,
  type ReconcileMetrics,
  runningManagedControllersGauge,
  type SchedulerMetricsSeam,
} from "./prometheus.js";
export {
  type DelegatedAuthOptions,
  delegatedAuthorizer,
  type ServingAuthorizer,
  type ServingVerdict,
} from "./serving-auth.js";
export {
  type Condition,
  findCondition,
  setCondition,
  type UpdateStatusOptions,
  updateStatus,
} from "./status.js";
export {
  type AdmissionHandler,
  type AdmissionRequest,
  type AdmissionResponse,
  type AdmissionReview,
  type Defaulter,
  defaultingHandler,
  type Validator,
  validatingHandler,
  type Warnings,
} from "./webhook/admission.js";
export { newWebhookManagedBy, WebhookBuilder, webhookPath } from "./webhook/builder.js";
export { type Conversion, type ConversionReview, convertReview, type Spoke } from "./webhook/conversion.js";
export { createPatch, type PatchOperation } from "./webhook/json-patch.js";
export { WebhookServer, type WebhookServerOptions } from "./webhook/server.js";
