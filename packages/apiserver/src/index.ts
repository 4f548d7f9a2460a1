export { ApiServer, type ApiServerOptions, initialNamespaces } from "./api-server.js";
export { GarbageCollector, type GarbageCollectorOptions } from "./garbage-collector.js";
export * from "./http/index.js";
export { InProcessClient } from "./in-process-client.js";
export { MemoryStorage, type MemoryStorageOptions } from "./memory-storage.js";
export { applyPatch, jsonPatch, mergePatch, type PatchType, strategicMergePatch } from "./patch.js";
export {
  foregroundFinalizer,
  orphanFinalizer,
  Registry,
  type RegistryDeleteOptions,
  type RegistryOptions,
  type RegistryWatch,
} from "./registry.js";
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
} from "./storage.js";
