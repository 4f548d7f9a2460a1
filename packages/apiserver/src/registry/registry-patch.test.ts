import { deployments, pods } from "@reconcile/api";
import { afterEach, describe, expect, it } from "vitest";
import { closeServers, deployment, newServer, pod, rejection } from "./registry.test-util.js";

afterEach(closeServers);

describe("patch", () => {
  it("applies a merge patch (RFC 7386)", async () => {
    const client = newServer().client().resource(deployments, "default");
    await client.create(deployment("web"));
    const patched = await client.patch(
      "web",
      { spec: { replicas: 4 }, metadata: { labels: { a: "b" } } },
      { type: "merge" },
    );
    expect(patched.spec?.replicas).toBe(4);
    expect(patched.metadata?.labels).toEqual({ a: "b" });
    expect(patched.metadata?.generation).toBe(2);
    const removed = await client.patch("web", { metadata: { labels: null } }, { type: "merge" });
    expect(removed.metadata?.labels).toBeUndefined();
  });

  it("applies a JSON patch (RFC 6902) and answers 422 when a test fails", async () => {
    const client = newServer().client().resource(deployments, "default");
    await client.create(deployment("web"));
    const patched = await client.patch(
      "web",
      [
        { op: "test", path: "/spec/replicas", value: 1 },
        { op: "replace", path: "/spec/replicas", value: 2 },
        { op: "add", path: "/metadata/annotations", value: { "a/b": "c" } },
      ],
      { type: "json" },
    );
    expect(patched.spec?.replicas).toBe(2);
    expect(patched.metadata?.annotations).toEqual({ "a/b": "c" });
    const error = await rejection(
      client.patch("web", [{ op: "test", path: "/spec/replicas", value: 7 }], { type: "json" }),
    );
    expect(error.status.code).toBe(422);
  });

  it("merges containers by name in a strategic merge patch, as kubectl set image does", async () => {
    const client = newServer().client().resource(deployments, "default");
    const base = deployment("web");
    base.spec!.template.spec!.containers.push({ name: "sidecar", image: "envoy:1" });
    await client.create(base);
    const patched = await client.patch(
      "web",
      { spec: { template: { spec: { containers: [{ name: "sidecar", image: "envoy:2" }] } } } },
      { type: "strategic-merge" },
    );
    expect(patched.spec?.template.spec?.containers.map((c) => `${c.name}=${c.image}`)).toEqual([
      "app=nginx:1.27",
      "sidecar=envoy:2",
    ]);
    const deleted = await client.patch(
      "web",
      { spec: { template: { spec: { containers: [{ name: "sidecar", $patch: "delete" }] } } } },
      { type: "strategic-merge" },
    );
    expect(deleted.spec?.template.spec?.containers.map((c) => c.name)).toEqual(["app"]);
  });

  it("patches status through the status subresource only", async () => {
    const client = newServer().client().resource(deployments, "default");
    await client.create(deployment("web"));
    const patched = await client.patch(
      "web",
      { spec: { replicas: 9 }, status: { replicas: 1 } },
      { type: "merge", subresource: "status" },
    );
    expect(patched.spec?.replicas).toBe(1);
    expect(patched.status).toEqual({ replicas: 1 });
  });

  it("server-side apply creates when absent, merges another manager's fields and removes what its manager dropped", async () => {
    const client = newServer().client().resource(deployments, "default");
    const created = await client.patch("web", deployment("web"), { type: "apply", fieldManager: "kubectl" });
    expect(created.metadata?.generation).toBe(1);
    expect(created.metadata?.managedFields?.map((e) => [e.manager, e.operation])).toEqual([
      ["kubectl", "Apply"],
    ]);
    const scaled = await client.patch(
      "web",
      { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web" }, spec: { replicas: 3 } },
      { type: "apply", fieldManager: "scaler" },
    );
    expect(scaled.spec?.replicas).toBe(3);
    expect(scaled.spec?.template.spec?.containers.map((c) => c.name)).toEqual(["app"]);
    // kubectl drops the container's image from its configuration: nobody else owns it, so it goes.
    const dropped = deployment("web");
    delete dropped.spec!.template.spec!.containers[0]!.image;
    await expect(client.patch("web", dropped, { type: "apply", fieldManager: "kubectl" })).rejects.toThrow(
      /spec\.template\.spec\.containers\[0\]\.image: Required value/,
    );
  });

  it("answers 400 for a server-side apply that would create an object under another name than the URL's", async () => {
    const client = newServer().client().resource(deployments, "default");
    const error = await rejection(
      client.patch("web", deployment("api"), { type: "apply", fieldManager: "kubectl" }),
    );
    expect(error.status.code).toBe(400);
    expect(error.message).toBe("the name of the object (api) does not match the name on the URL (web)");
    expect((await client.list()).items).toEqual([]);
  });

  it("answers 400 for a patch that renames the object or moves it to another namespace", async () => {
    const client = newServer().client().resource(pods, "default");
    await client.create(pod("p"));
    const renamed = await rejection(client.patch("p", { metadata: { name: "q" } }, { type: "merge" }));
    expect(renamed.status.code).toBe(400);
    expect(renamed.message).toBe("the name of the object (q) does not match the name on the URL (p)");
    const moved = await rejection(
      client.patch("p", [{ op: "replace", path: "/metadata/namespace", value: "kube-system" }], {
        type: "json",
      }),
    );
    expect(moved.status.code).toBe(400);
    expect(moved.message).toBe(
      "the namespace of the provided object does not match the namespace sent on the request",
    );
  });

  it("answers 404 for a patch of a missing object", async () => {
    const client = newServer().client().resource(deployments, "default");
    expect((await rejection(client.patch("nope", {}, { type: "merge" }))).status.code).toBe(404);
  });
});

describe("scale subresource", () => {
  it("reads and writes replicas through Scale", async () => {
    const client = newServer().client().resource(deployments, "default");
    const created = await client.create(deployment("web", { replicas: 2 }));
    const scale = await client.getScale("web");
    expect(scale).toEqual({
      apiVersion: "autoscaling/v1",
      kind: "Scale",
      metadata: {
        name: "web",
        namespace: "default",
        uid: created.metadata?.uid,
        resourceVersion: created.metadata?.resourceVersion,
        creationTimestamp: created.metadata?.creationTimestamp,
      },
      spec: { replicas: 2 },
      status: { replicas: 0, selector: "app=web" },
    });
    const updated = await client.updateScale("web", { ...scale, spec: { replicas: 5 } });
    expect(updated.spec?.replicas).toBe(5);
    expect((await client.get("web")).spec?.replicas).toBe(5);
    const stale = await rejection(client.updateScale("web", { ...scale, spec: { replicas: 6 } }));
    expect(stale.status.code).toBe(409);
    const negative = await rejection(client.updateScale("web", { spec: { replicas: -1 } }));
    expect(negative.status.code).toBe(422);
  });

  it("answers 405 for a resource without a scale subresource", async () => {
    const client = newServer().client().resource(pods, "default");
    await client.create(pod("p"));
    expect((await rejection(client.getScale("p"))).status.code).toBe(405);
  });
});
