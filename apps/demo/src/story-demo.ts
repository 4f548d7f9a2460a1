// `npm run demo`: the whole story on the real clock. An API server, the
// controller manager (leader-elected), the scheduler and three simulated
// nodes; a scripted user creates a Deployment, deletes a pod, scales,
// exposes it, rolls a new image out and back, loses a node, creates and
// deletes a namespace, and deletes the Deployment. A live view redraws on a terminal; otherwise each step prints
// its final state. The exit code says whether every step reached its state.
import {
  configMaps,
  type Deployment,
  deployments,
  isPodActive,
  isPodReady,
  jsonEqual,
  leases,
  type Node,
  namespaces,
  nodes,
  pods,
  type ReplicaSet,
  replicaSets,
  serviceAccounts,
  services,
} from "@reconcile/api";
import type { Client } from "@reconcile/client";
import { CausalityRecorder } from "@reconcile/dashboard";
import { endpointSlices, endpointsResource } from "@reconcile/endpoints";
import type { Endpoints, Service } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import { type Cluster, clusterCA, fastNodeLifecycle, newApiServer, startCluster } from "./cluster.js";
import { openDashboard, untilInterrupted } from "./dashboard.js";
import { LiveView, type View } from "./live-view.js";

const namespace = "default";
/** The namespace the story creates and deletes. */
const scratch = "scratch";
const name = "web";
const stepTimeoutMs = 15_000;

export interface Step {
  title: string;
  act(client: Client, cluster: Cluster): Promise<void>;
  /** The state the step must reach, checked against the API server. */
  reached(view: View): boolean;
  expected: string;
}

/**
 * The story. With `--dashboard` (`npm run demo -- story --dashboard`) the
 * API server also listens on loopback and the web view follows the story
 * live; it stays up after the last step until Ctrl-C.
 */
export async function runStoryDemo(): Promise<boolean> {
  const server = newApiServer();
  const withDashboard = process.argv.includes("--dashboard");
  const causality = withDashboard ? new CausalityRecorder() : undefined;
  const cluster = startCluster(server, {
    nodes: 3,
    nodeLifecycle: fastNodeLifecycle,
    rootCA: await clusterCA(),
    causality,
  });
  let beforeStop: (() => Promise<void>) | undefined;
  if (withDashboard) {
    const listening = await server.listen({ port: 0, kubeletConnection: cluster.kubeletConnection() });
    const dashboard = await openDashboard({ kubeconfig: listening.kubeconfig(), cluster, causality });
    console.log(`Watch it live: ${dashboard.url}\n`);
    beforeStop = async () => {
      console.log(`\nThe story is over; the dashboard stays at ${dashboard.url} until Ctrl-C.`);
      await untilInterrupted();
      await dashboard.close();
      await listening.close();
    };
  }
  const steps = [...rolloutSteps(), ...nodeLossSteps("node-3"), ...namespaceAndCleanupSteps()];
  return runSteps(server, cluster, steps, "npm run demo", beforeStop);
}

/** A Deployment created, healed, scaled, exposed, rolled out and rolled back. */
function rolloutSteps(): Step[] {
  let deletedPod = "";
  return [
    {
      title: `create Deployment ${name} (nginx:1.27) with 3 replicas`,
      act: (c) =>
        c
          .resource(deployments, namespace)
          .create(deployment(3, "nginx:1.27"))
          .then(() => {}),
      reached: (v) => complete(v, 3, "nginx:1.27") && new Set(v.pods.map((p) => p.spec?.nodeName)).size === 3,
      expected: "a ReplicaSet, 3 pods scheduled one per node, all Running and Ready",
    },
    {
      title: "delete one of its pods",
      act: async (c) => {
        deletedPod = (await c.resource(pods, namespace).list()).items[0]!.metadata!.name!;
        await c.resource(pods, namespace).delete(deletedPod);
      },
      reached: (v) => complete(v, 3, "nginx:1.27") && v.pods.every((p) => p.metadata?.name !== deletedPod),
      expected: "a replacement: 3 ready pods again, the deleted one gone",
    },
    {
      title: "scale to 5",
      act: (c) =>
        c
          .resource(deployments, namespace)
          .patch(name, { spec: { replicas: 5 } }, { type: "merge" })
          .then(() => {}),
      reached: (v) => complete(v, 5, "nginx:1.27"),
      expected: "5 ready pods",
    },
    {
      title: `expose it: Service ${name} port 80`,
      act: (c) =>
        c
          .resource(services, namespace)
          .create(service())
          .then(() => {}),
      reached: (v) => endpointsReady(v, 5),
      expected: "Endpoints and an EndpointSlice listing the 5 ready pods' IPs",
    },
    {
      title: "set image nginx:1.28 (rolling update)",
      act: (c) => setImage(c, "nginx:1.28"),
      reached: (v) => complete(v, 5, "nginx:1.28") && v.replicaSets.length === 2 && endpointsReady(v, 5),
      expected: "a new ReplicaSet scaled up as the old one scales down; 5 ready pods of nginx:1.28",
    },
    {
      title: "rollout undo",
      act: (c) => rolloutUndo(c),
      reached: (v) => complete(v, 5, "nginx:1.27") && v.replicaSets.length === 2 && endpointsReady(v, 5),
      expected: "the nginx:1.27 ReplicaSet back at 5, the other at 0, no third ReplicaSet",
    },
  ];
}

/** A node that stops heartbeating: tainted, its pods evicted and replaced, the stuck ones force-deleted. */
function nodeLossSteps(lostNode: string): Step[] {
  return [
    {
      title: `${lostNode} stops heartbeating`,
      act: (_, cl) => cl.stopNode(lostNode),
      // The node lifecycle controller marks it NotReady (Ready Unknown) and taints it unreachable;
      // the taint eviction controller evicts its pods once their 1 s toleration runs out; the
      // ReplicaSet replaces them on the other nodes.
      reached: (v) =>
        // Its evicted pods stay Terminating: no kubelet is left to finish their deletion.
        complete({ ...v, pods: v.pods.filter((p) => p.spec?.nodeName !== lostNode) }, 5, "nginx:1.27") &&
        v.pods.filter(isPodActive).every((p) => p.spec?.nodeName !== lostNode) &&
        nodeLost(v.nodes.find((n) => n.metadata?.name === lostNode)) &&
        endpointsReady(v, 5),
      expected: `${lostNode} NotReady and tainted node.kubernetes.io/unreachable, its pods evicted and replaced on the other nodes, 5 ready`,
    },
    {
      title: `force-delete the pods left Terminating on ${lostNode}`,
      // Its kubelet cannot finish a graceful deletion any more: `kubectl delete pod --force --grace-period=0`.
      act: async (c) => {
        const stuck = (await c.resource(pods, namespace).list()).items.filter(
          (p) => p.spec?.nodeName === lostNode,
        );
        for (const pod of stuck)
          await c.resource(pods, namespace).delete(pod.metadata!.name!, { gracePeriodSeconds: 0 });
      },
      reached: (v) => complete(v, 5, "nginx:1.27") && v.pods.every((p) => p.spec?.nodeName !== lostNode),
      expected: `no pod left on ${lostNode}; 5 ready on the other nodes`,
    },
  ];
}

/** A namespace created and deleted with what it holds, then the Deployment deleted with cascade. */
function namespaceAndCleanupSteps(): Step[] {
  return [
    {
      title: `create namespace ${scratch} with a ConfigMap`,
      act: async (c) => {
        await c.resource(namespaces).create({ metadata: { name: scratch } });
        await c
          .resource(configMaps, scratch)
          .create({ metadata: { name: "settings" }, data: { color: "red" } });
      },
      reached: (v) =>
        v.namespaces.some((n) => n.metadata?.name === scratch && n.status?.phase === "Active") &&
        v.serviceAccounts.includes(`${scratch}/default`),
      expected: `${scratch} Active with its default ServiceAccount (the serviceaccount controller's)`,
    },
    {
      title: `delete namespace ${scratch}`,
      // The namespace stays Terminating while the namespace controller deletes what it holds,
      // then its kubernetes finalizer is removed and the API server removes it.
      act: (c) =>
        c
          .resource(namespaces)
          .delete(scratch)
          .then(() => {}),
      reached: (v) =>
        !v.namespaces.some((n) => n.metadata?.name === scratch) &&
        !v.serviceAccounts.some((sa) => sa.startsWith(`${scratch}/`)),
      expected: `${scratch} Terminating while its ConfigMap and ServiceAccount are deleted, then gone`,
    },
    {
      title: `delete Deployment ${name} (cascade)`,
      act: (c) =>
        c
          .resource(deployments, namespace)
          .delete(name)
          .then(() => {}),
      reached: (v) => v.deployment === undefined && v.replicaSets.length === 0 && v.pods.length === 0,
      expected: "the Deployment, its ReplicaSets and pods gone",
    },
  ];
}

/** Runs the steps with a live view; true if every step reached its state. */
export async function runSteps(
  server: { close(): Promise<void> },
  cluster: Cluster,
  steps: readonly Step[],
  title: string,
  /** Awaited after the last step, before the cluster stops. */
  beforeStop?: () => Promise<void>,
): Promise<boolean> {
  const view = new LiveView(title);
  const results: { title: string; ok: boolean; ms: number }[] = [];
  const started = Date.now();
  try {
    await cluster.synced;
    for (const [i, step] of steps.entries()) {
      const stepStarted = Date.now();
      view.heading = `step ${i + 1}/${steps.length}: ${step.title}\n  expect: ${step.expected}`;
      await step.act(cluster.client, cluster);
      let ok = false;
      while (Date.now() - stepStarted < stepTimeoutMs) {
        const state = await readView(cluster);
        view.draw(state);
        if (step.reached(state)) {
          ok = true;
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      results.push({ title: step.title, ok, ms: Date.now() - stepStarted });
      view.commit();
      // On a terminal, a moment to read the step's final state before the next one redraws.
      if (ok && process.stdout.isTTY) await new Promise((resolve) => setTimeout(resolve, 700));
      if (!ok) break;
    }
    await beforeStop?.();
  } finally {
    await cluster.stop();
    await server.close();
  }
  console.log();
  for (const result of results)
    console.log(`${result.ok ? "ok  " : "FAIL"} ${result.title} (${result.ms} ms)`);
  const ok = results.length === steps.length && results.every((r) => r.ok);
  console.log(
    `${ok ? "every step reached its state" : "a step did not reach its state"} in ${Date.now() - started} ms`,
  );
  return ok;
}

export async function readView(cluster: Cluster): Promise<View> {
  const c = cluster.client;
  const [d, rs, ps, ns, ls, eps, slices] = await Promise.all([
    c.resource(deployments, namespace).list(),
    c.resource(replicaSets, namespace).list(),
    c.resource(pods, namespace).list(),
    c.resource(nodes).list(),
    c.resource(leases, "kube-node-lease").list(),
    c.resource(endpointsResource, namespace).list(),
    c.resource(endpointSlices, namespace).list(),
  ]);
  const controlPlane = await c.resource(leases, "kube-system").list();
  const [nsList, saList] = await Promise.all([
    c.resource(namespaces).list(),
    c.resource(serviceAccounts).list(),
  ]);
  return {
    deployment: d.items.find((x) => x.metadata?.name === name),
    replicaSets: rs.items,
    pods: ps.items,
    nodes: ns.items,
    nodeLeases: ls.items,
    endpoints: eps.items.find((x) => x.metadata?.name === name),
    slices: slices.items.filter((s) => s.metadata?.labels?.["kubernetes.io/service-name"] === name),
    leaders: Object.fromEntries(
      controlPlane.items.map((l) => [l.metadata?.name ?? "", l.spec?.holderIdentity ?? ""]),
    ),
    namespaces: nsList.items,
    serviceAccounts: saList.items.map((sa) => `${sa.metadata?.namespace}/${sa.metadata?.name}`),
    now: Date.now(),
  };
}

export function deployment(replicas: number, image: string): Deployment {
  const labels = { app: name };
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace },
    spec: {
      replicas,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          containers: [{ name: "nginx", image, ports: [{ name: "http", containerPort: 80 }] }],
          // Evicted 1 s after their node is lost (the API server's default is 300 s).
          tolerations: [
            {
              key: "node.kubernetes.io/not-ready",
              operator: "Exists",
              effect: "NoExecute",
              tolerationSeconds: 1,
            },
            {
              key: "node.kubernetes.io/unreachable",
              operator: "Exists",
              effect: "NoExecute",
              tolerationSeconds: 1,
            },
          ],
        },
      },
    },
  };
}

function service(): Service {
  return {
    metadata: { name, namespace },
    spec: {
      selector: { app: name },
      ports: [{ name: "http", port: 80, protocol: "TCP", targetPort: "http" }],
    },
  };
}

export async function setImage(client: Client, image: string): Promise<void> {
  const d = await client.resource(deployments, namespace).get(name);
  d.spec!.template.spec!.containers[0]!.image = image;
  await client.resource(deployments, namespace).update(d);
}

/**
 * What `kubectl rollout undo` does: put the template of the previous
 * revision's ReplicaSet (less its pod-template-hash label) back into the Deployment.
 */
export async function rolloutUndo(client: Client): Promise<void> {
  const d = await client.resource(deployments, namespace).get(name);
  const owned = (await client.resource(replicaSets, namespace).list()).items.filter((rs) =>
    rs.metadata?.ownerReferences?.some((o) => o.uid === d.metadata?.uid),
  );
  const revision = (rs: ReplicaSet) =>
    Number(rs.metadata?.annotations?.["deployment.kubernetes.io/revision"] ?? 0);
  const [, previous] = owned.sort((a, b) => revision(b) - revision(a));
  if (previous === undefined) throw new Error("no previous revision to undo to");
  const template = structuredClone(previous.spec!.template!);
  delete template.metadata?.labels?.["pod-template-hash"];
  d.spec!.template = template;
  await client.resource(deployments, namespace).update(d);
}

/** The rollout is complete at `replicas` of `image`: kubectl rollout status would say so, and the pods agree. */
export function complete(view: View, replicas: number, image: string): boolean {
  const d = view.deployment;
  const status = d?.status;
  const active = view.pods.filter((p) => isPodActive(p));
  return (
    d?.spec?.template.spec?.containers[0]?.image === image &&
    status?.observedGeneration === d?.metadata?.generation &&
    status?.updatedReplicas === replicas &&
    status?.replicas === replicas &&
    status?.availableReplicas === replicas &&
    view.pods.length === replicas &&
    active.length === replicas &&
    active.every(
      (p) => isPodReady(p) && p.status?.phase === "Running" && p.spec?.containers[0]?.image === image,
    )
  );
}

/** The Service's Endpoints and slices list exactly the ready pods' IPs (`replicas` of them). */
export function endpointsReady(view: View, replicas: number): boolean {
  const podIPs = view.pods
    .filter(isPodReady)
    .map((p) => p.status?.podIP ?? "")
    .sort();
  const endpointIPs = (view.endpoints?.subsets ?? [])
    .flatMap((s) => (s.addresses ?? []).map((a) => a.ip))
    .sort();
  const notReady = (view.endpoints?.subsets ?? []).flatMap((s) => s.notReadyAddresses ?? []);
  const sliceIPs = view.slices
    .flatMap((s) => (s.endpoints ?? []).filter((e) => e.conditions?.ready).map((e) => e.addresses[0] ?? ""))
    .sort();
  return (
    podIPs.length === replicas &&
    notReady.length === 0 &&
    jsonEqual(endpointIPs, podIPs) &&
    jsonEqual(sliceIPs, podIPs)
  );
}

export type { Endpoints, EndpointSlice, Node };

/** What `kubectl get nodes` shows as NotReady for a node whose kubelet went silent: Ready Unknown and the unreachable taints. */
function nodeLost(node: Node | undefined): boolean {
  const ready = node?.status?.conditions?.find((c) => c.type === "Ready");
  const taints = (node?.spec?.taints ?? []).map((t) => `${t.key}:${t.effect}`);
  return (
    ready?.status === "Unknown" &&
    taints.includes("node.kubernetes.io/unreachable:NoExecute") &&
    taints.includes("node.kubernetes.io/unreachable:NoSchedule")
  );
}
