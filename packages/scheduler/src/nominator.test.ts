import type { Node, Pod } from "@reconcile/api";
import { describe, expect, it } from "vitest";
import type { CycleState } from "./framework.js";
import { podInfo } from "./node-info.js";
import { Nominator, runFiltersWithNominatedPods } from "./nominator.js";
import { nodeResourcesFit } from "./plugins/node-resources-fit.js";
import { nodeInfoOf } from "./plugins/testing.js";

// The nominator (upstream's, in the scheduling queue) and the filters that
// count nominated pods (RunFilterPluginsWithNominatedPods).

const node: Node = {
  metadata: { name: "n1" },
  status: { allocatable: { cpu: "1", memory: "4Gi", pods: "110" } },
};

function pod(uid: string, cpu: string, priority: number, status: Pod["status"] = {}, nodeName?: string): Pod {
  return {
    metadata: { name: uid, namespace: "default", uid },
    spec: {
      priority,
      ...(nodeName ? { nodeName } : {}),
      containers: [{ name: "c", image: "pause", resources: { requests: { cpu } } }],
    },
    status,
  };
}

describe("runFiltersWithNominatedPods", () => {
  const check = (incoming: Pod, nominated: Pod[]) => {
    const info = nodeInfoOf(node, [pod("running", "300m", 0, {}, "n1")]);
    const state: CycleState = new Map();
    nodeResourcesFit.preFilter?.(state, incoming, [info]);
    const status = runFiltersWithNominatedPods(
      [nodeResourcesFit],
      state,
      incoming,
      info,
      nominated.map(podInfo),
    );
    // The node is left as it was.
    expect([...info.pods.keys()]).toEqual(["running"]);
    expect(info.requested.milliCPU).toBe(300);
    return status?.reasons ?? "fits";
  };

  it("counts a nominated pod of equal or higher priority as if it ran there", () => {
    const nominated = pod("preemptor", "500m", 100, { nominatedNodeName: "n1" });
    expect(check(pod("low", "400m", 10), [nominated])).toEqual(["Insufficient cpu"]);
    expect(check(pod("peer", "400m", 100), [nominated])).toEqual(["Insufficient cpu"]);
  });

  it("ignores nominated pods of lower priority, and the pod's own nomination", () => {
    const nominated = pod("preemptor", "500m", 100, { nominatedNodeName: "n1" });
    expect(check(pod("vip", "400m", 1000), [nominated])).toBe("fits");
    expect(check(nominated, [nominated])).toBe("fits");
    expect(check(pod("low", "400m", 10), [])).toBe("fits");
  });
});

describe("Nominator", () => {
  it("follows pods' status: a nomination, a move, a bind, a delete", () => {
    const nominator = new Nominator();
    const pending = pod("p", "100m", 5, { nominatedNodeName: "n1" });
    nominator.update(undefined, pending);
    expect(nominator.nodeOf("p")).toBe("n1");
    expect(nominator.nominatedOn("n1").map((info) => info.pod.metadata?.uid)).toEqual(["p"]);
    nominator.update(pending, pod("p", "100m", 5, { nominatedNodeName: "n2" }));
    expect(nominator.nominatedOn("n1")).toEqual([]);
    expect(nominator.nodeOf("p")).toBe("n2");
    nominator.update(pending, pod("p", "100m", 5, { nominatedNodeName: "n2" }, "n2"));
    expect(nominator.nodeOf("p")).toBeUndefined();
    nominator.add(pending, "n1");
    nominator.delete("p");
    expect(nominator.nominatedOn("n1")).toEqual([]);
  });

  it("keeps a nomination made in memory while updates that never named a node arrive, and drops one a status clears", () => {
    const nominator = new Nominator();
    const bare = pod("p", "100m", 5);
    nominator.add(bare, "n1");
    nominator.update(bare, pod("p", "100m", 5, { conditions: [] }));
    expect(nominator.nodeOf("p")).toBe("n1");
    nominator.update(pod("p", "100m", 5, { nominatedNodeName: "n1" }), bare);
    expect(nominator.nodeOf("p")).toBeUndefined();
  });

  it("gives up the nominations below a priority on a node, and keeps the others", () => {
    const nominator = new Nominator();
    nominator.add(pod("low", "100m", 5), "n1");
    nominator.add(pod("peer", "100m", 50), "n1");
    nominator.add(pod("elsewhere", "100m", 5), "n2");
    expect(nominator.takeLowerPriority("n1", 50).map((p) => p.metadata?.uid)).toEqual(["low"]);
    expect(nominator.nodeOf("low")).toBeUndefined();
    expect(nominator.nodeOf("peer")).toBe("n1");
    expect(nominator.nodeOf("elsewhere")).toBe("n2");
    expect(nominator.size).toBe(2);
  });
});
