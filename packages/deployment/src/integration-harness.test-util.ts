// Helpers the integration tests share: an embedded API server on a FakeClock
// with the ReplicaSet and Deployment controllers, a kubelet stand-in that
// marks pods ready (and finishes graceful deletions) on the test's say-so,
// and a watcher that records every state of the pods and ReplicaSets.
import {
  type DeepReadonly,
  type Deployment,
  deployments,
  getControllerOf,
  type Pod,
  pods,
  type ReplicaSet,
  replicaSets,
  rfc3339,
} from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import type { Client } from "@reconcile/client";
import { type Clock, FakeClock } from "@reconcile/clock";
import { SharedInformerFactory } from "@reconcile/informer";
import { ReplicaSetController } from "@reconcile/replicaset";
import { DeploymentController } from "./deployment-controller.js";

export const namespace = "default";

export interface Cluster {
  clock: FakeClock;
  server: ApiServer;
  client: Client;
  stop(): Promise<void>;
}

export function startCluster(): Cluster {
  const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
  const server = new ApiServer({ clock });
  return { clock, server, client: server.client(), stop: () => server.close() };
}

export interface Controllers {
  deploymentController: DeploymentController;
  kubelet: KubeletStandIn;
  /** Stops the Deployment controller only (a restart); the rest keeps running. */
  stopDeploymentController(): Promise<void>;
  /** Starts a fresh Deployment controller on fresh informers. */
  startDeploymentController(): void;
  stop(): Promise<void>;
}

/** Which pods the stand-in makes ready; by default all. */
export type ReadyPolicy = (pod: DeepReadonly<Pod>) => boolean;

export interface KubeletStandIn {
  /** Which pods become ready; changing it makes waiting pods ready at the next event or `sync()`. */
  ready: ReadyPolicy;
  /** Whether pods being deleted gracefully are finished (deleted with grace 0) at once. Default true. */
  finishTerminating: boolean;
  /** Applies the policies to every pod now. */
  sync(): void;
  /** Resolves when every write the stand-in started has settled. */
  idle(): Promise<void>;
}

export function startControllers(cluster: { client: Client; clock: Clock }): Controllers {
  const { client, clock } = cluster;
  const abort = new AbortController();
  const factory = new SharedInformerFactory({ client, clock, detectMutations: true });
  const rsController = ReplicaSetController.fromInformerFactory(factory, { client, clock });
  const podInformer = factory.forResource(pods);
  const kubelet = kubeletStandIn(client, podInformer, clock);
  factory.start(abort.signal);
  const rsRun = rsController.run({ signal: abort.signal, workers: 5 });

  let dAbort = new AbortController();
  let dFactory: SharedInformerFactory;
  let dRun: Promise<void> = Promise.resolve();
  const controllers: Controllers = {
    deploymentController: undefined as unknown as DeploymentController,
    kubelet,
    async stopDeploymentController() {
      dAbort.abort();
      await dRun;
      await dFactory.shutdown();
    },
    startDeploymentController() {
      dAbort = new AbortController();
      dFactory = new SharedInformerFactory({ client, clock, detectMutations: true });
      controllers.deploymentController = DeploymentController.fromInformerFactory(dFactory, {
        client,
        clock,
      });
      dFactory.start(dAbort.signal);
      dRun = controllers.deploymentController.run({ signal: dAbort.signal, workers: 5 });
    },
    async stop() {
      await controllers.stopDeploymentController();
      abort.abort();
      await rsRun;
      await kubelet.idle();
      await factory.shutdown();
    },
  };
  controllers.startDeploymentController();
  return controllers;
}

function kubeletStandIn(
  client: Client,
  podInformer: {
    addEventHandler(handler: {
      onAdd?(pod: DeepReadonly<Pod>): unknown;
      onUpdate?(old: DeepReadonly<Pod>, pod: DeepReadonly<Pod>): unknown;
    }): unknown;
    getIndexer(): { list(): DeepReadonly<Pod>[] };
  },
  clock: Clock,
): KubeletStandIn {
  const inFlight = new Set<Promise<unknown>>();
  const handled = new Set<string>();
  const track = (promise: Promise<unknown>) => {
    const settled = promise.catch(() => {}).finally(() => inFlight.delete(settled));
    inFlight.add(settled);
  };
  const visit = (pod: DeepReadonly<Pod>) => {
    const name = pod.metadata?.name ?? "";
    const podClient = client.resource(pods, pod.metadata?.namespace ?? namespace);
    if (pod.metadata?.deletionTimestamp != null) {
      if (!stand.finishTerminating || handled.has(`delete/${name}`)) return;
      handled.add(`delete/${name}`);
      track(podClient.delete(name, { gracePeriodSeconds: 0 }));
      return;
    }
    if (isReady(pod) || handled.has(`ready/${pod.metadata?.uid}`) || !stand.ready(pod)) return;
    handled.add(`ready/${pod.metadata?.uid}`);
    const now = rfc3339(clock.now());
    track(
      podClient.updateStatus({
        ...(structuredClone(pod) as Pod),
        status: {
          phase: "Running",
          conditions: [{ type: "Ready", status: "True", lastTransitionTime: now }],
        },
      }),
    );
  };
  const stand: KubeletStandIn = {
    ready: () => true,
    finishTerminating: true,
    sync() {
      for (const pod of podInformer.getIndexer().list()) visit(pod);
    },
    async idle() {
      while (inFlight.size > 0) await Promise.all(inFlight);
    },
  };
  podInformer.addEventHandler({ onAdd: (pod) => visit(pod), onUpdate: (_old, pod) => visit(pod) });
  return stand;
}

export function isReady(pod: DeepReadonly<Pod> | Pod): boolean {
  return (
    pod.metadata?.deletionTimestamp == null &&
    (pod.status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True")
  );
}

/** One recorded moment: every pod and ReplicaSet as the watcher knew them after an event. */
export interface Moment {
  pods: Pod[];
  replicaSets: ReplicaSet[];
}

export interface Recorder {
  moments: Moment[];
  stop(): Promise<void>;
}

/** Watches pods and ReplicaSets from now on, recording the whole state after every event. */
export async function recordStates(client: Client): Promise<Recorder> {
  const abort = new AbortController();
  const podState = new Map<string, Pod>();
  const rsState = new Map<string, ReplicaSet>();
  const moments: Moment[] = [];
  const snapshot = () => moments.push({ pods: [...podState.values()], replicaSets: [...rsState.values()] });
  const podList = await client.resource(pods, namespace).list();
  for (const pod of podList.items) podState.set(pod.metadata?.name ?? "", pod);
  const rsList = await client.resource(replicaSets, namespace).list();
  for (const rs of rsList.items) rsState.set(rs.metadata?.name ?? "", rs);
  snapshot();
  const podWatch = await client
    .resource(pods, namespace)
    .watch({ signal: abort.signal, resourceVersion: podList.metadata?.resourceVersion });
  const rsWatch = await client
    .resource(replicaSets, namespace)
    .watch({ signal: abort.signal, resourceVersion: rsList.metadata?.resourceVersion });
  const drain = async <T extends Pod | ReplicaSet>(
    stream: AsyncIterable<{ type: string; object: unknown }>,
    state: Map<string, T>,
  ) => {
    try {
      for await (const event of stream) {
        const object = event.object as T;
        const name = object.metadata?.name ?? "";
        if (event.type === "DELETED") state.delete(name);
        else if (event.type === "ADDED" || event.type === "MODIFIED") state.set(name, object);
        else continue;
        snapshot();
      }
    } catch {
      // aborted
    }
  };
  const runs = [drain(podWatch, podState), drain(rsWatch, rsState)];
  return {
    moments,
    async stop() {
      abort.abort();
      await Promise.all(runs);
    },
  };
}

/**
 * Advances the fake clock in small steps until `check` passes. Fails after
 * `limitMs` of fake time.
 */
export async function eventually(
  clock: FakeClock,
  check: () => Promise<boolean> | boolean,
  options: { limitMs?: number; stepMs?: number } = {},
): Promise<void> {
  const limit = options.limitMs ?? 120_000;
  const step = options.stepMs ?? 10;
  for (let elapsed = 0; elapsed <= limit; elapsed += step) {
    if (await check()) return;
    await clock.advance(step);
  }
  throw new Error(`condition not reached within ${limit} ms of fake time`);
}

export function newDeployment(
  name: string,
  replicas: number,
  options: {
    strategy?: Deployment["spec"] extends infer S ? (S extends { strategy?: infer T } ? T : never) : never;
    image?: string;
    nodeName?: string;
    revisionHistoryLimit?: number;
    progressDeadlineSeconds?: number;
    paused?: boolean;
  } = {},
): Deployment {
  const labels = { app: name };
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace },
    spec: {
      replicas,
      selector: { matchLabels: labels },
      ...(options.strategy ? { strategy: options.strategy } : {}),
      ...(options.revisionHistoryLimit === undefined
        ? {}
        : { revisionHistoryLimit: options.revisionHistoryLimit }),
      ...(options.progressDeadlineSeconds === undefined
        ? {}
        : { progressDeadlineSeconds: options.progressDeadlineSeconds }),
      ...(options.paused ? { paused: true } : {}),
      template: {
        metadata: { labels },
        spec: {
          containers: [{ name: "app", image: options.image ?? "nginx:1.27" }],
          ...(options.nodeName ? { nodeName: options.nodeName } : {}),
        },
      },
    },
  };
}

export async function getDeployment(client: Client, name: string): Promise<Deployment> {
  return client.resource(deployments, namespace).get(name);
}

/** Applies `change` to a fresh copy of the Deployment and writes it (retrying conflicts). */
export async function updateDeployment(
  client: Client,
  name: string,
  change: (d: Deployment) => void,
): Promise<void> {
  for (;;) {
    const d = await getDeployment(client, name);
    change(d);
    try {
      await client.resource(deployments, namespace).update(d);
      return;
    } catch (error) {
      if ((error as { code?: number }).code === 409) continue;
      throw error;
    }
  }
}

export async function setImage(client: Client, name: string, image: string): Promise<void> {
  await updateDeployment(client, name, (d) => {
    d.spec!.template.spec!.containers[0]!.image = image;
  });
}

/** The Deployment's ReplicaSets, lowest revision first. */
export async function ownedReplicaSets(client: Client, d: Deployment): Promise<ReplicaSet[]> {
  const list = await client.resource(replicaSets, namespace).list();
  return list.items
    .filter((rs) => getControllerOf(rs)?.uid === d.metadata?.uid)
    .sort((a, b) => revisionOf(a) - revisionOf(b));
}

function revisionOf(rs: ReplicaSet): number {
  return Number(rs.metadata?.annotations?.["deployment.kubernetes.io/revision"] ?? 0);
}

/** Whether the rollout is complete the way `kubectl rollout status` judges it. */
export async function rolloutComplete(client: Client, name: string): Promise<boolean> {
  const d = await getDeployment(client, name);
  const replicas = d.spec?.replicas ?? 1;
  const status = d.status ?? {};
  return (
    (status.observedGeneration ?? 0) >= (d.metadata?.generation ?? 0) &&
    (status.updatedReplicas ?? 0) === replicas &&
    (status.replicas ?? 0) === replicas &&
    (status.availableReplicas ?? 0) === replicas
  );
}

export function imageOf(obj: DeepReadonly<Pod> | Pod): string | undefined {
  return obj.spec?.containers[0]?.image;
}
