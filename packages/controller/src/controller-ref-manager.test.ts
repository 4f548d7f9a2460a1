import {
  labelSelectorAsSelector,
  newInternalError,
  newNotFound,
  type OwnerReference,
  type Pod,
  pods,
  type ReplicaSet,
  replicaSets,
} from "@reconcile/api";
import { describe, expect, it } from "vitest";
import {
  ClientReplicaSetControl,
  PodControllerRefManager,
  ReplicaSetControllerRefManager,
  recheckDeletionTimestamp,
} from "./controller-ref-manager.js";
import { ClientPodControl } from "./pod-control.js";
import { FakePodControl } from "./testing/fake-pod-control.js";
import { RecordingClient } from "./testing/recording-client.js";

const controllerKind = { apiVersion: "apps/v1", kind: "ReplicaSet" };
const selector = labelSelectorAsSelector({ matchLabels: { app: "web" } });

function replicaSet(extra: { deletionTimestamp?: string } = {}): ReplicaSet {
  return {
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    metadata: { name: "web", namespace: "prod", uid: "rs-uid", ...extra },
    spec: { selector: { matchLabels: { app: "web" } }, template: {} },
  };
}

function ownerRef(uid: string, controller = true): OwnerReference {
  return {
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    name: "owner",
    uid,
    controller,
    blockOwnerDeletion: true,
  };
}

function pod(
  name: string,
  labels: Record<string, string>,
  extra: { owner?: OwnerReference; deletionTimestamp?: string; namespace?: string } = {},
): Pod {
  return {
    metadata: {
      name,
      namespace: extra.namespace ?? "prod",
      uid: `${name}-uid`,
      labels,
      ...(extra.owner ? { ownerReferences: [extra.owner] } : {}),
      ...(extra.deletionTimestamp ? { deletionTimestamp: extra.deletionTimestamp } : {}),
    },
  };
}

function setup(
  controller: ReplicaSet,
  options: { finalizers?: string[]; canAdopt?: () => Promise<void> } = {},
) {
  const client = new RecordingClient();
  const podControl = new ClientPodControl({ client });
  let canAdoptCalls = 0;
  const manager = new PodControllerRefManager({
    podControl,
    controller,
    controllerKind,
    selector,
    canAdopt: async () => {
      canAdoptCalls++;
      await options.canAdopt?.();
    },
    ...(options.finalizers ? { finalizers: options.finalizers } : {}),
  });
  return { client, manager, canAdoptCalls: () => canAdoptCalls };
}

const names = (list: readonly Pod[]) => list.map((p) => p.metadata?.name);

describe("PodControllerRefManager.claimPods", () => {
  it("adopts matching orphans with a uid-preconditioned patch, checking canAdopt once", async () => {
    const { client, manager, canAdoptCalls } = setup(replicaSet());
    const orphans = [pod("a", { app: "web" }), pod("b", { app: "web" })];
    for (const p of orphans) client.seed(pods, p);
    const result = await manager.claimPods(orphans);
    expect(names(result.claimed)).toEqual(["a", "b"]);
    expect(result.errors).toEqual([]);
    expect(canAdoptCalls()).toBe(1);
    expect(client.actionsOf("patch", "pods")[0]?.body).toEqual({
      metadata: {
        ownerReferences: [
          {
            apiVersion: "apps/v1",
            kind: "ReplicaSet",
            name: "web",
            uid: "rs-uid",
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
        uid: "a-uid",
      },
    });
    expect(client.peek(pods, "prod", "b")?.metadata?.ownerReferences?.[0]?.uid).toBe("rs-uid");
  });

  it("claims owned matching pods without any API call", async () => {
    const { client, manager, canAdoptCalls } = setup(replicaSet());
    const owned = [pod("a", { app: "web" }, { owner: ownerRef("rs-uid") })];
    const result = await manager.claimPods(owned);
    expect(result.claimed).toEqual(owned);
    expect(client.actions).toEqual([]);
    expect(canAdoptCalls()).toBe(0);
  });

  it("keeps owned matching pods while the controller is being deleted but adopts nothing", async () => {
    const { client, manager } = setup(replicaSet({ deletionTimestamp: "2026-01-01T00:00:00Z" }));
    const owned = pod("owned", { app: "web" }, { owner: ownerRef("rs-uid") });
    const orphan = pod("orphan", { app: "web" });
    const result = await manager.claimPods([owned, orphan]);
    expect(names(result.claimed)).toEqual(["owned"]);
    expect(client.actions).toEqual([]);
  });

  it("does not release non-matching pods while the controller is being deleted", async () => {
    const { client, manager } = setup(replicaSet({ deletionTimestamp: "2026-01-01T00:00:00Z" }));
    const result = await manager.claimPods([pod("x", { app: "other" }, { owner: ownerRef("rs-uid") })]);
    expect(result.claimed).toEqual([]);
    expect(client.actions).toEqual([]);
  });

  it("releases owned pods that stopped matching", async () => {
    const { client, manager } = setup(replicaSet());
    const stray = client.seed(pods, pod("stray", { app: "other" }, { owner: ownerRef("rs-uid") }));
    const result = await manager.claimPods([stray]);
    expect(result).toEqual({ claimed: [], errors: [] });
    expect(client.actionsOf("patch", "pods")[0]?.body).toEqual({
      metadata: { ownerReferences: [{ $patch: "delete", uid: "rs-uid" }], uid: stray.metadata?.uid },
    });
    expect(client.peek(pods, "prod", "stray")?.metadata?.ownerReferences).toBeUndefined();
  });

  it("ignores pods controlled by another controller, and non-controller owners do not count", async () => {
    const { client, manager } = setup(replicaSet());
    const theirs = pod("theirs", { app: "web" }, { owner: ownerRef("other-uid") });
    const shared = client.seed(pods, pod("shared", { app: "web" }, { owner: ownerRef("other-uid", false) }));
    const result = await manager.claimPods([theirs, shared]);
    expect(names(result.claimed)).toEqual(["shared"]);
    expect(client.actionsOf("patch", "pods").map((a) => a.name)).toEqual(["shared"]);
    expect(client.peek(pods, "prod", "shared")?.metadata?.ownerReferences?.map((r) => r.uid)).toEqual([
      "other-uid",
      "rs-uid",
    ]);
  });

  it("never adopts a pod that is being deleted or lives in another namespace", async () => {
    const { client, manager } = setup(replicaSet());
    const dying = pod("dying", { app: "web" }, { deletionTimestamp: "2026-01-01T00:00:00Z" });
    const elsewhere = pod("elsewhere", { app: "web" }, { namespace: "dev" });
    const result = await manager.claimPods([dying, elsewhere]);
    expect(result.claimed).toEqual([]);
    expect(client.actions).toEqual([]);
  });

  it("applies the filters on top of the selector", async () => {
    const { client, manager } = setup(replicaSet());
    const a = client.seed(pods, pod("a", { app: "web" }));
    const b = client.seed(pods, pod("b", { app: "web" }));
    const result = await manager.claimPods([a, b], (p) => p.metadata?.name !== "b");
    expect(names(result.claimed)).toEqual(["a"]);
  });

  it("refuses to adopt when canAdopt fails, asking only once, and reports each pod", async () => {
    const { client, manager, canAdoptCalls } = setup(replicaSet(), {
      canAdopt: async () => {
        throw new Error("prod/web has just been deleted at 2026-01-01T00:00:00Z");
      },
    });
    const owned = pod("owned", { app: "web" }, { owner: ownerRef("rs-uid") });
    const result = await manager.claimPods([pod("a", { app: "web" }), owned, pod("b", { app: "web" })]);
    expect(names(result.claimed)).toEqual(["owned"]);
    expect(result.errors.map((e) => e.message)).toEqual([
      "can't adopt Pod prod/a (a-uid): prod/web has just been deleted at 2026-01-01T00:00:00Z",
      "can't adopt Pod prod/b (b-uid): prod/web has just been deleted at 2026-01-01T00:00:00Z",
    ]);
    expect(canAdoptCalls()).toBe(1);
    expect(client.actions).toEqual([]);
  });

  it("treats a pod that vanished before adoption as not owned, without error", async () => {
    const { manager } = setup(replicaSet());
    const result = await manager.claimPods([pod("gone", { app: "web" })]);
    expect(result).toEqual({ claimed: [], errors: [] });
  });

  it("swallows Invalid on release (the pod was recreated under the same name)", async () => {
    const { client, manager } = setup(replicaSet());
    client.seed(pods, pod("stray", { app: "other" }));
    const stale = pod("stray", { app: "other" }, { owner: ownerRef("rs-uid") });
    Object.assign(stale.metadata!, { uid: "old-uid" });
    const result = await manager.claimPods([stale]);
    expect(result).toEqual({ claimed: [], errors: [] });
    expect(client.actionsOf("patch", "pods")).toHaveLength(1);
  });

  it("reports other release errors and claims the rest", async () => {
    const { client, manager } = setup(replicaSet());
    client.seed(pods, pod("stray", { app: "other" }, { owner: ownerRef("rs-uid") }));
    client.reactors.push(() => newInternalError("boom"));
    const owned = pod("owned", { app: "web" }, { owner: ownerRef("rs-uid") });
    const result = await manager.claimPods([
      pod("stray", { app: "other" }, { owner: ownerRef("rs-uid") }),
      owned,
    ]);
    expect(names(result.claimed)).toEqual(["owned"]);
    expect(result.errors.map((e) => e.message)).toEqual(["Internal error occurred: boom"]);
  });

  it("adds finalizers on adoption and removes them on release", async () => {
    const control = new FakePodControl();
    const manager = new PodControllerRefManager({
      podControl: control,
      controller: replicaSet(),
      controllerKind,
      selector,
      finalizers: ["example.com/f"],
    });
    await manager.claimPods([
      pod("a", { app: "web" }),
      pod("b", { app: "x" }, { owner: ownerRef("rs-uid") }),
    ]);
    expect(control.patches.map((p) => p.patch)).toEqual([
      {
        metadata: {
          ownerReferences: [
            {
              apiVersion: "apps/v1",
              kind: "ReplicaSet",
              name: "web",
              uid: "rs-uid",
              controller: true,
              blockOwnerDeletion: true,
            },
          ],
          uid: "a-uid",
          finalizers: ["example.com/f"],
        },
      },
      {
        metadata: {
          ownerReferences: [{ $patch: "delete", uid: "rs-uid" }],
          uid: "b-uid",
          "$deleteFromPrimitiveList/finalizers": ["example.com/f"],
        },
      },
    ]);
  });

  it("rejects a controller without uid", () => {
    const controller = replicaSet();
    Object.assign(controller.metadata!, { uid: undefined });
    expect(
      () =>
        new PodControllerRefManager({
          podControl: new FakePodControl(),
          controller,
          controllerKind,
          selector,
        }),
    ).toThrow("ControllerRefManager: the controller needs metadata.name and metadata.uid");
  });
});

describe("ReplicaSetControllerRefManager.claimReplicaSets", () => {
  it("adopts matching orphan ReplicaSets and releases owned ones that stopped matching", async () => {
    const client = new RecordingClient();
    const deployment = {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "web", namespace: "prod", uid: "d-uid" },
    };
    const manager = new ReplicaSetControllerRefManager({
      replicaSetControl: new ClientReplicaSetControl({ client }),
      controller: deployment,
      controllerKind: { apiVersion: "apps/v1", kind: "Deployment" },
      selector,
    });
    const orphan = client.seed(replicaSets, {
      metadata: { name: "rs-a", namespace: "prod", labels: { app: "web" } },
    });
    const stray = client.seed(replicaSets, {
      metadata: {
        name: "rs-b",
        namespace: "prod",
        labels: { app: "x" },
        ownerReferences: [{ ...ownerRef("d-uid"), kind: "Deployment" }],
      },
    });
    const result = await manager.claimReplicaSets([orphan, stray]);
    expect(result.claimed.map((rs) => rs.metadata?.name)).toEqual(["rs-a"]);
    expect(client.peek(replicaSets, "prod", "rs-a")?.metadata?.ownerReferences?.[0]).toMatchObject({
      kind: "Deployment",
      uid: "d-uid",
      controller: true,
    });
    expect(client.peek(replicaSets, "prod", "rs-b")?.metadata?.ownerReferences).toBeUndefined();
    expect(client.actionsOf("patch", "replicasets").every((a) => a.patchType === "strategic-merge")).toBe(
      true,
    );
  });
});

describe("recheckDeletionTimestamp", () => {
  it("allows adoption when the fresh object is not being deleted", async () => {
    await expect(recheckDeletionTimestamp(async () => replicaSet())()).resolves.toBeUndefined();
  });

  it("refuses when the fresh object is being deleted", async () => {
    const check = recheckDeletionTimestamp(async () =>
      replicaSet({ deletionTimestamp: "2026-01-01T00:00:00Z" }),
    );
    await expect(check()).rejects.toThrow("prod/web has just been deleted at 2026-01-01T00:00:00Z");
  });

  it("refuses when the read fails", async () => {
    const check = recheckDeletionTimestamp(async () => {
      throw newNotFound({ group: "apps", resource: "replicasets" }, "web");
    });
    await expect(check()).rejects.toThrow(
      `can't recheck DeletionTimestamp: replicasets.apps "web" not found`,
    );
  });
});

describe("ref managers with a signal", () => {
  it("pass it to every adopt and release patch", async () => {
    const signals: (AbortSignal | undefined)[] = [];
    const podControl = new FakePodControl();
    podControl.patchPod = async (_namespace, _name, _patch, options) => {
      signals.push(options?.signal);
    };
    const { signal } = new AbortController();
    const manager = new PodControllerRefManager({
      podControl,
      controller: replicaSet(),
      controllerKind,
      selector,
      signal,
    });
    await manager.claimPods([
      pod("orphan", { app: "web" }),
      pod("stray", { app: "db" }, { owner: ownerRef("rs-uid") }),
    ]);
    const rsSignals: (AbortSignal | undefined)[] = [];
    const rsManager = new ReplicaSetControllerRefManager({
      replicaSetControl: {
        patchReplicaSet: async (_namespace, _name, _patch, options) => {
          rsSignals.push(options?.signal);
        },
      },
      controller: { metadata: { name: "deploy", namespace: "prod", uid: "d-uid" } },
      controllerKind: { apiVersion: "apps/v1", kind: "Deployment" },
      selector,
      signal,
    });
    await rsManager.claimReplicaSets([
      { ...replicaSet(), metadata: { name: "rs", namespace: "prod", uid: "x", labels: { app: "web" } } },
    ]);
    expect(signals).toEqual([signal, signal]);
    expect(rsSignals).toEqual([signal]);
  });
});
