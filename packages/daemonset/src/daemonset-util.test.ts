import type { DaemonSet, Node, Pod } from "@reconcile/api";
import { describe, expect, it } from "vitest";
import {
  addDaemonPodTolerations,
  nodeShouldRunDaemonPod,
  replaceNodeNameAffinity,
  targetNodeName,
} from "./daemonset-util.js";
import { shouldIgnoreNodeUpdate } from "./node-events.js";

function ds(spec: NonNullable<NonNullable<DaemonSet["spec"]>["template"]["spec"]>): DaemonSet {
  return {
    metadata: { name: "agent", namespace: "ns" },
    spec: { selector: { matchLabels: { app: "agent" } }, template: { spec } },
  };
}
const containers = [{ name: "c", image: "agent" }];
const node = (extra: Partial<Node> = {}, labels: Record<string, string> = {}): Node => ({
  metadata: { name: "node-1", labels },
  ...extra,
});

// Upstream's TestNodeShouldRunDaemonPod cases, on the scheduling half of the predicates.
describe("nodeShouldRunDaemonPod", () => {
  it.each([
    ["a plain node", ds({ containers }), node(), true, true],
    ["another node named in the template", ds({ containers, nodeName: "node-2" }), node(), false, false],
    ["the node named in the template", ds({ containers, nodeName: "node-1" }), node(), true, true],
    [
      "a node selector the node lacks",
      ds({ containers, nodeSelector: { disk: "ssd" } }),
      node(),
      false,
      false,
    ],
    [
      "a node selector the node has",
      ds({ containers, nodeSelector: { disk: "ssd" } }),
      node({}, { disk: "ssd" }),
      true,
      true,
    ],
    [
      "required affinity the node does not match",
      ds({
        containers,
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchExpressions: [{ key: "zone", operator: "In", values: ["a"] }] }],
            },
          },
        },
      }),
      node({}, { zone: "b" }),
      false,
      false,
    ],
    [
      "an untolerated NoSchedule taint: no new pod, a running one stays",
      ds({ containers }),
      node({ spec: { taints: [{ key: "k", effect: "NoSchedule" }] } }),
      false,
      true,
    ],
    [
      "an untolerated NoExecute taint: no pod at all",
      ds({ containers }),
      node({ spec: { taints: [{ key: "k", effect: "NoExecute" }] } }),
      false,
      false,
    ],
    [
      "a tolerated NoExecute taint",
      ds({ containers, tolerations: [{ key: "k", operator: "Exists", effect: "NoExecute" }] }),
      node({ spec: { taints: [{ key: "k", effect: "NoExecute" }] } }),
      true,
      true,
    ],
    [
      "the taints every daemon pod tolerates",
      ds({ containers }),
      node({
        spec: {
          unschedulable: true,
          taints: [
            { key: "node.kubernetes.io/unschedulable", effect: "NoSchedule" },
            { key: "node.kubernetes.io/not-ready", effect: "NoExecute" },
            { key: "node.kubernetes.io/memory-pressure", effect: "NoSchedule" },
          ],
        },
      }),
      true,
      true,
    ],
    [
      "network-unavailable only with hostNetwork",
      ds({ containers }),
      node({ spec: { taints: [{ key: "node.kubernetes.io/network-unavailable", effect: "NoSchedule" }] } }),
      false,
      true,
    ],
    [
      "network-unavailable with hostNetwork",
      ds({ containers, hostNetwork: true }),
      node({ spec: { taints: [{ key: "node.kubernetes.io/network-unavailable", effect: "NoSchedule" }] } }),
      true,
      true,
    ],
  ])("%s", (_name, set, n, shouldRun, shouldContinueRunning) => {
    expect(nodeShouldRunDaemonPod(n, set)).toEqual({ shouldRun, shouldContinueRunning });
  });
});

// Upstream's TestReplaceDaemonSetPodNodeNameNodeAffinity cases.
describe("replaceNodeNameAffinity", () => {
  const nameTerm = [{ matchFields: [{ key: "metadata.name", operator: "In", values: ["node-1"] }] }];
  it("adds the term to no affinity, to an affinity without node affinity, and replaces required terms", () => {
    expect(replaceNodeNameAffinity(undefined, "node-1")).toEqual({
      nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: nameTerm } },
    });
    const podAffinity = { podAffinity: {} };
    expect(replaceNodeNameAffinity(podAffinity, "node-1")).toEqual({
      podAffinity: {},
      nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: nameTerm } },
    });
    const preferred = [{ weight: 1, preference: { matchExpressions: [{ key: "a", operator: "Exists" }] } }];
    const withTerms = {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: "zone", operator: "In", values: ["a"] }] }],
        },
        preferredDuringSchedulingIgnoredDuringExecution: preferred,
      },
    };
    expect(replaceNodeNameAffinity(withTerms, "node-1")).toEqual({
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: nameTerm },
        preferredDuringSchedulingIgnoredDuringExecution: preferred,
      },
    });
  });

  it("is read back by targetNodeName, which prefers spec.nodeName and wants exactly one value", () => {
    const pod: Pod = { spec: { containers, affinity: replaceNodeNameAffinity(undefined, "node-1") } };
    expect(targetNodeName(pod)).toBe("node-1");
    expect(targetNodeName({ spec: { ...pod.spec!, nodeName: "node-2" } })).toBe("node-2");
    expect(targetNodeName({ spec: { containers } })).toBeUndefined();
    const two = replaceNodeNameAffinity(undefined, "x");
    two.nodeAffinity!.requiredDuringSchedulingIgnoredDuringExecution!.nodeSelectorTerms[0]!
      .matchFields![0]!.values = ["a", "b"];
    expect(targetNodeName({ spec: { containers, affinity: two } })).toBeUndefined();
  });
});

describe("daemon pod tolerations and node events", () => {
  it("adds each daemon toleration once, keeping the template's own", () => {
    const spec = {
      containers,
      tolerations: [{ key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute" }],
    };
    addDaemonPodTolerations(spec);
    addDaemonPodTolerations(spec);
    expect(spec.tolerations.length).toBe(6);
  });

  it("ignores node updates that change only heartbeat times and the resourceVersion", () => {
    const before: Node = {
      metadata: { name: "n", resourceVersion: "1" },
      status: { conditions: [{ type: "Ready", status: "True", lastHeartbeatTime: "2026-01-01T00:00:00Z" }] },
    };
    const heartbeat: Node = {
      metadata: { name: "n", resourceVersion: "2" },
      status: { conditions: [{ type: "Ready", status: "True", lastHeartbeatTime: "2026-01-01T00:00:10Z" }] },
    };
    expect(shouldIgnoreNodeUpdate(before, heartbeat)).toBe(true);
    expect(
      shouldIgnoreNodeUpdate(before, {
        ...heartbeat,
        metadata: { ...heartbeat.metadata, labels: { a: "b" } },
      }),
    ).toBe(false);
    expect(
      shouldIgnoreNodeUpdate(before, {
        ...heartbeat,
        status: { conditions: [{ type: "Ready", status: "False" }] },
      }),
    ).toBe(false);
  });
});
