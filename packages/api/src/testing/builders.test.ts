import { describe, expect, it } from "vitest";
import { isPodReady } from "../pods.js";
import { Quantity } from "../quantity.js";
import { configMap, deployment, node, pod, replicaSet, service } from "./index.js";

describe("test builders", () => {
  it("pod: one nginx container, labelled by name, in default, Pending and unbound", () => {
    expect(pod("web-1")).toEqual({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "web-1", namespace: "default", uid: "uid-web-1", labels: { app: "web-1" } },
      spec: { containers: [{ name: "app", image: "nginx" }] },
      status: { phase: "Pending" },
    });
  });

  it("pod: ready, bound, owned, with requests", () => {
    const rs = replicaSet("web", { replicas: 3 });
    const built = pod("web-1", {
      labels: { app: "web" },
      owner: rs,
      nodeName: "node-1",
      ready: 5_000,
      requests: { cpu: "100m" },
      podIP: "10.0.0.1",
    });
    expect(isPodReady(built)).toBe(true);
    expect(built.status?.phase).toBe("Running");
    expect(built.status?.conditions?.[0]?.lastTransitionTime).toBe("1970-01-01T00:00:05Z");
    expect(built.spec?.nodeName).toBe("node-1");
    expect(built.spec?.containers[0]?.resources?.requests).toEqual({ cpu: "100m" });
    expect(built.metadata?.ownerReferences).toEqual([
      {
        apiVersion: "apps/v1",
        kind: "ReplicaSet",
        name: "web",
        uid: "uid-web",
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    expect(isPodReady(pod("p", { ready: false }))).toBe(false);
    expect(pod("p", { ready: false }).status?.phase).toBe("Running");
  });

  it("replicaSet and deployment select and template the same labels, with the API server's defaults", () => {
    const rs = replicaSet("web", { replicas: 3, image: "nginx:1.25" });
    expect(rs.spec?.selector.matchLabels).toEqual({ app: "web" });
    expect(rs.spec?.template?.metadata?.labels).toEqual({ app: "web" });
    expect(rs.spec?.template?.spec?.containers[0]?.image).toBe("nginx:1.25");
    expect(rs.status).toEqual({ replicas: 0 });
    const d = deployment("api", { replicas: 2, spec: { paused: true } });
    expect(d.metadata?.generation).toBe(1);
    expect(d.spec).toMatchObject({
      replicas: 2,
      paused: true,
      revisionHistoryLimit: 10,
      progressDeadlineSeconds: 600,
      strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: "25%", maxUnavailable: "25%" } },
    });
  });

  it("node: cluster-scoped and Ready, with capacity the scheduler can read", () => {
    const n = node("node-1", { cpu: "2", unschedulable: true });
    expect(n.metadata).toEqual({
      name: "node-1",
      uid: "uid-node-1",
      labels: { "kubernetes.io/hostname": "node-1" },
    });
    expect(n.spec).toEqual({ unschedulable: true });
    expect(Quantity.parse(n.status?.allocatable?.cpu ?? "").milliValue()).toBe(2000);
    expect(n.status?.conditions).toEqual([{ type: "Ready", status: "True" }]);
    expect(node("down", { ready: false }).status?.conditions?.[0]?.status).toBe("False");
  });

  it("service and configMap", () => {
    expect(service("web").spec).toEqual({
      type: "ClusterIP",
      selector: { app: "web" },
      ports: [{ name: "http", protocol: "TCP", port: 80, targetPort: 80 }],
    });
    expect(configMap("settings", { namespace: "prod", data: { a: "1" } })).toEqual({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "settings", namespace: "prod", uid: "uid-settings" },
      data: { a: "1" },
    });
  });

  it("metadata options: timestamps from clock readings, finalizers, deletion", () => {
    const deleting = pod("p", {
      creationTimestamp: 0,
      deletionTimestamp: "2024-01-01T00:00:00Z",
      finalizers: ["x"],
      resourceVersion: "7",
    });
    expect(deleting.metadata).toMatchObject({
      creationTimestamp: "1970-01-01T00:00:00Z",
      deletionTimestamp: "2024-01-01T00:00:00Z",
      finalizers: ["x"],
      resourceVersion: "7",
    });
  });

  it("refuses an owner it cannot reference", () => {
    expect(() => pod("p", { owner: { metadata: { name: "x" } } })).toThrow(
      "builders: an owner needs apiVersion, kind, metadata.name and metadata.uid",
    );
  });

  it("builds a fresh object every call, so a test can change one freely", () => {
    const a = replicaSet("web");
    a.spec!.selector.matchLabels!.app = "changed";
    expect(replicaSet("web").spec?.selector.matchLabels).toEqual({ app: "web" });
  });
});
