// Cases from upstream pkg/controller/deployment/deployment_controller_test.go:
// syncDeployment's writes, and the event handlers' enqueues, on hand-fed
// caches and a RecordingClient.

import {
  type DeepReadonly,
  DeletedFinalStateUnknown,
  type Deployment,
  deployments,
  newNotFound,
  type Pod,
  type ReplicaSet,
  replicaSets,
} from "@reconcile/api";
import { FakeClock } from "@reconcile/clock";
import { FakeEventRecorder, RecordingClient } from "@reconcile/controller/testing";
import { FakeInformer } from "@reconcile/informer/testing";
import { describe, expect, it } from "vitest";
import { DeploymentController } from "./deployment-controller.js";
import { revisionAnnotation } from "./deployment-util.js";

function deployment(
  name: string,
  replicas: number,
  options: { uid?: string; strategy?: "Recreate" } = {},
): Deployment {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: {
      name,
      namespace: "default",
      uid: options.uid ?? `uid-${name}`,
      generation: 1,
      resourceVersion: "1",
    },
    spec: {
      replicas,
      selector: { matchLabels: { foo: "bar" } },
      template: {
        metadata: { labels: { foo: "bar" } },
        spec: { containers: [{ name: "c", image: "nginx" }] },
      },
      strategy:
        options.strategy === "Recreate"
          ? { type: "Recreate" }
          : { type: "RollingUpdate", rollingUpdate: { maxSurge: "25%", maxUnavailable: "25%" } },
      revisionHistoryLimit: 10,
      progressDeadlineSeconds: 600,
    },
    status: {},
  };
}

function replicaSet(name: string, owner: Deployment | undefined, labels = { foo: "bar" }): ReplicaSet {
  return {
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    metadata: {
      name,
      namespace: "default",
      uid: `uid-${name}`,
      resourceVersion: "1",
      labels,
      ...(owner
        ? {
            ownerReferences: [
              {
                apiVersion: "apps/v1",
                kind: "Deployment",
                name: owner.metadata!.name!,
                uid: owner.metadata!.uid!,
                controller: true,
              },
            ],
          }
        : {}),
    },
    spec: { replicas: 1, selector: { matchLabels: labels }, template: { metadata: { labels } } },
    status: { replicas: 1 },
  };
}

function fixture() {
  const client = new RecordingClient();
  const dInformer = new FakeInformer<Deployment>();
  const rsInformer = new FakeInformer<ReplicaSet>();
  const podInformer = new FakeInformer<Pod>();
  const recorder = new FakeEventRecorder();
  const controller = new DeploymentController({
    client,
    deploymentInformer: dInformer,
    replicaSetInformer: rsInformer,
    podInformer,
    clock: new FakeClock(Date.parse("2026-01-01T00:00:00Z")),
    eventRecorder: recorder,
  });
  /** Puts an object into the API (the RecordingClient) and the cache alike. */
  const addDeployment = (d: Deployment) => {
    const stored = client.seed(deployments, d);
    dInformer.getIndexer().add(stored);
    return stored;
  };
  const addReplicaSet = (rs: ReplicaSet) => {
    const stored = client.seed(replicaSets, rs);
    rsInformer.getIndexer().add(stored);
    return stored;
  };
  const queued = async () => {
    const keys: string[] = [];
    while (controller.queue.len() > 0) {
      const next = await controller.queue.get();
      if (next.shutdown) break;
      keys.push(next.item);
      controller.queue.done(next.item);
    }
    return keys.sort();
  };
  return {
    client,
    controller,
    recorder,
    dInformer,
    rsInformer,
    podInformer,
    addDeployment,
    addReplicaSet,
    queued,
  };
}

describe("syncDeployment", () => {
  it("creates the ReplicaSet of a new Deployment and records revision and status (TestSyncDeploymentCreatesReplicaSet)", async () => {
    const f = fixture();
    f.addDeployment(deployment("foo", 1));
    await f.controller.syncDeployment("default/foo");
    expect(f.client.actions.map((a) => `${a.verb} ${a.resource}`)).toEqual([
      "create replicasets",
      "updateStatus deployments",
      "updateStatus deployments",
    ]);
    const created = f.client.actionsOf("create")[0]!.body as ReplicaSet;
    expect(created.spec?.replicas).toBe(1);
    expect(created.metadata?.annotations?.[revisionAnnotation]).toBe("1");
    const firstStatus = f.client.actionsOf("updateStatus")[0]!.body as Deployment;
    expect(firstStatus.metadata?.annotations?.[revisionAnnotation]).toBe("1");
    expect(firstStatus.status?.conditions?.map((c) => c.reason)).toEqual(["NewReplicaSetCreated"]);
    const secondStatus = f.client.actionsOf("updateStatus")[1]!.body as Deployment;
    expect(secondStatus.status).toMatchObject({ observedGeneration: 1, unavailableReplicas: 1 });
    expect(secondStatus.status?.conditions?.map((c) => [c.type, c.status, c.reason])).toEqual([
      ["Progressing", "True", "NewReplicaSetCreated"],
      ["Available", "False", "MinimumReplicasUnavailable"],
    ]);
    expect(f.recorder.events).toEqual([
      `Normal ScalingReplicaSet Scaled up replica set ${created.metadata?.name} from 0 to 1`,
    ]);
  });

  it("only writes status for a Deployment being deleted (TestSyncDeploymentDontDoAnythingDuringDeletion)", async () => {
    const f = fixture();
    const d = deployment("foo", 1);
    d.metadata = { ...d.metadata, deletionTimestamp: "2026-01-01T00:00:00Z" };
    f.addDeployment(d);
    await f.controller.syncDeployment("default/foo");
    expect(f.client.actions.map((a) => `${a.verb} ${a.resource}`)).toEqual(["updateStatus deployments"]);
  });

  it("does not adopt for a Deployment deleted from the API but still cached (TestSyncDeploymentDeletionRace)", async () => {
    const f = fixture();
    f.addDeployment(deployment("foo", 1));
    f.addReplicaSet(replicaSet("foo-orphan", undefined));
    // The API no longer has it; the cache still does.
    f.client.reactors.push((action) =>
      action.verb === "get" && action.resource === "deployments"
        ? newNotFound({ group: "apps", resource: "deployments" }, "foo")
        : undefined,
    );
    await expect(f.controller.syncDeployment("default/foo")).rejects.toThrow(/not found/);
    expect(f.client.actions.map((a) => `${a.verb} ${a.resource}`)).toEqual(["get deployments"]);
  });

  it("adopts a matching orphan and releases an owned ReplicaSet that stopped matching (TestGetReplicaSetsForDeployment*)", async () => {
    const f = fixture();
    const d = f.addDeployment(deployment("foo", 1));
    f.addReplicaSet(replicaSet("orphan", undefined));
    f.addReplicaSet(replicaSet("stray", d, { foo: "other" }));
    f.addReplicaSet(replicaSet("someone-elses", deployment("bar", 1)));
    await f.controller.syncDeployment("default/foo");
    const patches = f.client.actionsOf("patch", "replicasets").map((a) => a.name);
    expect(patches.sort()).toEqual(["orphan", "stray"]);
    expect(f.client.peek(replicaSets, "default", "orphan")?.metadata?.ownerReferences?.[0]?.uid).toBe(
      "uid-foo",
    );
    expect(f.client.peek(replicaSets, "default", "stray")?.metadata?.ownerReferences ?? []).toEqual([]);
  });

  it("warns and records the observed generation for a Deployment selecting everything", async () => {
    const f = fixture();
    const d = deployment("foo", 1);
    d.spec!.selector = {};
    f.addDeployment(d);
    await f.controller.syncDeployment("default/foo");
    expect(f.recorder.events).toEqual([
      "Warning SelectingAll This deployment is selecting all pods. A non-empty selector is required.",
    ]);
    expect(f.client.actions.map((a) => `${a.verb} ${a.resource}`)).toEqual(["updateStatus deployments"]);
  });

  it("forgets a Deployment that is gone", async () => {
    const f = fixture();
    await expect(f.controller.syncDeployment("default/gone")).resolves.toBeUndefined();
    expect(f.client.actions).toEqual([]);
  });
});

describe("event handlers", () => {
  it("a controlled ReplicaSet wakes its owner only; an orphan wakes every Deployment whose selector matches it (TestAddReplicaSet)", async () => {
    const f = fixture();
    const foo = f.addDeployment(deployment("foo", 1));
    f.addDeployment(deployment("bar", 1, { uid: "uid-bar" }));
    const other = deployment("baz", 1);
    other.spec!.selector = { matchLabels: { foo: "baz" } };
    f.addDeployment(other);
    f.controller.addReplicaSet(replicaSet("owned", foo));
    expect(await f.queued()).toEqual(["default/foo"]);
    f.controller.addReplicaSet(replicaSet("orphan", undefined));
    expect(await f.queued()).toEqual(["default/bar", "default/foo"]);
  });

  it("a changed controllerRef wakes the old and the new owner; a resync wakes nobody (TestUpdateReplicaSet*)", async () => {
    const f = fixture();
    const foo = f.addDeployment(deployment("foo", 1));
    const bar = f.addDeployment(deployment("bar", 1));
    const before = replicaSet("rs", foo);
    const after = replicaSet("rs", bar);
    after.metadata = { ...after.metadata, resourceVersion: "2" };
    f.controller.updateReplicaSet(before, after);
    expect(await f.queued()).toEqual(["default/bar", "default/foo"]);
    f.controller.updateReplicaSet(before, before);
    expect(await f.queued()).toEqual([]);
  });

  it("an orphan whose labels changed wakes the Deployments that now match it", async () => {
    const f = fixture();
    f.addDeployment(deployment("foo", 1));
    const before = replicaSet("rs", undefined, { foo: "nothing" } as { foo: string });
    const after = replicaSet("rs", undefined);
    after.metadata = { ...after.metadata, resourceVersion: "2" };
    f.controller.updateReplicaSet(before, after);
    expect(await f.queued()).toEqual(["default/foo"]);
  });

  it("a deleted ReplicaSet, or its tombstone, wakes its owner; a deleted orphan wakes nobody (TestDeleteReplicaSet*)", async () => {
    const f = fixture();
    const foo = f.addDeployment(deployment("foo", 1));
    f.controller.deleteReplicaSet(new DeletedFinalStateUnknown("default/rs", replicaSet("rs", foo)));
    expect(await f.queued()).toEqual(["default/foo"]);
    f.controller.deleteReplicaSet(replicaSet("orphan", undefined));
    expect(await f.queued()).toEqual([]);
  });

  it("a deleted pod wakes a Recreate Deployment once none of its pods is left, and never a rolling one", async () => {
    const f = fixture();
    const recreate = f.addDeployment(deployment("foo", 1, { strategy: "Recreate" }));
    const rolling = f.addDeployment(deployment("bar", 1));
    const rs = f.addReplicaSet(replicaSet("foo-1", recreate));
    const barRS = f.addReplicaSet(replicaSet("bar-1", rolling, { foo: "bar" }));
    const pod = (name: string, owner: ReplicaSet): Pod => ({
      metadata: {
        name,
        namespace: "default",
        uid: `uid-${name}`,
        labels: { foo: "bar" },
        ownerReferences: [
          {
            apiVersion: "apps/v1",
            kind: "ReplicaSet",
            name: owner.metadata!.name!,
            uid: owner.metadata!.uid!,
            controller: true,
          },
        ],
      },
      spec: { containers: [] },
    });
    const remaining = pod("p2", rs);
    f.podInformer.getIndexer().add(remaining);
    f.controller.deletePod(pod("p1", rs));
    expect(await f.queued()).toEqual([]);
    f.podInformer.getIndexer().delete(remaining);
    f.controller.deletePod(new DeletedFinalStateUnknown("default/p2", remaining as DeepReadonly<Pod>));
    expect(await f.queued()).toEqual(["default/foo"]);
    f.controller.deletePod(pod("p3", barRS));
    expect(await f.queued()).toEqual([]);
  });
});

describe("run", () => {
  it("syncs queued Deployments with its workers and settles once stopped", async () => {
    const f = fixture();
    f.addDeployment(deployment("foo", 1));
    f.controller.addDeployment(f.dInformer.getIndexer().getByKey("default/foo")!);
    const stop = new AbortController();
    const running = f.controller.run({ signal: stop.signal, workers: 2 });
    for (let i = 0; i < 100 && f.client.actionsOf("create", "replicasets").length === 0; i++) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(f.client.actionsOf("create", "replicasets")).toHaveLength(1);
    stop.abort();
    await expect(running).resolves.toBeUndefined();
    expect(f.controller.queue.shuttingDown()).toBe(true);
  });
});
