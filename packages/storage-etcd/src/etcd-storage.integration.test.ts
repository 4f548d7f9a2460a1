import { afterAll, beforeAll } from "vitest";
import { describeStorageConformance } from "../../apiserver/src/testing/storage-conformance.js";
import { type EtcdCluster, startEtcd } from "./etcd-process.js";
import { EtcdStorage } from "./etcd-storage.js";

let etcd: EtcdCluster;
let prefixes = 0;

beforeAll(async () => {
  etcd = await startEtcd();
});

afterAll(async () => {
  await etcd?.stop();
});

// Each test gets its own prefix on one etcd: an empty storage whose revisions are global.
describeStorageConformance("etcd", () => {
  return new EtcdStorage({
    endpoints: etcd.endpoints,
    prefix: `/conformance-${++prefixes}`,
    compactionIntervalMs: 0,
  });
});
