export { ApiServer, type ApiServerOptions, initialNamespaces } from "./api-server.js";
export { GarbageCollector, type GarbageCollectorOptions } from "./gc/garbage-collector.js";
export * from "./http/index.js";
export { InProcessClient } from "./registry/in-process-client.js";
export { applyPatch, jsonPatch, mergePatch, type PatchType, strategicMergePatch } from "./registry/patch.js";
export {
  foregroundFinalizer,
  orphanFinalizer,
  Registry,
  type RegistryDeleteOptions,
  type RegistryOptions,
  type RegistryWatch,
} from "./registry/registry.js";
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
} from "./storage/storage.js";
