// Several kubelets in one process over one shared pod informer, on the
// embedded API server and a FakeClock.
import { type Lease, leases, nodes, type Pod, pods } from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import { FakeClock } from "@reconcile/clock";
import { Introspection } from "@reconcile/controller";
import { afterEach, describe, expect, it } from "vitest";
import type { KubeletView } from "./machinery.js";
import { NodeSimulator } from "./node-simulator.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function advance(clock: FakeClock, ms: number): Promise<void> {
  for (let done = 0; done < ms; done += 100) {
    await clock.advance(Math.min(100, ms - done));
    for (let i = 0; i < 20; i++) await clock.flush();
  }
}

async function start(count: number, introspection?: Introspection, dualStack = false) {
  const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
  const server = new ApiServer({ clock });
  const client = server.client();
  const simulator = new NodeSimulator({
    client,
    nodes: count,
    clock,
    random: () => 0,
    introspection,
    dualStack,
  });
  const abort = new AbortController();
  const running = simulator.run({ signal: abort.signal });
  cleanups.push(async () => {
    abort.abort();
    await running;
    await server.close();
  });
  await advance(clock, 200);
  return { clock, client, simulator, server };
}

const newPod = (name: string, nodeName?: string): Pod => ({
  metadata: { name, namespace: "default" },
  spec: { ...(nodeName ? { nodeName } : {}), containers: [{ name: "web", image: "nginx:1.27" }] },
});

describe("NodeSimulator", () => {
  it("registers every node with its own IP and pod CIDR, and a Lease each", async () => {
    const { client } = await start(3);
    const list = await client.resource(nodes).list();
    expect(
      list.items.map((n) => [n.metadata?.name, n.status?.addresses?.[0]?.address, n.spec?.podCIDR]),
    ).toEqual([
      ["node-1", "10.0.0.2", "10.244.0.0/24"],
      ["node-2", "10.0.0.3", "10.244.1.0/24"],
      ["node-3", "10.0.0.4", "10.244.2.0/24"],
    ]);
    const held = (await client.resource(leases, "kube-node-lease").list()).items.map(
      (l: Lease) => l.spec?.holderIdentity,
    );
    expect(held.sort()).toEqual(["node-1", "node-2", "node-3"]);
  });

  it("each pod runs on the node it is bound to, including one bound after it was created", async () => {
    const { client, clock } = await start(2);
    const podClient = client.resource(pods, "default");
    await podClient.create(newPod("a", "node-1"));
    await podClient.create(newPod("b", "node-2"));
    const late = await podClient.create(newPod("late"));
    await advance(clock, 1_000);
    expect((await podClient.get("late")).status?.phase).toBe("Pending");
    await podClient.update({ ...late, spec: { ...late.spec!, nodeName: "node-2" } });
    await advance(clock, 1_000);
    const result = (await podClient.list()).items.map((p) => [
      p.metadata?.name,
      p.status?.phase,
      p.status?.hostIP,
      p.status?.podIP,
    ]);
    expect(result).toEqual([
      ["a", "Running", "10.0.0.2", "10.244.0.2"],
      ["b", "Running", "10.0.0.3", "10.244.1.2"],
      ["late", "Running", "10.0.0.3", "10.244.1.3"],
    ]);
  });

  it("on a dual-stack cluster, nodes have a pod CIDR of each family and pods an IP of each", async () => {
    const { client, clock } = await start(2, undefined, true);
    expect(
      (await client.resource(nodes).list()).items.map((n) => [n.spec?.podCIDR, n.spec?.podCIDRs]),
    ).toEqual([
      ["10.244.0.0/24", ["10.244.0.0/24", "fd00:10:244::/64"]],
      ["10.244.1.0/24", ["10.244.1.0/24", "fd00:10:244:1::/64"]],
    ]);
    const podClient = client.resource(pods, "default");
    await podClient.create(newPod("a", "node-2"));
    await advance(clock, 1_000);
    const pod = await podClient.get("a");
    expect([pod.status?.podIP, pod.status?.podIPs]).toEqual([
      "10.244.1.2",
      [{ ip: "10.244.1.2" }, { ip: "fd00:10:244:1::2" }],
    ]);
  });

  it("shows each kubelet's pod workers and PLEG in the introspection, a deleted pod's worker going through terminating to terminated", async () => {
    const introspection = new Introspection();
    const { client, clock } = await start(2, introspection);
    const podClient = client.resource(pods, "default");
    const created = await podClient.create(newPod("a", "node-1"));
    await advance(clock, 1_000);
    const view = (node: string) =>
      introspection.snapshot().find((s) => s.kind === "kubelet" && s.name === node)!.state as KubeletView;
    expect(introspection.snapshot().map((s) => `${s.kind}/${s.name}`)).toEqual([
      "kubelet/node-1",
      "kubelet/node-2",
    ]);
    const one = view("node-1");
    expect(one.node).toBe("node-1");
    expect(one.pods).toBe(1);
    expect(one.podWorkers).toEqual([
      {
        uid: created.metadata!.uid,
        fullname: "a_default",
        state: "sync",
        working: false,
        started: true,
        startedAt: expect.any(Number),
        finished: false,
      },
    ]);
    expect(one.pleg.relistPeriodMs).toBe(1_000);
    expect(one.pleg.lastRelistAt).toBe(Date.parse("2026-01-01T00:00:01Z")); // relists every second from the start
    expect(one.pleg.unhealthy).toBeUndefined();
    expect(view("node-2").podWorkers).toEqual([]);

    await podClient.delete("a", { gracePeriodSeconds: 30 });
    await advance(clock, 200);
    // nginx stops on SIGTERM at once: the worker has been through terminating to terminated.
    const [worker] = view("node-1").podWorkers;
    expect(worker!.state).toBe("terminated");
    expect(worker!.gracePeriodSeconds).toBe(30);
    expect(worker!.terminatingAt).toBeGreaterThan(worker!.startedAt!);
    expect(worker!.terminatedAt).toBeGreaterThanOrEqual(worker!.terminatingAt!);
  });

  it("answers container logs for the node a pod runs on, and nothing for an unknown node", async () => {
    const { client, clock, simulator } = await start(2);
    await client.resource(pods, "default").create(newPod("a", "node-2"));
    await advance(clock, 1_000);
    const connection = simulator.kubeletConnection();
    expect(connection.containerLogs("node-2", "default", "a", "web", {})).toMatchObject({
      ok: true,
      text: "simulated container web started (image docker.io/library/nginx:1.27)\n",
    });
    expect(connection.containerLogs("node-9", "default", "a", "web", {})).toBeUndefined();
  });
});
