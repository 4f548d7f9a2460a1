// Cases from upstream's nodeaffinity node_affinity_test.go (TestNodeAffinity, TestNodeAffinityPriority).
import type { Pod } from "@reconcile/api";
import type { NodeAffinity, NodeSelectorTerm } from "kubernetes-types/core/v1.js";
import { describe, expect, it } from "vitest";
import { errReasonPodNotMatchNodeSelector, nodeAffinity } from "./node-affinity.js";
import { node, nodeInfoOf, runFilter, runScore } from "./testing.js";

const fits = { code: "Success", reasons: [] };
const mismatch = { code: "UnschedulableAndUnresolvable", reasons: [errReasonPodNotMatchNodeSelector] };

function podWith(options: {
  nodeSelector?: Record<string, string>;
  required?: NodeSelectorTerm[];
  affinity?: NodeAffinity;
}): Pod {
  const nodeAffinityValue: NodeAffinity | undefined =
    options.affinity ??
    (options.required
      ? { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: options.required } }
      : undefined);
  return {
    metadata: { name: "pod" },
    spec: {
      containers: [],
      ...(options.nodeSelector ? { nodeSelector: options.nodeSelector } : {}),
      ...(nodeAffinityValue ? { affinity: { nodeAffinity: nodeAffinityValue } } : {}),
    },
  };
}

describe("NodeAffinity Filter", () => {
  it.each([
    { name: "no selector", pod: podWith({}), labels: {}, want: fits },
    { name: "missing labels", pod: podWith({ nodeSelector: { foo: "bar" } }), labels: {}, want: mismatch },
    {
      name: "same labels",
      pod: podWith({ nodeSelector: { foo: "bar" } }),
      labels: { foo: "bar" },
      want: fits,
    },
    {
      name: "node labels are superset",
      pod: podWith({ nodeSelector: { foo: "bar" } }),
      labels: { foo: "bar", baz: "blah" },
      want: fits,
    },
    {
      name: "node labels are subset",
      pod: podWith({ nodeSelector: { foo: "bar", baz: "blah" } }),
      labels: { foo: "bar" },
      want: mismatch,
    },
    {
      name: "In operator that matches the node",
      pod: podWith({
        required: [{ matchExpressions: [{ key: "foo", operator: "In", values: ["bar", "value2"] }] }],
      }),
      labels: { foo: "bar" },
      want: fits,
    },
    {
      name: "Gt operator that matches the node",
      pod: podWith({
        required: [{ matchExpressions: [{ key: "kernel-version", operator: "Gt", values: ["0204"] }] }],
      }),
      labels: { "kernel-version": "0206" },
      want: fits,
    },
    {
      name: "NotIn operator that matches the node",
      pod: podWith({
        required: [{ matchExpressions: [{ key: "mem-type", operator: "NotIn", values: ["DDR", "DDR2"] }] }],
      }),
      labels: { "mem-type": "DDR3" },
      want: fits,
    },
    {
      name: "Exists operator that matches the node",
      pod: podWith({ required: [{ matchExpressions: [{ key: "GPU", operator: "Exists" }] }] }),
      labels: { GPU: "NVIDIA-GRID-K1" },
      want: fits,
    },
    {
      name: "affinity that does not match the node",
      pod: podWith({
        required: [{ matchExpressions: [{ key: "foo", operator: "In", values: ["value1", "value2"] }] }],
      }),
      labels: { foo: "bar" },
      want: mismatch,
    },
    {
      name: "a nil-like empty nodeSelectorTerms list matches nothing",
      pod: podWith({ required: [] }),
      labels: { foo: "bar" },
      want: mismatch,
    },
    {
      name: "an empty term (no expressions, no fields) matches nothing",
      pod: podWith({ required: [{ matchExpressions: [] }] }),
      labels: { foo: "bar" },
      want: mismatch,
    },
    {
      name: "multiple expressions of one term are ANDed",
      pod: podWith({
        required: [
          {
            matchExpressions: [
              { key: "GPU", operator: "Exists" },
              { key: "GPU", operator: "NotIn", values: ["AMD", "INTER"] },
            ],
          },
        ],
      }),
      labels: { GPU: "NVIDIA-GRID-K1" },
      want: fits,
    },
    {
      name: "multiple expressions of one term are ANDed: one fails",
      pod: podWith({
        required: [
          {
            matchExpressions: [
              { key: "GPU", operator: "Exists" },
              { key: "GPU", operator: "In", values: ["AMD", "INTER"] },
            ],
          },
        ],
      }),
      labels: { GPU: "NVIDIA-GRID-K1" },
      want: mismatch,
    },
    {
      name: "terms are ORed",
      pod: podWith({
        required: [
          { matchExpressions: [{ key: "foo", operator: "In", values: ["bar", "value2"] }] },
          { matchExpressions: [{ key: "diffkey", operator: "In", values: ["wrong", "value2"] }] },
        ],
      }),
      labels: { foo: "bar" },
      want: fits,
    },
    {
      name: "an Exists expression with values is invalid and never matches",
      pod: podWith({
        required: [{ matchExpressions: [{ key: "foo", operator: "Exists", values: ["bar"] }] }],
      }),
      labels: { foo: "bar" },
      want: mismatch,
    },
    {
      name: "nodeSelector and affinity must both match: affinity matches, selector does not",
      pod: podWith({
        nodeSelector: { foo: "bar" },
        required: [{ matchExpressions: [{ key: "foo", operator: "Exists" }] }],
      }),
      labels: { foo: "barrrrrr" },
      want: mismatch,
    },
    {
      name: "nodeSelector and affinity both match",
      pod: podWith({
        nodeSelector: { foo: "bar" },
        required: [{ matchExpressions: [{ key: "foo", operator: "Exists" }] }],
      }),
      labels: { foo: "bar" },
      want: fits,
    },
    {
      name: "matchFields metadata.name In matches the node's name",
      pod: podWith({
        required: [{ matchFields: [{ key: "metadata.name", operator: "In", values: ["node1"] }] }],
      }),
      labels: {},
      want: fits,
    },
    {
      name: "matchFields metadata.name In another node does not match",
      pod: podWith({
        required: [{ matchFields: [{ key: "metadata.name", operator: "In", values: ["node2"] }] }],
      }),
      labels: {},
      want: mismatch,
    },
    {
      name: "matchFields and matchExpressions of one term are ANDed",
      pod: podWith({
        required: [
          {
            matchExpressions: [{ key: "foo", operator: "In", values: ["bar"] }],
            matchFields: [{ key: "metadata.name", operator: "In", values: ["node1"] }],
          },
        ],
      }),
      labels: { foo: "baz" },
      want: mismatch,
    },
    {
      name: "Lt with a value that is not an integer never matches",
      pod: podWith({ required: [{ matchExpressions: [{ key: "rank", operator: "Lt", values: ["ten"] }] }] }),
      labels: { rank: "1" },
      want: mismatch,
    },
    {
      name: "DoesNotExist matches a node without the key",
      pod: podWith({ required: [{ matchExpressions: [{ key: "spot", operator: "DoesNotExist" }] }] }),
      labels: { foo: "bar" },
      want: fits,
    },
  ] as { name: string; pod: Pod; labels: Record<string, string>; want: object }[])("$name", ({
    pod,
    labels,
    want,
  }) => {
    expect(runFilter(nodeAffinity, pod, nodeInfoOf(node("node1", {}, labels)))).toEqual(want);
  });
});

describe("NodeAffinity Score", () => {
  const affinity1: NodeAffinity = {
    preferredDuringSchedulingIgnoredDuringExecution: [
      { weight: 2, preference: { matchExpressions: [{ key: "foo", operator: "In", values: ["bar"] }] } },
    ],
  };
  const affinity2: NodeAffinity = {
    preferredDuringSchedulingIgnoredDuringExecution: [
      { weight: 2, preference: { matchExpressions: [{ key: "foo", operator: "In", values: ["bar"] }] } },
      { weight: 4, preference: { matchExpressions: [{ key: "key", operator: "In", values: ["value"] }] } },
      {
        weight: 5,
        preference: {
          matchExpressions: [
            { key: "foo", operator: "In", values: ["bar"] },
            { key: "key", operator: "In", values: ["value"] },
            { key: "az", operator: "In", values: ["az1"] },
          ],
        },
      },
    ],
  };
  const label1 = { foo: "bar" };
  const label2 = { key: "value" };
  const label3 = { az: "az1" };
  const label4 = { abc: "az11", def: "az22" };
  const label5 = { foo: "bar", key: "value", az: "az1" };

  it.each([
    {
      name: "all nodes score 0 when no preferred term matches",
      affinity: affinity1,
      nodes: [node("node1", {}, label4), node("node2", {}, label2), node("node3", {}, label3)],
      expected: { node1: 0, node2: 0, node3: 0 },
    },
    {
      name: "only the node matching the preferred term scores",
      affinity: affinity1,
      nodes: [node("node1", {}, label1), node("node2", {}, label2), node("node3", {}, label3)],
      expected: { node1: 100, node2: 0, node3: 0 },
    },
    {
      name: "scores are the normalized sums of the matching terms' weights",
      affinity: affinity2,
      nodes: [node("node1", {}, label1), node("node5", {}, label5), node("node2", {}, label2)],
      expected: { node1: 18, node5: 100, node2: 36 },
    },
  ])("$name", ({ affinity, nodes, expected }) => {
    expect(
      runScore(
        nodeAffinity,
        podWith({ affinity }),
        nodes.map((n) => nodeInfoOf(n)),
      ),
    ).toEqual(expected);
  });

  it("is skipped for a pod without preferred terms", () => {
    expect(runScore(nodeAffinity, podWith({}), [nodeInfoOf(node("n"))])).toBe("skip");
  });
});
