// The resource metrics API as metrics-server serves it, read by kubectl top
// and by clients, from a provider the test controls.
import { type NodeMetrics, nodeMetrics, nodes, type PodMetrics, podMetrics } from "@reconcile/api";
import { afterEach, describe, expect, it } from "vitest";
import { closeKubectlClusters, kubectlCluster } from "../testing/index.js";

afterEach(closeKubectlClusters);

const timestamp = "2026-01-01T00:00:00Z";
const node = (name: string, cpu: string, memory: string): NodeMetrics => ({
  apiVersion: "metrics.k8s.io/v1beta1",
  kind: "NodeMetrics",
  metadata: { name, creationTimestamp: timestamp, labels: { "kubernetes.io/hostname": name } },
  timestamp,
  window: "20s",
  usage: { cpu, memory },
});
const pod = (
  namespace: string,
  name: string,
  app: string,
  ...containers: [string, string, string][]
): PodMetrics => ({
  apiVersion: "metrics.k8s.io/v1beta1",
  kind: "PodMetrics",
  metadata: { name, namespace, creationTimestamp: timestamp, labels: { app } },
  timestamp,
  window: "20s",
  containers: containers.map(([name, cpu, memory]) => ({ name, usage: { cpu, memory } })),
});

const provider = {
  nodeMetrics: () => [node("node-1", "250000000n", "1048576Ki"), node("node-2", "1500000000n", "2097152Ki")],
  podMetrics: (namespace: string | undefined) =>
    [
      pod("default", "web-1", "web", ["nginx", "120000000n", "20480Ki"], ["sidecar", "5000000n", "4096Ki"]),
      pod("default", "db-0", "db", ["db", "300000000n", "102400Ki"]),
      pod("kube-system", "agent-x", "agent", ["agent", "1000000n", "8192Ki"]),
    ].filter((p) => namespace === undefined || p.metadata?.namespace === namespace),
};

async function cluster() {
  const setup = await kubectlCluster();
  setup.api.serveResourceMetrics(provider);
  const client = setup.api.client();
  for (const [name, cpu, memory] of [
    ["node-1", "2", "8Gi"],
    ["node-2", "4", "16Gi"],
  ] as const)
    await client.resource(nodes).create({ metadata: { name }, status: { allocatable: { cpu, memory } } });
  return setup;
}

describe("metrics.k8s.io/v1beta1", () => {
  it("lists and gets node and pod metrics through the in-process client, with selectors, and refuses writes", async () => {
    const { api } = await cluster();
    const client = api.client();
    expect((await client.resource(nodeMetrics).list()).items.map((n) => n.metadata?.name)).toEqual([
      "node-1",
      "node-2",
    ]);
    expect((await client.resource(nodeMetrics).get("node-2")).usage).toEqual({
      cpu: "1500000000n",
      memory: "2097152Ki",
    });
    const web = await client.resource(podMetrics, "default").list({ labelSelector: "app=web" });
    expect(web.items.map((p) => p.metadata?.name)).toEqual(["web-1"]);
    expect((await client.resource(podMetrics).list()).items).toHaveLength(3);
    await expect(client.resource(podMetrics, "default").get("nosuch")).rejects.toThrow(
      'pods.metrics.k8s.io "nosuch" not found',
    );
    await expect(client.resource(nodeMetrics).create(node("x", "1", "1"))).rejects.toMatchObject({
      status: { code: 405 },
    });
  });

  it("answers kubectl top nodes and top pods as a cluster with metrics-server does", async () => {
    const { kubectl } = await cluster();
    const top = await kubectl(["top", "nodes"]);
    expect(top.stderr).toBe("");
    expect(top.stdout.split("\n").map((line) => line.trim().split(/\s+/))).toEqual([
      ["NAME", "CPU(cores)", "CPU(%)", "MEMORY(bytes)", "MEMORY(%)"],
      ["node-1", "250m", "12%", "1024Mi", "12%"],
      ["node-2", "1500m", "37%", "2048Mi", "12%"],
      [""],
    ]);
    const pods = await kubectl(["top", "pods", "--containers", "-l", "app=web"]);
    expect(pods.stdout.split("\n").map((line) => line.trim().split(/\s+/))).toEqual([
      ["POD", "NAME", "CPU(cores)", "MEMORY(bytes)"],
      ["web-1", "nginx", "120m", "20Mi"],
      ["web-1", "sidecar", "5m", "4Mi"],
      [""],
    ]);
    const all = await kubectl(["top", "pods", "-A", "--sort-by=cpu"]);
    expect(all.stdout.split("\n").map((line) => line.trim().split(/\s+/))).toEqual([
      ["NAMESPACE", "NAME", "CPU(cores)", "MEMORY(bytes)"],
      ["default", "db-0", "300m", "100Mi"],
      ["default", "web-1", "125m", "24Mi"],
      ["kube-system", "agent-x", "1m", "8Mi"],
      [""],
    ]);
    const get = await kubectl(["get", "pods.metrics.k8s.io", "db-0"]);
    // Sums are canonical quantities, as Go writes them: 300000000n is 300m.
    expect(get.stdout).toBe("NAME   CPU    MEMORY   WINDOW\ndb-0   300m   100Mi    20s\n");
  });
});
