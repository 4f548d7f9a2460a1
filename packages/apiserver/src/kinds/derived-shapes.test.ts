import { cronJobs, deployments, nodes, pods, services } from "@reconcile/api";
import { afterEach, describe, expect, it } from "vitest";
import { typeFor } from "../apply/builtin-types.js";
import { closeServers, deployment, newServer, pod, rejection } from "../registry/registry.test-util.js";

// A built-in kind's decoder schema, apply type and patch meta are derived from Kubernetes' OpenAPI
// document; these cases are fields no hand-written table ever declared.

afterEach(closeServers);

describe("the decoder schema derived from OpenAPI", () => {
  it("rejects a wrongly typed field anywhere in a built-in kind, naming it", async () => {
    const client = newServer().client().resource(pods, "default");
    const body = pod("web");
    const error = await rejection(
      client.create({ ...body, spec: { ...body.spec, hostNetwork: "yes" } } as unknown as typeof body),
    );
    expect(error.status.code).toBe(400);
    expect(error.status.message).toBe(
      'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal string into Go struct field PodSpec.spec.hostNetwork of type bool',
    );
  });

  it("checks metadata against ObjectMeta's own schema, managedFields entries included", async () => {
    const client = newServer().client().resource(pods, "default");
    const body = pod("web");
    const managedFields = [{ manager: 5, operation: "Update" }];
    const error = await rejection(
      client.create({ ...body, metadata: { ...body.metadata, managedFields } } as unknown as typeof body),
    );
    expect(error.status.code).toBe(400);
    expect(error.status.message).toBe(
      'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal number into Go struct field ManagedFieldsEntry.metadata.managedFields.manager of type string',
    );
  });

  it("reads a Scale body by autoscaling/v1 Scale's schema: replicas is an int32", async () => {
    const client = newServer().client().resource(deployments, "default");
    await client.create(deployment("web"));
    const error = await rejection(client.updateScale("web", { spec: { replicas: 2147483648 } } as never));
    expect(error.status.code).toBe(400);
    expect(error.status.message).toBe(
      'Scale in version "autoscaling/v1" cannot be handled as a Scale: json: cannot unmarshal number 2147483648 into Go struct field ScaleSpec.spec.replicas of type int32',
    );
  });

  it("reads a quantity written as a JSON number, as Go's decoder does, and writes it back canonical", async () => {
    const client = newServer().client().resource(pods, "default");
    const body = pod("web");
    const containers = [{ name: "app", image: "nginx", resources: { requests: { cpu: 0.5 } } }];
    const created = await client.create({
      ...body,
      spec: { ...body.spec, containers },
    } as unknown as typeof body);
    expect(created.spec?.containers[0]?.resources?.requests).toEqual({ cpu: "500m" });
  });
});

describe("the strategic merge patch meta derived from OpenAPI", () => {
  it("merges a Node's podCIDRs as a set (patchStrategy merge on a list of strings)", async () => {
    const client = newServer().client().resource(nodes);
    await client.create({ metadata: { name: "n1" }, spec: { podCIDRs: ["10.0.0.0/24"] } });
    const patched = await client.patch(
      "n1",
      { spec: { podCIDRs: ["10.0.1.0/24", "10.0.0.0/24"] } },
      { type: "strategic-merge" },
    );
    expect(patched.spec?.podCIDRs).toEqual(["10.0.0.0/24", "10.0.1.0/24"]);
  });

  it("merges a Service's ports on port and a container's on containerPort", async () => {
    const server = newServer();
    const svc = server.client().resource(services, "default");
    await svc.create({
      metadata: { name: "web" },
      spec: { ports: [{ name: "http", port: 80, protocol: "TCP", targetPort: 8080 }] },
    });
    const patched = await svc.patch(
      "web",
      {
        spec: {
          ports: [
            { port: 80, targetPort: 9090 },
            { name: "https", port: 443 },
          ],
        },
      },
      { type: "strategic-merge" },
    );
    expect(patched.spec?.ports?.map((p) => [p.name, p.port, p.targetPort])).toEqual([
      ["http", 80, 9090],
      ["https", 443, 443],
    ]);
    const apps = server.client().resource(deployments, "default");
    const body = deployment("web");
    const template = body.spec!.template;
    const containers = [{ name: "app", image: "nginx", ports: [{ containerPort: 80, name: "http" }] }];
    await apps.create({ ...body, spec: { ...body.spec!, template: { ...template, spec: { containers } } } });
    const merged = await apps.patch(
      "web",
      {
        spec: {
          template: { spec: { containers: [{ name: "app", ports: [{ containerPort: 81, name: "alt" }] }] } },
        },
      },
      { type: "strategic-merge" },
    );
    expect(merged.spec?.template.spec?.containers[0]?.ports?.map((p) => p.containerPort)).toEqual([80, 81]);
  });
});

describe("the apply type derived from OpenAPI", () => {
  it("keys a CronJob's containers by name, so two managers own one container each", async () => {
    const client = newServer().client().resource(cronJobs, "default");
    const cronJob = (container: string) => ({
      apiVersion: "batch/v1",
      kind: "CronJob",
      metadata: { name: "nightly" },
      spec: {
        schedule: "0 1 * * *",
        jobTemplate: {
          spec: {
            template: {
              spec: { restartPolicy: "Never", containers: [{ name: container, image: "busybox" }] },
            },
          },
        },
      },
    });
    await client.patch("nightly", cronJob("a"), { type: "apply", fieldManager: "one" });
    const both = await client.patch("nightly", cronJob("b"), { type: "apply", fieldManager: "two" });
    const containers = both.spec?.jobTemplate.spec?.template.spec?.containers ?? [];
    expect(containers.map((c) => c.name)).toEqual(["a", "b"]);
  });

  it("follows upstream's list types where a patch strategy says otherwise", () => {
    const status = typeFor("v1", "Pod").fields.status;
    const hostIPs = status?.kind === "struct" ? status.fields.hostIPs : undefined;
    const podIPs = status?.kind === "struct" ? status.fields.podIPs : undefined;
    // hostIPs: +listType=atomic beside +patchStrategy=merge; podIPs: +listType=map keyed by ip.
    expect(hostIPs).toEqual({ kind: "list", listType: "atomic" });
    expect(podIPs).toMatchObject({ kind: "list", listType: "map", keys: ["ip"] });
    const spec = typeFor("apps/v1", "Deployment").fields.spec;
    expect(spec).toMatchObject({ kind: "struct", zero: true });
    const selector = spec?.kind === "struct" ? spec.fields.selector : undefined;
    expect(selector).toMatchObject({ kind: "struct", atomic: true });
  });
});
