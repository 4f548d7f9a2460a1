// The control plane the demo scenarios run: shared informers, the ReplicaSet
// and Deployment controllers, and a stand-in for the kubelet, all on one
// embedded API server.
import { type Pod, pods, replicaSets } from "@reconcile/api";
import type { ApiServer } from "@reconcile/apiserver";
import type { Client } from "@reconcile/client";
import { DeploymentController } from "@reconcile/deployment";
import { type SharedIndexInformer, SharedInformerFactory } from "@reconcile/informer";
import { ReplicaSetController } from "@reconcile/replicaset";

export interface ControlPlane {
  /** Resolves once every informer has synced (rejects after 5 s, naming the ones that did not). */
  readonly synced: Promise<void>;
  /** Stops the controllers, the kubelet stand-in and the informers; resolves once all have stopped. */
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
  const kubelet = startKubeletStandIn(client, podInformer, abort.signal);
  const synced = factory.waitForCacheSync(abort.signal, { timeoutMs: 5_000 }).then(() => {});
  synced.catch(() => {}); // reported to whoever awaits it
  return {
    synced,
    async stop() {
      abort.abort();
      await Promise.all([controllerRun, deploymentControllerRun, kubelet]);
      await factory.shutdown();
    },
  };
}

/**
 * Stands in for the kubelet until the pod-workers package exists: marks every
 * new pod Running and Ready 200 ms after it appears.
 */
async function startKubeletStandIn(
  client: Client,
  podInformer: SharedIndexInformer<Pod>,
  signal: AbortSignal,
): Promise<void> {
  const timers = new Set<ReturnType<typeof setTimeout>>();
  podInformer.addEventHandler({
    onAdd: (pod) => {
      if (pod.status?.phase === "Running" || pod.metadata?.deletionTimestamp) return;
      const timer = setTimeout(() => {
        timers.delete(timer);
        const now = new Date().toISOString();
        const running: Pod = {
          ...(structuredClone(pod) as Pod),
          status: {
            phase: "Running",
            startTime: now,
            conditions: [{ type: "Ready", status: "True", lastTransitionTime: now }],
            containerStatuses: (pod.spec?.containers ?? []).map((container) => ({
              name: container.name,
              image: container.image ?? "",
              imageID: "",
              ready: true,
              started: true,
              restartCount: 0,
              state: { running: { startedAt: now } },
            })),
          },
        };
        client
          .resource(pods, pod.metadata?.namespace)
          .updateStatus(running, { signal })
          .catch(() => {
            // The pod was deleted or changed meanwhile: nothing to mark.
          });
      }, 200);
      timers.add(timer);
    },
  });
  await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
  for (const timer of timers) clearTimeout(timer);
}
