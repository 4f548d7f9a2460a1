// VolumeBinding end to end on the embedded API server: a pod waits for its
// claims, and its bound volume's node affinity chooses the node.
import {
  events as eventsResource,
  type Node,
  nodes,
  type Pod,
  persistentVolumeClaims,
  persistentVolumes,
  pods,
  storageClasses,
} from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import type { Client } from "@reconcile/client";
import { FakeClock } from "@reconcile/clock";
import { SharedInformerFactory } from "@reconcile/informer";
import { afterEach, describe, expect, it } from "vitest";
import { Scheduler } from "./scheduler.js";

const namespace = "default";
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

function start() {
  const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
  const server = new ApiServer({ clock });
  const client = server.client();
  const factory = new SharedInformerFactory({ client, clock });
  const scheduler = Scheduler.fromInformerFactory(factory, { client, clock, random: () => 0 });
  const abort = new AbortController();
  factory.start(abort.signal);
  const run = scheduler.run({ signal: abort.signal });
  cleanups.push(async () => {
    abort.abort();
    await run;
    await factory.shutdown();
    await server.close();
  });
  return { clock, client };
}

const node = (name: string): Node => ({
  metadata: { name, labels: { "kubernetes.io/hostname": name } },
  status: { allocatable: { cpu: "4", memory: "8Gi", pods: "110" } },
});

const podWithClaim = (name: string, claim: string): Pod => ({
  metadata: { name, namespace },
  spec: {
    containers: [{ name: "app", image: "pause" }],
    volumes: [{ name: "data", persistentVolumeClaim: { claimName: claim } }],
  },
});

async function eventually(clock: FakeClock, check: () => Promise<boolean>, limitMs = 60_000): Promise<void> {
  for (let elapsed = 0; elapsed <= limitMs; elapsed += 10) {
    if (await check()) return;
    await clock.advance(10);
  }
  throw new Error(`condition not reached within ${limitMs} ms of fake time`);
}

const nodeOf = async (client: Client, name: string) =>
  (await client.resource(pods, namespace).get(name)).spec?.nodeName;

async function failures(client: Client, name: string): Promise<string[]> {
  const list = await client.resource(eventsResource, namespace).list();
  return list.items
    .filter((event) => event.involvedObject?.name === name && event.reason === "FailedScheduling")
    .map((event) => event.message ?? "");
}

describe("VolumeBinding", () => {
  it("holds a pod until its claim exists and is bound, then places it where the volume's node affinity allows", async () => {
    const { clock, client } = start();
    for (const name of ["n1", "n2"]) await client.resource(nodes).create(node(name));
    await client.resource(pods, namespace).create(podWithClaim("db", "data"));
    await eventually(clock, async () => (await failures(client, "db")).length > 0);
    expect(await failures(client, "db")).toEqual([
      '0/2 nodes are available: persistentvolumeclaim "data" not found. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.',
    ]);
    await client.resource(persistentVolumeClaims, namespace).create({
      metadata: { name: "data", namespace },
      spec: {
        accessModes: ["ReadWriteOnce"],
        resources: { requests: { storage: "1Gi" } },
        storageClassName: "",
      },
    });
    await eventually(clock, async () => (await failures(client, "db")).length > 1);
    expect((await failures(client, "db"))[1]).toBe(
      "0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
    );
    expect(await nodeOf(client, "db")).toBeUndefined();
    // A local volume on n2, bound to the claim: the pod follows it there.
    await client.resource(persistentVolumes).create({
      metadata: { name: "local-n2" },
      spec: {
        capacity: { storage: "1Gi" },
        accessModes: ["ReadWriteOnce"],
        local: { path: "/mnt/disks/1" },
        nodeAffinity: {
          required: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: "kubernetes.io/hostname", operator: "In", values: ["n2"] }] },
            ],
          },
        },
      },
    });
    const claim = await client.resource(persistentVolumeClaims, namespace).get("data");
    await client
      .resource(persistentVolumeClaims, namespace)
      .update({ ...claim, spec: { ...claim.spec, volumeName: "local-n2" } });
    await eventually(clock, async () => (await nodeOf(client, "db")) !== undefined);
    expect(await nodeOf(client, "db")).toBe("n2");
  });

  it("schedules a pod whose claim waits for its first consumer", async () => {
    const { clock, client } = start();
    await client.resource(nodes).create(node("n1"));
    await client.resource(storageClasses).create({
      metadata: { name: "local" },
      provisioner: "kubernetes.io/no-provisioner",
      volumeBindingMode: "WaitForFirstConsumer",
    });
    await client.resource(persistentVolumeClaims, namespace).create({
      metadata: { name: "later", namespace },
      spec: {
        accessModes: ["ReadWriteOnce"],
        resources: { requests: { storage: "1Gi" } },
        storageClassName: "local",
      },
    });
    await client.resource(pods, namespace).create(podWithClaim("consumer", "later"));
    await eventually(clock, async () => (await nodeOf(client, "consumer")) === "n1");
  });
});

describe("NodeVolumeLimits", () => {
  it("keeps a node's CSI volumes within its attachable limit, and says so when no node has room", async () => {
    const { clock, client } = start();
    const limited = (name: string): Node => ({
      ...node(name),
      status: {
        allocatable: {
          ...node(name).status!.allocatable,
          "attachable-volumes-csi-disk.csi.example.com": "1",
        },
      },
    });
    await client.resource(nodes).create(limited("n1"));
    await client.resource(storageClasses).create({
      metadata: { name: "disks" },
      provisioner: "disk.csi.example.com",
      volumeBindingMode: "WaitForFirstConsumer",
    });
    for (const claim of ["a", "b"])
      await client.resource(persistentVolumeClaims, namespace).create({
        metadata: { name: claim, namespace },
        spec: {
          accessModes: ["ReadWriteOnce"],
          resources: { requests: { storage: "1Gi" } },
          storageClassName: "disks",
        },
      });
    await client.resource(pods, namespace).create(podWithClaim("first", "a"));
    await eventually(clock, async () => (await nodeOf(client, "first")) === "n1");
    await client.resource(pods, namespace).create(podWithClaim("second", "b"));
    await eventually(clock, async () => (await failures(client, "second")).length > 0);
    expect(await failures(client, "second")).toEqual([
      "0/1 nodes are available: 1 node(s) exceed max volume count. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
    ]);
    // A second node with room takes it.
    await client.resource(nodes).create(limited("n2"));
    await eventually(clock, async () => (await nodeOf(client, "second")) === "n2");
  });
});
