import { type APIService, apiServices, defineResource } from "@reconcile/api";
import { FakeClock } from "@reconcile/clock";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "./api-server.js";
import { automanagedLabel } from "./api-service-registration.js";
import { defineKind } from "./kinds/definition.js";
import { closeKubectlClusters, kubectlCluster } from "./testing/index.js";

// kube-aggregator's APIService autoregistration: one Local APIService per
// served group-version with kube-apiserver v1.32's priorities, kept in step
// with the served kinds, marked Available as the available controller marks
// Local services.

afterEach(closeKubectlClusters);

const widgets = (version: string) =>
  defineResource({ group: "example.com", version, kind: "Widget", plural: "widgets", namespaced: true });

async function started() {
  const api = new ApiServer({
    clock: new FakeClock(Date.parse("2026-01-01T00:00:00Z")),
    apiServiceRegistration: true,
  });
  await api.flush();
  return { api, client: api.client().resource(apiServices) };
}

describe("APIService autoregistration", () => {
  it("is off unless asked for: the kind is served, nothing is registered", async () => {
    const api = new ApiServer();
    try {
      await api.flush();
      expect((await api.client().resource(apiServices).list({})).items).toEqual([]);
    } finally {
      await api.close();
    }
  });

  it("registers every served group-version at start, with upstream's priorities, each Available", async () => {
    const { api, client } = await started();
    try {
      const items = (await client.list({})).items;
      expect(items.map((item) => item.metadata?.name).sort()).toEqual([
        "v1.",
        "v1.admissionregistration.k8s.io",
        "v1.apiextensions.k8s.io",
        "v1.apps",
        "v1.authentication.k8s.io",
        "v1.authorization.k8s.io",
        "v1.autoscaling",
        "v1.batch",
        "v1.certificates.k8s.io",
        "v1.coordination.k8s.io",
        "v1.discovery.k8s.io",
        "v1.events.k8s.io",
        "v1.flowcontrol.apiserver.k8s.io",
        "v1.networking.k8s.io",
        "v1.node.k8s.io",
        "v1.policy",
        "v1.rbac.authorization.k8s.io",
        "v1.scheduling.k8s.io",
        "v1.storage.k8s.io",
        "v2.autoscaling",
      ]);
      const core = items.find((item) => item.metadata?.name === "v1.") as APIService;
      expect(core.metadata?.labels).toEqual({ [automanagedLabel]: "onstart" });
      expect(core.spec).toEqual({ version: "v1", groupPriorityMinimum: 18000, versionPriority: 1 });
      expect(core.status).toEqual({
        conditions: [
          {
            type: "Available",
            status: "True",
            lastTransitionTime: "2026-01-01T00:00:00Z",
            reason: "Local",
            message: "Local APIServices are always available",
          },
        ],
      });
      const autoscaling = items.filter((item) => item.spec?.group === "autoscaling");
      expect(autoscaling.map((item) => [item.metadata?.name, item.spec?.versionPriority])).toEqual([
        ["v1.autoscaling", 15],
        ["v2.autoscaling", 30],
      ]);
    } finally {
      await api.close();
    }
  });

  it("follows kinds added and removed at run time (a CRD's versions) with the CRD priorities", async () => {
    const { api, client } = await started();
    try {
      api.registry.definitions.add(defineKind({ descriptor: widgets("v1") }));
      api.registry.definitions.add(defineKind({ descriptor: widgets("v2beta1") }));
      await api.flush();
      const added = await client.get("v2beta1.example.com");
      expect(added.metadata?.labels).toEqual({ [automanagedLabel]: "true" });
      expect(added.spec).toEqual({
        group: "example.com",
        version: "v2beta1",
        groupPriorityMinimum: 1000,
        versionPriority: 100,
      });
      expect(added.status?.conditions?.[0]).toMatchObject({
        type: "Available",
        status: "True",
        reason: "Local",
      });
      api.registry.definitions.remove(widgets("v2beta1"));
      await api.flush();
      await expect(client.get("v2beta1.example.com")).rejects.toMatchObject({ code: 404 });
      expect((await client.get("v1.example.com")).spec?.version).toBe("v1");
    } finally {
      await api.close();
    }
  });

  it("syncs a built-in group-version on start only: a user's aggregated server in its place stands", async () => {
    const { api, client } = await started();
    try {
      const batch = await client.get("v1.batch");
      expect(batch.metadata?.labels).toEqual({ [automanagedLabel]: "onstart" });
      // As applying an aggregated server's manifest over it would.
      const spec = {
        ...batch.spec!,
        service: { namespace: "kube-system", name: "batch-server", port: 443 },
        insecureSkipTLSVerify: true,
      };
      await client.update({ ...batch, spec });
      // A CRD's version makes the registration sync again; the built-in one is not corrected.
      api.registry.definitions.add(defineKind({ descriptor: widgets("v1") }));
      await api.flush();
      expect((await client.get("v1.example.com")).spec?.version).toBe("v1");
      expect((await client.get("v1.batch")).spec).toEqual(spec);
    } finally {
      await api.close();
    }
  });

  it("leaves a user's APIService alone; a duplicate is a 409 and a name that is not version.group a 422", async () => {
    const { api, client } = await started();
    try {
      const body = {
        metadata: { name: "v1beta1.custom.metrics.k8s.io" },
        spec: {
          group: "custom.metrics.k8s.io",
          version: "v1beta1",
          groupPriorityMinimum: 100,
          versionPriority: 100,
          service: { namespace: "monitoring", name: "adapter" },
        },
      };
      await client.create(body);
      await expect(client.create(body)).rejects.toMatchObject({ code: 409, reason: "AlreadyExists" });
      await expect(client.create({ ...body, metadata: { name: "wrong" } })).rejects.toMatchObject({
        code: 422,
        message:
          'APIService.apiregistration.k8s.io "wrong" is invalid: metadata.name: Invalid value: "wrong": must be v1beta1.custom.metrics.k8s.io',
      });
      api.registry.definitions.add(defineKind({ descriptor: widgets("v1") }));
      await api.flush();
      expect((await client.get("v1beta1.custom.metrics.k8s.io")).spec?.service?.name).toBe("adapter");
    } finally {
      await api.close();
    }
  });

  it("kubectl get apiservices prints upstream's columns", async () => {
    const { api, kubectl, client } = await kubectlCluster({ apiServiceRegistration: true });
    await client.resource(apiServices).create({
      metadata: { name: "v1beta1.custom.metrics.k8s.io" },
      spec: {
        group: "custom.metrics.k8s.io",
        version: "v1beta1",
        groupPriorityMinimum: 100,
        versionPriority: 100,
        service: { namespace: "monitoring", name: "adapter" },
      },
    });
    await api.flush();
    const table = (await kubectl(["get", "apiservices", "v1.apps", "v1beta1.custom.metrics.k8s.io"])).stdout;
    expect(table.split("\n")[0]).toMatch(/^NAME +SERVICE +AVAILABLE +AGE$/);
    expect(table).toMatch(/\nv1\.apps +Local +True +\d+s\n/);
    // The aggregator finds no Service behind it.
    expect(table).toMatch(
      /\nv1beta1\.custom\.metrics\.k8s\.io +monitoring\/adapter +False \(ServiceNotFound\) +\d+s\n/,
    );
  });
});
