// The Deployment controller end to end on the embedded API server, with the
// ReplicaSet controller beside it and a kubelet stand-in marking pods ready.
// A watcher records every state of pods and ReplicaSets, and the rollout
// guarantees are asserted at every recorded moment.
import { type Deployment, deployments, getControllerOf, type ReplicaSet, replicaSets } from "@reconcile/api";
import { afterEach, describe, expect, it } from "vitest";
import {
  deprecatedRollbackToAnnotation,
  revisionAnnotation,
  revisionHistoryAnnotation,
} from "./deployment-util.js";
import {
  type Cluster,
  type Controllers,
  eventually,
  getDeployment,
  imageOf,
  isReady,
  type Moment,
  namespace,
  newDeployment,
  ownedReplicaSets,
  recordStates,
  rolloutComplete,
  setImage,
  startCluster,
  startControllers,
  updateDeployment,
} from "./integration-harness.test-util.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

function start(): { cluster: Cluster; controllers: Controllers } {
  const cluster = startCluster();
  cleanups.push(() => cluster.stop());
  const controllers = startControllers(cluster);
  cleanups.push(() => controllers.stop());
  return { cluster, controllers };
}

async function createAndComplete(cluster: Cluster, d: Deployment): Promise<Deployment> {
  await cluster.client.resource(deployments, namespace).create(d);
  await eventually(cluster.clock, () => rolloutComplete(cluster.client, d.metadata!.name!));
  return getDeployment(cluster.client, d.metadata!.name!);
}

/** Asserts the rolling-update bounds at every moment: pods ≤ replicas + surge, ready ≥ replicas − unavailable. */
function assertRollingBounds(
  moments: readonly Moment[],
  replicas: number,
  surge: number,
  unavailable: number,
) {
  expect(moments.length).toBeGreaterThan(0);
  for (const [i, moment] of moments.entries()) {
    const total = moment.pods.filter((pod) => pod.metadata?.deletionTimestamp == null).length;
    const ready = moment.pods.filter(isReady).length;
    const specTotal = moment.replicaSets.reduce((sum, rs) => sum + (rs.spec?.replicas ?? 0), 0);
    if (total > replicas + surge || ready < replicas - unavailable || specTotal > replicas + surge) {
      throw new Error(
        `moment ${i}: ${total} pods (${ready} ready), ReplicaSets sized ${specTotal}; bounds are ≤ ${replicas + surge} pods, ≥ ${replicas - unavailable} ready`,
      );
    }
  }
}

describe("Deployment controller on the embedded API server", () => {
  it("creates a ReplicaSet with the template hash, revision 1 and the replica annotations, and reports the rollout complete", async () => {
    const { cluster } = start();
    const d = await createAndComplete(cluster, newDeployment("web", 3));
    const [rs] = await ownedReplicaSets(cluster.client, d);
    const hash = rs!.metadata!.labels!["pod-template-hash"]!;
    expect(hash).toMatch(/^[456789bcdf]{1,10}$/);
    expect(rs!.metadata?.name).toBe(`web-${hash}`);
    expect(rs!.spec?.selector?.matchLabels).toEqual({ app: "web", "pod-template-hash": hash });
    expect(rs!.metadata?.annotations).toEqual({
      [revisionAnnotation]: "1",
      "deployment.kubernetes.io/desired-replicas": "3",
      "deployment.kubernetes.io/max-replicas": "4",
    });
    expect(d.metadata?.annotations?.[revisionAnnotation]).toBe("1");
    expect(d.status).toMatchObject({
      observedGeneration: d.metadata?.generation,
      replicas: 3,
      updatedReplicas: 3,
      readyReplicas: 3,
      availableReplicas: 3,
    });
    expect(d.status?.conditions?.map((c) => [c.type, c.status, c.reason, c.message])).toEqual([
      ["Available", "True", "MinimumReplicasAvailable", "Deployment has minimum availability."],
      [
        "Progressing",
        "True",
        "NewReplicaSetAvailable",
        `ReplicaSet "web-${hash}" has successfully progressed.`,
      ],
    ]);
  });

  it("is Available only once minReadySeconds have passed since its pods became ready", async () => {
    const { cluster } = start();
    const d = newDeployment("web", 2);
    d.spec!.minReadySeconds = 10;
    await cluster.client.resource(deployments, namespace).create(d);
    const available = async () =>
      (await getDeployment(cluster.client, "web")).status?.conditions?.find((c) => c.type === "Available");
    await eventually(
      cluster.clock,
      async () => (await getDeployment(cluster.client, "web")).status?.readyReplicas === 2,
      {
        limitMs: 2_000,
      },
    );
    const readyAt = cluster.clock.now();
    expect(await available()).toMatchObject({ status: "False", reason: "MinimumReplicasUnavailable" });
    await eventually(cluster.clock, async () => (await available())?.status === "True", {
      stepMs: 100,
      limitMs: 15_000,
    });
    expect(cluster.clock.now() - readyAt).toBeGreaterThanOrEqual(9_000);
    const created = await getDeployment(cluster.client, "web");
    const [rs] = await ownedReplicaSets(cluster.client, created);
    expect(rs!.spec?.minReadySeconds).toBe(10);
    expect(await rolloutComplete(cluster.client, "web")).toBe(true);
  });

  it("resolves a hash collision by bumping collisionCount and creating a ReplicaSet under the next name", async () => {
    const { cluster } = start();
    const created = await createAndComplete(cluster, newDeployment("web", 1));
    const [original] = await ownedReplicaSets(cluster.client, created);
    // Someone changes the ReplicaSet's template: its name no longer stands for the Deployment's template.
    const changed = structuredClone(original!);
    changed.spec!.template!.spec!.terminationGracePeriodSeconds = 5;
    await cluster.client.resource(replicaSets, namespace).update(changed);
    await eventually(
      cluster.clock,
      async () => (await getDeployment(cluster.client, "web")).status?.collisionCount === 1,
    );
    await eventually(cluster.clock, () => rolloutComplete(cluster.client, "web"));
    const rss = await ownedReplicaSets(cluster.client, created);
    expect(rss).toHaveLength(2);
    const newest = rss.find((rs) => rs.metadata?.name !== original!.metadata?.name)!;
    expect(newest.metadata?.labels?.["pod-template-hash"]).not.toBe(
      original!.metadata?.labels?.["pod-template-hash"],
    );
    expect(newest.spec?.replicas).toBe(1);
  });

  const rollingCases: [string, number, number | string, number | string, number, number][] = [
    ["maxSurge 1, maxUnavailable 0", 4, 1, 0, 1, 0],
    ["maxSurge 25%, maxUnavailable 25%", 10, "25%", "25%", 3, 2],
  ];
  it.each(
    rollingCases,
  )("a rolling update with %s stays within its bounds at every observed moment", async (_name, replicas, maxSurge, maxUnavailable, surge, unavailable) => {
    const { cluster } = start();
    const strategy = { type: "RollingUpdate" as const, rollingUpdate: { maxSurge, maxUnavailable } };
    await createAndComplete(cluster, newDeployment("web", replicas, { strategy }));
    const recorder = await recordStates(cluster.client);
    await setImage(cluster.client, "web", "nginx:1.28");
    await eventually(cluster.clock, () => rolloutComplete(cluster.client, "web"));
    await recorder.stop();
    assertRollingBounds(recorder.moments, replicas, surge, unavailable);
    const final = recorder.moments.at(-1)!;
    expect(final.pods.map(imageOf)).toEqual(Array(replicas).fill("nginx:1.28"));
    const d = await getDeployment(cluster.client, "web");
    const rss = await ownedReplicaSets(cluster.client, d);
    expect(rss.map((rs) => [rs.spec?.replicas, rs.metadata?.annotations?.[revisionAnnotation]])).toEqual([
      [0, "1"],
      [replicas, "2"],
    ]);
    expect(d.metadata?.annotations?.[revisionAnnotation]).toBe("2");
  });

  it("Recreate scales the old pods away and waits until the last terminating one is gone before creating new ones", async () => {
    const { cluster, controllers } = start();
    // Pods on a node are deleted gracefully: they stay terminating until the "kubelet" finishes them.
    const d = newDeployment("web", 3, { strategy: { type: "Recreate" }, nodeName: "node-1" });
    await createAndComplete(cluster, d);
    const recorder = await recordStates(cluster.client);
    controllers.kubelet.finishTerminating = false;
    await setImage(cluster.client, "web", "nginx:1.28");
    await eventually(cluster.clock, async () => {
      const list = await cluster.client.resource(replicaSets, namespace).list();
      return (
        list.items.length === 1 &&
        list.items[0]!.spec?.replicas === 0 &&
        list.items[0]!.status?.replicas === 0
      );
    });
    // Old pods are terminating, the old ReplicaSet reports 0: still no new ReplicaSet.
    for (let i = 0; i < 50; i++) await cluster.clock.advance(10);
    expect((await cluster.client.resource(replicaSets, namespace).list()).items).toHaveLength(1);
    controllers.kubelet.finishTerminating = true;
    controllers.kubelet.sync();
    await eventually(cluster.clock, () => rolloutComplete(cluster.client, "web"));
    await recorder.stop();
    for (const moment of recorder.moments) {
      const images = new Set(moment.pods.map(imageOf));
      expect(images.size).toBeLessThanOrEqual(1);
    }
    expect(recorder.moments.some((m) => m.pods.length === 0)).toBe(true);
    expect(recorder.moments.at(-1)!.pods.map(imageOf)).toEqual(["nginx:1.28", "nginx:1.28", "nginx:1.28"]);
  });

  it("scales proportionally when replicas change mid-rollout (10 → 20 with 25%/25%)", async () => {
    const { cluster, controllers } = start();
    await createAndComplete(cluster, newDeployment("web", 10));
    // New pods never become ready: the rollout stalls at its bounds.
    controllers.kubelet.ready = (pod) => imageOf(pod) === "nginx:1.27";
    await setImage(cluster.client, "web", "nginx:1.28");
    const sizes = async () => {
      const d = await getDeployment(cluster.client, "web");
      return (await ownedReplicaSets(cluster.client, d)).map((rs) => rs.spec?.replicas);
    };
    // 13 pods at most, 8 available at least: old 8, new 5.
    await eventually(cluster.clock, async () => JSON.stringify(await sizes()) === "[8,5]");
    await updateDeployment(cluster.client, "web", (d) => {
      d.spec!.replicas = 20;
    });
    // 25 allowed: old 8·25/13 ≈ 15, new 5·25/13 ≈ 10.
    await eventually(cluster.clock, async () => JSON.stringify(await sizes()) === "[15,10]");
    const d = await getDeployment(cluster.client, "web");
    for (const rs of await ownedReplicaSets(cluster.client, d)) {
      expect(rs.metadata?.annotations?.["deployment.kubernetes.io/desired-replicas"]).toBe("20");
      expect(rs.metadata?.annotations?.["deployment.kubernetes.io/max-replicas"]).toBe("25");
    }
    controllers.kubelet.ready = () => true;
    controllers.kubelet.sync();
    await eventually(cluster.clock, () => rolloutComplete(cluster.client, "web"));
    expect(await sizes()).toEqual([0, 20]);
  });

  it("a paused Deployment does not roll out, still scales, and rolls out once resumed", async () => {
    const { cluster } = start();
    await createAndComplete(cluster, newDeployment("web", 2));
    await updateDeployment(cluster.client, "web", (d) => {
      d.spec!.paused = true;
    });
    await eventually(cluster.clock, async () => {
      const d = await getDeployment(cluster.client, "web");
      return d.status?.conditions?.some((c) => c.reason === "DeploymentPaused") ?? false;
    });
    const paused = await getDeployment(cluster.client, "web");
    expect(paused.status?.conditions?.find((c) => c.type === "Progressing")).toMatchObject({
      status: "Unknown",
      reason: "DeploymentPaused",
      message: "Deployment is paused",
    });
    await setImage(cluster.client, "web", "nginx:1.28");
    await updateDeployment(cluster.client, "web", (d) => {
      d.spec!.replicas = 4;
    });
    await eventually(cluster.clock, async () => {
      const d = await getDeployment(cluster.client, "web");
      return d.status?.availableReplicas === 4 && d.status?.observedGeneration === d.metadata?.generation;
    });
    let d = await getDeployment(cluster.client, "web");
    let rss = await ownedReplicaSets(cluster.client, d);
    expect(rss.map((rs) => [rs.spec?.template?.spec?.containers[0]?.image, rs.spec?.replicas])).toEqual([
      ["nginx:1.27", 4],
    ]);
    expect(d.status?.updatedReplicas ?? 0).toBe(0);
    await updateDeployment(cluster.client, "web", (dep) => {
      dep.spec!.paused = false;
    });
    await eventually(cluster.clock, () => rolloutComplete(cluster.client, "web"));
    d = await getDeployment(cluster.client, "web");
    rss = await ownedReplicaSets(cluster.client, d);
    expect(rss.map((rs) => rs.spec?.replicas)).toEqual([0, 4]);
  });

  it("reports ProgressDeadlineExceeded once progressDeadlineSeconds pass without progress, on the fake clock", async () => {
    const { cluster, controllers } = start();
    await createAndComplete(cluster, newDeployment("web", 2, { progressDeadlineSeconds: 60 }));
    controllers.kubelet.ready = (pod) => imageOf(pod) === "nginx:1.27";
    await setImage(cluster.client, "web", "nginx:1.28");
    const progressing = async () =>
      (await getDeployment(cluster.client, "web")).status?.conditions?.find((c) => c.type === "Progressing");
    await eventually(cluster.clock, async () => (await progressing())?.reason === "ReplicaSetUpdated", {
      limitMs: 5_000,
    });
    const updatedAt = Date.parse((await progressing())!.lastUpdateTime!);
    // Not before the deadline...
    await eventually(cluster.clock, () => cluster.clock.now() >= updatedAt + 59_000, { stepMs: 1_000 });
    expect((await progressing())?.reason).toBe("ReplicaSetUpdated");
    // ...but soon after it, without any event to wake the controller.
    await eventually(
      cluster.clock,
      async () => (await progressing())?.reason === "ProgressDeadlineExceeded",
      {
        stepMs: 100,
        limitMs: 5_000,
      },
    );
    const d = await getDeployment(cluster.client, "web");
    const newRS = (await ownedReplicaSets(cluster.client, d)).at(-1)!;
    expect(await progressing()).toMatchObject({
      status: "False",
      message: `ReplicaSet "${newRS.metadata?.name}" has timed out progressing.`,
    });
    expect(cluster.clock.now()).toBeLessThanOrEqual(updatedAt + 63_000);
  });

  it("adopts a matching orphan ReplicaSet as its new one, and releases one whose labels stop matching", async () => {
    const { cluster } = start();
    const d = newDeployment("web", 2);
    const orphan: ReplicaSet = {
      apiVersion: "apps/v1",
      kind: "ReplicaSet",
      metadata: { name: "web-orphan", namespace, labels: { app: "web" } },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: "web" } },
        template: structuredClone(d.spec!.template),
      },
    };
    await cluster.client.resource(replicaSets, namespace).create(orphan);
    const created = await createAndComplete(cluster, d);
    const rss = (await cluster.client.resource(replicaSets, namespace).list()).items;
    expect(rss.map((rs) => rs.metadata?.name)).toEqual(["web-orphan"]);
    expect(getControllerOf(rss[0]!)).toMatchObject({
      kind: "Deployment",
      name: "web",
      uid: created.metadata?.uid,
    });
    expect(rss[0]!.metadata?.annotations?.[revisionAnnotation]).toBe("1");

    const fresh = await cluster.client.resource(replicaSets, namespace).get("web-orphan");
    fresh.metadata!.labels = { app: "other" };
    await cluster.client.resource(replicaSets, namespace).update(fresh);
    await eventually(cluster.clock, async () => {
      const rs = await cluster.client.resource(replicaSets, namespace).get("web-orphan");
      return getControllerOf(rs) === undefined;
    });
    // Released, it is no longer the Deployment's: a new ReplicaSet takes its place.
    await eventually(
      cluster.clock,
      async () => (await ownedReplicaSets(cluster.client, created)).length === 1,
    );
  });

  it("rolls back by template (kubectl rollout undo): the old ReplicaSet is reused and gets the next revision", async () => {
    const { cluster } = start();
    await createAndComplete(cluster, newDeployment("web", 2));
    await setImage(cluster.client, "web", "nginx:1.28");
    await eventually(cluster.clock, () => rolloutComplete(cluster.client, "web"));
    await setImage(cluster.client, "web", "nginx:1.27");
    await eventually(cluster.clock, () => rolloutComplete(cluster.client, "web"));
    const d = await getDeployment(cluster.client, "web");
    const rss = await ownedReplicaSets(cluster.client, d);
    expect(rss).toHaveLength(2);
    const byImage = new Map(rss.map((rs) => [rs.spec?.template?.spec?.containers[0]?.image, rs]));
    expect(byImage.get("nginx:1.27")!.metadata?.annotations).toMatchObject({
      [revisionAnnotation]: "3",
      [revisionHistoryAnnotation]: "1",
    });
    expect(byImage.get("nginx:1.27")!.spec?.replicas).toBe(2);
    expect(byImage.get("nginx:1.28")!.spec?.replicas).toBe(0);
    expect(d.metadata?.annotations?.[revisionAnnotation]).toBe("3");
  });

  it("serves the deprecated rollback annotation: revision 0 means the previous one, and the request is cleared", async () => {
    const { cluster } = start();
    await createAndComplete(cluster, newDeployment("web", 1));
    await setImage(cluster.client, "web", "nginx:1.28");
    await eventually(cluster.clock, () => rolloutComplete(cluster.client, "web"));
    await updateDeployment(cluster.client, "web", (d) => {
      d.metadata!.annotations = { ...d.metadata!.annotations, [deprecatedRollbackToAnnotation]: "0" };
    });
    await eventually(cluster.clock, async () => {
      const d = await getDeployment(cluster.client, "web");
      return (
        d.metadata?.annotations?.[deprecatedRollbackToAnnotation] === undefined &&
        d.spec?.template.spec?.containers[0]?.image === "nginx:1.27"
      );
    });
    await eventually(cluster.clock, () => rolloutComplete(cluster.client, "web"));
    const d = await getDeployment(cluster.client, "web");
    expect(d.spec?.template.metadata?.labels).toEqual({ app: "web" });
    expect(d.metadata?.annotations?.[revisionAnnotation]).toBe("3");
  });

  it("keeps revisionHistoryLimit old ReplicaSets, deleting the oldest scaled-down ones", async () => {
    const { cluster } = start();
    const created = await createAndComplete(cluster, newDeployment("web", 1, { revisionHistoryLimit: 1 }));
    for (const image of ["nginx:1.28", "nginx:1.29", "nginx:1.30"]) {
      await setImage(cluster.client, "web", image);
      await eventually(cluster.clock, () => rolloutComplete(cluster.client, "web"));
    }
    await eventually(
      cluster.clock,
      async () => (await ownedReplicaSets(cluster.client, created)).length === 2,
    );
    const rss = await ownedReplicaSets(cluster.client, created);
    expect(rss.map((rs) => [rs.metadata?.annotations?.[revisionAnnotation], rs.spec?.replicas])).toEqual([
      ["3", 0],
      ["4", 1],
    ]);
  });

  it("a controller restarted mid-rollout converges, within the rolling bounds", async () => {
    const { cluster, controllers } = start();
    const strategy = { type: "RollingUpdate" as const, rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } };
    await createAndComplete(cluster, newDeployment("web", 5, { strategy }));
    controllers.kubelet.ready = (pod) => imageOf(pod) === "nginx:1.27";
    const recorder = await recordStates(cluster.client);
    await setImage(cluster.client, "web", "nginx:1.28");
    await eventually(cluster.clock, async () => {
      const d = await getDeployment(cluster.client, "web");
      return (d.status?.updatedReplicas ?? 0) === 1;
    });
    await controllers.stopDeploymentController();
    controllers.kubelet.ready = () => true;
    controllers.kubelet.sync();
    for (let i = 0; i < 20; i++) await cluster.clock.advance(10);
    controllers.startDeploymentController();
    await eventually(cluster.clock, () => rolloutComplete(cluster.client, "web"));
    await recorder.stop();
    assertRollingBounds(recorder.moments, 5, 1, 0);
    const d = await getDeployment(cluster.client, "web");
    expect((await ownedReplicaSets(cluster.client, d)).map((rs) => rs.spec?.replicas)).toEqual([0, 5]);
  });
});
