import {
  type DeepReadonly,
  DeletedFinalStateUnknown,
  type KubeObject,
  metaNamespaceKeyFunc,
  newConflict,
  newInternalError,
  newNotFound,
  type Pod,
  podKey,
  type ReplicaSet,
  replicaSets,
  StatusError,
} from "@reconcile/api";
import { FakeClock } from "@reconcile/clock";
import { type Logger, type PodControl, TerminalError } from "@reconcile/controller";
import { FakePodControl, RecordingClient } from "@reconcile/controller/testing";
import { UIDTrackingControllerExpectations } from "@reconcile/expectations";
import { describe, expect, it, vi } from "vitest";
import type { ControllerIndexer, ControllerInformer } from "./informer-types.js";
import { getPodsToDelete, ReplicaSetController } from "./replica-set-controller.js";

// ---------------------------------------------------------------------------
// Fakes: an informer whose store the test fills directly (handlers are called
// by the test, as upstream's unit tests call the controller's handlers).

class FakeInformer<T extends KubeObject> implements ControllerInformer<T> {
  synced = true;
  /** How often hasSynced was asked. */
  syncChecks = 0;
  readonly objects = new Map<string, DeepReadonly<T>>();
  readonly #indexers: Record<string, (obj: DeepReadonly<T>) => readonly string[]> = {
    namespace: (obj) => [obj.metadata?.namespace ?? ""],
  };

  addEventHandler(): unknown {
    return {};
  }

  hasSynced(): boolean {
    this.syncChecks++;
    return this.synced;
  }

  add(obj: T | DeepReadonly<T>): void {
    this.objects.set(metaNamespaceKeyFunc(obj), obj as DeepReadonly<T>);
  }

  remove(obj: T | DeepReadonly<T>): void {
    this.objects.delete(metaNamespaceKeyFunc(obj));
  }

  getIndexer(): ControllerIndexer<T> {
    return {
      getByKey: (key) => this.objects.get(key),
      byIndex: (name, value) => {
        const fn = this.#indexers[name];
        if (fn === undefined) throw new Error(`no index ${name}`);
        return [...this.objects.values()].filter((obj) => fn(obj).includes(value));
      },
      getIndexers: () => this.#indexers,
      addIndexers: (indexers) => Object.assign(this.#indexers, indexers),
    };
  }
}

const labelMap = { foo: "bar" };
const now = Date.parse("2026-05-01T00:00:00Z");

function newReplicaSet(
  replicas: number,
  options: { name?: string; labels?: Record<string, string>; minReadySeconds?: number } = {},
): ReplicaSet {
  const labels = options.labels ?? labelMap;
  return {
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    metadata: {
      name: options.name ?? "foobar",
      namespace: "default",
      uid: `${options.name ?? "foobar"}-uid`,
      generation: 1,
    },
    spec: {
      replicas,
      minReadySeconds: options.minReadySeconds ?? 0,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: { containers: [{ name: "c", image: "foo/bar" }] },
      },
    },
    status: { replicas: 0 },
  };
}

let podCounter = 0;
function newPod(
  name: string,
  rs: ReplicaSet | undefined,
  phase: string,
  options: { labels?: Record<string, string>; ready?: boolean; nodeName?: string } = {},
): Pod {
  podCounter++;
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name,
      namespace: "default",
      uid: `${name}-uid`,
      resourceVersion: String(podCounter),
      labels: options.labels ?? rs?.spec?.selector.matchLabels ?? labelMap,
      creationTimestamp: new Date(now - 60_000).toISOString(),
      ...(rs
        ? {
            ownerReferences: [
              {
                apiVersion: "apps/v1",
                kind: "ReplicaSet",
                name: rs.metadata!.name!,
                uid: rs.metadata!.uid!,
                controller: true,
                blockOwnerDeletion: true,
              },
            ],
          }
        : {}),
    },
    spec: { containers: [], ...(options.nodeName ? { nodeName: options.nodeName } : {}) },
    status: {
      phase,
      ...(options.ready
        ? {
            conditions: [
              { type: "Ready", status: "True", lastTransitionTime: new Date(now - 30_000).toISOString() },
            ],
          }
        : {}),
    },
  };
}

function newPodList(rs: ReplicaSet | undefined, count: number, phase = "Running", prefix = "pod"): Pod[] {
  return Array.from({ length: count }, (_, i) => newPod(`${prefix}${i}`, rs, phase));
}

function setup(options: { burstReplicas?: number; podControl?: FakePodControl } = {}) {
  const clock = new FakeClock(now);
  const client = new RecordingClient();
  const podInformer = new FakeInformer<Pod>();
  const rsInformer = new FakeInformer<ReplicaSet>();
  const podControl = options.podControl ?? new FakePodControl();
  const controller = new ReplicaSetController({
    client,
    podInformer,
    replicaSetInformer: rsInformer,
    clock,
    podControl,
    burstReplicas: options.burstReplicas ?? 500,
  });
  /** Stores the ReplicaSet in the API and the cache, as a watch would. */
  const addReplicaSet = (rs: ReplicaSet): ReplicaSet => {
    const stored = client.seed(replicaSets, rs);
    rsInformer.add(stored);
    return stored;
  };
  return { clock, client, podInformer, rsInformer, podControl, controller, addReplicaSet };
}

function validateSyncReplicaSet(
  podControl: FakePodControl,
  creates: number,
  deletes: number,
  patches: number,
) {
  expect({
    creates: podControl.templates.length,
    deletes: podControl.deletePodNames.length,
    patches: podControl.patches.length,
  }).toEqual({ creates, deletes, patches });
}

async function queuedKeys(queue: ReplicaSetController["queue"]): Promise<string[]> {
  const keys: string[] = [];
  while (queue.len() > 0) {
    const next = await queue.get();
    if (next.shutdown) break;
    keys.push(next.item);
    queue.done(next.item);
  }
  return keys.sort();
}

const rsKey = "default/foobar";

// ---------------------------------------------------------------------------

describe("ReplicaSetController.syncReplicaSet", () => {
  it("does nothing when the pod count is right", async () => {
    const { podInformer, podControl, controller, addReplicaSet } = setup();
    const rs = addReplicaSet(newReplicaSet(2));
    for (const pod of newPodList(rs, 2)) podInformer.add(pod);
    await controller.syncReplicaSet(rsKey);
    validateSyncReplicaSet(podControl, 0, 0, 0);
  });

  it("deletes the surplus pod", async () => {
    const { podInformer, podControl, controller, addReplicaSet } = setup();
    const rs = addReplicaSet(newReplicaSet(1));
    for (const pod of newPodList(rs, 2)) podInformer.add(pod);
    await controller.syncReplicaSet(rsKey);
    validateSyncReplicaSet(podControl, 0, 1, 0);
  });

  it("creates the missing pods with the template and a controllerRef", async () => {
    const { podControl, controller, addReplicaSet } = setup();
    const rs = addReplicaSet(newReplicaSet(2));
    await controller.syncReplicaSet(rsKey);
    validateSyncReplicaSet(podControl, 2, 0, 0);
    expect(podControl.templates[0]).toEqual(rs.spec?.template);
    expect(podControl.controllerRefs[0]).toEqual({
      apiVersion: "apps/v1",
      kind: "ReplicaSet",
      name: "foobar",
      uid: rs.metadata?.uid,
      controller: true,
      blockOwnerDeletion: true,
    });
  });

  it("ignores inactive pods: succeeded, failed and being deleted", async () => {
    const { podInformer, podControl, controller, addReplicaSet } = setup();
    const rs = addReplicaSet(newReplicaSet(2));
    podInformer.add(newPod("done", rs, "Succeeded"));
    podInformer.add(newPod("failed", rs, "Failed"));
    const deleting = newPod("deleting", rs, "Running");
    Object.assign(deleting.metadata!, { deletionTimestamp: new Date(now).toISOString() });
    podInformer.add(deleting);
    await controller.syncReplicaSet(rsKey);
    validateSyncReplicaSet(podControl, 2, 0, 0);
  });

  it("stops at the create limit and lowers expectations for the skipped creations", async () => {
    const podControl = new FakePodControl({ createLimit: 10 });
    const { controller, addReplicaSet } = setup({ podControl });
    addReplicaSet(newReplicaSet(100));
    await expect(controller.syncReplicaSet(rsKey)).rejects.toThrow(
      "not creating pod, limit 10 already reached",
    );
    // Batches 1, 2, 4 succeed; the batch of 8 fails at its fourth call.
    validateSyncReplicaSet(podControl, 10, 0, 0);
    expect(podControl.createCallCount).toBe(15);
    const expectations = (controller.expectations as UIDTrackingControllerExpectations).getExpectations(
      rsKey,
    );
    expect(expectations?.add).toBe(10);
  });

  it("waits for the expectations before acting again, but still writes status", async () => {
    const { client, podInformer, podControl, controller, addReplicaSet } = setup();
    const rs = addReplicaSet(newReplicaSet(2));
    podInformer.add(newPod("pod0", rs, "Running"));
    controller.expectations.expectCreations(rsKey, 10);
    await controller.syncReplicaSet(rsKey);
    validateSyncReplicaSet(podControl, 0, 0, 0);
    expect(client.actionsOf("updateStatus")).toHaveLength(1);
    expect(client.peek(replicaSets, "default", "foobar")?.status?.replicas).toBe(1);
  });

  it("a failed create leaves expectations fulfilled so the next sync tries again", async () => {
    const podControl = new FakePodControl({ err: new Error("fake error") });
    const { podInformer, rsInformer, controller, addReplicaSet, client } = setup({ podControl });
    const rs = addReplicaSet(newReplicaSet(2));
    podInformer.add(newPod("pod0", rs, "Running"));
    await expect(controller.syncReplicaSet(rsKey)).rejects.toThrow("fake error");
    validateSyncReplicaSet(podControl, 1, 0, 0);
    expect(controller.expectations.satisfiedExpectations(rsKey)).toBe(true);
    // The failure shows in status as ReplicaFailure / FailedCreate.
    const status = client.peek(replicaSets, "default", "foobar")?.status;
    expect(status?.conditions?.map((c) => [c.type, c.reason, c.message])).toEqual([
      ["ReplicaFailure", "FailedCreate", "fake error"],
    ]);
    podControl.err = undefined;
    podControl.clear();
    rsInformer.add(client.peek(replicaSets, "default", "foobar")!); // the watch delivers the status write
    await controller.syncReplicaSet(rsKey);
    validateSyncReplicaSet(podControl, 1, 0, 0);
    expect(client.peek(replicaSets, "default", "foobar")?.status?.conditions).toBeUndefined();
  });

  it("checks expectations before listing pods, so a pod observed meanwhile is counted", async () => {
    const podControl = new FakePodControl();
    const { podInformer, addReplicaSet, client, rsInformer: rsCache } = setup({ podControl });
    const rs = addReplicaSet(newReplicaSet(2));
    const [first, second] = newPodList(rs, 2, "Pending");
    podInformer.add(first!);
    const inner = new UIDTrackingControllerExpectations();
    const expectations = {
      ...bindAll(inner),
      satisfiedExpectations(key: string) {
        // If pods were listed before expectations were checked, this pod would be missed.
        podInformer.add(second!);
        return inner.satisfiedExpectations(key);
      },
    };
    const controller = new ReplicaSetController({
      client,
      podInformer,
      replicaSetInformer: rsCache,
      podControl,
      expectations,
      clock: new FakeClock(now),
    });
    await controller.syncReplicaSet(rsKey);
    validateSyncReplicaSet(podControl, 0, 0, 0);
  });

  it("forgets the expectations of a deleted ReplicaSet and creates nothing for it", async () => {
    const { rsInformer, podControl, controller, addReplicaSet } = setup();
    const rs = addReplicaSet(newReplicaSet(1));
    await controller.syncReplicaSet(rsKey);
    validateSyncReplicaSet(podControl, 1, 0, 0);
    expect(controller.expectations.satisfiedExpectations(rsKey)).toBe(false);
    rsInformer.remove(rs);
    controller.deleteReplicaSet(rs);
    expect(controller.expectations.satisfiedExpectations(rsKey)).toBe(true);
    expect(await queuedKeys(controller.queue)).toEqual([rsKey]);
    podControl.clear();
    await controller.syncReplicaSet(rsKey);
    validateSyncReplicaSet(podControl, 0, 0, 0);
  });

  it("creates at most burstReplicas per sync and waits to observe them", async () => {
    const { podInformer, podControl, controller, addReplicaSet } = setup({ burstReplicas: 5 });
    const rs = addReplicaSet(newReplicaSet(12));
    await controller.syncReplicaSet(rsKey);
    validateSyncReplicaSet(podControl, 5, 0, 0);
    podControl.clear();
    await controller.syncReplicaSet(rsKey);
    validateSyncReplicaSet(podControl, 0, 0, 0);
    // The informer sees the five pods.
    for (const pod of newPodList(rs, 5)) {
      podInformer.add(pod);
      controller.addPod(pod);
    }
    await controller.syncReplicaSet(rsKey);
    validateSyncReplicaSet(podControl, 5, 0, 0);
  });

  it("deletes in parallel and counts each pod once whether seen as update or delete", async () => {
    const { podInformer, podControl, controller, addReplicaSet } = setup();
    const rs = addReplicaSet(newReplicaSet(1));
    const list = newPodList(rs, 3);
    for (const pod of list) podInformer.add(pod);
    await controller.syncReplicaSet(rsKey);
    validateSyncReplicaSet(podControl, 0, 2, 0);
    const deleted = list.filter((p) => podControl.deletePodNames.includes(p.metadata!.name!));
    expect(controller.expectations.satisfiedExpectations(rsKey)).toBe(false);
    // First pod: a graceful delete shows as an update setting deletionTimestamp, then the delete.
    const terminating = structuredClone(deleted[0]!);
    Object.assign(terminating.metadata!, {
      deletionTimestamp: new Date(now).toISOString(),
      resourceVersion: "999",
    });
    controller.updatePod(deleted[0]!, terminating);
    controller.deletePod(terminating);
    expect(controller.expectations.satisfiedExpectations(rsKey)).toBe(false);
    controller.deletePod(new DeletedFinalStateUnknown(metaNamespaceKeyFunc(deleted[1]!), deleted[1]!));
    expect(controller.expectations.satisfiedExpectations(rsKey)).toBe(true);
  });

  it("treats a NotFound delete as observed and not as an error", async () => {
    const podControl = new FakePodControl({ err: newNotFound({ group: "", resource: "pods" }, "x") });
    const { podInformer, controller, addReplicaSet } = setup({ podControl });
    const rs = addReplicaSet(newReplicaSet(0));
    for (const pod of newPodList(rs, 2)) podInformer.add(pod);
    await controller.syncReplicaSet(rsKey);
    validateSyncReplicaSet(podControl, 0, 2, 0);
    expect(controller.expectations.satisfiedExpectations(rsKey)).toBe(true);
  });

  it("returns a delete error after lowering the expectations for it", async () => {
    const podControl = new FakePodControl({ err: newInternalError("boom") });
    const { podInformer, controller, addReplicaSet } = setup({ podControl });
    const rs = addReplicaSet(newReplicaSet(0));
    for (const pod of newPodList(rs, 2)) podInformer.add(pod);
    await expect(controller.syncReplicaSet(rsKey)).rejects.toThrow("Internal error occurred: boom");
    expect(controller.expectations.satisfiedExpectations(rsKey)).toBe(true);
  });

  it("adopts matching orphans after a fresh read and then counts them", async () => {
    const { podInformer, podControl, controller, addReplicaSet, client } = setup();
    addReplicaSet(newReplicaSet(2));
    for (const pod of newPodList(undefined, 2)) podInformer.add(pod);
    await controller.syncReplicaSet(rsKey);
    validateSyncReplicaSet(podControl, 0, 0, 2);
    expect(client.actionsOf("get", "replicasets")).toHaveLength(1);
  });

  it("does not touch a pod controlled by someone else and creates its own", async () => {
    const { podInformer, podControl, controller, addReplicaSet } = setup();
    addReplicaSet(newReplicaSet(2));
    const other = newReplicaSet(1, { name: "other" });
    for (const pod of newPodList(other, 1, "Running", "theirs")) podInformer.add(pod);
    await controller.syncReplicaSet(rsKey);
    validateSyncReplicaSet(podControl, 2, 0, 0);
  });

  it("fails the sync without creating when adopting an orphan fails", async () => {
    const podControl = new FakePodControl({ err: newInternalError("patch failed") });
    const { podInformer, controller, addReplicaSet } = setup({ podControl });
    addReplicaSet(newReplicaSet(2));
    for (const pod of newPodList(undefined, 2)) podInformer.add(pod);
    await expect(controller.syncReplicaSet(rsKey)).rejects.toThrow("patch failed");
    validateSyncReplicaSet(podControl, 0, 0, 2);
  });

  it("neither adopts nor creates while the ReplicaSet is being deleted", async () => {
    const { podInformer, podControl, controller, addReplicaSet } = setup();
    const rs = newReplicaSet(2);
    Object.assign(rs.metadata!, { deletionTimestamp: new Date(now).toISOString() });
    addReplicaSet(rs);
    podInformer.add(newPod("orphan", undefined, "Running"));
    await controller.syncReplicaSet(rsKey);
    validateSyncReplicaSet(podControl, 0, 0, 0);
  });

  it("neither adopts nor creates when the fresh read shows the ReplicaSet being deleted", async () => {
    const { podInformer, podControl, controller, rsInformer, client } = setup();
    const stored = client.seed(replicaSets, {
      ...newReplicaSet(2),
      metadata: { ...newReplicaSet(2).metadata, deletionTimestamp: new Date(now).toISOString() },
    });
    // The cache has not seen the deletion yet.
    const cached = structuredClone(stored);
    delete (cached.metadata as { deletionTimestamp?: string }).deletionTimestamp;
    rsInformer.add(cached);
    podInformer.add(newPod("orphan", undefined, "Running"));
    await expect(controller.syncReplicaSet(rsKey)).rejects.toThrow(
      "can't adopt Pod default/orphan (orphan-uid): default/foobar has just been deleted at",
    );
    validateSyncReplicaSet(podControl, 0, 0, 0);
  });

  it("refuses to adopt when the fresh read finds a ReplicaSet with another uid", async () => {
    const { podInformer, podControl, controller, rsInformer, client } = setup();
    client.seed(replicaSets, {
      ...newReplicaSet(2),
      metadata: { ...newReplicaSet(2).metadata, uid: "new-uid" },
    });
    rsInformer.add(newReplicaSet(2));
    podInformer.add(newPod("orphan", undefined, "Running"));
    await expect(controller.syncReplicaSet(rsKey)).rejects.toThrow(
      "original ReplicaSet default/foobar is gone: got uid new-uid, wanted foobar-uid",
    );
    validateSyncReplicaSet(podControl, 0, 0, 0);
  });

  it("sets observedGeneration and the counts in status", async () => {
    const { podInformer, controller, addReplicaSet, client } = setup();
    const rs = newReplicaSet(2);
    Object.assign(rs.metadata!, { generation: 3 });
    const stored = addReplicaSet(rs);
    podInformer.add(newPod("a", stored, "Running", { ready: true }));
    podInformer.add(newPod("b", stored, "Running", { labels: { ...labelMap } }));
    await controller.syncReplicaSet(rsKey);
    expect(client.peek(replicaSets, "default", "foobar")?.status).toEqual({
      replicas: 2,
      fullyLabeledReplicas: 2,
      readyReplicas: 1,
      availableReplicas: 1,
      observedGeneration: 3,
    });
  });

  it("returns the status update error so the key is retried", async () => {
    const { podInformer, controller, addReplicaSet, client } = setup();
    const rs = addReplicaSet(newReplicaSet(1));
    podInformer.add(newPod("a", rs, "Running"));
    client.reactors.push((a) =>
      a.verb === "updateStatus"
        ? newConflict({ group: "apps", resource: "replicasets" }, "foobar")
        : undefined,
    );
    const error = await controller.syncReplicaSet(rsKey).catch((e: unknown) => e);
    expect(StatusError.isInstance(error) && error.reason).toBe("Conflict");
  });

  it("requeues after minReadySeconds when every pod is ready but not yet available", async () => {
    const { podInformer, controller, addReplicaSet, clock } = setup();
    const rs = addReplicaSet(newReplicaSet(1, { minReadySeconds: 60 }));
    podInformer.add(newPod("a", rs, "Running", { ready: true }));
    await controller.syncReplicaSet(rsKey);
    expect(controller.queue.len()).toBe(0);
    expect(clock.pendingTimers().map((t) => t.in)).toEqual([60_000]);
    await clock.advance(60_000);
    expect(await queuedKeys(controller.queue)).toEqual([rsKey]);
  });

  it("rejects an invalid selector with a TerminalError (not retried) and touches no pod or status", async () => {
    const { podControl, client, controller, addReplicaSet } = setup();
    const rs = newReplicaSet(2);
    rs.spec!.selector = { matchExpressions: [{ key: "app", operator: "Bogus", values: ["x"] }] };
    addReplicaSet(rs);
    const error = await controller.syncReplicaSet(rsKey).catch((e: unknown) => e);
    expect(TerminalError.isTerminal(error)).toBe(true);
    expect((error as Error).message).toMatch(
      /^error converting pod selector to selector for rs default\/foobar: /,
    );
    validateSyncReplicaSet(podControl, 0, 0, 0);
    expect(client.actionsOf("updateStatus")).toEqual([]);
  });

  it("passes the sync's signal to pod creates and status writes", async () => {
    const podControl = new FakePodControl();
    const createSignals: (AbortSignal | undefined)[] = [];
    const create = podControl.createPods.bind(podControl);
    podControl.createPods = (
      ...[ns, template, object, ref, options]: Parameters<PodControl["createPods"]>
    ) => {
      createSignals.push(options?.signal);
      return create(ns, template, object, ref);
    };
    const { client, controller, addReplicaSet } = setup({ podControl });
    const statusSignals: (AbortSignal | undefined)[] = [];
    const resource = client.resource.bind(client);
    client.resource = (descriptor, ns) =>
      new Proxy(resource(descriptor, ns), {
        get(target, property) {
          const value = Reflect.get(target, property);
          if (property === "updateStatus") {
            return (obj: never, options?: { signal?: AbortSignal }) => {
              statusSignals.push(options?.signal);
              return target.updateStatus(obj, options);
            };
          }
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
    addReplicaSet(newReplicaSet(2));
    const signal = new AbortController().signal;
    await controller.syncReplicaSet(rsKey, { signal });
    expect(createSignals).toEqual([signal, signal]);
    expect(statusSignals).toEqual([signal]);
  });

  it("drops a key whose ReplicaSet is gone and forgets its expectations", async () => {
    const { podControl, controller } = setup();
    controller.expectations.expectCreations(rsKey, 3);
    await controller.syncReplicaSet(rsKey);
    expect(controller.expectations.satisfiedExpectations(rsKey)).toBe(true);
    validateSyncReplicaSet(podControl, 0, 0, 0);
  });
});

describe("ReplicaSetController handlers", () => {
  it("addPod observes a creation for the owner and enqueues it", async () => {
    const { controller, addReplicaSet } = setup();
    const rs = addReplicaSet(newReplicaSet(1));
    controller.expectations.expectCreations(rsKey, 1);
    controller.addPod(newPod("a", rs, "Pending"));
    expect(controller.expectations.satisfiedExpectations(rsKey)).toBe(true);
    expect(await queuedKeys(controller.queue)).toEqual([rsKey]);
  });

  it("addPod of a pod being deleted counts as a deletion, not a creation", async () => {
    const { controller, addReplicaSet } = setup();
    const rs = addReplicaSet(newReplicaSet(1));
    const pod = newPod("a", rs, "Running");
    Object.assign(pod.metadata!, { deletionTimestamp: new Date(now).toISOString() });
    controller.expectations.expectCreations(rsKey, 1);
    controller.addPod(pod);
    expect(controller.expectations.satisfiedExpectations(rsKey)).toBe(false);
    expect(await queuedKeys(controller.queue)).toEqual([rsKey]);
  });

  it("addPod ignores a pod whose owner is unknown, of another kind, or has another uid", async () => {
    const { controller, addReplicaSet } = setup();
    const rs = addReplicaSet(newReplicaSet(1));
    const unknownOwner = newPod("a", newReplicaSet(1, { name: "ghost" }), "Running");
    const otherKind = newPod("b", rs, "Running");
    Object.assign(otherKind.metadata!.ownerReferences![0]!, { kind: "StatefulSet" });
    const otherUid = newPod("c", rs, "Running");
    Object.assign(otherUid.metadata!.ownerReferences![0]!, { uid: "recreated" });
    for (const pod of [unknownOwner, otherKind, otherUid]) controller.addPod(pod);
    expect(await queuedKeys(controller.queue)).toEqual([]);
  });

  it("addPod of an orphan enqueues every ReplicaSet in its namespace whose selector matches", async () => {
    const { controller, addReplicaSet } = setup();
    addReplicaSet(newReplicaSet(1, { name: "one" }));
    addReplicaSet(newReplicaSet(1, { name: "two" }));
    addReplicaSet(newReplicaSet(1, { name: "other", labels: { app: "x" } }));
    const elsewhere = newReplicaSet(1, { name: "elsewhere" });
    Object.assign(elsewhere.metadata!, { namespace: "other-ns" });
    addReplicaSet(elsewhere);
    controller.addPod(newPod("orphan", undefined, "Running"));
    controller.addPod(newPod("unlabelled", undefined, "Running", { labels: {} }));
    expect(await queuedKeys(controller.queue)).toEqual(["default/one", "default/two"]);
  });

  it("updatePod ignores a resync of the same resourceVersion", async () => {
    const { controller, addReplicaSet } = setup();
    const rs = addReplicaSet(newReplicaSet(1));
    const pod = newPod("a", rs, "Running");
    controller.updatePod(pod, pod);
    expect(await queuedKeys(controller.queue)).toEqual([]);
  });

  it("updatePod enqueues both the old and the new owner when the controllerRef moves", async () => {
    const { controller, addReplicaSet } = setup();
    const rs1 = addReplicaSet(newReplicaSet(1, { name: "rs1" }));
    const rs2 = addReplicaSet(newReplicaSet(1, { name: "rs2", labels: { app: "two" } }));
    const oldPod = newPod("a", rs1, "Running");
    const curPod = newPod("a", rs2, "Running");
    controller.updatePod(oldPod, curPod);
    expect(await queuedKeys(controller.queue)).toEqual(["default/rs1", "default/rs2"]);
  });

  it("updatePod of a released orphan whose labels changed enqueues the ReplicaSets it matches now", async () => {
    const { controller, addReplicaSet } = setup();
    addReplicaSet(newReplicaSet(1, { name: "rs1" }));
    addReplicaSet(newReplicaSet(1, { name: "rs2", labels: { app: "two" } }));
    const oldPod = newPod("a", undefined, "Running");
    const curPod = newPod("a", undefined, "Running", { labels: { app: "two" } });
    controller.updatePod(oldPod, curPod);
    expect(await queuedKeys(controller.queue)).toEqual(["default/rs2"]);
  });

  it("updatePod with a deletionTimestamp observes the deletion once, for old labels too", async () => {
    const { controller, addReplicaSet } = setup();
    const rs = addReplicaSet(newReplicaSet(1));
    const oldPod = newPod("a", rs, "Running");
    controller.expectations.expectDeletions(rsKey, [podKey(oldPod)]);
    const curPod = newPod("a", rs, "Running", { labels: { foo: "changed" } });
    Object.assign(curPod.metadata!, { deletionTimestamp: new Date(now).toISOString() });
    controller.updatePod(oldPod, curPod);
    expect(controller.expectations.satisfiedExpectations(rsKey)).toBe(true);
    expect(await queuedKeys(controller.queue)).toEqual([rsKey]);
  });

  it("updatePod requeues after minReadySeconds + 1s when a pod becomes ready", async () => {
    const { controller, addReplicaSet, clock } = setup();
    const rs = addReplicaSet(newReplicaSet(1, { minReadySeconds: 10 }));
    const oldPod = newPod("a", rs, "Running");
    const curPod = newPod("a", rs, "Running", { ready: true });
    controller.updatePod(oldPod, curPod);
    expect(await queuedKeys(controller.queue)).toEqual([rsKey]);
    expect(clock.pendingTimers().map((t) => t.in)).toEqual([11_000]);
  });

  it("deletePod unwraps a tombstone, observes the deletion and enqueues the owner", async () => {
    const { controller, addReplicaSet } = setup();
    const rs = addReplicaSet(newReplicaSet(1));
    const pod = newPod("a", rs, "Running");
    controller.expectations.expectDeletions(rsKey, [podKey(pod)]);
    controller.deletePod(new DeletedFinalStateUnknown(metaNamespaceKeyFunc(pod), pod));
    expect(controller.expectations.satisfiedExpectations(rsKey)).toBe(true);
    expect(await queuedKeys(controller.queue)).toEqual([rsKey]);
  });

  it("deletePod of an orphan does nothing", async () => {
    const { controller, addReplicaSet } = setup();
    addReplicaSet(newReplicaSet(1));
    controller.deletePod(newPod("a", undefined, "Running"));
    expect(await queuedKeys(controller.queue)).toEqual([]);
  });

  it("updateReplicaSet with a new uid forgets the old expectations and enqueues", async () => {
    const { controller } = setup();
    const old = newReplicaSet(1);
    const recreated = newReplicaSet(1);
    Object.assign(recreated.metadata!, { uid: "recreated" });
    controller.expectations.expectCreations(rsKey, 1);
    controller.updateReplicaSet(old, recreated);
    expect(controller.expectations.satisfiedExpectations(rsKey)).toBe(true);
    expect(await queuedKeys(controller.queue)).toEqual([rsKey]);
  });

  it("updateReplicaSet enqueues on a status-only change too", async () => {
    const { controller } = setup();
    const old = newReplicaSet(1);
    controller.expectations.expectCreations(rsKey, 1);
    controller.updateReplicaSet(old, { ...old, status: { replicas: 1 } });
    expect(controller.expectations.satisfiedExpectations(rsKey)).toBe(false);
    expect(await queuedKeys(controller.queue)).toEqual([rsKey]);
  });

  it("deleteReplicaSet accepts a tombstone", async () => {
    const { controller } = setup();
    const rs = newReplicaSet(1);
    controller.expectations.expectCreations(rsKey, 1);
    controller.deleteReplicaSet(new DeletedFinalStateUnknown(rsKey, rs));
    expect(controller.expectations.satisfiedExpectations(rsKey)).toBe(true);
    expect(await queuedKeys(controller.queue)).toEqual([rsKey]);
  });
});

describe("ReplicaSetController.run", () => {
  it("waits for the caches to sync, runs workers and stops on abort", async () => {
    const { controller, addReplicaSet, podControl, podInformer, rsInformer, clock } = setup();
    podInformer.synced = false;
    addReplicaSet(newReplicaSet(1));
    controller.addReplicaSet(rsInformer.objects.get(rsKey)!);
    const abort = new AbortController();
    const run = controller.run({ signal: abort.signal, workers: 2 });
    await clock.advance(100);
    // Polled twice and found unsynced: no worker has run.
    await vi.waitFor(() => expect(podInformer.syncChecks).toBeGreaterThanOrEqual(2), {
      timeout: 2_000,
      interval: 10,
    });
    validateSyncReplicaSet(podControl, 0, 0, 0);
    podInformer.synced = true;
    // hasSynced is polled on real timers (every 100 ms), as client-go's WaitForCacheSync polls.
    await vi.waitFor(() => validateSyncReplicaSet(podControl, 1, 0, 0), { timeout: 2_000, interval: 10 });
    abort.abort();
    await run;
    expect(controller.queue.shuttingDown()).toBe(true);
  });

  it("logs each sync with controller, namespace, name, reconcileID and why the key was queued", async () => {
    const records: { bindings: Record<string, unknown>; msg: string | undefined }[] = [];
    const logger = (bindings: Record<string, unknown>): Logger => ({
      debug: (_obj, msg) => records.push({ bindings, msg }),
      info: () => {},
      warn: () => {},
      error: () => {},
      child: (more) => logger({ ...bindings, ...more }),
    });
    const clock = new FakeClock(now);
    const client = new RecordingClient();
    const podInformer = new FakeInformer<Pod>();
    const rsInformer = new FakeInformer<ReplicaSet>();
    const controller = new ReplicaSetController({
      client,
      podInformer,
      replicaSetInformer: rsInformer,
      clock,
      podControl: new FakePodControl(),
      logger: logger({}),
    });
    rsInformer.add(client.seed(replicaSets, newReplicaSet(1)));
    controller.addReplicaSet(rsInformer.objects.get(rsKey)!);
    const abort = new AbortController();
    const run = controller.run({ signal: abort.signal });
    await clock.advance(10);
    abort.abort();
    await run;
    const tooFew = records.find((r) => r.msg === "Too few replicas");
    expect(tooFew?.bindings).toEqual({
      controller: "replicaset",
      namespace: "default",
      name: "foobar",
      reconcileID: expect.stringMatching(/^[0-9a-f-]{36}$/),
      reason: "object added",
    });
  });

  it("returns without syncing when aborted before the caches sync", async () => {
    const { controller, podInformer, clock } = setup();
    podInformer.synced = false;
    const abort = new AbortController();
    const run = controller.run({ signal: abort.signal });
    await clock.advance(250);
    abort.abort();
    await run;
    expect(clock.pendingTimers()).toEqual([]);
  });

  it("rejects bad options with a clear message", () => {
    const client = new RecordingClient();
    const informer = new FakeInformer<Pod>();
    const rsInformer = new FakeInformer<ReplicaSet>();
    expect(
      () =>
        new ReplicaSetController({
          client,
          podInformer: informer,
          replicaSetInformer: rsInformer,
          burstReplicas: 0,
        }),
    ).toThrow("ReplicaSetController: burstReplicas must be a positive integer, got 0");
  });
});

describe("getPodsToDelete", () => {
  const rs = newReplicaSet(1);
  const unscheduledPendingPod = newPod("unscheduled-pending", rs, "Pending");
  const scheduledPendingPod = newPod("scheduled-pending", rs, "Pending", { nodeName: "node" });
  const scheduledRunningNotReadyPod = newPod("scheduled-running-not-ready", rs, "Running", {
    nodeName: "node",
  });
  const scheduledRunningReadyPodOnNode1 = newPod("scheduled-running-ready-on-node1", rs, "Running", {
    nodeName: "node1",
    ready: true,
  });
  const scheduledRunningReadyPodOnNode2 = newPod("scheduled-running-ready-on-node2", rs, "Running", {
    nodeName: "node2",
    ready: true,
  });
  const relatedScheduledRunningReadyPodOnNode1 = newPod("related-on-node1", rs, "Running", {
    nodeName: "node1",
    ready: true,
  });
  const names = (list: readonly Pod[]) => list.map((p) => p.metadata?.name);

  it.each([
    { name: "no pods", pods: [], related: [], diff: 0, expected: [] },
    {
      name: "diff = len(pods): the input order",
      pods: [scheduledRunningNotReadyPod, scheduledRunningReadyPodOnNode1],
      related: [],
      diff: 2,
      expected: [scheduledRunningNotReadyPod, scheduledRunningReadyPodOnNode1],
    },
    {
      name: "diff < len(pods): not ready first",
      pods: [scheduledRunningReadyPodOnNode1, scheduledRunningNotReadyPod],
      related: [],
      diff: 1,
      expected: [scheduledRunningNotReadyPod],
    },
    {
      name: "various phases and conditions, diff = len(pods)",
      pods: [
        scheduledRunningReadyPodOnNode1,
        scheduledRunningReadyPodOnNode2,
        scheduledRunningNotReadyPod,
        scheduledPendingPod,
        unscheduledPendingPod,
      ],
      related: [],
      diff: 5,
      expected: [
        scheduledRunningReadyPodOnNode1,
        scheduledRunningReadyPodOnNode2,
        scheduledRunningNotReadyPod,
        scheduledPendingPod,
        unscheduledPendingPod,
      ],
    },
    {
      name: "various phases and conditions, diff < len(pods)",
      pods: [
        scheduledRunningReadyPodOnNode1,
        scheduledRunningReadyPodOnNode2,
        scheduledRunningNotReadyPod,
        scheduledPendingPod,
        unscheduledPendingPod,
      ],
      related: [
        scheduledRunningReadyPodOnNode1,
        scheduledRunningReadyPodOnNode2,
        relatedScheduledRunningReadyPodOnNode1,
      ],
      diff: 3,
      expected: [unscheduledPendingPod, scheduledPendingPod, scheduledRunningNotReadyPod],
    },
    {
      name: "ready and colocated with another ready pod vs not colocated",
      pods: [scheduledRunningReadyPodOnNode2, scheduledRunningReadyPodOnNode1],
      related: [
        scheduledRunningReadyPodOnNode1,
        scheduledRunningReadyPodOnNode2,
        relatedScheduledRunningReadyPodOnNode1,
      ],
      diff: 1,
      expected: [scheduledRunningReadyPodOnNode1],
    },
    {
      name: "pending vs running",
      pods: [scheduledRunningNotReadyPod, scheduledPendingPod],
      related: [],
      diff: 1,
      expected: [scheduledPendingPod],
    },
  ])("$name", ({ pods: input, related, diff, expected }) => {
    expect(names(getPodsToDelete(input, related, diff, now))).toEqual(names(expected));
  });
});

function bindAll(inner: UIDTrackingControllerExpectations) {
  return {
    expectCreations: inner.expectCreations.bind(inner),
    expectDeletions: inner.expectDeletions.bind(inner),
    creationObserved: inner.creationObserved.bind(inner),
    deletionObserved: inner.deletionObserved.bind(inner),
    deleteExpectations: inner.deleteExpectations.bind(inner),
  };
}
