// A kubelet stops heartbeating: the node lifecycle and taint eviction
// controllers against the embedded API server and simulated kubelets, all on
// one FakeClock — the timeline of a real cluster with default settings.
import { type Node, nodes, type Pod, pods } from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import type { Client } from "@reconcile/client";
import { FakeClock } from "@reconcile/clock";
import type { EventRecorder } from "@reconcile/controller";
import { SharedInformerFactory } from "@reconcile/informer";
import { NodeSimulator } from "@reconcile/kubelet";
import { afterEach, describe, expect, it } from "vitest";
import { NodeLifecycleController } from "./node-lifecycle-controller.js";
import { TaintEvictionController } from "./taint-eviction-controller.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

const start = Date.parse("2026-01-01T00:00:00Z");

async function advance(clock: FakeClock, ms: number): Promise<void> {
  for (let done = 0; done < ms; done += 500) {
    await clock.advance(Math.min(500, ms - done));
    for (let i = 0; i < 10; i++) await clock.flush();
  }
}

/** Starts a kubelet for `name`; returns the function that stops it (the node goes silent). */
function startNode(client: Client, clock: FakeClock, name: string, index: number): () => Promise<void> {
  const simulator = new NodeSimulator({
    client,
    nodes: [name],
    clock,
    random: () => 0,
    kubeletOptions: () => ({ podCIDR: `10.244.${index}.0/24`, nodeIP: `10.0.0.${index + 2}` }),
  });
  const abort = new AbortController();
  const running = simulator.run({ signal: abort.signal });
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    abort.abort();
    await running;
  };
  cleanups.push(stop);
  return stop;
}

async function cluster() {
  const clock = new FakeClock(start);
  const server = new ApiServer({ clock });
  const client = server.client();
  const events: string[] = [];
  const recorder: EventRecorder = {
    event(object, type, reason, message) {
      const name = "metadata" in object ? object.metadata?.name : (object as { name?: string }).name;
      events.push(`${object.kind}/${name} ${type} ${reason}: ${message}`);
    },
  };
  const factory = new SharedInformerFactory({ client, clock });
  const lifecycle = NodeLifecycleController.fromInformerFactory(factory, {
    client,
    clock,
    eventRecorder: recorder,
  });
  const eviction = TaintEvictionController.fromInformerFactory(factory, {
    client,
    clock,
    eventRecorder: recorder,
  });
  const abort = new AbortController();
  factory.start(abort.signal);
  const running = [lifecycle.run({ signal: abort.signal }), eviction.run({ signal: abort.signal })];
  cleanups.push(async () => {
    abort.abort();
    await Promise.all(running);
    await factory.shutdown();
    await server.close();
  });
  const stops = ["node-1", "node-2"].map((name, i) => startNode(client, clock, name, i));
  await advance(clock, 2_000);
  return { clock, client, events, stops, lifecycle };
}

const getNode = (client: Client, name: string): Promise<Node> => client.resource(nodes).get(name);
const ready = (node: Node) => node.status?.conditions?.find((c) => c.type === "Ready");
const taintKeys = (node: Node) => (node.spec?.taints ?? []).map((t) => `${t.key}:${t.effect}`).sort();
const podReady = (pod: Pod | undefined) => pod?.status?.conditions?.find((c) => c.type === "Ready")?.status;
async function getPod(client: Client, name: string): Promise<Pod | undefined> {
  return (await client.resource(pods, "default").list()).items.find((p) => p.metadata?.name === name);
}

describe("a node whose kubelet stops heartbeating", () => {
  it("goes Unknown after the grace period, is tainted, and its pods are evicted after their 300 s default toleration", async () => {
    const { clock, client, events, stops } = await cluster();
    const pod = (name: string): Pod => ({
      metadata: { name, namespace: "default" },
      spec: { nodeName: "node-2", containers: [{ name: "web", image: "nginx:1.27" }] },
    });
    await client.resource(pods, "default").create(pod("web"));
    await advance(clock, 5_000);
    expect(podReady(await getPod(client, "web"))).toBe("True");
    expect(ready(await getNode(client, "node-2"))?.status).toBe("True");

    const stoppedAt = clock.now();
    await stops[1]!();
    // Up to the grace period (50 s after the last heartbeat) the node still counts as Ready.
    await advance(clock, 40_000);
    expect(ready(await getNode(client, "node-2"))?.status).toBe("True");
    await advance(clock, 20_000);
    const lost = await getNode(client, "node-2");
    expect(ready(lost)).toMatchObject({
      status: "Unknown",
      reason: "NodeStatusUnknown",
      message: "Kubelet stopped posting node status.",
    });
    expect(taintKeys(lost)).toEqual([
      "node.kubernetes.io/unreachable:NoExecute",
      "node.kubernetes.io/unreachable:NoSchedule",
    ]);
    expect(podReady(await getPod(client, "web"))).toBe("False");
    expect(ready(await getNode(client, "node-1"))?.status).toBe("True");
    expect(taintKeys(await getNode(client, "node-1"))).toEqual([]);
    expect(events).toContain("Node/node-2 Normal NodeNotReady: Node node-2 status is now: NodeNotReady");
    expect(events).toContain("Pod/web Warning NodeNotReady: Node is not ready");

    // The NoExecute taint went on at most ~one monitor period after Unknown; the pod tolerates it for 300 s.
    const taintedAt = Date.parse(
      lost.spec?.taints?.find((t) => t.effect === "NoExecute")?.timeAdded ?? "invalid",
    );
    expect(taintedAt - stoppedAt).toBeGreaterThanOrEqual(50_000);
    expect(taintedAt - stoppedAt).toBeLessThanOrEqual(62_000);
    await advance(clock, taintedAt + 299_000 - clock.now());
    expect((await getPod(client, "web"))?.metadata?.deletionTimestamp).toBeUndefined();
    await advance(clock, 2_000);
    const evicted = await getPod(client, "web");
    // Terminating: the kubelet that would finish the deletion is gone.
    expect(evicted?.metadata?.deletionTimestamp).toBeDefined();
    expect(evicted?.status?.conditions?.find((c) => c.type === "DisruptionTarget")).toMatchObject({
      status: "True",
      reason: "DeletionByTaintManager",
      message: "Taint manager: deleting due to NoExecute taint",
    });
    expect(events).toContain("Pod/web Normal TaintManagerEviction: Marking for deletion Pod default/web");
  });

  it("when the kubelet comes back, the taints go and pending evictions are cancelled", async () => {
    const { clock, client, events, stops } = await cluster();
    await client.resource(pods, "default").create({
      metadata: { name: "patient", namespace: "default" },
      spec: {
        nodeName: "node-2",
        containers: [{ name: "web", image: "nginx:1.27" }],
        tolerations: [
          {
            key: "node.kubernetes.io/unreachable",
            operator: "Exists",
            effect: "NoExecute",
            tolerationSeconds: 600,
          },
        ],
      },
    });
    await advance(clock, 5_000);
    await stops[1]!();
    await advance(clock, 120_000);
    expect(taintKeys(await getNode(client, "node-2"))).toEqual([
      "node.kubernetes.io/unreachable:NoExecute",
      "node.kubernetes.io/unreachable:NoSchedule",
    ]);
    startNode(client, clock, "node-2", 1);
    await advance(clock, 15_000);
    const back = await getNode(client, "node-2");
    expect(ready(back)?.status).toBe("True");
    expect(taintKeys(back)).toEqual([]);
    expect(events).toContain(
      "Pod/patient Normal TaintManagerEviction: Cancelling deletion of Pod default/patient",
    );
    await advance(clock, 600_000);
    expect((await getPod(client, "patient"))?.metadata?.deletionTimestamp).toBeUndefined();
  });
});
