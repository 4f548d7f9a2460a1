// The DaemonSet controller end to end on the embedded API server: informers
// watch the server, the test plays the scheduler (binding each pod to the
// node its affinity names) and the kubelet (making it Running and Ready),
// and time is a FakeClock the tests advance.
import {
  controllerRevisions,
  type DaemonSet,
  daemonSets,
  events as eventsResource,
  nodes,
  type Pod,
  pods,
  rfc3339,
} from "@reconcile/api";
import { ApiServer, type InProcessClient } from "@reconcile/apiserver";
import type { Client } from "@reconcile/client";
import { FakeClock } from "@reconcile/clock";
import { SharedInformerFactory } from "@reconcile/informer";
import { afterEach, describe, expect, it } from "vitest";
import { DaemonSetController } from "./daemonset-controller.js";
import { targetNodeName } from "./daemonset-util.js";

const namespace = "default";
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function start(nodeNames: string[], labels: Record<string, Record<string, string>> = {}) {
  const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
  const server = new ApiServer({ clock });
  const client = server.client();
  for (const name of nodeNames)
    await client
      .resource(nodes)
      .create({ metadata: { name, labels: { "kubernetes.io/hostname": name, ...labels[name] } } });
  const abort = new AbortController();
  const factory = new SharedInformerFactory({ client, clock, detectMutations: true });
  const controller = DaemonSetController.fromInformerFactory(factory, { client, clock });
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

function newDaemonSet(name: string, spec: Partial<NonNullable<DaemonSet["spec"]>> = {}): DaemonSet {
  return {
    apiVersion: "apps/v1",
    kind: "DaemonSet",
    metadata: { name, namespace },
    spec: {
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: "main", image: "agent:1" }] },
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

async function livePods(client: Client): Promise<Pod[]> {
  const list = await client.resource(pods, namespace).list();
  return list.items
    .filter((p) => p.metadata?.deletionTimestamp === undefined)
    .sort((a, b) => (targetNodeName(a) ?? "").localeCompare(targetNodeName(b) ?? ""));
}

/** Plays the kubelet: pods being deleted are gone. */
async function finishDeletions(client: Client): Promise<void> {
  for (const pod of (await client.resource(pods, namespace).list()).items) {
    if (pod.metadata?.deletionTimestamp !== undefined)
      await client.resource(pods, namespace).delete(pod.metadata.name!, { gracePeriodSeconds: 0 });
  }
}

/**
 * Plays the scheduler and the kubelet: every unbound pod goes to its node
 * and runs Ready, and a pod being deleted is gone.
 */
async function runPods(client: Client, clock: FakeClock): Promise<void> {
  await finishDeletions(client);
  for (const pod of await livePods(client)) {
    const name = pod.metadata?.name ?? "";
    if (!pod.spec?.nodeName) {
      await (client as InProcessClient).bindPod(namespace, {
        metadata: { name, namespace, uid: pod.metadata?.uid },
        target: { kind: "Node", name: targetNodeName(pod)! },
      });
    }
    if (pod.status?.phase !== "Running") {
      const fresh = await client.resource(pods, namespace).get(name);
      await client.resource(pods, namespace).updateStatus({
        ...fresh,
        status: {
          phase: "Running",
          conditions: [{ type: "Ready", status: "True", lastTransitionTime: rfc3339(clock.now()) }],
        },
      });
    }
  }
}

const placement = (list: Pod[]) => list.map((p) => `${targetNodeName(p)}=${p.spec?.containers[0]?.image}`);
const getDaemonSet = (client: Client, name: string) => client.resource(daemonSets, namespace).get(name);

async function eventsOf(client: Client, name: string): Promise<string[]> {
  const list = await client.resource(eventsResource, namespace).list();
  return list.items
    .filter((e) => e.involvedObject?.kind === "DaemonSet" && e.involvedObject?.name === name)
    .map((e) => `${e.type} ${e.reason} ${e.message?.replace(/-[a-z0-9]{5}\b/, "-*")}`);
}

describe("DaemonSetController", () => {
  it("makes one pod per node, each tied to its node by affinity and tolerating node problems, and counts them in its status", async () => {
    const { clock, client } = await start(["node-a", "node-b", "node-c"]);
    await client.resource(daemonSets, namespace).create(newDaemonSet("agent"));
    const list = await eventually(
      clock,
      () => livePods(client),
      (l) => l.length === 3,
    );
    expect(placement(list)).toEqual(["node-a=agent:1", "node-b=agent:1", "node-c=agent:1"]);
    const [revision] = (await client.resource(controllerRevisions, namespace).list()).items;
    const hash = revision!.metadata?.labels?.["controller-revision-hash"];
    expect(revision!.metadata?.name).toBe(`agent-${hash}`);
    expect(revision!.revision).toBe(1);
    const pod = list[0]!;
    expect(pod.metadata?.labels).toEqual({
      app: "agent",
      "controller-revision-hash": hash,
      "pod-template-generation": "1",
    });
    expect(pod.spec?.affinity).toEqual({
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [
            { matchFields: [{ key: "metadata.name", operator: "In", values: ["node-a"] }] },
          ],
        },
      },
    });
    expect(pod.spec?.tolerations?.map((t) => `${t.key}:${t.effect}`)).toEqual([
      "node.kubernetes.io/not-ready:NoExecute",
      "node.kubernetes.io/unreachable:NoExecute",
      "node.kubernetes.io/disk-pressure:NoSchedule",
      "node.kubernetes.io/memory-pressure:NoSchedule",
      "node.kubernetes.io/pid-pressure:NoSchedule",
      "node.kubernetes.io/unschedulable:NoSchedule",
    ]);
    let ds = await eventually(
      clock,
      () => getDaemonSet(client, "agent"),
      (d) => d.status?.desiredNumberScheduled === 3,
    );
    expect(ds.status?.numberReady).toBe(0);
    await runPods(client, clock);
    ds = await eventually(
      clock,
      () => getDaemonSet(client, "agent"),
      (d) => d.status?.numberReady === 3,
    );
    expect(ds.status).toEqual({
      currentNumberScheduled: 3,
      desiredNumberScheduled: 3,
      numberAvailable: 3,
      numberMisscheduled: 0,
      numberReady: 3,
      numberUnavailable: 0,
      observedGeneration: 1,
      updatedNumberScheduled: 3,
    });
  });

  it("follows the node selector as nodes are labelled and unlabelled, added and removed", async () => {
    const { clock, client } = await start(["node-a", "node-b"], { "node-a": { disk: "ssd" } });
    await client.resource(daemonSets, namespace).create(
      newDaemonSet("ssd", {
        template: {
          metadata: { labels: { app: "ssd" } },
          spec: { nodeSelector: { disk: "ssd" }, containers: [{ name: "main", image: "agent:1" }] },
        },
      }),
    );
    await eventually(
      clock,
      () => livePods(client),
      (l) => placement(l).join() === "node-a=agent:1",
    );
    await client
      .resource(nodes)
      .patch("node-b", { metadata: { labels: { disk: "ssd" } } }, { type: "merge" });
    await eventually(
      clock,
      () => livePods(client),
      (l) => placement(l).join() === "node-a=agent:1,node-b=agent:1",
    );
    await client.resource(nodes).patch("node-a", { metadata: { labels: { disk: null } } }, { type: "merge" });
    await eventually(
      clock,
      () => livePods(client),
      (l) => placement(l).join() === "node-b=agent:1",
    );
    await client.resource(nodes).create({ metadata: { name: "node-c", labels: { disk: "ssd" } } });
    await eventually(
      clock,
      () => livePods(client),
      (l) => placement(l).join() === "node-b=agent:1,node-c=agent:1",
    );
    // A node that goes away takes its not-yet-scheduled pod with it.
    await client.resource(nodes).delete("node-c");
    await eventually(
      clock,
      () => livePods(client),
      (l) => placement(l).join() === "node-b=agent:1",
    );
  });

  it("keeps off a node with a taint it does not tolerate, keeps running under NoSchedule, and leaves under NoExecute", async () => {
    const { clock, client } = await start(["node-a", "node-b"]);
    await client
      .resource(nodes)
      .patch(
        "node-b",
        { spec: { taints: [{ key: "dedicated", value: "db", effect: "NoSchedule" }] } },
        { type: "merge" },
      );
    await client.resource(daemonSets, namespace).create(newDaemonSet("agent"));
    await eventually(
      clock,
      () => livePods(client),
      (l) => placement(l).join() === "node-a=agent:1",
    );
    await client
      .resource(nodes)
      .patch(
        "node-a",
        { spec: { taints: [{ key: "maintenance", effect: "NoSchedule" }] } },
        { type: "merge" },
      );
    await clock.advance(2_000);
    expect(placement(await livePods(client))).toEqual(["node-a=agent:1"]);
    let ds = await getDaemonSet(client, "agent");
    expect([ds.status?.desiredNumberScheduled, ds.status?.numberMisscheduled]).toEqual([0, 1]);
    await client
      .resource(nodes)
      .patch(
        "node-a",
        { spec: { taints: [{ key: "maintenance", effect: "NoExecute" }] } },
        { type: "merge" },
      );
    await eventually(
      clock,
      () => livePods(client),
      (l) => l.length === 0,
    );
    ds = await eventually(
      clock,
      () => getDaemonSet(client, "agent"),
      (d) => d.status?.numberMisscheduled === 0,
    );
    expect(ds.status?.currentNumberScheduled).toBe(0);
  });

  it("rolls an update one node at a time under maxUnavailable 1, each after the new pod before it is ready", async () => {
    const { clock, client } = await start(["node-a", "node-b", "node-c"]);
    await client.resource(daemonSets, namespace).create(newDaemonSet("agent"));
    await eventually(
      clock,
      () => livePods(client),
      (l) => l.length === 3,
    );
    await runPods(client, clock);
    await eventually(
      clock,
      () => getDaemonSet(client, "agent"),
      (d) => d.status?.numberAvailable === 3,
    );
    await client
      .resource(daemonSets, namespace)
      .patch(
        "agent",
        { spec: { template: { spec: { containers: [{ name: "main", image: "agent:2" }] } } } },
        { type: "strategic-merge" },
      );
    const seen: string[] = [];
    for (let step = 1; step <= 3; step++) {
      const updated = (l: Pod[]) => l.filter((p) => p.spec?.containers[0]?.image === "agent:2");
      const list = await eventually(
        clock,
        async () => {
          await finishDeletions(client);
          return livePods(client);
        },
        (l) => l.length === 3 && updated(l).length === step,
      );
      seen.push(
        `${updated(list).length} updated, ${list.filter((p) => p.status?.phase !== "Running").length} pending`,
      );
      // While the new pod is not ready, no other old pod goes.
      await clock.advance(1_000);
      await finishDeletions(client);
      expect((await livePods(client)).length).toBe(3);
      expect(updated(await livePods(client)).length).toBe(step);
      await runPods(client, clock);
    }
    expect(seen).toEqual(["1 updated, 1 pending", "2 updated, 1 pending", "3 updated, 1 pending"]);
    const ds = await eventually(
      clock,
      () => getDaemonSet(client, "agent"),
      (d) => d.status?.updatedNumberScheduled === 3,
    );
    expect(ds.metadata?.annotations?.["deprecated.daemonset.template.generation"]).toBe("2");
    const revisions = (await client.resource(controllerRevisions, namespace).list()).items.map(
      (r) => r.revision,
    );
    expect(revisions.sort()).toEqual([1, 2]);
  });

  it("surges a new pod beside each old one under maxSurge, and removes the old one once the new one is available", async () => {
    const { clock, client } = await start(["node-a", "node-b"]);
    await client.resource(daemonSets, namespace).create(
      newDaemonSet("agent", {
        updateStrategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
      }),
    );
    await eventually(
      clock,
      () => livePods(client),
      (l) => l.length === 2,
    );
    await runPods(client, clock);
    await eventually(
      clock,
      () => getDaemonSet(client, "agent"),
      (d) => d.status?.numberAvailable === 2,
    );
    await client
      .resource(daemonSets, namespace)
      .patch(
        "agent",
        { spec: { template: { spec: { containers: [{ name: "main", image: "agent:2" }] } } } },
        { type: "strategic-merge" },
      );
    const updated = (l: Pod[]) => l.filter((p) => p.spec?.containers[0]?.image === "agent:2");
    for (let step = 1; step <= 2; step++) {
      // A new pod beside an old one: three pods, never fewer than two available.
      const surged = await eventually(
        clock,
        async () => {
          await finishDeletions(client);
          return livePods(client);
        },
        (l) => l.length === 3 && updated(l).length === step,
      );
      const node = targetNodeName(updated(surged).find((p) => p.status?.phase !== "Running")!);
      const there = surged.filter((p) => targetNodeName(p) === node).map((p) => p.spec?.containers[0]?.image);
      expect(there.sort()).toEqual(["agent:1", "agent:2"]);
      await clock.advance(1_000);
      expect((await livePods(client)).length).toBe(3);
      await runPods(client, clock);
    }
    const done = await eventually(
      clock,
      async () => {
        await finishDeletions(client);
        return livePods(client);
      },
      (l) => l.length === 2 && updated(l).length === 2,
    );
    expect(placement(done)).toEqual(["node-a=agent:2", "node-b=agent:2"]);
  });

  it("deletes a failed daemon pod with a warning and makes another, backing off when it fails again", async () => {
    const { clock, client } = await start(["node-a"]);
    await client.resource(daemonSets, namespace).create(newDaemonSet("agent"));
    const [first] = await eventually(
      clock,
      () => livePods(client),
      (l) => l.length === 1,
    );
    await client.resource(pods, namespace).updateStatus({ ...first!, status: { phase: "Failed" } });
    const [second] = await eventually(
      clock,
      () => livePods(client),
      (l) => l.length === 1 && l[0]!.metadata?.uid !== first!.metadata?.uid,
    );
    expect(await eventsOf(client, "agent")).toContain(
      "Warning FailedDaemonPod Found failed daemon pod default/agent-* on node node-a, will try to kill it",
    );
    // Failing again at once: the next replacement waits out the backoff (1 s, then 2 s).
    await client.resource(pods, namespace).updateStatus({ ...second!, status: { phase: "Failed" } });
    await clock.advance(500);
    expect((await livePods(client)).map((p) => p.metadata?.uid)).toEqual([second!.metadata?.uid]);
    await eventually(
      clock,
      () => livePods(client),
      (l) => l.length === 1 && l[0]!.metadata?.uid !== second!.metadata?.uid,
    );
  });

  it("leaves pods alone under OnDelete until they are deleted, then makes the new template's", async () => {
    const { clock, client } = await start(["node-a"]);
    await client
      .resource(daemonSets, namespace)
      .create(newDaemonSet("agent", { updateStrategy: { type: "OnDelete" } }));
    const [pod] = await eventually(
      clock,
      () => livePods(client),
      (l) => l.length === 1,
    );
    await client
      .resource(daemonSets, namespace)
      .patch(
        "agent",
        { spec: { template: { spec: { containers: [{ name: "main", image: "agent:2" }] } } } },
        { type: "strategic-merge" },
      );
    await clock.advance(2_000);
    expect(placement(await livePods(client))).toEqual(["node-a=agent:1"]);
    await client.resource(pods, namespace).delete(pod!.metadata!.name!);
    await eventually(
      clock,
      () => livePods(client),
      (l) => placement(l).join() === "node-a=agent:2",
    );
  });
});
