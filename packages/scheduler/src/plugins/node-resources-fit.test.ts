// Cases from upstream's noderesources fit_test.go (TestEnoughRequests, the
// LeastAllocated and BalancedAllocation score tables), on a node with
// allocatable cpu 10m, memory 20, pods 32, example.com/aaa 5, storage 20, hugepages-2Mi 5.
import type { Container, Node, Pod } from "@reconcile/api";
import { describe, expect, it } from "vitest";
import { podRequests } from "../resources.js";
import {
  balancedAllocationScore,
  leastAllocatedScore,
  nodeResourcesBalancedAllocation,
  nodeResourcesFit,
} from "./node-resources-fit.js";
import { nodeInfoOf, runFilter, runScore } from "./testing.js";

interface Usage {
  cpu?: number;
  memory?: number;
  scalar?: Record<string, number>;
  storage?: number;
}

function containers(usage: Usage[]): Container[] {
  return usage.map((u, i) => {
    const requests: Record<string, string> = {};
    if (u.cpu !== undefined) requests.cpu = `${u.cpu}m`;
    if (u.memory !== undefined) requests.memory = `${u.memory}`;
    if (u.storage !== undefined) requests["ephemeral-storage"] = `${u.storage}`;
    for (const [name, amount] of Object.entries(u.scalar ?? {})) requests[name] = `${amount}`;
    return { name: `c${i}`, resources: { requests } };
  });
}

function resourcePod(usage: Usage[], init: Usage[] = [], overhead?: Record<string, string>): Pod {
  return {
    metadata: { name: "pod", uid: `uid-${Math.random()}` },
    spec: {
      containers: containers(usage),
      ...(init.length > 0 ? { initContainers: containers(init) } : {}),
      ...(overhead ? { overhead } : {}),
    },
  };
}

function fitNode(): Node {
  return {
    metadata: { name: "node" },
    status: {
      allocatable: {
        cpu: "10m",
        memory: "20",
        pods: "32",
        "example.com/aaa": "5",
        "ephemeral-storage": "20",
        "hugepages-2Mi": "5",
      },
    },
  };
}

const a = "example.com/aaa";
const b = "example.com/bbb";
const insufficient = (...resources: string[]) => ({
  code: "Unschedulable",
  reasons: resources.map((r) => `Insufficient ${r}`),
});
const fits = { code: "Success", reasons: [] };

describe("NodeResourcesFit Filter", () => {
  it.each([
    {
      name: "no resources requested always fits",
      pod: resourcePod([]),
      used: [{ cpu: 10, memory: 20 }],
      want: fits,
    },
    {
      name: "too many resources fails",
      pod: resourcePod([{ cpu: 1, memory: 1 }]),
      used: [{ cpu: 10, memory: 20 }],
      want: insufficient("cpu", "memory"),
    },
    {
      name: "too many resources fails due to init container cpu",
      pod: resourcePod([{ cpu: 1, memory: 1 }], [{ cpu: 3, memory: 1 }]),
      used: [{ cpu: 8, memory: 19 }],
      want: insufficient("cpu"),
    },
    {
      name: "too many resources fails due to highest init container cpu",
      pod: resourcePod(
        [{ cpu: 1, memory: 1 }],
        [
          { cpu: 3, memory: 1 },
          { cpu: 2, memory: 1 },
        ],
      ),
      used: [{ cpu: 8, memory: 19 }],
      want: insufficient("cpu"),
    },
    {
      name: "too many resources fails due to init container memory",
      pod: resourcePod([{ cpu: 1, memory: 1 }], [{ cpu: 1, memory: 3 }]),
      used: [{ cpu: 9, memory: 19 }],
      want: insufficient("memory"),
    },
    {
      name: "too many resources fails due to highest init container memory",
      pod: resourcePod(
        [{ cpu: 1, memory: 1 }],
        [
          { cpu: 1, memory: 3 },
          { cpu: 1, memory: 2 },
        ],
      ),
      used: [{ cpu: 9, memory: 19 }],
      want: insufficient("memory"),
    },
    {
      name: "init container fits because it's the max, not sum, of containers and init containers",
      pod: resourcePod([{ cpu: 1, memory: 1 }], [{ cpu: 1, memory: 1 }]),
      used: [{ cpu: 9, memory: 19 }],
      want: fits,
    },
    {
      name: "multiple init containers fit because it's the max, not sum",
      pod: resourcePod(
        [{ cpu: 1, memory: 1 }],
        [
          { cpu: 1, memory: 1 },
          { cpu: 1, memory: 1 },
        ],
      ),
      used: [{ cpu: 9, memory: 19 }],
      want: fits,
    },
    {
      name: "both resources fit",
      pod: resourcePod([{ cpu: 1, memory: 1 }]),
      used: [{ cpu: 5, memory: 5 }],
      want: fits,
    },
    {
      name: "one resource memory fits",
      pod: resourcePod([{ cpu: 2, memory: 1 }]),
      used: [{ cpu: 9, memory: 5 }],
      want: insufficient("cpu"),
    },
    {
      name: "one resource cpu fits",
      pod: resourcePod([{ cpu: 1, memory: 2 }]),
      used: [{ cpu: 5, memory: 19 }],
      want: insufficient("memory"),
    },
    {
      name: "equal edge case",
      pod: resourcePod([{ cpu: 5, memory: 1 }]),
      used: [{ cpu: 5, memory: 19 }],
      want: fits,
    },
    {
      name: "equal edge case for init container",
      pod: resourcePod([{ cpu: 4, memory: 1 }], [{ cpu: 5, memory: 1 }]),
      used: [{ cpu: 5, memory: 19 }],
      want: fits,
    },
    { name: "extended resource fits", pod: resourcePod([{ scalar: { [a]: 1 } }]), used: [{}], want: fits },
    {
      name: "extended resource fits for init container",
      pod: resourcePod([], [{ scalar: { [a]: 1 } }]),
      used: [{}],
      want: fits,
    },
    {
      name: "extended resource capacity enforced",
      pod: resourcePod([{ cpu: 1, memory: 1, scalar: { [a]: 10 } }]),
      used: [{ scalar: { [a]: 0 } }],
      want: insufficient(a),
    },
    {
      name: "extended resource capacity enforced for init container",
      pod: resourcePod([], [{ cpu: 1, memory: 1, scalar: { [a]: 10 } }]),
      used: [{ scalar: { [a]: 0 } }],
      want: insufficient(a),
    },
    {
      name: "extended resource allocatable enforced",
      pod: resourcePod([{ cpu: 1, memory: 1, scalar: { [a]: 1 } }]),
      used: [{ scalar: { [a]: 5 } }],
      want: insufficient(a),
    },
    {
      name: "extended resource allocatable enforced for multiple containers",
      pod: resourcePod([
        { cpu: 1, memory: 1, scalar: { [a]: 3 } },
        { cpu: 1, memory: 1, scalar: { [a]: 3 } },
      ]),
      used: [{ scalar: { [a]: 2 } }],
      want: insufficient(a),
    },
    {
      name: "extended resource allocatable admits multiple init containers",
      pod: resourcePod(
        [],
        [
          { cpu: 1, memory: 1, scalar: { [a]: 3 } },
          { cpu: 1, memory: 1, scalar: { [a]: 3 } },
        ],
      ),
      used: [{ scalar: { [a]: 2 } }],
      want: fits,
    },
    {
      name: "extended resource allocatable enforced for multiple init containers",
      pod: resourcePod(
        [],
        [
          { cpu: 1, memory: 1, scalar: { [a]: 6 } },
          { cpu: 1, memory: 1, scalar: { [a]: 3 } },
        ],
      ),
      used: [{ scalar: { [a]: 2 } }],
      want: insufficient(a),
    },
    {
      name: "extended resource allocatable enforced for unknown resource",
      pod: resourcePod([{ cpu: 1, memory: 1, scalar: { [b]: 1 } }]),
      used: [{}],
      want: insufficient(b),
    },
    {
      name: "kubernetes.io resource capacity enforced",
      pod: resourcePod([{ cpu: 1, memory: 1, scalar: { "kubernetes.io/something": 10 } }]),
      used: [{}],
      want: insufficient("kubernetes.io/something"),
    },
    {
      name: "hugepages resource capacity enforced",
      pod: resourcePod([{ cpu: 1, memory: 1, scalar: { "hugepages-2Mi": 10 } }]),
      used: [{ scalar: { "hugepages-2Mi": 0 } }],
      want: insufficient("hugepages-2Mi"),
    },
    {
      name: "hugepages resource allocatable enforced for multiple containers",
      pod: resourcePod([
        { cpu: 1, memory: 1, scalar: { "hugepages-2Mi": 3 } },
        { cpu: 1, memory: 1, scalar: { "hugepages-2Mi": 3 } },
      ]),
      used: [{ scalar: { "hugepages-2Mi": 2 } }],
      want: insufficient("hugepages-2Mi"),
    },
    {
      name: "resources + pod overhead fits",
      pod: resourcePod([{ cpu: 1, memory: 1 }], [], { cpu: "3m", memory: "13" }),
      used: [{ cpu: 5, memory: 5 }],
      want: fits,
    },
    {
      name: "requests + overhead does not fit for memory",
      pod: resourcePod([{ cpu: 1, memory: 1 }], [], { cpu: "1m", memory: "15" }),
      used: [{ cpu: 5, memory: 5 }],
      want: insufficient("memory"),
    },
    {
      name: "ephemeral storage is enforced",
      pod: resourcePod([{ cpu: 1, memory: 1, storage: 25 }]),
      used: [{ cpu: 2, memory: 2 }],
      want: insufficient("ephemeral-storage"),
    },
    {
      name: "ephemeral storage fits",
      pod: resourcePod([{ cpu: 1, memory: 1, storage: 10 }]),
      used: [{ cpu: 2, memory: 2 }],
      want: fits,
    },
  ] as { name: string; pod: Pod; used: Usage[]; want: object }[])("$name", ({ pod, used, want }) => {
    const nodeInfo = nodeInfoOf(fitNode(), [resourcePod(used)]);
    expect(runFilter(nodeResourcesFit, pod, nodeInfo)).toEqual(want);
  });

  it("reports Too many pods when the node is full, even for a pod that requests nothing", () => {
    const full: Node = {
      metadata: { name: "node" },
      status: { allocatable: { cpu: "10m", memory: "20", pods: "1" } },
    };
    const nodeInfo = nodeInfoOf(full, [resourcePod([{ cpu: 10, memory: 20 }])]);
    expect(runFilter(nodeResourcesFit, resourcePod([]), nodeInfo)).toEqual({
      code: "Unschedulable",
      reasons: ["Too many pods"],
    });
    expect(runFilter(nodeResourcesFit, resourcePod([{ cpu: 1, memory: 1 }]), nodeInfo)).toEqual({
      code: "Unschedulable",
      reasons: ["Too many pods", "Insufficient cpu", "Insufficient memory"],
    });
  });
});

describe("pod requests", () => {
  it("adds restartable init containers (sidecars) to the sum and to later init containers", () => {
    const pod: Pod = {
      metadata: { name: "p" },
      spec: {
        containers: [{ name: "app", resources: { requests: { cpu: "100m" } } }],
        initContainers: [
          { name: "sidecar", restartPolicy: "Always", resources: { requests: { cpu: "50m" } } },
          { name: "init", resources: { requests: { cpu: "200m" } } },
        ],
      },
    };
    // max(100 + 50, 50 + 200) = 250
    expect(podRequests(pod).milliCPU).toBe(250);
  });

  it("with nonZero, counts 100m and 200Mi for containers that request no cpu or memory, but keeps an explicit 0", () => {
    const pod: Pod = {
      metadata: { name: "p" },
      spec: { containers: [{ name: "a" }, { name: "b", resources: { requests: { cpu: "0" } } }] },
    };
    const nonZero = podRequests(pod, { nonZero: true });
    expect([nonZero.milliCPU, nonZero.memory]).toEqual([100, 2 * 200 * 1024 * 1024]);
    expect([podRequests(pod).milliCPU, podRequests(pod).memory]).toEqual([0, 0]);
  });
});

// upstream least_allocated_test.go / balanced_allocation_test.go: nodes of 4000m / 10000 bytes and 6000m / 10000.
function machine(name: string, cpu: number, memory: number): Node {
  return {
    metadata: { name },
    status: { allocatable: { cpu: `${cpu}m`, memory: `${memory}`, pods: "110" } },
  };
}
const cpuOnly = resourcePod([
  { cpu: 1000, memory: 0 },
  { cpu: 2000, memory: 0 },
]);
const cpuAndMemory = resourcePod([
  { cpu: 1000, memory: 2000 },
  { cpu: 2000, memory: 3000 },
]);
const noResources = resourcePod([]);

describe("NodeResourcesFit LeastAllocated score", () => {
  it.each([
    {
      name: "nothing scheduled, nothing requested",
      pod: noResources,
      nodes: [machine("node1", 4000, 10000), machine("node2", 4000, 10000)],
      existing: [],
      expected: { node1: 100, node2: 100 },
    },
    {
      name: "a container without requests counts the 100m / 200Mi defaults",
      pod: { metadata: { name: "p" }, spec: { containers: [{ name: "c" }] } },
      nodes: [machine("node1", 4000, 10000)],
      existing: [],
      // cpu (4000-100)*100/4000 = 97, memory 200Mi > 10000 → 0: (97 + 0) / 2 = 48
      expected: { node1: 48 },
    },
    {
      name: "nothing scheduled, resources requested, differently sized nodes",
      pod: cpuAndMemory,
      nodes: [machine("node1", 4000, 10000), machine("node2", 6000, 10000)],
      existing: [],
      // node1: cpu (4000-3000)*100/4000 = 25, memory (10000-5000)*100/10000 = 50 → 37; node2: 50, 50 → 50
      expected: { node1: 37, node2: 50 },
    },
    {
      name: "resources requested, pods scheduled with resources",
      pod: cpuOnly,
      nodes: [machine("node1", 10000, 20000), machine("node2", 10000, 20000)],
      existing: [
        { node: "node1", pod: resourcePod([{ cpu: 3000, memory: 0 }]) },
        { node: "node2", pod: resourcePod([{ cpu: 3000, memory: 5000 }]) },
      ],
      // node1: cpu (10000-6000)*100/10000 = 40, memory 20000 - 0 - 0: 100 → 70; node2: 40, (20000-5000)*100/20000 = 75 → 57
      expected: { node1: 70, node2: 57 },
    },
    {
      name: "requested resources exceed node capacity",
      pod: cpuOnly,
      nodes: [machine("node1", 4000, 10000), machine("node2", 4000, 10000)],
      existing: [{ node: "node1", pod: resourcePod([{ cpu: 3000, memory: 0 }]) }],
      // node1: cpu 6000 > 4000 → 0, memory 100 → 50; node2: cpu (4000-3000)*100/4000 = 25, memory 100 → 62
      expected: { node1: 50, node2: 62 },
    },
  ] as {
    name: string;
    pod: Pod;
    nodes: Node[];
    existing: { node: string; pod: Pod }[];
    expected: Record<string, number>;
  }[])("$name", ({ pod, nodes, existing, expected }) => {
    const infos = nodes.map((n) =>
      nodeInfoOf(
        n,
        existing.filter((e) => e.node === n.metadata?.name).map((e) => e.pod),
      ),
    );
    expect(runScore(nodeResourcesFit, pod, infos)).toEqual(expected);
  });

  it("is the integer mean of the cpu and memory scores", () => {
    const info = nodeInfoOf(machine("n", 4000, 10000));
    expect(leastAllocatedScore(podRequests(cpuAndMemory, { nonZero: true }), info)).toBe(37);
  });
});

describe("NodeResourcesBalancedAllocation score", () => {
  it.each([
    {
      name: "nothing scheduled, resources requested, differently sized nodes",
      pod: cpuAndMemory,
      nodes: [machine("node1", 4000, 10000), machine("node2", 6000, 10000)],
      existing: [],
      // node1: |3000/4000 − 5000/10000| / 2 = 0.125 → 87; node2: |0.5 − 0.5| → 100
      expected: { node1: 87, node2: 100 },
    },
    {
      name: "resources requested, pods scheduled with resources",
      pod: cpuAndMemory,
      nodes: [machine("node1", 10000, 20000), machine("node2", 10000, 50000)],
      existing: [
        { node: "node1", pod: resourcePod([{ cpu: 3000, memory: 0 }]) },
        { node: "node2", pod: resourcePod([{ cpu: 3000, memory: 5000 }]) },
      ],
      // node1: cpu 6000/10000 = 0.6, memory 5000/20000 = 0.25 → 1 − 0.175 → 82; node2: 0.6, 10000/50000 = 0.2 → 80
      expected: { node1: 82, node2: 80 },
    },
    {
      name: "requested resources at node capacity count as a fraction of 1",
      pod: cpuOnly,
      nodes: [machine("node1", 4000, 10000)],
      existing: [{ node: "node1", pod: resourcePod([{ cpu: 3000, memory: 5000 }]) }],
      // cpu min(1, 6000/4000) = 1, memory 0.5 → 75
      expected: { node1: 75 },
    },
  ] as {
    name: string;
    pod: Pod;
    nodes: Node[];
    existing: { node: string; pod: Pod }[];
    expected: Record<string, number>;
  }[])("$name", ({ pod, nodes, existing, expected }) => {
    const infos = nodes.map((n) =>
      nodeInfoOf(
        n,
        existing.filter((e) => e.node === n.metadata?.name).map((e) => e.pod),
      ),
    );
    expect(runScore(nodeResourcesBalancedAllocation, pod, infos)).toEqual(expected);
  });

  it("is skipped for a pod that requests neither cpu nor memory", () => {
    expect(
      runScore(nodeResourcesBalancedAllocation, noResources, [nodeInfoOf(machine("n", 4000, 10000))]),
    ).toBe("skip");
    expect(balancedAllocationScore(podRequests(noResources), nodeInfoOf(machine("n", 4000, 10000)))).toBe(
      100,
    );
  });
});
