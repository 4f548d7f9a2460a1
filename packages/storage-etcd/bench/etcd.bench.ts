// etcd storage benchmarks, side by side in one run against one local etcd
// (Debian's etcd-server, started on loopback with --unsafe-no-fsync so that the
// disk does not dominate):
//
// (a) writes: creates/s and updates/s through EtcdStorage vs MemoryStorage vs
//     raw etcd puts of the same bytes with the same client, 64 in flight (for
//     updates, over keys that exist, as the storage's updates are).
//     Goal: the storage ≥ 80% of raw puts.
// (b) list 100,000 pods in pages of 500 (one snapshot revision) through
//     EtcdStorage vs the same raw range reads. Goal: within 1.5× of raw.
// (c) watch fan-out: 1,000 watchers × 10,000 events through CachedStorage vs
//     MemoryStorage, timed from the first write until every watcher has every
//     event. Goal: ≥ 50% of the memory backend's deliveries/s.
// (d) watch delivery latency through CachedStorage: from issuing a write to a
//     watcher reading its event (p50, p99 of 2,000), and p99 past the write's
//     own acknowledgement.
//
// 3 measured runs after 1 warm-up (a, c, d); medians reported.
import type { KubeObject } from "@reconcile/api";
import { MemoryStorage, type Storage, type StorageWatcher } from "@reconcile/apiserver";
import { type Measurement, measure, median, writeResults } from "../../../tools/bench/index.js";
import { CachedStorage, createEtcdClient, EtcdStorage, startEtcd } from "../src/index.js";

const inFlight = 64;

function pod(name: string, labels: Record<string, string> = { app: "bench" }): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name,
      namespace: "bench",
      labels,
      uid: `00000000-0000-0000-0000-${name.padStart(12, "0").slice(-12)}`,
    },
    spec: {
      nodeName: "node-1",
      containers: [
        {
          name: "app",
          image: "registry.example.com/team/app:1.27.3",
          ports: [{ name: "http", containerPort: 8080 }],
          resources: { requests: { cpu: "100m", memory: "128Mi" } },
        },
      ],
    },
    status: { phase: "Running" },
  } as KubeObject;
}

/** Runs `task(i)` for i in [0, count) with at most `inFlight` at once. */
async function pool(count: number, task: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(inFlight, count) }, async () => {
      while (next < count) await task(next++);
    }),
  );
}

function perSecond(count: number, startedMs: number): number {
  return count / ((performance.now() - startedMs) / 1000);
}

/** Only the sections named in ETCD_BENCH (e.g. "ac"); all by default. */
const sections = process.env.ETCD_BENCH ?? "abcd";

const etcd = await startEtcd({ progressNotifyIntervalMs: 1_000 });
const client = createEtcdClient(etcd.endpoints);
const measurements: Measurement[] = [];
let round = 0;
const latencies: { p50: number[]; p99: number[] } = { p50: [], p99: [] };

try {
  // (a) writes. The three backends run in turn within each round, so that load from
  // elsewhere on the machine hits them alike; the ratio is taken per round.
  const writes = 5_000;
  for (const kind of sections.includes("a") ? (["create", "update"] as const) : []) {
    const modified = (i: number) => pod(`p${i}`, { app: "bench", v: "2" });
    const raw = async () => {
      const prefix = `/raw-${kind}-${++round}/pods/bench/`;
      const values = Array.from({ length: writes }, (_, i) =>
        Buffer.from(JSON.stringify(kind === "create" ? pod(`p${i}`) : modified(i))),
      );
      // Updates overwrite keys that exist, as the storage's do (untimed): a put over a live key is
      // dearer for etcd than one of a new key.
      if (kind === "update")
        await pool(writes, (i) =>
          client.kv.put({
            key: Buffer.from(`${prefix}p${i}`),
            value: Buffer.from(JSON.stringify(pod(`p${i}`))),
          }),
        );
      const started = performance.now();
      await pool(writes, (i) => client.kv.put({ key: Buffer.from(`${prefix}p${i}`), value: values[i]! }));
      return perSecond(writes, started);
    };
    const viaEtcd = async () => {
      const storage = new EtcdStorage({
        client,
        prefix: `/bench-${kind}-${++round}`,
        compactionIntervalMs: 0,
      });
      const revisions: number[] = [];
      if (kind === "update")
        await pool(writes, async (i) => {
          const created = await storage.create(`/core/pods/bench/p${i}`, pod(`p${i}`));
          revisions[i] = Number(created.metadata?.resourceVersion);
        });
      const started = performance.now();
      await pool(writes, (i) =>
        kind === "create"
          ? storage.create(`/core/pods/bench/p${i}`, pod(`p${i}`))
          : storage.update(`/core/pods/bench/p${i}`, modified(i), revisions[i]),
      );
      const rate = perSecond(writes, started);
      storage.close();
      return rate;
    };
    const inMemory = async () => {
      const storage = new MemoryStorage();
      if (kind === "update")
        for (let i = 0; i < writes; i++) await storage.create(`/core/pods/bench/p${i}`, pod(`p${i}`));
      const started = performance.now();
      await pool(writes, (i) =>
        kind === "create"
          ? storage.create(`/core/pods/bench/p${i}`, pod(`p${i}`))
          : storage.update(`/core/pods/bench/p${i}`, modified(i)),
      );
      return perSecond(writes, started);
    };
    const runs = { raw: [] as number[], etcd: [] as number[], memory: [] as number[], ratio: [] as number[] };
    for (let r = 0; r < 4; r++) {
      const [rawRate, etcdRate, memoryRate] = [await raw(), await viaEtcd(), await inMemory()];
      if (r === 0) continue; // warm-up
      runs.raw.push(rawRate);
      runs.etcd.push(etcdRate);
      runs.memory.push(memoryRate);
      runs.ratio.push(etcdRate / rawRate);
    }
    const recorded = (name: string, values: number[], unit = "writes/s") => {
      let i = 0;
      return measure(
        { name, unit, higherIsBetter: true, runs: values.length, warmups: 0 },
        () => values[i++]!,
      );
    };
    measurements.push(
      await recorded(`a: raw etcd puts (${kind}s' bytes)`, runs.raw),
      await recorded(`a: EtcdStorage ${kind}s`, runs.etcd),
      await recorded(`a: MemoryStorage ${kind}s`, runs.memory),
      await recorded(`a: EtcdStorage ${kind}s / raw puts`, runs.ratio, "ratio (goal ≥ 0.8)"),
    );
  }

  // (b) list 100,000 pods
  if (sections.includes("b")) {
    const total = 100_000;
    const listPrefix = "/list";
    const storage = new EtcdStorage({ client, prefix: listPrefix, compactionIntervalMs: 0 });
    {
      const batch = 128; // etcd's --max-txn-ops
      await pool(Math.ceil(total / batch), async (b) => {
        const success = [];
        for (let i = b * batch; i < Math.min(total, (b + 1) * batch); i++) {
          const name = `pod-${String(i).padStart(6, "0")}`;
          success.push({
            request_put: {
              key: Buffer.from(`${listPrefix}/pods/bench/${name}`),
              value: Buffer.from(JSON.stringify(pod(name))),
            },
          });
        }
        await client.kv.txn({ success });
      });
    }
    const pageSize = 500;
    const rawList = await measure(
      {
        name: "b: raw range reads, 100,000 pods in pages of 500",
        unit: "ms",
        higherIsBetter: false,
        runs: 3,
      },
      async () => {
        const started = performance.now();
        let start = Buffer.from(`${listPrefix}/pods/`);
        const end = Buffer.from(`${listPrefix}/pods0`);
        let revision = 0;
        let count = 0;
        for (;;) {
          const response = await client.kv.range({ key: start, range_end: end, limit: pageSize, revision });
          revision = Number(response.header.revision);
          count += response.kvs.length;
          if (!response.more) break;
          start = Buffer.concat([response.kvs[response.kvs.length - 1]!.key, Buffer.from([0])]);
        }
        if (count !== total) throw new Error(`raw list saw ${count} pods`);
        return performance.now() - started;
      },
    );
    const storageList = await measure(
      {
        name: "b: EtcdStorage list, 100,000 pods in pages of 500",
        unit: "ms",
        higherIsBetter: false,
        runs: 3,
      },
      async () => {
        const started = performance.now();
        let page = await storage.list("/core/pods/", { limit: pageSize });
        let count = page.items.length;
        while (page.nextKey !== undefined) {
          page = await storage.list("/core/pods/", {
            limit: pageSize,
            startKey: page.nextKey,
            revision: page.revision,
          });
          count += page.items.length;
        }
        if (count !== total) throw new Error(`storage list saw ${count} pods`);
        return performance.now() - started;
      },
    );
    measurements.push(rawList, storageList);
    console.log(
      `   EtcdStorage list at ${(storageList.median / rawList.median).toFixed(2)}× the raw range reads (goal ≤ 1.5×)`,
    );
    storage.close();
  }

  // (c) fan-out
  if (sections.includes("c")) {
    const watchers = 1_000;
    const events = 10_000;
    async function fanOut(backend: Storage): Promise<number> {
      const base = await backend.currentRevision();
      const watches: StorageWatcher[] = Array.from({ length: watchers }, () =>
        backend.watch("/core/pods/", { fromRevision: base }),
      );
      // Let the cache list and start its etcd watch before the clock starts.
      await backend.create("/core/pods/bench/warm", pod("warm"));
      const readers = watches.map(async (watcher) => {
        let seen = 0;
        for await (const event of watcher) {
          if (event.type === "ERROR") throw event.error;
          if (event.type !== "BOOKMARK" && ++seen === events + 1) return;
        }
        throw new Error(`a watcher ended after ${seen} events`);
      });
      const started = performance.now();
      await pool(events, (i) => backend.create(`/core/pods/bench/e${i}`, pod(`e${i}`)));
      await Promise.all(readers);
      const rate = perSecond(watchers * events, started);
      backend.close();
      return rate;
    }
    const memoryFanOut = await measure(
      {
        name: "c: MemoryStorage fan-out, 1,000 watchers × 10,000 events",
        unit: "deliveries/s",
        higherIsBetter: true,
        runs: 3,
      },
      () => fanOut(new MemoryStorage()),
    );
    const cachedFanOut = await measure(
      {
        name: "c: CachedStorage fan-out, 1,000 watchers × 10,000 events",
        unit: "deliveries/s",
        higherIsBetter: true,
        runs: 3,
      },
      () =>
        fanOut(
          new CachedStorage({
            storage: new EtcdStorage({ client, prefix: `/fanout-${++round}`, compactionIntervalMs: 0 }),
          }),
        ),
    );
    measurements.push(memoryFanOut, cachedFanOut);
    console.log(
      `   CachedStorage fan-out at ${((cachedFanOut.median / memoryFanOut.median) * 100).toFixed(0)}% of memory (goal ≥ 50%)`,
    );
  }

  // (d) latency
  if (sections.includes("d")) {
    const samples = 2_000;
    const latency = await measure(
      {
        name: "d: CachedStorage watch delivery latency p99 (write issued → event read by a watcher)",
        unit: "ms",
        higherIsBetter: false,
        runs: 3,
      },
      async () => {
        const cached = new CachedStorage({
          storage: new EtcdStorage({ client, prefix: `/latency-${++round}`, compactionIntervalMs: 0 }),
        });
        const watcher = cached.watch("/core/pods/", { fromRevision: await cached.currentRevision() });
        const iterator = watcher[Symbol.asyncIterator]();
        const delays: number[] = [];
        const afterAck: number[] = [];
        for (let i = 0; i < samples; i++) {
          const issued = performance.now();
          const written = cached.create(`/core/pods/bench/l${i}`, pod(`l${i}`)).then(() => performance.now());
          const received = await iterator.next().then(() => performance.now());
          delays.push(received - issued);
          // The event often arrives before the write's own response.
          afterAck.push(Math.max(0, received - (await written)));
        }
        cached.close();
        delays.sort((a, b) => a - b);
        afterAck.sort((a, b) => a - b);
        latencies.p50.push(delays[Math.floor(samples * 0.5)]!);
        latencies.p99.push(afterAck[Math.floor(samples * 0.99)]!);
        return delays[Math.floor(samples * 0.99)]!;
      },
    );
    measurements.push(latency);
    console.log(
      `   p50 ${median(latencies.p50).toFixed(3)} ms; p99 after the write's acknowledgement ${median(latencies.p99).toFixed(3)} ms`,
    );
  }

  writeResults("storage-etcd", measurements, {
    etcd: "Debian etcd-server 3.4.23, one member on loopback, --unsafe-no-fsync",
    ...(latencies.p50.length > 0
      ? { latencyP50Ms: median(latencies.p50), latencyP99AfterAckMs: median(latencies.p99) }
      : {}),
  });
} finally {
  client.close();
  await etcd.stop();
}
