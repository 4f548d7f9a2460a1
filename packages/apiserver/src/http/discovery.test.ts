import { builtinResources } from "@reconcile/api";
import { describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";
import { builtinDefinitions } from "../kinds/builtin.js";
import { apiGroup, apiGroupList, apiResourceList, apiVersions, versionInfo } from "./discovery.js";
import { openApiDocuments } from "./openapi.js";

describe("discovery documents", () => {
  it("reports Kubernetes 1.32 so that kubectl's dispatcher picks its built-in v1.32", () => {
    expect(versionInfo()).toMatchObject({ major: "1", minor: "32", gitVersion: "v1.32.0" });
  });

  it("lists the core version under /api and the named groups under /apis", () => {
    expect(apiVersions(builtinResources, "127.0.0.1:6443")).toEqual({
      kind: "APIVersions",
      versions: ["v1"],
      serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress: "127.0.0.1:6443" }],
    });
    const list = apiGroupList(builtinResources) as { groups: { name: string; preferredVersion: unknown }[] };
    expect(list.groups.map((g) => g.name)).toEqual(["apps", "batch", "coordination.k8s.io"]);
    expect(list.groups[0]!.preferredVersion).toEqual({ groupVersion: "apps/v1", version: "v1" });
    expect(apiGroup(builtinResources, "apps")).toMatchObject({ kind: "APIGroup", name: "apps" });
    expect(apiGroup(builtinResources, "nope.example.com")).toBeUndefined();
  });

  it("orders groups as kube-aggregator does: its own group, then by priority, custom groups by APIService name, metrics last", async () => {
    const server = new ApiServer();
    try {
      const custom = (group: string, version: string) => ({
        ...server.registry.definitions.descriptors()[0]!,
        group,
        version,
        kind: "Widget",
        plural: "widgets",
      });
      const served = [
        custom("metrics.k8s.io", "v1beta1"),
        custom("b.example.com", "v1"),
        custom("a.example.com", "v1beta1"),
        custom("a.example.com", "v2"),
        custom("a.example.com", "v1"),
        ...server.registry.definitions.descriptors(),
      ];
      const list = apiGroupList(served) as { groups: { name: string; versions: { version: string }[] }[] };
      expect(list.groups.map((g) => `${g.name} ${g.versions.map((v) => v.version).join(",")}`)).toEqual([
        "apiregistration.k8s.io v1",
        "apps v1",
        "events.k8s.io v1",
        "autoscaling v2,v1",
        "batch v1",
        "certificates.k8s.io v1",
        "networking.k8s.io v1",
        "policy v1",
        "rbac.authorization.k8s.io v1",
        "storage.k8s.io v1",
        "admissionregistration.k8s.io v1",
        "apiextensions.k8s.io v1",
        "scheduling.k8s.io v1",
        "coordination.k8s.io v1",
        "node.k8s.io v1",
        "discovery.k8s.io v1",
        "flowcontrol.apiserver.k8s.io v1",
        "a.example.com v2,v1,v1beta1",
        "b.example.com v1",
        "metrics.k8s.io v1beta1",
      ]);
    } finally {
      await server.close();
    }
  });

  it("describes apps/v1 with short names, the all category and the status and scale subresources", () => {
    const list = apiResourceList(
      builtinDefinitions.filter((d) => builtinResources.includes(d.descriptor)),
      "apps",
      "v1",
    ) as {
      groupVersion: string;
      resources: object[];
    };
    expect(list.groupVersion).toBe("apps/v1");
    expect(list.resources).toContainEqual(
      expect.objectContaining({
        name: "deployments",
        singularName: "deployment",
        namespaced: true,
        kind: "Deployment",
        verbs: ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
        shortNames: ["deploy"],
        categories: ["all"],
      }),
    );
    expect(list.resources).toContainEqual({
      name: "deployments/scale",
      singularName: "",
      namespaced: true,
      group: "autoscaling",
      version: "v1",
      kind: "Scale",
      verbs: ["get", "patch", "update"],
    });
    expect(list.resources).toContainEqual({
      name: "replicasets/status",
      singularName: "",
      namespaced: true,
      kind: "ReplicaSet",
      verbs: ["get", "patch", "update"],
    });
  });

  it("marks cluster-scoped resources and answers undefined for a group-version it does not serve", () => {
    const core = apiResourceList(
      builtinDefinitions.filter((d) => builtinResources.includes(d.descriptor)),
      "",
      "v1",
    ) as {
      resources: { name: string; namespaced: boolean }[];
    };
    expect(core.resources.find((r) => r.name === "nodes")?.namespaced).toBe(false);
    expect(core.resources.find((r) => r.name === "pods")?.namespaced).toBe(true);
    expect(
      apiResourceList(
        builtinDefinitions.filter((d) => builtinResources.includes(d.descriptor)),
        "apps",
        "v1beta1",
      ),
    ).toBeUndefined();
  });
});

describe("openApiDocuments", () => {
  it("indexes one document per group-version, each with a PATCH operation per kind carrying fieldValidation", () => {
    const { index, byPath } = openApiDocuments(builtinResources);
    const paths = (index as { paths: Record<string, { serverRelativeURL: string }> }).paths;
    expect(Object.keys(paths)).toEqual([
      "api/v1",
      "apis/apps/v1",
      "apis/batch/v1",
      "apis/coordination.k8s.io/v1",
    ]);
    expect(paths["apis/apps/v1"]!.serverRelativeURL).toMatch(
      /^\/openapi\/v3\/apis\/apps\/v1\?hash=[0-9A-F]{32}$/,
    );
    const apps = byPath.get("apis/apps/v1") as { paths: Record<string, { patch: Record<string, unknown> }> };
    const patch = apps.paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]!.patch;
    expect(patch["x-kubernetes-group-version-kind"]).toEqual({
      group: "apps",
      version: "v1",
      kind: "Deployment",
    });
    expect(patch.parameters).toContainEqual({
      name: "fieldValidation",
      in: "query",
      schema: { type: "string", uniqueItems: true },
    });
    const core = byPath.get("api/v1") as { paths: Record<string, unknown> };
    expect(core.paths["/api/v1/namespaces/{name}"]).toBeDefined();
  });
});
