import type { Pod } from "@reconcile/api";
import { describe, expect, it } from "vitest";
import { PodManager } from "./pod-manager.js";

const pod = (name: string, uid: string): Pod => ({
  metadata: { name, namespace: "kube-system", uid, annotations: { "kubernetes.io/config.source": "file" } },
  spec: { containers: [] },
});

describe("PodManager", () => {
  it("takes a static source's pods: added ones recorded as static, a changed manifest (new UID) replaces the old", () => {
    const manager = new PodManager();
    const mine = new Set<string>();
    const v1 = pod("etcd", "uid-1");
    expect(manager.applyStaticPods(mine, [v1])).toEqual({ removed: [], added: [v1] });
    manager.setPod(v1);
    expect(manager.isStaticPod("uid-1")).toBe(true);
    expect(manager.staticPodUID("etcd_kube-system")).toBe("uid-1");
    // Read again unchanged: nothing to do.
    expect(manager.applyStaticPods(mine, [v1])).toEqual({ removed: [], added: [] });
    const v2 = pod("etcd", "uid-2");
    expect(manager.applyStaticPods(mine, [v2])).toEqual({ removed: [v1], added: [v2] });
    expect(manager.staticPodUID("etcd_kube-system")).toBe("uid-2");
    // The manifest is gone.
    manager.removePod("uid-1");
    manager.setPod(v2);
    expect(manager.applyStaticPods(mine, [])).toEqual({ removed: [v2], added: [] });
    expect(manager.isStaticPod("uid-2")).toBe(false);
    expect([...mine]).toEqual([]);
  });

  it("answers a static pod's API view with its mirror pod, none until it exists, and any other pod as itself", () => {
    const manager = new PodManager();
    const staticPod = pod("etcd", "uid-1");
    manager.applyStaticPods(new Set(), [staticPod]);
    manager.setPod(staticPod);
    const plain: Pod = { metadata: { name: "web", namespace: "default", uid: "uid-9" } };
    manager.setPod(plain);
    expect(manager.apiPodOf("uid-9")).toBe(plain);
    expect(manager.apiPodOf("uid-1")).toBeUndefined();
    const mirror: Pod = {
      metadata: {
        name: "etcd",
        namespace: "kube-system",
        uid: "mirror-uid",
        annotations: { "kubernetes.io/config.mirror": "uid-1" },
      },
    };
    manager.setMirrorPod(mirror);
    expect(manager.apiPodOf("uid-1")).toBe(mirror);
    manager.removeMirrorPod("etcd_kube-system", "other-uid");
    expect(manager.getMirrorPodByFullName("etcd_kube-system")).toBe(mirror);
    manager.removeMirrorPod("etcd_kube-system", "mirror-uid");
    expect(manager.getMirrorPodByFullName("etcd_kube-system")).toBeUndefined();
  });
});
