export {
  DeletedFinalStateUnknown,
  deepFreeze,
  deletionHandlingMetaNamespaceKeyFunc,
  isDeletedFinalStateUnknown,
  metaNamespaceKeyFunc,
  splitMetaNamespaceKey,
} from "@reconcile/api";
export { Backoff, type BackoffOptions } from "./backoff.js";
export {
  type Delta,
  DeltaFIFO,
  type DeltaFIFOOptions,
  type DeltaObject,
  type Deltas,
  type DeltaType,
  FIFOClosedError,
  type KeyListerGetter,
  newestDelta,
  oldestDelta,
  type PopProcessFunc,
  type TransformFunc,
} from "./delta-fifo.js";
export {
  type FactoryWaitOptions,
  type ForResourceOptions,
  SharedInformerFactory,
  type SharedInformerFactoryOptions,
} from "./informer-factory.js";
export { createLister, type Lister, type NamespaceLister } from "./lister.js";
export {
  currentDelivery,
  type Delivery,
  type HandlerMethod,
  type ResourceEventHandler,
} from "./processor-listener.js";
export {
  IdleWatchError,
  Reflector,
  type ReflectorOptions,
  type ReflectorStore,
  VeryShortWatchError,
  type WatchErrorHandler,
  WatchStreamError,
} from "./reflector.js";
export {
  type AddEventHandlerOptions,
  determineResyncPeriod,
  type HandlerErrorHandler,
  type ResourceEventHandlerRegistration,
  SharedIndexInformer,
  type SharedIndexInformerOptions,
} from "./shared-informer.js";
export {
  createIndexer,
  createStore,
  IndexError,
  type Indexer,
  type IndexerOptions,
  type Indexers,
  type IndexFunc,
  metaNamespaceIndexFunc,
  namespaceIndex,
  type Store,
  type StoreKeyFunc,
} from "./store.js";
export {
  type CacheSyncSource,
  CacheSyncTimeoutError,
  type WaitForCacheSyncOptions,
  type WaitForNamedCacheSyncOptions,
  waitForCacheSync,
  waitForNamedCacheSync,
} from "./wait-for-cache-sync.js";
