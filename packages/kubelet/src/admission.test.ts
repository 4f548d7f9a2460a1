import type { Pod } from "@reconcile/api";
import { describe, expect, it } from "vitest";
import { admitPod, PodAdmission, podRequests } from "./admission.js";

const allocatable = { milliCpu: 2000, memory: 4 * 2 ** 30, pods: 3 };
const pod = (cpu?: string, memory?: string, extra: Partial<Pod["spec"]> = {}): Pod => ({
  spec: {
    containers: [
      {
        name: "a",
        image: "x",
        resources: { requests: { ...(cpu ? { cpu } : {}), ...(memory ? { memory } : {}) } },
      },
    ],
    ...extra,
  },
});

describe("admitPod", () => {
  it("admits what fits", () => {
    expect(admitPod(pod("1", "1Gi"), [pod("500m", "1Gi")], allocatable, {})).toBeUndefined();
  });
  it("checks the pod count first, then cpu, then memory, with upstream's reasons and messages", () => {
    expect(admitPod(pod("1"), [pod(), pod(), pod()], allocatable, {})).toEqual({
      reason: "OutOfpods",
      message: "Node didn't have enough resource: pods, requested: 1, used: 3, capacity: 3",
    });
    expect(admitPod(pod("1500m", "8Gi"), [pod("1")], allocatable, {})).toEqual({
      reason: "OutOfcpu",
      message: "Node didn't have enough resource: cpu, requested: 1500, used: 1000, capacity: 2000",
    });
    expect(admitPod(pod(undefined, "3Gi"), [pod(undefined, "2Gi")], allocatable, {})).toEqual({
      reason: "OutOfmemory",
      message: `Node didn't have enough resource: memory, requested: ${3 * 2 ** 30}, used: ${2 * 2 ** 30}, capacity: ${4 * 2 ** 30}`,
    });
  });
  it("skips the resource checks for a pod with no requests", () => {
    expect(admitPod(pod(), [pod("2")], allocatable, {})).toBeUndefined();
  });
  it("rejects a nodeSelector the node's labels do not match", () => {
    expect(
      admitPod(pod(undefined, undefined, { nodeSelector: { disk: "ssd" } }), [], allocatable, {
        disk: "hdd",
      }),
    ).toEqual({
      reason: "NodeAffinity",
      message: "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector",
    });
  });
});

describe("podRequests", () => {
  it("is the larger of the containers' sum and the largest init container, plus overhead; limits stand in for requests", () => {
    const p: Pod = {
      spec: {
        containers: [
          { name: "a", image: "x", resources: { requests: { cpu: "100m", memory: "64Mi" } } },
          { name: "b", image: "x", resources: { limits: { cpu: "200m" } } },
        ],
        initContainers: [{ name: "i", image: "x", resources: { requests: { cpu: "1", memory: "32Mi" } } }],
        overhead: { cpu: "10m" },
      },
    };
    expect(podRequests(p)).toEqual({ milliCpu: 1010, memory: 64 * 2 ** 20 });
  });
});

describe("PodAdmission", () => {
  const setup = () => {
    const statuses = new Map<string, import("kubernetes-types/core/v1.js").PodStatus>();
    const events: string[] = [];
    const admission = new PodAdmission({
      allocatable: () => ({ milliCpu: 1000, memory: 2 ** 30, pods: 2 }),
      nodeLabels: () => ({ zone: "a" }),
      statuses: {
        getPodStatus: (uid) => statuses.get(uid),
        setPodStatus: (pod, status) => statuses.set(pod.metadata?.uid ?? "", status),
      },
      recorder: { event: (_ref, type, reason, message) => events.push(`${type} ${reason} ${message}`) },
    });
    return { admission, statuses, events };
  };
  const withUid = (uid: string, cpu: string): Pod => ({
    ...pod(cpu),
    metadata: { uid, name: uid, namespace: "d" },
  });

  it("counts admitted pods until released, and fails a pod that does not fit as upstream's rejectPod", () => {
    const { admission, statuses, events } = setup();
    expect(admission.admit(withUid("a", "600m"))).toBe(true);
    expect(admission.admit(withUid("b", "600m"))).toBe(false);
    expect(statuses.get("b")).toEqual({
      phase: "Failed",
      reason: "OutOfcpu",
      message:
        "Pod was rejected: Node didn't have enough resource: cpu, requested: 600, used: 600, capacity: 1000",
    });
    expect(events).toEqual([
      "Warning OutOfcpu Node didn't have enough resource: cpu, requested: 600, used: 600, capacity: 1000",
    ]);
    expect(admission.isRejected("b")).toBe(true);
    expect(admission.isRejected("a")).toBe(false);
    admission.releaseInactive((uid) => uid !== "a");
    expect(admission.admit(withUid("c", "600m"))).toBe(true);
  });

  it("gives back a released pod's requests once, however often it is released", () => {
    const { admission } = setup();
    expect(admission.admit(withUid("a", "600m"))).toBe(true);
    admission.release("a");
    admission.release("a");
    expect(admission.admit(withUid("b", "900m"))).toBe(true);
    expect(admission.admit(withUid("c", "200m"))).toBe(false);
  });
});
