import {
  type ApiException,
  AppsV1Api,
  CoreV1Api,
  KubeConfig,
  makeInformer,
  PatchStrategy,
  setHeaderOptions,
  type V1Deployment,
  type V1Pod,
} from "@kubernetes/client-node";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";
import { listen } from "./server.js";

// @kubernetes/client-node 1.4, the client Node.js users know, against the embedded server over HTTP.

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function cluster() {
  const api = new ApiServer();
  const server = await listen(api);
  cleanups.push(async () => {
    await server.close();
    await api.close();
  });
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(server.kubeconfig());
  return { kubeConfig, core: kubeConfig.makeApiClient(CoreV1Api), apps: kubeConfig.makeApiClient(AppsV1Api) };
}

const pod = (name: string, labels: Record<string, string> = {}): V1Pod => ({
  metadata: { name, labels },
  spec: { containers: [{ name: "main", image: "busybox" }] },
});

const deployment = (name: string): V1Deployment => ({
  metadata: { name },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: "main", image: "nginx", ports: [{ containerPort: 80 }] }] },
    },
  },
});

async function failure(promise: Promise<unknown>): Promise<ApiException<string>> {
  try {
    await promise;
  } catch (error) {
    return error as ApiException<string>;
  }
  throw new Error("expected the call to fail");
}

describe("@kubernetes/client-node 1.4 against the embedded server", () => {
  it("creates, reads, lists and deletes; errors carry the code and the Status body", async () => {
    const { core } = await cluster();
    await core.createNamespacedPod({ namespace: "default", body: pod("a", { app: "x" }) });
    await core.createNamespacedPod({ namespace: "default", body: pod("b", { app: "x" }) });
    const read = await core.readNamespacedPod({ namespace: "default", name: "a" });
    expect(read.spec?.containers[0]?.image).toBe("busybox");
    const list = await core.listNamespacedPod({ namespace: "default", labelSelector: "app=x" });
    expect(list.items.map((p) => p.metadata?.name)).toEqual(["a", "b"]);
    const missing = await failure(core.readNamespacedPod({ namespace: "default", name: "nope" }));
    expect(missing.code).toBe(404);
    expect(JSON.parse(missing.body)).toMatchObject({
      kind: "Status",
      reason: "NotFound",
      message: 'pods "nope" not found',
    });
    const exists = await failure(core.createNamespacedPod({ namespace: "default", body: pod("a") }));
    expect(exists.code).toBe(409);
    await core.deleteCollectionNamespacedPod({ namespace: "default", labelSelector: "app=x" });
    expect((await core.listNamespacedPod({ namespace: "default" })).items).toEqual([]);
  });

  it("patches strategically, answers a stale replace with 409, and scales", async () => {
    const { apps } = await cluster();
    await apps.createNamespacedDeployment({ namespace: "default", body: deployment("web") });
    const patched = await apps.patchNamespacedDeployment(
      {
        namespace: "default",
        name: "web",
        body: { spec: { template: { spec: { containers: [{ name: "main", image: "nginx:1.27" }] } } } },
      },
      setHeaderOptions("Content-Type", PatchStrategy.StrategicMergePatch),
    );
    expect(patched.spec?.template.spec?.containers[0]).toMatchObject({
      image: "nginx:1.27",
      ports: [{ containerPort: 80 }],
    });
    const stale = { ...patched, metadata: { ...patched.metadata, resourceVersion: "1" } };
    const conflict = await failure(
      apps.replaceNamespacedDeployment({ namespace: "default", name: "web", body: stale }),
    );
    expect(conflict.code).toBe(409);
    const scale = await apps.patchNamespacedDeploymentScale(
      { namespace: "default", name: "web", body: { spec: { replicas: 4 } } },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    );
    expect(scale.spec?.replicas).toBe(4);
    expect((await apps.readNamespacedDeployment({ namespace: "default", name: "web" })).spec?.replicas).toBe(
      4,
    );
  });

  it("runs an informer: the initial list, then adds, updates and deletes from the watch", async () => {
    const { kubeConfig, core } = await cluster();
    await core.createNamespacedPod({ namespace: "default", body: pod("before") });
    const informer = makeInformer(kubeConfig, "/api/v1/namespaces/default/pods", () =>
      core.listNamespacedPod({ namespace: "default" }),
    );
    const seen: string[] = [];
    let allSeen!: () => void;
    const fourSeen = new Promise<void>((resolve) => (allSeen = resolve));
    const record = (entry: string) => {
      seen.push(entry);
      if (seen.length === 4) allSeen();
    };
    informer.on("add", (p) => record(`add ${p.metadata?.name}`));
    informer.on("update", (p) => record(`update ${p.metadata?.name} ${p.metadata?.labels?.v ?? ""}`));
    informer.on("delete", (p) => record(`delete ${p.metadata?.name}`));
    await informer.start();
    cleanups.push(async () => {
      await informer.stop();
    });
    await core.createNamespacedPod({ namespace: "default", body: pod("after") });
    await core.patchNamespacedPod(
      { namespace: "default", name: "after", body: { metadata: { labels: { v: "2" } } } },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    );
    await core.deleteNamespacedPod({ namespace: "default", name: "before" });
    await fourSeen;
    expect(seen).toEqual(["add before", "add after", "update after 2", "delete before"]);
    expect(informer.list("default").map((p) => p.metadata?.name)).toEqual(["after"]);
  });
});
