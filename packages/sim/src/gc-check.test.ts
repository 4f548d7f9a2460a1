import { configMaps } from "@reconcile/api";
import { ApiServer, garbageCollectorUser } from "@reconcile/apiserver";
import { afterEach, describe, expect, it } from "vitest";
import { garbageCollectorCheck } from "./gc-check.js";

let server: ApiServer | undefined;
afterEach(() => server?.close());

async function setUp() {
  const findings: string[] = [];
  const check = garbageCollectorCheck(
    () => server!,
    (message) => findings.push(message),
  );
  server = new ApiServer({ admissionPlugins: [check], garbageCollection: false });
  const api = server.client().resource(configMaps, "default");
  const owner = await api.create({ metadata: { name: "owner" } });
  const ref = { apiVersion: "v1", kind: "ConfigMap", name: "owner", uid: owner.metadata!.uid! };
  await api.create({ metadata: { name: "child", ownerReferences: [ref] } });
  const gcDelete = () =>
    server!.registry.delete(configMaps, "default", "child", { user: garbageCollectorUser });
  return { findings, api, ref, gcDelete };
}

describe("the garbage collector check", () => {
  it("calls the collector's delete of an object whose owner lives a finding", async () => {
    const { findings, ref, gcDelete } = await setUp();
    await gcDelete();
    expect(findings).toEqual([
      `the garbage collector deleted configmaps default/child while its owner ConfigMap owner (${ref.uid}) lived`,
    ]);
  });

  it("accepts it once the owner is gone, or replaced by another of the same name", async () => {
    const { findings, api, gcDelete } = await setUp();
    await api.delete("owner");
    await api.create({ metadata: { name: "owner" } });
    await gcDelete();
    expect(findings).toEqual([]);
  });

  it("accepts it while the owner is deleted in the foreground", async () => {
    const { findings, api, gcDelete } = await setUp();
    await api.delete("owner", { propagationPolicy: "Foreground" });
    await gcDelete();
    expect(findings).toEqual([]);
  });

  it("judges only the collector's deletes", async () => {
    const { findings, api } = await setUp();
    await api.delete("child");
    expect(findings).toEqual([]);
  });
});
