// The PersistentVolume controller on the embedded API server: default class
// assignment, provisioning by the simulated provisioner, static binding,
// waiting on external provisioners, and release with reclaim.
import {
  events as eventsResource,
  persistentVolumeClaims,
  persistentVolumes,
  storageClasses,
} from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import type { Client } from "@reconcile/client";
import { FakeClock } from "@reconcile/clock";
import { SharedInformerFactory } from "@reconcile/informer";
import type { PersistentVolumeClaim } from "kubernetes-types/core/v1.js";
import { afterEach, describe, expect, it } from "vitest";
import {
  defaultClassAnnotation,
  PersistentVolumeController,
  simulatedProvisioner,
} from "./persistent-volume-controller.js";

const namespace = "default";
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

function start() {
  const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
  const server = new ApiServer({ clock });
  const client = server.client();
  const abort = new AbortController();
  const factory = new SharedInformerFactory({ client, clock });
  const controller = PersistentVolumeController.fromInformerFactory(factory, { client, clock });
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

const claim = (
  name: string,
  spec: Partial<NonNullable<PersistentVolumeClaim["spec"]>> = {},
): PersistentVolumeClaim => ({
  metadata: { name, namespace },
  spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } }, ...spec },
});

async function eventually<T>(
  clock: FakeClock,
  read: () => Promise<T>,
  check: (value: T) => boolean,
): Promise<T> {
  for (let i = 0; i < 2000; i++) {
    const value = await read();
    if (check(value)) return value;
    await clock.advance(10);
  }
  throw new Error(`condition not reached: ${JSON.stringify(await read())}`);
}

const getClaim = (client: Client, name: string) =>
  client.resource(persistentVolumeClaims, namespace).get(name);

async function eventsOf(client: Client, name: string): Promise<string[]> {
  const list = await client.resource(eventsResource, namespace).list();
  return list.items
    .filter((e) => e.involvedObject?.name === name)
    .map((e) => `${e.type} ${e.reason} ${e.message}`);
}

describe("PersistentVolumeController", () => {
  it("gives a claim without a class the default one, provisions its volume and binds both", async () => {
    const { clock, client } = start();
    await client.resource(storageClasses).create({
      metadata: { name: "standard", annotations: { [defaultClassAnnotation]: "true" } },
      provisioner: simulatedProvisioner,
      reclaimPolicy: "Delete",
    });
    const created = await client.resource(persistentVolumeClaims, namespace).create(claim("data"));
    const bound = await eventually(
      clock,
      () => getClaim(client, "data"),
      (c) => c.status?.phase === "Bound",
    );
    const volumeName = `pvc-${created.metadata?.uid}`;
    expect(bound.spec?.storageClassName).toBe("standard");
    expect(bound.spec?.volumeName).toBe(volumeName);
    expect(bound.status).toEqual({
      phase: "Bound",
      accessModes: ["ReadWriteOnce"],
      capacity: { storage: "1Gi" },
    });
    expect(bound.metadata?.annotations).toMatchObject({
      "pv.kubernetes.io/bind-completed": "yes",
      "volume.kubernetes.io/storage-provisioner": simulatedProvisioner,
    });
    const volume = await client.resource(persistentVolumes).get(volumeName);
    expect(volume.spec).toMatchObject({
      capacity: { storage: "1Gi" },
      persistentVolumeReclaimPolicy: "Delete",
      storageClassName: "standard",
      claimRef: { kind: "PersistentVolumeClaim", namespace, name: "data", uid: created.metadata?.uid },
    });
    expect(volume.status?.phase).toBe("Bound");
    expect(await eventsOf(client, "data")).toContain(
      `Normal ProvisioningSucceeded Successfully provisioned volume ${volumeName}`,
    );
    // The claim deleted: its volume is released and, by its reclaim policy, deleted.
    await client.resource(persistentVolumeClaims, namespace).delete("data");
    await eventually(
      clock,
      async () => (await client.resource(persistentVolumes).list()).items.length,
      (n) => n === 0,
    );
  });

  it("binds a claim to the smallest Available volume that fits, and keeps a Retain volume once Released", async () => {
    const { clock, client } = start();
    for (const [name, size] of [
      ["big", "10Gi"],
      ["small", "2Gi"],
      ["tiny", "500Mi"],
    ] as const)
      await client.resource(persistentVolumes).create({
        metadata: { name },
        spec: {
          capacity: { storage: size },
          accessModes: ["ReadWriteOnce"],
          persistentVolumeReclaimPolicy: "Retain",
          storageClassName: "manual",
          hostPath: { path: `/data/${name}` },
        },
      });
    await eventually(
      clock,
      async () => (await client.resource(persistentVolumes).list()).items.map((v) => v.status?.phase),
      (phases) => phases.every((p) => p === "Available"),
    );
    await client
      .resource(persistentVolumeClaims, namespace)
      .create(claim("app", { storageClassName: "manual" }));
    const bound = await eventually(
      clock,
      () => getClaim(client, "app"),
      (c) => c.status?.phase === "Bound",
    );
    expect(bound.spec?.volumeName).toBe("small");
    expect(bound.status?.capacity).toEqual({ storage: "2Gi" });
    await client.resource(persistentVolumeClaims, namespace).delete("app");
    const released = await eventually(
      clock,
      () => client.resource(persistentVolumes).get("small"),
      (v) => v.status?.phase === "Released",
    );
    expect(released.spec?.claimRef?.name).toBe("app");
  });

  it("waits for an external provisioner, and says why a claim without any class stays Pending", async () => {
    const { clock, client } = start();
    await client
      .resource(storageClasses)
      .create({ metadata: { name: "fast" }, provisioner: "ebs.csi.aws.com" });
    await client
      .resource(persistentVolumeClaims, namespace)
      .create(claim("waits", { storageClassName: "fast" }));
    await client.resource(persistentVolumeClaims, namespace).create(claim("nothing"));
    await clock.advance(1_000);
    await clock.advance(1_000);
    expect((await getClaim(client, "waits")).status?.phase).toBe("Pending");
    expect(await eventsOf(client, "waits")).toContain(
      "Normal ExternalProvisioning Waiting for a volume to be created either by the external provisioner 'ebs.csi.aws.com' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.",
    );
    expect(await eventsOf(client, "nothing")).toContain(
      "Normal FailedBinding no persistent volumes available for this claim and no storage class is set",
    );
  });
});
