// Shared by the controller tests: an embedded API server and informers on one FakeClock,
// an event recorder that keeps what it is given, and builders for nodes and pods.
import { type Lease, leases, type Node, nodes, type Pod, pods, rfc3339 } from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import type { Client } from "@reconcile/client";
import { FakeClock } from "@reconcile/clock";
import type { EventRecorder } from "@reconcile/controller";
import { SharedInformerFactory } from "@reconcile/informer";
import type { NodeCondition, Taint, Toleration } from "kubernetes-types/core/v1.js";

export const namespace = "default";
export const start = Date.parse("2026-01-01T00:00:00Z");

export interface RecordedEvent {
  kind: string | undefined;
  namespace: string | undefined;
  name: string | undefined;
  type: string;
  reason: string;
  message: string;
}

export interface Harness {
  clock: FakeClock;
  server: ApiServer;
  client: Client;
  factory: SharedInformerFactory;
  events: RecordedEvent[];
  recorder: EventRecorder;
  /** Starts the informers and waits for their caches. */
  start(): Promise<void>;
  /** Resolves once `condition` holds, yielding to the event loop between tries (no timers). */
  until(condition: () => boolean | Promise<boolean>, what?: string): Promise<void>;
  /** Lets pending I/O and informer deliveries run. */
  settle(): Promise<void>;
  signal: AbortSignal;
  stop(): Promise<void>;
}

export function harness(): Harness {
  const clock = new FakeClock(start);
  const server = new ApiServer({ clock });
  const client = server.client();
  const factory = new SharedInformerFactory({ client, clock, detectMutations: true });
  const abort = new AbortController();
  const events: RecordedEvent[] = [];
  const recorder: EventRecorder = {
    event(object, type, reason, message) {
      const meta = "metadata" in object ? object.metadata : undefined;
      const ref = object as { name?: string; namespace?: string };
      events.push({
        kind: object.kind,
        namespace: meta?.namespace ?? ref.namespace,
        name: meta?.name ?? ref.name,
        type,
        reason,
        message,
      });
    },
  };
  const settle = async () => {
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
  };
  return {
    clock,
    server,
    client,
    factory,
    events,
    recorder,
    signal: abort.signal,
    async start() {
      factory.start(abort.signal);
      await factory.waitForCacheSync(abort.signal);
    },
    async until(condition, what = "condition") {
      for (let i = 0; i < 5_000; i++) {
        if (await condition()) return;
        await new Promise((resolve) => setImmediate(resolve));
      }
      throw new Error(`${what} did not hold`);
    },
    settle,
    async stop() {
      abort.abort();
      await factory.shutdown();
      await server.close();
    },
  };
}

/** A pod bound to `nodeName` ("" for none), Ready, as upstream's `testutil.NewPod`. */
export function newPod(name: string, nodeName: string, tolerations?: Toleration[]): Pod {
  return {
    metadata: { name, namespace },
    spec: {
      ...(nodeName ? { nodeName } : {}),
      containers: [{ name: "c", image: "nginx" }],
      ...(tolerations ? { tolerations } : {}),
    },
  };
}

/** Upstream's `addToleration`: tolerates `testTaint<i>=test<i>:NoExecute`, for `seconds` (negative: for ever). */
export function toleration(index: number, seconds: number): Toleration {
  return {
    key: `testTaint${index}`,
    value: `test${index}`,
    effect: "NoExecute",
    ...(seconds >= 0 ? { tolerationSeconds: seconds } : {}),
  };
}

/** Upstream's `createNoExecuteTaint`. */
export function noExecuteTaint(index: number): Taint {
  return { key: `testTaint${index}`, value: `test${index}`, effect: "NoExecute" };
}

/** Creates the pod, then gives it a Running, Ready status as a kubelet would. */
export async function createPod(client: Client, pod: Pod): Promise<Pod> {
  const created = await client.resource(pods, namespace).create(pod);
  return client.resource(pods, namespace).updateStatus({
    ...created,
    status: { phase: "Running", conditions: [{ type: "Ready", status: "True" }] },
  });
}

export async function createNode(
  client: Client,
  name: string,
  options: { taints?: Taint[]; labels?: Record<string, string>; conditions?: NodeCondition[] } = {},
): Promise<Node> {
  const created = await client.resource(nodes).create({
    metadata: { name, ...(options.labels ? { labels: options.labels } : {}) },
    spec: options.taints ? { taints: options.taints } : {},
  });
  if (options.conditions === undefined) return created;
  return client.resource(nodes).updateStatus({ ...created, status: { conditions: options.conditions } });
}

/** The node's status as a kubelet posts it: every condition healthy, heartbeat now. */
export function healthyConditions(now: number): NodeCondition[] {
  const at = rfc3339(now);
  const condition = (type: string, status: string, reason: string): NodeCondition => ({
    type,
    status,
    reason,
    message: `kubelet says ${reason}`,
    lastHeartbeatTime: at,
    lastTransitionTime: at,
  });
  return [
    condition("MemoryPressure", "False", "KubeletHasSufficientMemory"),
    condition("DiskPressure", "False", "KubeletHasNoDiskPressure"),
    condition("PIDPressure", "False", "KubeletHasSufficientPID"),
    condition("Ready", "True", "KubeletReady"),
  ];
}

/** Posts a fresh heartbeat on every condition of the node, keeping statuses. */
export async function heartbeat(client: Client, name: string, now: number): Promise<Node> {
  const node = await client.resource(nodes).get(name);
  const at = rfc3339(now);
  const conditions = (node.status?.conditions ?? []).map((c) => ({ ...c, lastHeartbeatTime: at }));
  return client.resource(nodes).updateStatus({ ...node, status: { ...node.status, conditions } });
}

/** Sets the node's Ready condition (heartbeat now; transition now when the status changes). */
export async function setReady(client: Client, name: string, status: string, now: number): Promise<Node> {
  const node = await client.resource(nodes).get(name);
  const at = rfc3339(now);
  const conditions = (node.status?.conditions ?? []).map((c) =>
    c.type === "Ready"
      ? { ...c, status, lastHeartbeatTime: at, ...(c.status === status ? {} : { lastTransitionTime: at }) }
      : c,
  );
  return client.resource(nodes).updateStatus({ ...node, status: { ...node.status, conditions } });
}

/** Creates or renews the node's Lease in kube-node-lease. */
export async function renewLease(client: Client, name: string, now: number): Promise<Lease> {
  const leaseClient = client.resource(leases, "kube-node-lease");
  const renewTime = new Date(now).toISOString().replace("Z", "000Z");
  try {
    const lease = await leaseClient.get(name);
    return leaseClient.update({ ...lease, spec: { ...lease.spec, renewTime } });
  } catch {
    return leaseClient.create({
      metadata: { name, namespace: "kube-node-lease" },
      spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime },
    });
  }
}
