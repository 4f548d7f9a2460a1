import { type DaemonSet, type Deployment, daemonSets, deployments, isConflict } from "@reconcile/api";
import { FakeClock } from "@reconcile/clock";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "../index.js";

const servers: ApiServer[] = [];
afterEach(async () => {
  while (servers.length > 0) await servers.pop()!.close();
});

function deployment(): Deployment {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "web", namespace: "default", labels: { app: "web" } },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: "web" } },
      template: {
        metadata: { labels: { app: "web" } },
        spec: { containers: [{ name: "c", image: "nginx" }] },
      },
    },
  };
}

describe("a Deployment's /status update", () => {
  it("keeps annotation changes and the status, and resets spec and labels (kube's deploymentStatusStrategy)", async () => {
    const server = new ApiServer({ clock: new FakeClock(0) });
    servers.push(server);
    const client = server.client().resource(deployments, "default");
    const created = await client.create(deployment());
    const request = structuredClone(created);
    request.metadata!.annotations = { "deployment.kubernetes.io/revision": "1" };
    request.metadata!.labels = { app: "changed" };
    request.spec!.replicas = 7;
    request.status = { observedGeneration: 1, replicas: 2 };
    const updated = await client.updateStatus(request);
    expect(updated.metadata?.annotations).toEqual({ "deployment.kubernetes.io/revision": "1" });
    expect(updated.metadata?.labels).toEqual({ app: "web" });
    expect(updated.spec?.replicas).toBe(2);
    expect(updated.metadata?.generation).toBe(created.metadata?.generation);
    expect(updated.status).toEqual({ observedGeneration: 1, replicas: 2 });
    const stored = await client.get("web");
    expect(stored.metadata?.annotations).toEqual({ "deployment.kubernetes.io/revision": "1" });
  });

  it("is still a conflict with a stale resourceVersion", async () => {
    const server = new ApiServer({ clock: new FakeClock(0) });
    servers.push(server);
    const client = server.client().resource(deployments, "default");
    const created = await client.create(deployment());
    await client.updateStatus({ ...created, status: { replicas: 1 } });
    await expect(client.updateStatus({ ...created, status: { replicas: 2 } })).rejects.toSatisfy(isConflict);
  });
});

describe("a DaemonSet's template generation", () => {
  it("is 1 on create and grows by one with each template change, not with other changes (apps/v1's annotation)", async () => {
    const server = new ApiServer({ clock: new FakeClock(0) });
    servers.push(server);
    const client = server.client().resource(daemonSets, "default");
    const generationOf = (ds: DaemonSet) => [
      ds.metadata?.generation,
      ds.metadata?.annotations?.["deprecated.daemonset.template.generation"],
    ];
    const created = await client.create({
      metadata: { name: "agent", namespace: "default" },
      spec: {
        selector: { matchLabels: { app: "agent" } },
        template: {
          metadata: { labels: { app: "agent" } },
          spec: { containers: [{ name: "c", image: "a:1" }] },
        },
      },
    });
    expect(generationOf(created)).toEqual([1, "1"]);
    const other = await client.update({ ...created, spec: { ...created.spec!, minReadySeconds: 5 } });
    expect(generationOf(other)).toEqual([2, "1"]);
    const same = await client.update(other);
    expect(generationOf(same)).toEqual([2, "1"]);
    const changed = structuredClone(same);
    changed.spec!.template.spec!.containers[0]!.image = "a:2";
    expect(generationOf(await client.update(changed))).toEqual([3, "2"]);
  });
});
