// The StatefulSet controller end to end on the embedded API server:
// informers watch the server, the test plays the kubelet by making pods
// Running and Ready, and time is a FakeClock the tests advance.
import {
  type ControllerRevision,
  controllerRevisions,
  events as eventsResource,
  type Pod,
  persistentVolumeClaims,
  pods,
  rfc3339,
  type StatefulSet,
  statefulSets,
} from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import type { Client } from "@reconcile/client";
import { FakeClock } from "@reconcile/clock";
import { SharedInformerFactory } from "@reconcile/informer";
import { afterEach, describe, expect, it } from "vitest";
import { StatefulSetController } from "./stateful-set-controller.js";

const namespace = "default";
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

function start(options: { maxUnavailable?: boolean } = {}) {
  const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
  const server = new ApiServer({ clock });
  const client = server.client();
  const abort = new AbortController();
  const factory = new SharedInformerFactory({ client, clock, detectMutations: true });
  const controller = StatefulSetController.fromInformerFactory(factory, { client, clock, ...options });
  factory.start(abort.signal);
  const run = controller.run({ signal: abort.signal });
  cleanups.push(async () => {
    abort.abort();
    await run;
    await factory.shutdown();
    await server.close();
  });
  return { clock, client };
}

function newSet(name: string, spec: Partial<NonNullable<StatefulSet["spec"]>> = {}): StatefulSet {
  return {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: { name, namespace },
    spec: {
      serviceName: name,
      replicas: 3,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: "main", image: "nginx:1" }] },
      },
      ...spec,
    },
  };
}

async function eventually<T>(
  clock: FakeClock,
  read: () => Promise<T>,
  check: (value: T) => boolean,
  limitMs = 30_000,
): Promise<T> {
  for (let elapsed = 0; elapsed <= limitMs; elapsed += 10) {
    const value = await read();
    if (check(value)) return value;
    await clock.advance(10);
  }
  throw new Error(`condition not reached within ${limitMs} ms of fake time: ${JSON.stringify(await read())}`);
}

async function setPods(client: Client): Promise<Pod[]> {
  const list = await client.resource(pods, namespace).list();
  return list.items.sort((a, b) => (a.metadata?.name ?? "").localeCompare(b.metadata?.name ?? ""));
}

const names = (list: Pod[]) => list.map((p) => p.metadata?.name);
const live = (list: Pod[]) => list.filter((p) => p.metadata?.deletionTimestamp === undefined);

/** Plays the kubelet: the pod runs and is Ready now. */
async function makeReady(client: Client, clock: FakeClock, name: string): Promise<void> {
  const fresh = await client.resource(pods, namespace).get(name);
  const now = rfc3339(clock.now());
  await client.resource(pods, namespace).updateStatus({
    ...fresh,
    status: {
      phase: "Running",
      conditions: [{ type: "Ready", status: "True", lastTransitionTime: now }],
    },
  });
}

/** Waits for `name` to exist without a deletionTimestamp, then makes it ready. */
async function readyWhenThere(client: Client, clock: FakeClock, name: string): Promise<Pod> {
  await eventually(
    clock,
    () => setPods(client),
    (list) => live(list).some((p) => p.metadata?.name === name && p.status?.phase === "Pending"),
  );
  await makeReady(client, clock, name);
  return client.resource(pods, namespace).get(name);
}

const getSet = (client: Client, name: string) => client.resource(statefulSets, namespace).get(name);

async function revisionsOf(client: Client): Promise<ControllerRevision[]> {
  const list = await client.resource(controllerRevisions, namespace).list();
  return list.items.sort((a, b) => a.revision - b.revision);
}

async function eventsOf(client: Client, name: string): Promise<string[]> {
  const list = await client.resource(eventsResource, namespace).list();
  return list.items
    .filter((e) => e.involvedObject?.kind === "StatefulSet" && e.involvedObject?.name === name)
    .map((e) => `${e.type} ${e.reason} ${e.message}`);
}

describe("StatefulSetController", () => {
  it("creates members in ordinal order, each after the one before is Running and Ready, with stable identities", async () => {
    const { clock, client } = start();
    await client.resource(statefulSets, namespace).create(newSet("web"));
    const first = await eventually(
      clock,
      () => setPods(client),
      (l) => l.length === 1,
    );
    expect(names(first)).toEqual(["web-0"]);
    // Not ready: no second member, however long we wait.
    await clock.advance(2_000);
    expect(names(await setPods(client))).toEqual(["web-0"]);

    const pod = first[0]!;
    const revision = (await revisionsOf(client))[0]!;
    expect(pod.spec?.hostname).toBe("web-0");
    expect(pod.spec?.subdomain).toBe("web");
    expect(pod.metadata?.labels).toEqual({
      app: "web",
      "apps.kubernetes.io/pod-index": "0",
      "controller-revision-hash": revision.metadata?.name,
      "statefulset.kubernetes.io/pod-name": "web-0",
    });
    expect(pod.metadata?.ownerReferences).toEqual([
      expect.objectContaining({ apiVersion: "apps/v1", kind: "StatefulSet", name: "web", controller: true }),
    ]);
    expect(revision.revision).toBe(1);
    expect(revision.metadata?.name).toMatch(/^web-[bcdfghjklmnpqrstvwxz2456789]+$/);
    expect(revision.data).toEqual({
      spec: {
        template: {
          $patch: "replace",
          // The template as kube-apiserver writes it: its zero creationTimestamp is null.
          metadata: { creationTimestamp: null, labels: { app: "web" } },
          spec: expect.objectContaining({ containers: [expect.objectContaining({ image: "nginx:1" })] }),
        },
      },
    });

    await makeReady(client, clock, "web-0");
    await readyWhenThere(client, clock, "web-1");
    await readyWhenThere(client, clock, "web-2");
    const set = await eventually(
      clock,
      () => getSet(client, "web"),
      (s) => s.status?.readyReplicas === 3,
    );
    expect(set.status).toEqual({
      observedGeneration: 1,
      replicas: 3,
      readyReplicas: 3,
      availableReplicas: 3,
      currentReplicas: 3,
      updatedReplicas: 3,
      currentRevision: revision.metadata?.name,
      updateRevision: revision.metadata?.name,
      collisionCount: 0,
    });
    expect(await eventsOf(client, "web")).toEqual([
      "Normal SuccessfulCreate create Pod web-0 in StatefulSet web successful",
      "Normal SuccessfulCreate create Pod web-1 in StatefulSet web successful",
      "Normal SuccessfulCreate create Pod web-2 in StatefulSet web successful",
    ]);
  });

  it("creates every member at once under Parallel, and starts from ordinals.start", async () => {
    const { clock, client } = start();
    await client
      .resource(statefulSets, namespace)
      .create(newSet("db", { podManagementPolicy: "Parallel", ordinals: { start: 5 } }));
    const list = await eventually(
      clock,
      () => setPods(client),
      (l) => l.length === 3,
    );
    expect(names(list)).toEqual(["db-5", "db-6", "db-7"]);
  });

  it("removes members from the highest ordinal down, one at a time while they are healthy", async () => {
    const { clock, client } = start();
    await client.resource(statefulSets, namespace).create(newSet("web"));
    for (const name of ["web-0", "web-1", "web-2"]) await readyWhenThere(client, clock, name);
    await client.resource(statefulSets, namespace).patch("web", { spec: { replicas: 1 } }, { type: "merge" });
    await eventually(
      clock,
      () => setPods(client),
      (l) => names(live(l)).join() === "web-0",
    );
    const deletions = (await eventsOf(client, "web")).filter((e) => e.includes("SuccessfulDelete"));
    expect(deletions).toEqual([
      "Normal SuccessfulDelete delete Pod web-2 in StatefulSet web successful",
      "Normal SuccessfulDelete delete Pod web-1 in StatefulSet web successful",
    ]);
    const set = await eventually(
      clock,
      () => getSet(client, "web"),
      (s) => s.status?.replicas === 1,
    );
    expect(set.status?.readyReplicas).toBe(1);
  });

  it("rolls an update from the highest ordinal down, waits for each, and finishes with the update revision current", async () => {
    const { clock, client } = start();
    await client.resource(statefulSets, namespace).create(newSet("web"));
    for (const name of ["web-0", "web-1", "web-2"]) await readyWhenThere(client, clock, name);
    const [oldRevision] = await revisionsOf(client);
    await client
      .resource(statefulSets, namespace)
      .patch(
        "web",
        { spec: { template: { spec: { containers: [{ name: "main", image: "nginx:2" }] } } } },
        { type: "strategic-merge" },
      );
    const order: string[] = [];
    for (const name of ["web-2", "web-1", "web-0"]) {
      const pod = await eventually(
        clock,
        () => setPods(client),
        (l) => l.some((p) => p.metadata?.name === name && p.spec?.containers[0]?.image === "nginx:2"),
      );
      // Only one member is away at a time: the lower ones still run the old image.
      const images = pod.map((p) => `${p.metadata?.name}=${p.spec?.containers[0]?.image}`);
      order.push(images.join(" "));
      await makeReady(client, clock, name);
    }
    expect(order).toEqual([
      "web-0=nginx:1 web-1=nginx:1 web-2=nginx:2",
      "web-0=nginx:1 web-1=nginx:2 web-2=nginx:2",
      "web-0=nginx:2 web-1=nginx:2 web-2=nginx:2",
    ]);
    const revisions = await revisionsOf(client);
    expect(revisions.map((r) => r.revision)).toEqual([1, 2]);
    const set = await eventually(
      clock,
      () => getSet(client, "web"),
      (s) => s.status?.updatedReplicas === 3 && s.status.readyReplicas === 3,
    );
    expect(set.status?.currentRevision).toBe(revisions[1]!.metadata?.name);
    expect(set.status?.updateRevision).toBe(revisions[1]!.metadata?.name);
    expect(set.status?.currentReplicas).toBe(3);

    // Back to the first template: its revision is renumbered, not copied.
    await client
      .resource(statefulSets, namespace)
      .patch(
        "web",
        { spec: { template: { spec: { containers: [{ name: "main", image: "nginx:1" }] } } } },
        { type: "strategic-merge" },
      );
    const rolledBack = await eventually(
      clock,
      () => revisionsOf(client),
      (list) => list.some((r) => r.metadata?.name === oldRevision?.metadata?.name && r.revision === 3),
    );
    expect(rolledBack.length).toBe(2);
  });

  it("updates only the ordinals at or above the partition", async () => {
    const { clock, client } = start();
    await client
      .resource(statefulSets, namespace)
      .create(newSet("web", { updateStrategy: { type: "RollingUpdate", rollingUpdate: { partition: 2 } } }));
    for (const name of ["web-0", "web-1", "web-2"]) await readyWhenThere(client, clock, name);
    await client
      .resource(statefulSets, namespace)
      .patch(
        "web",
        { spec: { template: { spec: { containers: [{ name: "main", image: "nginx:2" }] } } } },
        { type: "strategic-merge" },
      );
    await eventually(
      clock,
      () => setPods(client),
      (l) => l.some((p) => p.metadata?.name === "web-2" && p.spec?.containers[0]?.image === "nginx:2"),
    );
    await makeReady(client, clock, "web-2");
    const set = await eventually(
      clock,
      () => getSet(client, "web"),
      (s) => s.status?.updatedReplicas === 1 && s.status.readyReplicas === 3,
    );
    expect(set.status?.currentReplicas).toBe(2);
    expect(set.status?.currentRevision).not.toBe(set.status?.updateRevision);
    await clock.advance(2_000);
    const images = (await setPods(client)).map((p) => p.spec?.containers[0]?.image);
    expect(images).toEqual(["nginx:1", "nginx:1", "nginx:2"]);
  });

  it("replaces up to maxUnavailable members at once when that feature is on", async () => {
    const { clock, client } = start({ maxUnavailable: true });
    await client.resource(statefulSets, namespace).create(
      newSet("web", {
        replicas: 4,
        podManagementPolicy: "Parallel",
        updateStrategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 2 } },
      }),
    );
    await eventually(
      clock,
      () => setPods(client),
      (l) => l.length === 4,
    );
    for (const name of ["web-0", "web-1", "web-2", "web-3"]) await makeReady(client, clock, name);
    await eventually(
      clock,
      () => getSet(client, "web"),
      (s) => s.status?.readyReplicas === 4,
    );
    await client
      .resource(statefulSets, namespace)
      .patch(
        "web",
        { spec: { template: { spec: { containers: [{ name: "main", image: "nginx:2" }] } } } },
        { type: "strategic-merge" },
      );
    const list = await eventually(
      clock,
      () => setPods(client),
      (l) => l.filter((p) => p.spec?.containers[0]?.image === "nginx:2").length === 2,
    );
    expect(list.map((p) => p.spec?.containers[0]?.image)).toEqual([
      "nginx:1",
      "nginx:1",
      "nginx:2",
      "nginx:2",
    ]);
  });

  it("makes each member's claims from volumeClaimTemplates before the pod, and deletes a scaled-down member's claim with it under whenScaled: Delete", async () => {
    const { clock, client } = start();
    await client.resource(statefulSets, namespace).create(
      newSet("db", {
        replicas: 2,
        persistentVolumeClaimRetentionPolicy: { whenScaled: "Delete", whenDeleted: "Retain" },
        volumeClaimTemplates: [
          {
            metadata: { name: "data" },
            spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } },
          },
        ],
      }),
    );
    const [pod] = await eventually(
      clock,
      () => setPods(client),
      (l) => l.length === 1,
    );
    expect(pod!.spec?.volumes).toEqual([{ name: "data", persistentVolumeClaim: { claimName: "data-db-0" } }]);
    const claim = await client.resource(persistentVolumeClaims, namespace).get("data-db-0");
    expect(claim.metadata?.labels).toEqual({ app: "db" });
    expect(claim.metadata?.ownerReferences ?? []).toEqual([]);
    await makeReady(client, clock, "db-0");
    await readyWhenThere(client, clock, "db-1");
    await client.resource(statefulSets, namespace).patch("db", { spec: { replicas: 1 } }, { type: "merge" });
    // The condemned member's claim is handed to it, and goes with it (the garbage collector).
    const claimNames = async () =>
      (await client.resource(persistentVolumeClaims, namespace).list()).items.map((c) => c.metadata?.name);
    await eventually(clock, claimNames, (list) => list.join() === "data-db-0");
    expect(names(live(await setPods(client)))).toEqual(["db-0"]);
    expect(await eventsOf(client, "db")).toContain(
      "Normal SuccessfulCreate create Claim data-db-0 Pod db-0 in StatefulSet db success",
    );
  });

  it("replaces a member that failed, under the same name", async () => {
    const { clock, client } = start();
    await client.resource(statefulSets, namespace).create(newSet("web", { replicas: 1 }));
    const before = await readyWhenThere(client, clock, "web-0");
    await client.resource(pods, namespace).updateStatus({ ...before, status: { phase: "Failed" } });
    const after = await eventually(
      clock,
      () => setPods(client),
      (l) => l.length === 1 && l[0]!.metadata?.uid !== before.metadata?.uid,
    );
    expect(names(after)).toEqual(["web-0"]);
  });
});
