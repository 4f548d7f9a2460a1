// The PVC and PV protection controllers on the embedded API server with
// StorageObjectInUseProtection: a claim in use by a running pod, or a volume
// still bound, stays until it is free.
import { isNotFound, persistentVolumeClaims, persistentVolumes, pods } from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import type { Client } from "@reconcile/client";
import { FakeClock } from "@reconcile/clock";
import { SharedInformerFactory } from "@reconcile/informer";
import { afterEach, describe, expect, it } from "vitest";
import { PVCProtectionController, PVProtectionController } from "./protection-controllers.js";

const namespace = "default";
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

function start() {
  const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
  const server = new ApiServer({ clock, admissionPlugins: ["StorageObjectInUseProtection"] });
  const client = server.client();
  const abort = new AbortController();
  const factory = new SharedInformerFactory({ client, clock });
  const controllers = [
    PVCProtectionController.fromInformerFactory(factory, { client, clock }),
    PVProtectionController.fromInformerFactory(factory, { client, clock }),
  ];
  factory.start(abort.signal);
  const runs = controllers.map((c) => c.run({ signal: abort.signal }));
  cleanups.push(async () => {
    abort.abort();
    await Promise.all(runs);
    await factory.shutdown();
    await server.close();
  });
  return { clock, client };
}

/** Advances time until `read` resolves with a value `check` accepts. */
async function eventually<T>(
  clock: FakeClock,
  read: () => Promise<T>,
  check: (value: T) => boolean,
): Promise<T> {
  for (let i = 0; i < 500; i++) {
    const value = await read();
    if (check(value)) return value;
    await clock.advance(10);
  }
  throw new Error(`condition not reached: ${JSON.stringify(await read())}`);
}

const gone = (get: () => Promise<unknown>) => () =>
  get().then(
    () => false,
    (error: unknown) => isNotFound(error),
  );

async function claimWithPod(client: Client) {
  const claims = client.resource(persistentVolumeClaims, namespace);
  const created = await claims.create({
    metadata: { name: "data" },
    spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } },
  });
  const pod = await client.resource(pods, namespace).create({
    metadata: { name: "db" },
    spec: {
      containers: [{ name: "db", image: "postgres" }],
      volumes: [{ name: "data", persistentVolumeClaim: { claimName: "data" } }],
    },
  });
  return { claims, created, pod };
}

describe("PVC protection", () => {
  it("a new claim gets the finalizer; deleting it waits until no running pod uses it", async () => {
    const { clock, client } = start();
    const { claims, created } = await claimWithPod(client);
    expect(created.metadata?.finalizers).toEqual(["kubernetes.io/pvc-protection"]);
    await claims.delete("data");
    await clock.advance(1_000);
    const terminating = await claims.get("data");
    expect(terminating.metadata?.deletionTimestamp).toBeDefined();
    expect(terminating.metadata?.finalizers).toEqual(["kubernetes.io/pvc-protection"]);
    // The pod finishes: the claim is free and goes.
    const pod = await client.resource(pods, namespace).get("db");
    await client.resource(pods, namespace).updateStatus({ ...pod, status: { phase: "Succeeded" } });
    expect(
      await eventually(
        clock,
        gone(() => claims.get("data")),
        Boolean,
      ),
    ).toBe(true);
  });

  it("a claim no pod uses goes at once; so does one whose pod is deleted", async () => {
    const { clock, client } = start();
    const { claims } = await claimWithPod(client);
    await client.resource(pods, namespace).delete("db", { gracePeriodSeconds: 0 });
    await claims.delete("data");
    expect(
      await eventually(
        clock,
        gone(() => claims.get("data")),
        Boolean,
      ),
    ).toBe(true);
  });
});

describe("PV protection", () => {
  it("a volume being deleted stays while Bound, and goes once released", async () => {
    const { clock, client } = start();
    const volumes = client.resource(persistentVolumes);
    const created = await volumes.create({
      metadata: { name: "pv-1" },
      spec: { capacity: { storage: "1Gi" }, accessModes: ["ReadWriteOnce"], hostPath: { path: "/data" } },
    });
    expect(created.metadata?.finalizers).toEqual(["kubernetes.io/pv-protection"]);
    // A volume that lost its finalizer (made before the admission step was on) gets it back.
    await volumes.update({ ...created, metadata: { ...created.metadata, finalizers: [] } });
    await eventually(
      clock,
      () => volumes.get("pv-1"),
      (v) => v.metadata?.finalizers?.includes("kubernetes.io/pv-protection") === true,
    );
    const bound = await volumes.updateStatus({ ...(await volumes.get("pv-1")), status: { phase: "Bound" } });
    await volumes.delete("pv-1");
    await clock.advance(1_000);
    expect((await volumes.get("pv-1")).metadata?.finalizers).toEqual(["kubernetes.io/pv-protection"]);
    const current = await volumes.get("pv-1");
    await volumes.updateStatus({ ...current, status: { ...bound.status, phase: "Released" } });
    expect(
      await eventually(
        clock,
        gone(() => volumes.get("pv-1")),
        Boolean,
      ),
    ).toBe(true);
  });
});
