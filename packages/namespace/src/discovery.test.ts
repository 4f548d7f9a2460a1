import { configMaps, namespaces } from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import { discoveryFromClient, HttpClient, loadKubeConfig } from "@reconcile/client";
import { afterEach, describe, expect, it } from "vitest";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("discoveryFromClient", () => {
  it("lists the embedded server's kinds with their verbs through the in-process client", async () => {
    const api = new ApiServer({ kubernetesService: false });
    cleanups.push(() => api.close());
    const { resources, failedGroups } = await discoveryFromClient(api.client())();
    expect(failedGroups.size).toBe(0);
    const configmaps = resources.find((r) => r.resource.plural === "configmaps");
    expect(configmaps?.resource.namespaced).toBe(true);
    expect(configmaps?.verbs).toContain("deletecollection");
    const ns = resources.find((r) => r.resource.plural === "namespaces");
    expect(ns?.resource.namespaced).toBe(false);
    expect(ns?.verbs).not.toContain("deletecollection");
  });

  it("reads /api/v1 and each group's preferred version under /apis over HTTP, and finalizes through it", async () => {
    const api = new ApiServer({ kubernetesService: false });
    const server = await api.listen();
    cleanups.push(() => api.close());
    const client = new HttpClient({
      kubeConfig: await loadKubeConfig({ yaml: server.kubeconfig() }),
      qps: Infinity,
    });
    cleanups.push(() => client.close());
    const { resources, failedGroups } = await discoveryFromClient(client)();
    expect(failedGroups.size).toBe(0);
    const names = resources.map((r) =>
      r.resource.group ? `${r.resource.plural}.${r.resource.group}` : r.resource.plural,
    );
    expect(names).toEqual(
      expect.arrayContaining(["configmaps", "pods", "deployments.apps", "leases.coordination.k8s.io"]),
    );
    expect(names.some((name) => name.includes("/"))).toBe(false);
    const deployments = resources.find((r) => r.resource.plural === "deployments");
    expect(deployments?.resource).toMatchObject({
      group: "apps",
      version: "v1",
      kind: "Deployment",
      namespaced: true,
    });
    expect(deployments?.verbs).toEqual(expect.arrayContaining(["delete", "deletecollection"]));

    // The finalize subresource over HTTP: the namespace goes once nothing holds it.
    const nsClient = client.resource(namespaces);
    await nsClient.create({ metadata: { name: "team" } });
    await client.resource(configMaps, "team").create({ metadata: { name: "c" } });
    await nsClient.delete("team");
    const terminating = await nsClient.get("team");
    expect(terminating.status?.phase).toBe("Terminating");
    await nsClient.finalize!({ ...terminating, spec: { finalizers: [] } });
    await expect(nsClient.get("team")).rejects.toMatchObject({ status: { code: 404 } });
  });

  it("a client with no way to discover makes each discovery reject", async () => {
    const discover = discoveryFromClient({ resource: () => ({}) as never });
    await expect(discover()).rejects.toThrow("the client offers no discovery");
  });
});
