import type { Node, Pod } from "@reconcile/api";
import { describe, expect, it } from "vitest";
import { SchedulerCache } from "./cache.js";

const node = (name: string): Node => ({
  metadata: { name },
  status: { allocatable: { cpu: "4", memory: "8Gi", pods: "110" } },
});
const pod = (name: string, nodeName: string, cpu = "1"): Pod => ({
  metadata: { name, namespace: "ns", uid: `uid-${name}` },
  spec: { nodeName, containers: [{ name: "c", resources: { requests: { cpu } } }] },
});

describe("SchedulerCache", () => {
  it("counts an assumed pod on its node until it is forgotten", () => {
    const cache = new SchedulerCache();
    cache.addNode(node("n1"));
    cache.assumePod(pod("a", "n1"));
    expect(cache.isAssumed("uid-a")).toBe(true);
    expect(cache.nodeInfo("n1")?.requested.milliCPU).toBe(1000);
    expect(() => cache.assumePod(pod("a", "n1"))).toThrow(
      "pod ns/a (uid-a) is in the cache, so can't be assumed",
    );
    cache.forgetPod("uid-a");
    expect(cache.nodeInfo("n1")?.requested.milliCPU).toBe(0);
    expect(cache.counts()).toEqual({ nodes: 1, pods: 0, assumedPods: 0 });
  });

  it("replaces the assumed copy with the bound pod the informer sees, on whichever node it names", () => {
    const cache = new SchedulerCache();
    cache.addNode(node("n1"));
    cache.addNode(node("n2"));
    cache.assumePod(pod("a", "n1", "1"));
    cache.addPod(pod("a", "n2", "2"));
    expect(cache.isAssumed("uid-a")).toBe(false);
    expect(cache.nodeInfo("n1")?.requested.milliCPU).toBe(0);
    expect(cache.nodeInfo("n2")?.requested.milliCPU).toBe(2000);
    cache.forgetPod("uid-a"); // no longer only assumed: left alone
    expect(cache.nodeInfo("n2")?.pods.size).toBe(1);
  });

  it("keeps each node's pods by namespace as pods come, move and go", () => {
    const cache = new SchedulerCache();
    cache.addNode(node("n1"));
    cache.addNode(node("n2"));
    const other: Pod = { ...pod("b", "n1"), metadata: { name: "b", namespace: "other", uid: "uid-b" } };
    cache.addPod(pod("a", "n1"));
    cache.addPod(other);
    const byNamespace = (name: string) =>
      Object.fromEntries(
        [...(cache.nodeInfo(name)?.podsByNamespace ?? [])].map(([ns, pods]) => [ns, [...pods.keys()]]),
      );
    expect(byNamespace("n1")).toEqual({ ns: ["uid-a"], other: ["uid-b"] });
    cache.updatePod(pod("a", "n2"));
    expect(byNamespace("n1")).toEqual({ other: ["uid-b"] });
    expect(byNamespace("n2")).toEqual({ ns: ["uid-a"] });
    cache.removePod(other);
    expect(byNamespace("n1")).toEqual({});
  });

  it("ignores updates of a pod that is only assumed", () => {
    const cache = new SchedulerCache();
    cache.addNode(node("n1"));
    cache.assumePod(pod("a", "n1", "1"));
    cache.updatePod(pod("a", "n1", "3"));
    expect(cache.nodeInfo("n1")?.requested.milliCPU).toBe(1000);
  });

  it("keeps a deleted node with pods as a ghost outside the node list until its last pod goes", () => {
    const cache = new SchedulerCache();
    cache.addNode(node("n1"));
    cache.addPod(pod("a", "n1"));
    cache.removeNode("n1");
    expect(cache.nodeList()).toEqual([]);
    expect(cache.nodeInfo("n1")?.pods.size).toBe(1);
    cache.removePod(pod("a", "n1"));
    expect(cache.nodeInfo("n1")).toBeUndefined();
  });

  it("accounts a pod naming an unknown node, and counts it once the node appears", () => {
    const cache = new SchedulerCache();
    cache.addPod(pod("early", "n9"));
    expect(cache.nodeList()).toEqual([]);
    cache.addNode(node("n9"));
    expect(cache.nodeList().map((info) => info.name)).toEqual(["n9"]);
    expect(cache.nodeInfo("n9")?.requested.milliCPU).toBe(1000);
  });

  it("leaves the cache as it was when a pod's requests cannot be read", () => {
    const cache = new SchedulerCache();
    cache.addNode(node("n1"));
    cache.addPod(pod("a", "n1", "1"));
    expect(() => cache.addPod(pod("a", "n1", "lots"))).toThrow('got "lots"');
    expect(cache.nodeInfo("n1")?.requested.milliCPU).toBe(1000);
    expect(cache.counts()).toEqual({ nodes: 1, pods: 1, assumedPods: 0 });
  });

  it("lists nodes interleaved across zones, zones in the order first seen", () => {
    const cache = new SchedulerCache();
    const zoned = (name: string, zone?: string): Node => ({
      metadata: { name, labels: zone ? { "topology.kubernetes.io/zone": zone } : {} },
      status: { allocatable: { pods: "110" } },
    });
    for (const [name, zone] of [
      ["a1", "a"],
      ["a2", "a"],
      ["a3", "a"],
      ["b1", "b"],
      ["none1", undefined],
      ["b2", "b"],
    ] as const) {
      cache.addNode(zoned(name, zone));
    }
    expect(cache.nodeList().map((info) => info.name)).toEqual(["a1", "b1", "none1", "a2", "b2", "a3"]);
    cache.updateNode(zoned("a1", "b"));
    expect(cache.nodeList().map((info) => info.name)).toEqual(["a1", "a2", "none1", "b1", "a3", "b2"]);
  });
});
