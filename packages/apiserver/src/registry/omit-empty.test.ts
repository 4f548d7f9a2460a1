import { type ConfigMap, configMaps, pods } from "@reconcile/api";
import { describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";

describe("empty metadata fields are left out, as kube-apiserver's encoding omits them", () => {
  it("a pod whose only owner is released carries no ownerReferences: []", async () => {
    // No garbage collector: the owner does not exist.
    const server = new ApiServer({ kubernetesService: false, garbageCollection: false });
    const client = server.client().resource(pods, "default");
    const owner = { apiVersion: "apps/v1", kind: "ReplicaSet", name: "web", uid: "u-1", controller: true };
    const created = await client.create({
      metadata: { name: "p", labels: { app: "web" }, ownerReferences: [owner] },
      spec: { containers: [{ name: "c", image: "nginx" }] },
    });
    const released = await client.patch(
      "p",
      { metadata: { ownerReferences: [{ $patch: "delete", uid: "u-1" }], uid: created.metadata?.uid } },
      { type: "strategic-merge" },
    );
    expect(released.metadata).not.toHaveProperty("ownerReferences");
  });

  it("empty labels, annotations and finalizers are dropped on create and update", async () => {
    const client = new ApiServer({ kubernetesService: false }).client().resource(configMaps, "default");
    const created = await client.create({
      metadata: { name: "c", labels: {}, annotations: {}, finalizers: [] },
    });
    expect(Object.keys(created.metadata ?? {}).sort()).toEqual([
      "creationTimestamp",
      "name",
      "namespace",
      "resourceVersion",
      "uid",
    ]);
    const updated = await client.update({
      ...created,
      metadata: { ...created.metadata, labels: {}, annotations: {} },
      data: { a: "1" },
    } as ConfigMap);
    expect(updated.metadata).not.toHaveProperty("labels");
    expect(updated.metadata).not.toHaveProperty("annotations");
  });
});
