// The kubelet end to end on the embedded API server: it registers its Node,
// renews its Lease, watches pods bound to it and drives them through the
// simulated runtime, all on a FakeClock the tests advance.
import { type Event, events, type Lease, leases, type Node, nodes, type Pod, pods } from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import type { Client } from "@reconcile/client";
import { FakeClock } from "@reconcile/clock";
import { afterEach, describe, expect, it } from "vitest";
import { Kubelet, type KubeletOptions } from "./kubelet.js";

const start = Date.parse("2026-01-01T00:00:00Z");

interface Node1 {
  clock: FakeClock;
  server: ApiServer;
  client: Client;
  kubelet: Kubelet;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function startNode(options: Partial<KubeletOptions> = {}): Promise<Node1> {
  const clock = new FakeClock(start);
  const server = new ApiServer({ clock });
  cleanups.push(() => server.close());
  const client = server.client();
  const kubelet = new Kubelet({ nodeName: "node-1", client, clock, random: () => 0, ...options });
  const abort = new AbortController();
  const running = kubelet.run({ signal: abort.signal });
  cleanups.push(async () => {
    abort.abort();
    await running;
  });
  await clock.advance(0);
  await settle(clock);
  return { clock, server, client, kubelet };
}

/** Lets in-process writes, watches and handlers run without moving time. */
async function settle(clock: FakeClock): Promise<void> {
  for (let i = 0; i < 20; i++) await clock.flush();
}

/** Advances in 100 ms steps, letting everything settle in between. */
async function advance(clock: FakeClock, ms: number): Promise<void> {
  for (let done = 0; done < ms; done += 100) {
    await clock.advance(Math.min(100, ms - done));
    await settle(clock);
  }
}

function pod(
  name: string,
  extra: { annotations?: Record<string, string>; spec?: Partial<Pod["spec"]> } = {},
): Pod {
  return {
    metadata: {
      name,
      namespace: "default",
      ...(extra.annotations ? { annotations: extra.annotations } : {}),
    },
    spec: { nodeName: "node-1", containers: [{ name: "web", image: "nginx:1.25" }], ...extra.spec },
  };
}

async function getPod(client: Client, name: string): Promise<Pod> {
  return client.resource(pods, "default").get(name);
}

async function eventsOf(client: Client, name: string): Promise<string[]> {
  const list = await client.resource(events, "default").list();
  return list.items
    .filter((e: Event) => e.involvedObject.name === name)
    .sort((a, b) => (a.metadata?.name ?? "").localeCompare(b.metadata?.name ?? ""))
    .map((e) => `${e.type} ${e.reason} ${e.message}${(e.count ?? 1) > 1 ? ` (x${e.count})` : ""}`);
}

describe("Kubelet", () => {
  it("registers its Node with capacity, allocatable, addresses, nodeInfo, labels and the four conditions", async () => {
    const { client } = await startNode({ nodeIP: "10.0.0.7", podCIDR: "10.244.7.0/24" });
    const node: Node = await client.resource(nodes).get("node-1");
    expect(node.metadata?.labels).toEqual({
      "beta.kubernetes.io/arch": "amd64",
      "beta.kubernetes.io/os": "linux",
      "kubernetes.io/arch": "amd64",
      "kubernetes.io/hostname": "node-1",
      "kubernetes.io/os": "linux",
    });
    expect(node.spec?.podCIDR).toBe("10.244.7.0/24");
    expect(node.status?.capacity).toMatchObject({ cpu: "4", memory: "16Gi", pods: "110" });
    expect(node.status?.allocatable).toMatchObject({ cpu: "4", memory: "16674816Ki", pods: "110" });
    expect(node.status?.addresses).toEqual([
      { type: "InternalIP", address: "10.0.0.7" },
      { type: "Hostname", address: "node-1" },
    ]);
    expect(node.status?.nodeInfo).toMatchObject({
      kubeletVersion: "v1.31.0",
      containerRuntimeVersion: "containerd://1.7.13-sim",
      operatingSystem: "linux",
      architecture: "amd64",
    });
    expect(node.status?.conditions?.map((c) => [c.type, c.status, c.reason])).toEqual([
      ["MemoryPressure", "False", "KubeletHasSufficientMemory"],
      ["DiskPressure", "False", "KubeletHasNoDiskPressure"],
      ["PIDPressure", "False", "KubeletHasSufficientPID"],
      ["Ready", "True", "KubeletReady"],
    ]);
  });

  it("creates its Lease in kube-node-lease, owned by the Node, and renews it every 10 s", async () => {
    const { client, clock } = await startNode();
    await advance(clock, 200);
    const node = await client.resource(nodes).get("node-1");
    const lease: Lease = await client.resource(leases, "kube-node-lease").get("node-1");
    expect(lease.spec).toMatchObject({ holderIdentity: "node-1", leaseDurationSeconds: 40 });
    expect(lease.metadata?.ownerReferences).toEqual([
      { apiVersion: "v1", kind: "Node", name: "node-1", uid: node.metadata?.uid },
    ]);
    const first = Date.parse(lease.spec?.renewTime ?? "");
    await advance(clock, 10_000);
    const renewed = await client.resource(leases, "kube-node-lease").get("node-1");
    expect(Date.parse(renewed.spec?.renewTime ?? "") - first).toBe(10_000);
    expect(renewed.spec?.renewTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  });

  it("runs a bound pod: Running and Ready with container statuses, IPs, startTime, qosClass and the events", async () => {
    const { client, clock } = await startNode({ nodeIP: "10.0.0.7", podCIDR: "10.244.7.0/24" });
    await client.resource(pods, "default").create(pod("web"));
    await advance(clock, 1000);
    const running = await getPod(client, "web");
    expect(running.status?.phase).toBe("Running");
    expect(running.status?.hostIP).toBe("10.0.0.7");
    expect(running.status?.podIP).toBe("10.244.7.2");
    expect(running.status?.podIPs).toEqual([{ ip: "10.244.7.2" }]);
    expect(running.status?.qosClass).toBe("BestEffort");
    expect(running.status?.startTime).toBe("2026-01-01T00:00:00Z");
    expect(running.status?.conditions?.map((c) => [c.type, c.status])).toEqual([
      ["PodReadyToStartContainers", "True"],
      ["Initialized", "True"],
      ["Ready", "True"],
      ["ContainersReady", "True"],
      ["PodScheduled", "True"],
    ]);
    const [web] = running.status?.containerStatuses ?? [];
    expect(web).toMatchObject({
      name: "web",
      image: "docker.io/library/nginx:1.25",
      ready: true,
      started: true,
      restartCount: 0,
      state: { running: { startedAt: "2026-01-01T00:00:00Z" } },
    });
    expect(web?.containerID).toMatch(/^containerd:\/\/[0-9a-f]{64}$/);
    expect(web?.imageID).toMatch(/^docker\.io\/library\/nginx@sha256:[0-9a-f]{64}$/);
    expect(await eventsOf(client, "web")).toEqual([
      'Normal Pulling Pulling image "nginx:1.25"',
      expect.stringMatching(
        /^Normal Pulled Successfully pulled image "nginx:1.25" in 0s \(0s including waiting\)\. Image size: \d+ bytes\.$/,
      ),
      "Normal Created Created container web",
      "Normal Started Started container web",
    ]);
  });
});
