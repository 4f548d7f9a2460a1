// The control plane the demo scenarios run: shared informers, the ReplicaSet
// and Deployment controllers, three simulated nodes (kubelets with a
// simulated container runtime), and a stand-in binder in place of a
// scheduler, all on one embedded API server.
import {
  type DeepReadonly,
  isConflict,
  isDeletedFinalStateUnknown,
  isNotFound,
  type Pod,
  pods,
  replicaSets,
} from "@reconcile/api";
import { type ApiServer, InProcessClient } from "@reconcile/apiserver";
import { DeploymentController } from "@reconcile/deployment";
import { type SharedIndexInformer, SharedInformerFactory } from "@reconcile/informer";
import { NodeSimulator } from "@reconcile/kubelet";
import { ReplicaSetController } from "@reconcile/replicaset";

/** The demo's nodes. */
export const nodeNames = ["node-1", "node-2", "node-3"] as const;

export interface ControlPlane {
  /** The simulated nodes, whose kubelets answer `pods/log`. */
  readonly nodes: NodeSimulator;
  /** Resolves once every informer has synced (rejects after 5 s, naming the ones that did not). */
  readonly synced: Promise<void>;
  /** Stops the controllers, the nodes, the binder and the informers; resolves once all have stopped. */
  stop(): Promise<void>;
}

export function startControlPlane(server: ApiServer): ControlPlane {
  const client = server.client();
  const abort = new AbortController();
  const factory = new SharedInformerFactory({ client });
  const podInformer = factory.forResource(pods);
  const controller = new ReplicaSetController({
    client,
    podInformer,
    replicaSetInformer: factory.forResource(replicaSets),
  });
  const deploymentController = DeploymentController.fromInformerFactory(factory, { client });
  factory.start(abort.signal);
  const controllerRun = controller.run({ signal: abort.signal, workers: 5 });
  const deploymentControllerRun = deploymentController.run({ signal: abort.signal, workers: 5 });
  const nodes = new NodeSimulator({ client, nodes: [...nodeNames], podInformer });
  const nodesRun = nodes.run({ signal: abort.signal });
  const binder =
    client instanceof InProcessClient
      ? startBinderStandIn(client, podInformer, abort.signal)
      : Promise.resolve();
  const synced = factory.waitForCacheSync(abort.signal, { timeoutMs: 5_000 }).then(() => {});
  synced.catch(() => {}); // reported to whoever awaits it
  return {
    nodes,
    synced,
    async stop() {
      abort.abort();
      await Promise.all([controllerRun, deploymentControllerRun, nodesRun, binder]);
      await factory.shutdown();
    },
  };
}

/**
 * Stands in for the scheduler until it lands, with the smallest step that
 * lets the nodes run pods: each new unbound pod is bound to the node that
 * has the fewest pods, through `pods/{name}/binding` as a scheduler binds
 * (which sets `spec.nodeName` and PodScheduled). No filtering, scoring,
 * resources or `Scheduled` event.
 */
async function startBinderStandIn(
  client: InProcessClient,
  podInformer: SharedIndexInformer<Pod>,
  signal: AbortSignal,
): Promise<void> {
  // Where each pod is (or is being) bound, so that pods created together spread out.
  const placed = new Map<string, string>();
  const bind = async (pod: DeepReadonly<Pod>) => {
    const uid = pod.metadata?.uid ?? "";
    if (pod.spec?.nodeName) {
      placed.set(uid, pod.spec.nodeName);
      return;
    }
    if (placed.has(uid) || pod.metadata?.deletionTimestamp || signal.aborted) return;
    const counts = new Map<string, number>(nodeNames.map((name) => [name, 0]));
    for (const node of placed.values()) counts.set(node, (counts.get(node) ?? 0) + 1);
    const [node] = [...counts].sort((a, b) => a[1] - b[1] || a[0].localeCompare(b[0]))[0]!;
    placed.set(uid, node);
    const namespace = pod.metadata?.namespace ?? "default";
    const binding = {
      apiVersion: "v1",
      kind: "Binding",
      metadata: { name: pod.metadata?.name, namespace, uid },
      target: { apiVersion: "v1", kind: "Node", name: node },
    };
    try {
      await client.bindPod(namespace, binding, { signal });
    } catch (error) {
      placed.delete(uid);
      // Deleted, or changed meanwhile (its next event binds it): nothing to do now.
      if (!isNotFound(error) && !isConflict(error) && !signal.aborted)
        console.error("binding failed:", error);
    }
  };
  const registration = podInformer.addEventHandler({
    onAdd: (pod) => bind(pod),
    onUpdate: (_, pod) => bind(pod),
    onDelete: (obj) => {
      placed.delete((isDeletedFinalStateUnknown(obj) ? obj.obj : obj).metadata?.uid ?? "");
    },
  });
  await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
  if (!podInformer.isStopped()) podInformer.removeEventHandler(registration);
}
