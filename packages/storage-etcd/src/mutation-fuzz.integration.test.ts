import { ApiServer } from "@reconcile/apiserver";
import { mutationFuzz } from "@reconcile/apiserver/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CachedStorage } from "./cacher.js";
import { type EtcdCluster, startEtcd } from "./etcd-process.js";
import { EtcdStorage } from "./etcd-storage.js";

// The API server's mutation fuzzer (valid objects of every kind, mutated, over every write route)
// against a server on a real etcd, with the watch cache in front: no answer may be a 5xx.
// FUZZ_SEED and FUZZ_RUNS explore further.

const seed = Number(process.env.FUZZ_SEED ?? 20_261_129);
const requests = Number(process.env.FUZZ_RUNS ?? 600);

let etcd: EtcdCluster;
let api: ApiServer;

beforeAll(async () => {
  etcd = await startEtcd();
  const storage = new CachedStorage({
    storage: new EtcdStorage({ endpoints: etcd.endpoints, prefix: "/fuzz", compactionIntervalMs: 0 }),
  });
  api = new ApiServer({ storage });
});

afterAll(async () => {
  await api?.close();
  await etcd?.stop();
});

describe("the mutation fuzzer, on etcd", () => {
  it(
    "gets no 5xx and a Status with every failure, over every route",
    async () => {
      const listening = await api.listen({ token: "t0ken" });
      try {
        const report = await mutationFuzz({ url: listening.url, token: "t0ken", seed, requests });
        expect(report.failures).toEqual([]);
        expect(report.codes["201"]).toBeGreaterThan(requests / 10);
      } finally {
        await listening.close();
      }
    },
    60_000 + requests * 50,
  );
});
