// upstream helper.DefaultSelector / GetPodServices (helper/spread_test.go), and
// PodTopologySpread's system defaults scoring with it (scoring_test.go).
import type { Node, Pod } from "@reconcile/api";
import type { ReplicaSet, StatefulSet } from "kubernetes-types/apps/v1.js";
import type { ReplicationController, Service } from "kubernetes-types/core/v1.js";
import { describe, expect, it } from "vitest";
import { podTopologySpread, podTopologySpreadPlugin } from "./pod-topology-spread.js";
import { defaultSpreadSelector, type SpreadingListers } from "./spread-selector.js";
import { nodeInfoOf, runScore } from "./testing.js";

function listers(objects: {
  services?: Service[];
  rcs?: ReplicationController[];
  rss?: ReplicaSet[];
  sss?: StatefulSet[];
}): SpreadingListers {
  const byKey = <T extends { metadata?: { namespace?: string; name?: string } }>(items: T[] = []) =>
    new Map(items.map((item) => [`${item.metadata?.namespace}/${item.metadata?.name}`, item]));
  const rcs = byKey(objects.rcs);
  const rss = byKey(objects.rss);
  const sss = byKey(objects.sss);
  return {
    servicesIn: (namespace) => (objects.services ?? []).filter((s) => s.metadata?.namespace === namespace),
    replicationController: (key) => rcs.get(key),
    replicaSet: (key) => rss.get(key),
    statefulSet: (key) => sss.get(key),
  };
}

function service(name: string, selector: Record<string, string> | undefined, namespace = "test"): Service {
  return { metadata: { name, namespace }, spec: selector === undefined ? {} : { selector } };
}

function pod(
  labels: Record<string, string>,
  owner?: { apiVersion: string; kind: string; name: string },
): Pod {
  return {
    metadata: {
      name: "p",
      namespace: "test",
      labels,
      ...(owner ? { ownerReferences: [{ ...owner, uid: `uid-${owner.name}`, controller: true }] } : {}),
    },
    spec: { containers: [] },
  };
}

const threeServices = [0, 1, 2].map((i) => service(`service-${i}`, { app: `test-${i}` }));

describe("defaultSpreadSelector", () => {
  it.each([
    [0, "app=test-0"],
    [1, "app=test-1"],
    [2, "app=test-2"],
    [3, ""],
    [4, ""],
  ])("pod %i is selected by the Services whose selectors match it (GetPodServices)", (i, selector) => {
    const found = defaultSpreadSelector(
      pod({ app: `test-${i}`, label: `label-${i}` }),
      listers({ services: threeServices }),
    );
    expect(found.toString()).toBe(selector);
    expect(found.empty()).toBe(selector === "");
  });

  it("merges the selectors of every Service that selects the pod, and skips one without a selector", () => {
    const services = [
      service("web", { app: "web" }),
      service("tier", { tier: "front" }),
      service("headless", undefined),
      service("other", { app: "db" }),
      service("elsewhere", { app: "web", zone: "z" }, "other-namespace"),
    ];
    const found = defaultSpreadSelector(pod({ app: "web", tier: "front" }), listers({ services }));
    expect(found.toString()).toBe("app=web,tier=front");
  });

  it("a Service selecting with an empty map selects every pod of its namespace, adding nothing", () => {
    const found = defaultSpreadSelector(pod({ app: "web" }), listers({ services: [service("all", {})] }));
    expect(found.empty()).toBe(true);
  });

  it("merges a ReplicationController's selector into the Services'", () => {
    const rc: ReplicationController = {
      metadata: { name: "rc", namespace: "test" },
      spec: { selector: { app: "web", version: "v1" } },
    };
    const found = defaultSpreadSelector(
      pod({ app: "web", version: "v1" }, { apiVersion: "v1", kind: "ReplicationController", name: "rc" }),
      listers({ services: [service("web", { app: "web" })], rcs: [rc] }),
    );
    expect(found.toString()).toBe("app=web,version=v1");
  });

  it.each(["ReplicaSet", "StatefulSet"])("adds a %s's requirements to the Services'", (kind) => {
    const selector = {
      matchLabels: { app: "web" },
      matchExpressions: [{ key: "track", operator: "NotIn", values: ["canary"] }],
    };
    const controller = {
      metadata: { name: "ctl", namespace: "test" },
      spec: { selector, serviceName: "ctl", template: {} },
    };
    const found = defaultSpreadSelector(
      pod({ app: "web", tier: "front" }, { apiVersion: "apps/v1", kind, name: "ctl" }),
      listers({
        services: [service("tier", { tier: "front" })],
        rss: kind === "ReplicaSet" ? [controller as ReplicaSet] : [],
        sss: kind === "StatefulSet" ? [controller as StatefulSet] : [],
      }),
    );
    expect(found.toString()).toBe("app in (web),tier=front,track notin (canary)");
    expect(found.matches({ app: "web", tier: "front" })).toBe(true);
    expect(found.matches({ app: "web", tier: "front", track: "canary" })).toBe(false);
  });

  it("uses only the Services for another owner, an owner of another API version, or one not in the cache", () => {
    const rs = {
      metadata: { name: "ctl", namespace: "test" },
      spec: { selector: { matchLabels: { app: "web" } } },
    };
    const services = [service("tier", { tier: "front" })];
    const labels = { app: "web", tier: "front" };
    for (const owner of [
      { apiVersion: "batch/v1", kind: "Job", name: "ctl" },
      { apiVersion: "extensions/v1beta1", kind: "ReplicaSet", name: "ctl" },
      { apiVersion: "apps/v1", kind: "ReplicaSet", name: "missing" },
    ]) {
      const found = defaultSpreadSelector(pod(labels, owner), listers({ services, rss: [rs as ReplicaSet] }));
      expect(found.toString()).toBe("tier=front");
    }
  });
});

function zonedNode(name: string): Node {
  return {
    metadata: { name, labels: { "kubernetes.io/hostname": name } },
    status: { allocatable: { pods: "110" } },
  };
}

function peer(name: string, labels: Record<string, string>, namespace = "test"): Pod {
  return { metadata: { name, namespace, uid: `uid-${name}`, labels }, spec: { containers: [] } };
}

describe("PodTopologySpread's system defaults with listers", () => {
  const services = listers({ services: [service("web", { app: "web" })] });

  it("spreads a pod that only a Service selects among the pods the Service selects", () => {
    const infos = [
      nodeInfoOf(zonedNode("a"), [peer("w1", { app: "web" }), peer("w2", { app: "web" })]),
      nodeInfoOf(zonedNode("b"), [peer("w3", { app: "web" }), peer("db", { app: "db" })]),
      nodeInfoOf(zonedNode("c"), [peer("x", { app: "web" }, "other")]),
    ];
    const incoming = pod({ app: "web" });
    // weight ln(3 + 2); raw a = round(2·1.609 + 2) = 5, b = round(1.609 + 2) = 4, c = 2 (another namespace's pod)
    // normalized 100·(5 + 2 − raw) / 5: a 40, b 60, c 100
    expect(runScore(podTopologySpreadPlugin({ spreading: services }), incoming, infos)).toEqual({
      a: 40,
      b: 60,
      c: 100,
    });
    // Without listers, the system defaults spread only a controller's pods.
    expect(runScore(podTopologySpread, incoming, infos)).toBe("skip");
  });

  it("is skipped for a pod nothing selects", () => {
    const infos = [nodeInfoOf(zonedNode("a"), [peer("w1", { app: "web" })])];
    expect(runScore(podTopologySpreadPlugin({ spreading: services }), pod({ app: "batch" }), infos)).toBe(
      "skip",
    );
  });
});
