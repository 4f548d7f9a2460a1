// Cases from upstream's nodename node_name_test.go and nodeunschedulable node_unschedulable_test.go.
import type { Pod } from "@reconcile/api";
import type { Toleration } from "kubernetes-types/core/v1.js";
import { describe, expect, it } from "vitest";
import { errReasonNodeName, nodeName } from "./node-name.js";
import { errReasonUnschedulable, nodeUnschedulable } from "./node-unschedulable.js";
import { node, nodeInfoOf, runFilter } from "./testing.js";

const fits = { code: "Success", reasons: [] };

describe("NodeName Filter", () => {
  const pod = (name?: string): Pod => ({
    metadata: { name: "p" },
    spec: { containers: [], ...(name ? { nodeName: name } : {}) },
  });
  it.each([
    { name: "no host specified", pod: pod(), want: fits },
    { name: "host matches", pod: pod("foo"), want: fits },
    {
      name: "host doesn't match",
      pod: pod("bar"),
      want: { code: "UnschedulableAndUnresolvable", reasons: [errReasonNodeName] },
    },
  ])("$name", ({ pod, want }) => {
    expect(runFilter(nodeName, pod, nodeInfoOf(node("foo")))).toEqual(want);
  });
});

describe("NodeUnschedulable Filter", () => {
  const pod = (tolerations: Toleration[] = []): Pod => ({
    metadata: { name: "p" },
    spec: { containers: [], tolerations },
  });
  const cordoned = { code: "UnschedulableAndUnresolvable", reasons: [errReasonUnschedulable] };
  it.each([
    { name: "schedulable node", pod: pod(), unschedulable: false, want: fits },
    { name: "unschedulable node", pod: pod(), unschedulable: true, want: cordoned },
    { name: "unschedulable not set", pod: pod(), unschedulable: undefined, want: fits },
    {
      name: "a pod that tolerates the unschedulable taint fits a cordoned node",
      pod: pod([{ key: "node.kubernetes.io/unschedulable", effect: "NoSchedule" }]),
      unschedulable: true,
      want: fits,
    },
    {
      name: "a toleration of another effect does not help",
      pod: pod([{ key: "node.kubernetes.io/unschedulable", effect: "NoExecute" }]),
      unschedulable: true,
      want: cordoned,
    },
  ])("$name", ({ pod, unschedulable, want }) => {
    const spec = unschedulable === undefined ? {} : { unschedulable };
    expect(runFilter(nodeUnschedulable, pod, nodeInfoOf(node("n", spec)))).toEqual(want);
  });
});
