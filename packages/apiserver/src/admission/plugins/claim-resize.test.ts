import { persistentVolumeClaims, StatusError, storageClasses } from "@reconcile/api";
import type { PersistentVolumeClaim } from "kubernetes-types/core/v1.js";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "../../api-server.js";

// Cases of upstream's plugin/pkg/admission/storage/persistentvolume/resize/admission_test.go.

let server: ApiServer | undefined;
afterEach(() => server?.close());

async function setUp() {
  server = new ApiServer({ admissionPlugins: ["PersistentVolumeClaimResize"] });
  const client = server.client();
  await client.resource(storageClasses).create({
    metadata: { name: "gold" },
    provisioner: "example.com/gold",
    allowVolumeExpansion: true,
  });
  await client
    .resource(storageClasses)
    .create({ metadata: { name: "silver" }, provisioner: "example.com/silver" });
  return client.resource(persistentVolumeClaims, "default");
}

async function claim(
  claims: Awaited<ReturnType<typeof setUp>>,
  name: string,
  storageClassName: string | undefined,
  bound: boolean,
): Promise<PersistentVolumeClaim> {
  const created = await claims.create({
    metadata: { name },
    spec: {
      accessModes: ["ReadWriteOnce"],
      resources: { requests: { storage: "1Gi" } },
      ...(storageClassName === undefined ? {} : { storageClassName }),
      ...(bound ? { volumeName: `pv-${name}` } : {}),
    },
  });
  if (!bound) return created;
  return claims.updateStatus({ ...created, status: { phase: "Bound", capacity: { storage: "1Gi" } } });
}

const grow = (c: PersistentVolumeClaim, storage: string): PersistentVolumeClaim => ({
  ...c,
  spec: { ...c.spec, resources: { requests: { storage } } },
});

async function outcome(call: Promise<unknown>): Promise<string> {
  try {
    await call;
    return "allowed";
  } catch (error) {
    if (!StatusError.isInstance(error)) throw error;
    return `${error.status.code} ${error.status.message}`;
  }
}

describe("PersistentVolumeClaimResize", () => {
  it("lets a bound claim of a class that allows expansion grow", async () => {
    const claims = await setUp();
    const c = await claim(claims, "a", "gold", true);
    expect(await outcome(claims.update(grow(c, "2Gi")))).toBe("allowed");
  });

  it("refuses growing a claim that is not bound", async () => {
    const claims = await setUp();
    const c = await claim(claims, "a", "gold", false);
    expect(await outcome(claims.update(grow(c, "2Gi")))).toBe(
      '403 persistentvolumeclaims "a" is forbidden: Only bound persistent volume claims can be expanded',
    );
  });

  it("refuses growing a claim whose class does not allow expansion, or that has no class", async () => {
    const claims = await setUp();
    const silver = await claim(claims, "s", "silver", true);
    const message =
      "is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize";
    expect(await outcome(claims.update(grow(silver, "2Gi")))).toBe(
      `403 persistentvolumeclaims "s" ${message}`,
    );
    const none = await claim(claims, "n", "", true);
    expect(await outcome(claims.update(grow(none, "2Gi")))).toBe(`403 persistentvolumeclaims "n" ${message}`);
  });

  it("leaves updates that do not grow the request alone", async () => {
    const claims = await setUp();
    const c = await claim(claims, "a", "silver", false);
    expect(await outcome(claims.update({ ...c, metadata: { ...c.metadata, labels: { a: "b" } } }))).toBe(
      "allowed",
    );
  });
});
