export { AdmissionChain, type AdmissionObserver, type AdmissionStep } from "./admission/chain.js";
export type { AdmissionContext, AdmissionPlugin } from "./admission/plugin.js";
export { admissionPluginNames, defaultAdmissionPlugins } from "./admission/plugins/index.js";
export type { WebhookObserver } from "./admission/webhook/dispatcher.js";
export {
  type Review,
  type ReviewHandler,
  type WebhookEndpoint,
  WebhookTransport,
} from "./admission/webhook/transport.js";
export {
  ApiServer,
  type ApiServerOptions,
  embeddedAdmissionPlugins,
  initialNamespaces,
} from "./api-server.js";
export {
  ApplyConflictError,
  type ApplyOptions,
  applyConfiguration,
  applyWithLastApplied,
  type FieldManager,
  FieldSet,
  lastAppliedAnnotation,
  type ManagedFieldsEntry,
  managerFromUserAgent,
  type OpenAPISchema,
  type TypeNode,
  trackUpdate,
  typeFor,
  typeFromOpenAPI,
  type UpdateOptions,
} from "./apply/index.js";
export * from "./crd/index.js";
export {
  GarbageCollector,
  type GarbageCollectorOptions,
  garbageCollectorUser,
} from "./gc/garbage-collector.js";
export * from "./http/index.js";
export {
  type ApiServerMetrics,
  type FlowControlLimits,
  type RequestLabels,
  type RequestLogger,
  requestLabels,
} from "./http/request-metrics.js";
export { builtinDefinitions, definitionFor } from "./kinds/builtin.js";
export {
  type ComponentHealth,
  type ComponentStatusProvider,
  componentStatusDefinition,
} from "./kinds/component-statuses.js";
export {
  defineKind,
  genericStrategy,
  type ResourceDefinition,
  type ResourceDefinitionInit,
  type SubresourceHandler,
  type SubresourceStore,
} from "./kinds/definition.js";
export { type ResourceMetricsProvider, resourceMetricsDefinitions } from "./kinds/resource-metrics.js";
export { ClusterIPAllocator, defaultServiceCIDR } from "./kinds/service-ips.js";
export type {
  Admission,
  AdmissionAttributes,
  AdmissionOperation,
  AdmissionUser,
} from "./registry/admission.js";
export { type DefinitionsChange, ResourceDefinitions } from "./registry/definitions.js";
export type { FieldErrors } from "./registry/field-errors.js";
export { InProcessClient } from "./registry/in-process-client.js";
export type { NameRule } from "./registry/meta-validation.js";
export {
  applyPatch,
  atomicPatchMeta,
  defaultMergeKeys,
  defaultPatchMeta,
  jsonPatch,
  type MergeKeys,
  mergePatch,
  type PatchMeta,
  type PatchType,
  patchMetaByFieldName,
  strategicMergePatch,
} from "./registry/patch.js";
export {
  foregroundFinalizer,
  orphanFinalizer,
  type PatchOptions,
  Registry,
  type RegistryDeleteOptions,
  type RegistryOptions,
  type RegistryWatch,
} from "./registry/registry.js";
export type { Printer, TableColumnDefinition } from "./registry/resource-definition.js";
export type { Schema } from "./registry/schema.js";
export type { Strategy } from "./registry/strategy.js";
export { MemoryStorage, type MemoryStorageOptions } from "./storage/memory-storage.js";
export {
  type Storage,
  StorageError,
  type StorageErrorCode,
  type StorageEvent,
  type StorageEventType,
  type StorageListOptions,
  type StorageListResult,
  type StorageWatcher,
  type StorageWatchOptions,
  tooOldResourceVersion,
} from "./storage/storage.js";
export { WatchChannel } from "./storage/watch-channel.js";
export { type StorageChange, watchEventFor, withResourceVersion } from "./storage/watch-events.js";
