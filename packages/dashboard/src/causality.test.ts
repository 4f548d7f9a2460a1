import { configMaps, pods, replicaSets } from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import { describe, expect, it } from "vitest";
import { CausalityRecorder } from "./causality.js";

describe("CausalityRecorder", () => {
  it("records each write with its answer, resourceVersion and owner, and no read", async () => {
    let now = 1_000;
    const recorder = new CausalityRecorder({ now: () => now });
    const server = new ApiServer();
    const client = recorder.client("replicaset-controller", server.client());
    const rs = await server
      .client()
      .resource(replicaSets, "default")
      .create({
        metadata: { name: "web", namespace: "default" },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: "web" } },
          template: {
            metadata: { labels: { app: "web" } },
            spec: { containers: [{ name: "c", image: "nginx" }] },
          },
        },
      });
    now = 1_005;
    const pod = await client.resource(pods, "default").create({
      metadata: {
        name: "web-1",
        namespace: "default",
        ownerReferences: [
          {
            apiVersion: "apps/v1",
            kind: "ReplicaSet",
            name: "web",
            uid: rs.metadata!.uid!,
            controller: true,
          },
        ],
      },
      spec: { containers: [{ name: "c", image: "nginx" }] },
    });
    await client.resource(pods, "default").get("web-1");
    await client.resource(pods, "default").list();
    now = 1_010;
    await expect(
      client.resource(configMaps, "default").update({ metadata: { name: "missing", namespace: "default" } }),
    ).rejects.toThrow();
    await client.resource(pods, "default").delete("web-1", { gracePeriodSeconds: 0 });
    await client
      .resource(replicaSets, "default")
      .patch("web", { spec: { replicas: 2 } }, { type: "merge", subresource: "scale" })
      .catch(() => undefined);
    const file = recorder.traceFile();
    expect(file.format).toBe("reconcile-sim-trace/v1");
    expect(file.startedAt).toBe(1_000);
    expect(file.trace.slice(0, 3)).toEqual([
      {
        t: 5,
        type: "call",
        component: "replicaset-controller",
        index: 0,
        verb: "create",
        resource: "pods",
        target: "default/web-1",
        owner: "default/web",
        code: 201,
        rv: pod.metadata!.resourceVersion,
      },
      {
        t: 10,
        type: "call",
        component: "replicaset-controller",
        index: 1,
        verb: "update",
        resource: "configmaps",
        target: "default/missing",
        code: 404,
        reason: "NotFound",
      },
      expect.objectContaining({
        type: "call",
        index: 2,
        verb: "delete",
        resource: "pods",
        target: "default/web-1",
        code: 200,
      }),
    ]);
    expect(file.trace[3]).toMatchObject({
      verb: "patch",
      resource: "replicasets.apps/scale",
      target: "default/web",
    });
    await server.close();
  });

  it("records reconciles with their trigger and duration, and keeps the last entries", () => {
    let now = 0;
    const recorder = new CausalityRecorder({ capacity: 2, now: () => now });
    const seen: string[] = [];
    const observe = recorder.observer("kube-controller-manager", (record) => seen.push(String(record.key)));
    now = 50;
    for (const key of ["default/a", "default/b", "default/c"]) {
      observe({
        controller: "replicaset",
        key,
        reason: "object added",
        trigger: { informer: "replicasets.apps", type: "ADDED", key, resourceVersion: "7", initial: false },
        reconcileID: key,
        outcome: "success",
        startedAt: 40,
        endedAt: 48,
      });
    }
    const file = recorder.traceFile();
    expect(file.dropped).toBe(1);
    expect(file.trace).toEqual([
      {
        t: 50,
        type: "reconcile",
        component: "kube-controller-manager",
        controller: "replicaset",
        key: "default/b",
        reason: "object added",
        outcome: "success",
        trigger: "ADDED replicasets.apps default/b rv 7",
        took: 8,
      },
      expect.objectContaining({ key: "default/c" }),
    ]);
    expect(seen).toEqual(["default/a", "default/b", "default/c"]);
    expect(() => new CausalityRecorder({ capacity: 0 })).toThrow(
      "CausalityRecorder: capacity must be a positive integer, got 0",
    );
  });

  it("records the scheduler's binds as creates of pods/binding, refused ones with their code", async () => {
    const recorder = new CausalityRecorder({ now: () => 0 });
    const server = new ApiServer();
    const client = recorder.client("kube-scheduler", server.client()) as ReturnType<ApiServer["client"]> & {
      bindPod(namespace: string, binding: unknown): Promise<void>;
    };
    await server
      .client()
      .resource(pods, "default")
      .create({
        metadata: { name: "p", namespace: "default" },
        spec: { containers: [{ name: "c", image: "nginx" }] },
      });
    const binding = (name: string) => ({ metadata: { name }, target: { kind: "Node", name: "node-1" } });
    await client.bindPod("default", binding("p"));
    await expect(client.bindPod("default", binding("missing"))).rejects.toThrow();
    expect(recorder.traceFile().trace).toEqual([
      {
        t: 0,
        type: "call",
        component: "kube-scheduler",
        index: 0,
        verb: "create",
        resource: "pods/binding",
        target: "default/p",
        code: 201,
      },
      {
        t: 0,
        type: "call",
        component: "kube-scheduler",
        index: 1,
        verb: "create",
        resource: "pods/binding",
        target: "default/missing",
        code: 404,
        reason: "NotFound",
      },
    ]);
    await server.close();
  });
});
