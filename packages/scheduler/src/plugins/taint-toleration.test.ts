// Cases from upstream's taint_toleration_test.go (TestTaintTolerationScore, TestTaintTolerationFilter).
import type { Pod } from "@reconcile/api";
import type { Taint, Toleration } from "kubernetes-types/core/v1.js";
import { describe, expect, it } from "vitest";
import { taintToleration, toleratesTaint } from "./taint-toleration.js";
import { node, nodeInfoOf, runFilter, runScore } from "./testing.js";

const podWith = (tolerations: Toleration[]): Pod => ({
  metadata: { name: "pod1" },
  spec: { containers: [], tolerations },
});
const nodeWith = (name: string, taints: Taint[]) => nodeInfoOf(node(name, { taints }));

describe("TaintToleration Score", () => {
  it.each([
    {
      name: "a node with taints the pod tolerates scores higher than one with intolerable taints",
      tolerations: [{ key: "foo", operator: "Equal", value: "bar", effect: "PreferNoSchedule" }],
      nodes: [
        nodeWith("nodeA", [{ key: "foo", value: "bar", effect: "PreferNoSchedule" }]),
        nodeWith("nodeB", [{ key: "foo", value: "blah", effect: "PreferNoSchedule" }]),
      ],
      expected: { nodeA: 100, nodeB: 0 },
    },
    {
      name: "nodes whose taints are all tolerated score the same, however many taints they have",
      tolerations: [
        { key: "cpu-type", operator: "Equal", value: "arm64", effect: "PreferNoSchedule" },
        { key: "disk-type", operator: "Equal", value: "ssd", effect: "PreferNoSchedule" },
      ],
      nodes: [
        nodeWith("nodeA", []),
        nodeWith("nodeB", [{ key: "cpu-type", value: "arm64", effect: "PreferNoSchedule" }]),
        nodeWith("nodeC", [
          { key: "cpu-type", value: "arm64", effect: "PreferNoSchedule" },
          { key: "disk-type", value: "ssd", effect: "PreferNoSchedule" },
        ]),
      ],
      expected: { nodeA: 100, nodeB: 100, nodeC: 100 },
    },
    {
      name: "the more intolerable taints a node has, the lower it scores",
      tolerations: [{ key: "foo", operator: "Equal", value: "bar", effect: "PreferNoSchedule" }],
      nodes: [
        nodeWith("nodeA", []),
        nodeWith("nodeB", [{ key: "cpu-type", value: "arm64", effect: "PreferNoSchedule" }]),
        nodeWith("nodeC", [
          { key: "cpu-type", value: "arm64", effect: "PreferNoSchedule" },
          { key: "disk-type", value: "ssd", effect: "PreferNoSchedule" },
        ]),
      ],
      expected: { nodeA: 100, nodeB: 50, nodeC: 0 },
    },
    {
      name: "only PreferNoSchedule taints and tolerations count",
      tolerations: [
        { key: "cpu-type", operator: "Equal", value: "arm64", effect: "NoSchedule" },
        { key: "disk-type", operator: "Equal", value: "ssd", effect: "NoSchedule" },
      ],
      nodes: [
        nodeWith("nodeA", []),
        nodeWith("nodeB", [{ key: "cpu-type", value: "arm64", effect: "NoSchedule" }]),
        nodeWith("nodeC", [
          { key: "cpu-type", value: "arm64", effect: "PreferNoSchedule" },
          { key: "disk-type", value: "ssd", effect: "PreferNoSchedule" },
        ]),
      ],
      expected: { nodeA: 100, nodeB: 100, nodeC: 0 },
    },
    {
      name: "without taints and tolerations, the node without taints wins",
      tolerations: [],
      nodes: [
        nodeWith("nodeA", []),
        nodeWith("nodeB", [{ key: "cpu-type", value: "arm64", effect: "PreferNoSchedule" }]),
      ],
      expected: { nodeA: 100, nodeB: 0 },
    },
  ] as const)("$name", ({ tolerations, nodes, expected }) => {
    expect(runScore(taintToleration, podWith(tolerations as unknown as Toleration[]), [...nodes])).toEqual(
      expected,
    );
  });
});

describe("TaintToleration Filter", () => {
  const untolerated = (key: string, value: string) => ({
    code: "UnschedulableAndUnresolvable",
    reasons: [`node(s) had untolerated taint {${key}: ${value}}`],
  });
  it.each([
    {
      name: "a pod without tolerations does not fit a node with taints",
      tolerations: [],
      taints: [{ key: "dedicated", value: "user1", effect: "NoSchedule" }],
      want: untolerated("dedicated", "user1"),
    },
    {
      name: "a pod tolerating the dedicated NoSchedule taint fits",
      tolerations: [{ key: "dedicated", value: "user1", effect: "NoSchedule" }],
      taints: [{ key: "dedicated", value: "user1", effect: "NoSchedule" }],
    },
    {
      name: "a toleration for another value does not fit",
      tolerations: [{ key: "dedicated", operator: "Equal", value: "user2", effect: "NoSchedule" }],
      taints: [{ key: "dedicated", value: "user1", effect: "NoSchedule" }],
      want: untolerated("dedicated", "user1"),
    },
    {
      name: "Exists tolerates any value",
      tolerations: [{ key: "foo", operator: "Exists", effect: "NoSchedule" }],
      taints: [{ key: "foo", value: "bar", effect: "NoSchedule" }],
    },
    {
      name: "all of several taints tolerated fits",
      tolerations: [
        { key: "dedicated", operator: "Equal", value: "user2", effect: "NoSchedule" },
        { key: "foo", operator: "Exists", effect: "NoSchedule" },
      ],
      taints: [
        { key: "dedicated", value: "user2", effect: "NoSchedule" },
        { key: "foo", value: "bar", effect: "NoSchedule" },
      ],
    },
    {
      name: "a matching key and value with another (non-empty) effect does not fit",
      tolerations: [{ key: "foo", operator: "Equal", value: "bar", effect: "PreferNoSchedule" }],
      taints: [{ key: "foo", value: "bar", effect: "NoSchedule" }],
      want: untolerated("foo", "bar"),
    },
    {
      name: "a toleration with empty effect tolerates a NoSchedule taint of its key and value",
      tolerations: [{ key: "foo", operator: "Equal", value: "bar" }],
      taints: [{ key: "foo", value: "bar", effect: "NoSchedule" }],
    },
    {
      name: "an untolerated PreferNoSchedule taint does not filter",
      tolerations: [{ key: "dedicated", operator: "Equal", value: "user2", effect: "NoSchedule" }],
      taints: [{ key: "dedicated", value: "user1", effect: "PreferNoSchedule" }],
    },
    {
      name: "no tolerations and only a PreferNoSchedule taint fits",
      tolerations: [],
      taints: [{ key: "dedicated", value: "user1", effect: "PreferNoSchedule" }],
    },
    {
      name: "an untolerated NoExecute taint does not fit, and an empty value prints empty",
      tolerations: [],
      taints: [{ key: "node.kubernetes.io/not-ready", effect: "NoExecute" }],
      want: untolerated("node.kubernetes.io/not-ready", ""),
    },
  ] as { name: string; tolerations: Toleration[]; taints: Taint[]; want?: object }[])("$name", ({
    tolerations,
    taints,
    want,
  }) => {
    expect(runFilter(taintToleration, podWith(tolerations), nodeWith("nodeA", taints))).toEqual(
      want ?? { code: "Success", reasons: [] },
    );
  });

  it("reports the first untolerated taint in the node's order", () => {
    const taints: Taint[] = [
      { key: "a", value: "1", effect: "PreferNoSchedule" },
      { key: "b", value: "2", effect: "NoSchedule" },
      { key: "c", value: "3", effect: "NoExecute" },
    ];
    expect(runFilter(taintToleration, podWith([]), nodeWith("n", taints)).reasons).toEqual([
      "node(s) had untolerated taint {b: 2}",
    ]);
  });

  it("matches tolerations to taints by effect, key and operator", () => {
    const taint = { key: "k", value: "v", effect: "NoSchedule" };
    expect(toleratesTaint({ operator: "Exists" }, taint)).toBe(true);
    expect(toleratesTaint({ key: "k", operator: "Exists", effect: "NoExecute" }, taint)).toBe(false);
    expect(toleratesTaint({ key: "k", value: "v" }, taint)).toBe(true);
    expect(toleratesTaint({ key: "k", operator: "Lt", value: "v" }, taint)).toBe(false);
  });
});
