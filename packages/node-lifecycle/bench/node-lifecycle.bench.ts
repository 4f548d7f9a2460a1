// Node lifecycle controller benchmarks, on the embedded API server through its
// in-process client; the controller's clock is a FakeClock (so grace periods
// pass at once), the durations are real time:
//
// (a) a steady health pass (upstream's
//     node_collector_update_all_nodes_health_duration_seconds): N healthy
//     nodes, each with a renewed Lease, checked once; no writes expected.
// (b) a failure pass: 10 % of the N nodes stopped posting and renewing 50 s
//     ago; the pass marks them Unknown (one status write each) and their pods
//     not ready (two pods a node, one status write each).
//
// N = 1,000 and 5,000. Each run starts a fresh server, informers and
// controller; 3 measured runs after 1 warm-up; medians reported.
import { leases, nodes, pods, rfc3339 } from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import type { Client } from "@reconcile/client";
import { FakeClock } from "@reconcile/clock";
import type { EventRecorder } from "@reconcile/controller";
import { SharedInformerFactory } from "@reconcile/informer";
import { type Measurement, measure, writeResults } from "../../../tools/bench/index.js";
import { NodeLifecycleController } from "../src/index.js";

const start = Date.parse("2026-01-01T00:00:00Z");
const silentShare = 0.1;
const podsPerNode = 2;
const quietRecorder: EventRecorder = { event() {} };

interface Run {
  steadyMs: number;
  failureMs: number;
  failureWrites: number;
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}

async function renew(client: Client, name: string, now: number): Promise<void> {
  const leaseClient = client.resource(leases, "kube-node-lease");
  const lease = await leaseClient.get(name);
  await leaseClient.update({ ...lease, spec: { ...lease.spec, renewTime: new Date(now).toISOString() } });
}

async function run(nodeCount: number): Promise<Run> {
  const clock = new FakeClock(start);
  const server = new ApiServer({ clock });
  const client = server.client();
  const now = rfc3339(start);
  for (let i = 0; i < nodeCount; i++) {
    const name = `node-${i}`;
    const node = await client.resource(nodes).create({ metadata: { name } });
    await client.resource(nodes).updateStatus({
      ...node,
      status: {
        conditions: [
          {
            type: "Ready",
            status: "True",
            reason: "KubeletReady",
            lastHeartbeatTime: now,
            lastTransitionTime: now,
          },
        ],
      },
    });
    await client.resource(leases, "kube-node-lease").create({
      metadata: { name, namespace: "kube-node-lease" },
      spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime: new Date(start).toISOString() },
    });
    for (let p = 0; p < podsPerNode; p++) {
      const pod = await client.resource(pods, "default").create({
        metadata: { name: `pod-${i}-${p}`, namespace: "default" },
        spec: { nodeName: name, containers: [{ name: "app", image: "app:1" }] },
      });
      await client.resource(pods, "default").updateStatus({
        ...pod,
        status: { phase: "Running", conditions: [{ type: "Ready", status: "True" }] },
      });
    }
  }
  let writes = 0;
  const counting: Client = {
    ...client,
    resource: ((resource: never, namespace?: string) => {
      const inner = client.resource(resource, namespace);
      return {
        ...inner,
        updateStatus: (...args: Parameters<typeof inner.updateStatus>) => {
          writes++;
          return inner.updateStatus(...args);
        },
        update: (...args: Parameters<typeof inner.update>) => {
          writes++;
          return inner.update(...args);
        },
      };
    }) as Client["resource"],
  };
  const factory = new SharedInformerFactory({ client, clock });
  const controller = NodeLifecycleController.fromInformerFactory(factory, {
    client: counting,
    clock,
    eventRecorder: quietRecorder,
  });
  const abort = new AbortController();
  factory.start(abort.signal);
  await factory.waitForCacheSync(abort.signal);
  await controller.monitorNodeHealth(); // registers every node

  const steadyStarted = performance.now();
  await controller.monitorNodeHealth();
  const steadyMs = performance.now() - steadyStarted;
  if (writes !== 0) throw new Error(`a steady pass wrote ${writes} times`);

  // 50 s on: 90 % renewed their Lease, the others went quiet.
  await clock.advance(50_001);
  const silent = Math.round(nodeCount * silentShare);
  let renewed = 0;
  for (let i = silent; i < nodeCount; i++) await renew(client, `node-${i}`, clock.now());
  const leaseIndexer = factory.forResource(leases).getIndexer();
  await until(() => {
    renewed = leaseIndexer
      .byIndex("namespace", "kube-node-lease")
      .filter((l) => l.spec?.renewTime !== new Date(start).toISOString()).length;
    return renewed === nodeCount - silent;
  });
  const failureStarted = performance.now();
  await controller.monitorNodeHealth();
  const failureMs = performance.now() - failureStarted;
  const failureWrites = writes;
  const expected = silent * (1 + podsPerNode);
  if (failureWrites !== expected)
    throw new Error(`the failure pass wrote ${failureWrites} times, not ${expected}`);

  abort.abort();
  await factory.shutdown();
  await server.close();
  return { steadyMs, failureMs, failureWrites };
}

async function scenario(nodeCount: number): Promise<Measurement[]> {
  const label = `${nodeCount.toLocaleString("en-US")} nodes`;
  const runs: Run[] = [];
  await run(nodeCount); // warm-up
  for (let i = 0; i < 3; i++) runs.push(await run(nodeCount));
  const fromRuns = (name: string, unit: string, values: number[]) => {
    let i = 0;
    return measure(
      { name, unit, higherIsBetter: false, runs: values.length, warmups: 0 },
      () => values[i++]!,
    );
  };
  return [
    await fromRuns(
      `(a) ${label}: steady health pass`,
      "ms",
      runs.map((r) => r.steadyMs),
    ),
    await fromRuns(
      `(b) ${label}, ${silentShare * 100} % silent: failure pass (Unknown + ${podsPerNode} pods not ready each)`,
      "ms",
      runs.map((r) => r.failureMs),
    ),
    await fromRuns(
      `(b) ${label}: writes in the failure pass`,
      "writes",
      runs.map((r) => r.failureWrites),
    ),
  ];
}

const results = [...(await scenario(1_000)), ...(await scenario(5_000))];
writeResults("node-lifecycle", results);
