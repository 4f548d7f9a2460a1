// StatefulSets and DaemonSets through the whole control plane in one
// process: the embedded API server, the controller manager's controller,
// the scheduler and simulated nodes whose containers start at once (zero
// runtime delays), on the real clock with upstream's defaults.
//
// a) A StatefulSet of STS_REPLICAS (100), OrderedReady, created → all Ready,
//    then a rolling update of its image → all Ready at the new revision.
//    OrderedReady makes one pod after the one before it is Ready, so the
//    time is the sum of 100 pod round trips (controller → API server →
//    scheduler → kubelet → status → informer → controller); the figure is
//    that round trip, in ms per pod.
// b) A DaemonSet on DS_NODES (1,000) nodes created → all Ready (goal ≤ 2 s),
//    then a rolling update at maxUnavailable 10% → every pod updated and Ready.
//
// kube-controller-manager's default client rate of 20 QPS (burst 30) is the
// anchor: a DaemonSet of 1,000 pods needs ≥ 2,000 writes (creates, then the
// scheduler's bindings aside), ~50 s at 20 QPS for the controller alone.
//
// 3 runs (RUNS) after a warm-up run, medians reported.
import { type DaemonSet, daemonSets, type StatefulSet, statefulSets } from "@reconcile/api";
import { median, writeResults } from "../../../tools/bench/index.js";
import { sleep, startCluster } from "./cluster.js";

const stsReplicas = Number(process.env.STS_REPLICAS ?? 100);
const dsNodes = Number(process.env.DS_NODES ?? 1000);
const runs = Number(process.env.RUNS ?? 3);

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const started = performance.now();
  while (!(await check())) {
    if (performance.now() - started > 600_000) throw new Error(`${what} not reached within 10 minutes`);
    await sleep(10);
  }
}

const template = (image: string) => ({
  metadata: { labels: { app: "bench" } },
  spec: {
    containers: [{ name: "main", image, resources: { requests: { cpu: "1m", memory: "1Mi" } } }],
  },
});

async function statefulSetRun(): Promise<{ createSeconds: number; updateSeconds: number }> {
  const { client, close } = await startCluster({ nodes: 10, controllers: "statefulset" });
  const api = client.resource(statefulSets, "default");
  const set: StatefulSet = {
    metadata: { name: "db", namespace: "default" },
    spec: {
      replicas: stsReplicas,
      serviceName: "db",
      selector: { matchLabels: { app: "bench" } },
      template: template("bench:1"),
    },
  };
  const ready = (revision?: string) => async () => {
    const s = await api.get("db");
    return (
      s.status?.readyReplicas === stsReplicas &&
      s.status.updatedReplicas === stsReplicas &&
      (revision === undefined || s.status.currentRevision !== revision)
    );
  };
  let started = performance.now();
  await api.create(set);
  await until(ready(), "StatefulSet Ready");
  const createSeconds = (performance.now() - started) / 1000;
  const first = (await api.get("db")).status?.currentRevision;
  started = performance.now();
  await api.patch("db", { spec: { template: template("bench:2") } }, { type: "strategic-merge" });
  await until(ready(first), "StatefulSet updated");
  const updateSeconds = (performance.now() - started) / 1000;
  await close();
  return { createSeconds, updateSeconds };
}

async function daemonSetRun(): Promise<{ createSeconds: number; updateSeconds: number }> {
  const { client, close } = await startCluster({ nodes: dsNodes, controllers: "daemonset" });
  const api = client.resource(daemonSets, "default");
  const ds: DaemonSet = {
    metadata: { name: "agent", namespace: "default" },
    spec: {
      selector: { matchLabels: { app: "bench" } },
      template: template("agent:1"),
      updateStrategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: "10%" } },
    },
  };
  const done = (generation: number) => async () => {
    const d = await api.get("agent");
    const s = d.status;
    return (
      (s?.observedGeneration ?? 0) >= generation &&
      s?.desiredNumberScheduled === dsNodes &&
      s.numberReady === dsNodes &&
      s.updatedNumberScheduled === dsNodes &&
      s.numberAvailable === dsNodes
    );
  };
  let started = performance.now();
  await api.create(ds);
  await until(done(1), "DaemonSet Ready");
  const createSeconds = (performance.now() - started) / 1000;
  started = performance.now();
  await api.patch("agent", { spec: { template: template("agent:2") } }, { type: "strategic-merge" });
  await until(done(2), "DaemonSet updated");
  const updateSeconds = (performance.now() - started) / 1000;
  await close();
  return { createSeconds, updateSeconds };
}

await statefulSetRun();
const sts: Awaited<ReturnType<typeof statefulSetRun>>[] = [];
for (let i = 0; i < runs; i++) {
  const run = await statefulSetRun();
  console.log(
    `statefulset run ${i + 1}: ${stsReplicas} replicas Ready in ${run.createSeconds.toFixed(2)} s (${((run.createSeconds * 1000) / stsReplicas).toFixed(1)} ms/pod), updated in ${run.updateSeconds.toFixed(2)} s`,
  );
  sts.push(run);
}
await daemonSetRun();
const dss: Awaited<ReturnType<typeof daemonSetRun>>[] = [];
for (let i = 0; i < runs; i++) {
  const run = await daemonSetRun();
  console.log(
    `daemonset run ${i + 1}: ${dsNodes} nodes Ready in ${run.createSeconds.toFixed(2)} s, updated in ${run.updateSeconds.toFixed(2)} s`,
  );
  dss.push(run);
}
const measurement = (name: string, unit: string, values: number[], target?: number) => ({
  name,
  unit,
  higherIsBetter: false,
  runs: values,
  median: median(values),
  ...(target !== undefined ? { target } : {}),
});
writeResults("workloads", [
  measurement(
    `a: a StatefulSet of ${stsReplicas}, OrderedReady, created → all Ready`,
    "s",
    sts.map((r) => r.createSeconds),
  ),
  measurement(
    "a: the ordered round trip per pod (controller → scheduler → kubelet → informer → controller)",
    "ms/pod",
    sts.map((r) => (r.createSeconds * 1000) / stsReplicas),
  ),
  measurement(
    `a: its rolling update, ${stsReplicas} pods replaced one at a time → all Ready`,
    "s",
    sts.map((r) => r.updateSeconds),
  ),
  measurement(
    `b: a DaemonSet on ${dsNodes} nodes created → all Ready`,
    "s",
    dss.map((r) => r.createSeconds),
    2,
  ),
  measurement(
    "b: its rolling update at maxUnavailable 10% → every pod updated and Ready",
    "s",
    dss.map((r) => r.updateSeconds),
  ),
]);
