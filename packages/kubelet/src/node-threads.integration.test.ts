import { leases, nodes, type Pod, pods } from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import { describe, expect, it } from "vitest";
import { NodeThreads } from "./node-threads.js";

async function until<T>(read: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe("NodeThreads", () => {
  it("runs nodes on worker threads: they register, take their leases and run the pods bound to them", async () => {
    const server = new ApiServer();
    const client = server.client();
    const threads = new NodeThreads({ client, nodes: 3, threads: 2, seed: 7 });
    const abort = new AbortController();
    const running = threads.run({ signal: abort.signal });
    await threads.synced;
    const nodeList = await until(async () => {
      const list = await client.resource(nodes).list();
      return list.items.length === 3 ? list : undefined;
    });
    expect(nodeList.items.map((node) => node.metadata?.name).sort()).toEqual(["node-1", "node-2", "node-3"]);
    // Node 3 is the second thread's first node: its CIDR follows from its place among all nodes.
    expect(nodeList.items.find((node) => node.metadata?.name === "node-3")?.spec?.podCIDR).toBe(
      "10.244.2.0/24",
    );
    const podClient = client.resource(pods, "default");
    for (const node of ["node-1", "node-3"]) {
      await podClient.create({
        metadata: { name: `on-${node}` },
        spec: { nodeName: node, containers: [{ name: "app", image: "registry.example.com/app:1" }] },
      });
    }
    // An unbound pod stays Pending: no thread runs it.
    await podClient.create({
      metadata: { name: "unbound" },
      spec: { containers: [{ name: "app", image: "x" }] },
    });
    const ready = (pod: Pod) =>
      pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True");
    const running3 = await until(async () => {
      const pod = await podClient.get("on-node-3");
      return ready(pod) ? pod : undefined;
    });
    expect(running3.status?.phase).toBe("Running");
    expect(running3.status?.podIP?.startsWith("10.244.2.")).toBe(true);
    expect(running3.status?.hostIP).toBe("10.0.0.4");
    await until(async () => (ready(await podClient.get("on-node-1")) ? true : undefined));
    expect((await podClient.get("unbound")).status?.phase).toBe("Pending");
    const leaseList = await until(async () => {
      const list = await client.resource(leases, "kube-node-lease").list();
      return list.items.length === 3 ? list : undefined;
    });
    expect(leaseList.items.map((lease) => lease.spec?.holderIdentity).sort()).toEqual([
      "node-1",
      "node-2",
      "node-3",
    ]);
    // A pod deleted gracefully is stopped by its node and then removed.
    await podClient.delete("on-node-1");
    await until(async () =>
      (await podClient.list()).items.some((p) => p.metadata?.name === "on-node-1") ? undefined : true,
    );
    abort.abort();
    await running;
    await server.close();
  }, 30_000);

  it("refuses a thread count that is not a positive integer", () => {
    const server = new ApiServer();
    expect(() => new NodeThreads({ client: server.client(), nodes: 2, threads: 0 })).toThrow(
      "NodeThreads: threads must be a positive integer",
    );
  });
});
