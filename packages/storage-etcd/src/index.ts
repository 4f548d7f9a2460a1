export { CachedStorage, type CachedStorageOptions } from "./cacher.js";
export { createEtcdClient } from "./client.js";
export { Compactor, type CompactorOptions, compactRevisionKey } from "./compactor.js";
export {
  type EtcdCluster,
  type EtcdProcess,
  type EtcdProcessOptions,
  startEtcd,
  startEtcdCluster,
} from "./etcd-process.js";
export { EtcdStorage, type EtcdStorageOptions, type WatchSink } from "./etcd-storage.js";
export { KeyLayout, type KeyLayoutOptions } from "./keys.js";
export { type Decoder, translateEvent } from "./watcher.js";
