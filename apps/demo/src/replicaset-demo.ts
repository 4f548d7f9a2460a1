// The first vertical slice, on the real clock: the embedded API server, the
// ReplicaSet controller on shared informers, and a scripted user. A watch
// event travels reflector → DeltaFIFO → handler → workqueue → sync → client
// write → storage → watch, and the table below redraws as it does.
//
// The scheduler places the pods on three simulated nodes, so readiness in
// the status comes from real kubelets driving a simulated container runtime.
import { isPodActive, isPodReady, type Pod, pods, type ReplicaSet, replicaSets } from "@reconcile/api";
import type { Client } from "@reconcile/client";
import { clusterCA, newApiServer, startCluster } from "./cluster.js";
import { Screen } from "./live-view.js";

const namespace = "default";
const rsName = "web";
const stepTimeoutMs = 15_000;

interface Step {
  title: string;
  act(client: Client): Promise<void>;
  /** The state the step must reach, checked against the API server. */
  reached(view: ClusterView): boolean;
  expected: string;
}

interface ClusterView {
  rs: ReplicaSet | undefined;
  pods: Pod[];
}

export async function runReplicaSetDemo(): Promise<boolean> {
  const server = newApiServer();
  const client = server.client();
  const controlPlane = startCluster(server, { nodes: 3, rootCA: await clusterCA() });

  let deletedPod = "";
  const steps: Step[] = [
    {
      title: `create ReplicaSet ${rsName} with 3 replicas`,
      act: async (c) => {
        await c.resource(replicaSets, namespace).create(newReplicaSet(3));
      },
      reached: (v) => settled(v, 3),
      expected: "3 pods, all ready",
    },
    {
      title: "delete one of its pods by hand",
      act: async (c) => {
        const list = await c.resource(pods, namespace).list();
        deletedPod = list.items[0]!.metadata!.name!;
        await c.resource(pods, namespace).delete(deletedPod, { gracePeriodSeconds: 0 });
      },
      reached: (v) => settled(v, 3) && v.pods.every((pod) => pod.metadata?.name !== deletedPod),
      expected: "a replacement: 3 pods again, the deleted one gone",
    },
    {
      title: "scale to 5",
      act: (c) => setReplicas(c, 5),
      reached: (v) => settled(v, 5),
      expected: "5 pods, all ready",
    },
    {
      title: "scale to 2",
      act: (c) => setReplicas(c, 2),
      reached: (v) => settled(v, 2),
      expected: "2 pods, all ready",
    },
  ];

  const screen = new Screen<ClusterView>(render);
  const results: { title: string; ok: boolean; ms: number }[] = [];
  try {
    await controlPlane.synced;
    for (const [i, step] of steps.entries()) {
      const started = Date.now();
      screen.heading = `step ${i + 1}/${steps.length}: ${step.title} (expect ${step.expected})`;
      await step.act(client);
      let ok = false;
      while (Date.now() - started < stepTimeoutMs) {
        const view = await readCluster(client);
        screen.draw(view);
        if (step.reached(view)) {
          ok = true;
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      results.push({ title: step.title, ok, ms: Date.now() - started });
      screen.commit();
      if (!ok) break;
    }
  } finally {
    await controlPlane.stop();
    await server.close();
  }

  console.log();
  for (const result of results) {
    console.log(`${result.ok ? "ok  " : "FAIL"} ${result.title} (${result.ms} ms)`);
  }
  return results.length === steps.length && results.every((result) => result.ok);
}

function newReplicaSet(replicas: number): ReplicaSet {
  const labels = { app: rsName };
  return {
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    metadata: { name: rsName, namespace },
    spec: {
      replicas,
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: { containers: [{ name: "web", image: "nginx:1.27" }] } },
    },
  };
}

async function setReplicas(client: Client, replicas: number): Promise<void> {
  await client.resource(replicaSets, namespace).patch(rsName, { spec: { replicas } }, { type: "merge" });
}

async function readCluster(client: Client): Promise<ClusterView> {
  const [rsList, podList] = await Promise.all([
    client.resource(replicaSets, namespace).list(),
    client.resource(pods, namespace).list(),
  ]);
  return { rs: rsList.items.find((rs) => rs.metadata?.name === rsName), pods: podList.items };
}

/** Desired count reached and reported: that many active pods, all ready, and the status says so. */
function settled(view: ClusterView, replicas: number): boolean {
  const active = view.pods.filter((pod) => isPodActive(pod));
  const status = view.rs?.status;
  return (
    view.pods.length === replicas &&
    active.length === replicas &&
    active.every(isPodReady) &&
    status?.replicas === replicas &&
    status.readyReplicas === replicas &&
    status.observedGeneration === view.rs?.metadata?.generation
  );
}

/** The ReplicaSet and its pods under the step's heading. */
function render(heading: string, view: ClusterView): string[] {
  const { rs } = view;
  const lines = [heading, ""];
  lines.push(
    `  REPLICASET  DESIRED  CURRENT  READY  GENERATION  OBSERVED`,
    `  ${pad(rsName, 10)}  ${pad(rs?.spec?.replicas, 7)}  ${pad(rs?.status?.replicas, 7)}  ${pad(rs?.status?.readyReplicas ?? 0, 5)}  ${pad(rs?.metadata?.generation, 10)}  ${rs?.status?.observedGeneration ?? "-"}`,
    "",
    `  POD                STATUS       READY`,
  );
  const sorted = [...view.pods].sort((a, b) => a.metadata!.name!.localeCompare(b.metadata!.name!));
  for (const pod of sorted) {
    const status = pod.metadata?.deletionTimestamp ? "Terminating" : (pod.status?.phase ?? "Pending");
    lines.push(`  ${pad(pod.metadata?.name, 17)}  ${pad(status, 11)}  ${isPodReady(pod) ? "1/1" : "0/1"}`);
  }
  return lines;
}

function pad(value: unknown, width: number): string {
  return String(value ?? "-").padEnd(width);
}
