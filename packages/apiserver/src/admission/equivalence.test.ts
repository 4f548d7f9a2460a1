import { StatusError } from "@reconcile/api";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";
import { admissionEquivalence } from "./equivalence.js";

// upstream's EquivalentResourceMapper over the built-in definitions: the
// resources one storage keeps, and conversion between them.

const servers: ApiServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

function setup() {
  const server = new ApiServer();
  servers.push(server);
  const definitions = server.registry.definitions;
  const find = (group: string, version: string, plural: string) =>
    definitions
      .list()
      .find(
        (d) =>
          d.descriptor.group === group && d.descriptor.version === version && d.descriptor.plural === plural,
      )!.descriptor;
  return { equivalence: admissionEquivalence(() => definitions), find };
}

const show = (r: { group: string; version: string; plural: string }) => `${r.group}/${r.version}/${r.plural}`;

describe("admissionEquivalence", () => {
  it("names the other resources one storage keeps, and none for a kind kept alone", () => {
    const { equivalence, find } = setup();
    expect(equivalence.equivalents(find("autoscaling", "v2", "horizontalpodautoscalers")).map(show)).toEqual([
      "autoscaling/v1/horizontalpodautoscalers",
    ]);
    expect(equivalence.equivalents(find("", "v1", "events")).map(show)).toEqual(["events.k8s.io/v1/events"]);
    expect(equivalence.equivalents(find("", "v1", "configmaps"))).toEqual([]);
  });

  it("converts through the stored version: an autoscaling/v2 CPU target is v1's targetCPUUtilizationPercentage", async () => {
    const { equivalence, find } = setup();
    const v2 = find("autoscaling", "v2", "horizontalpodautoscalers");
    const v1 = find("autoscaling", "v1", "horizontalpodautoscalers");
    const hpa = {
      apiVersion: "autoscaling/v2",
      kind: "HorizontalPodAutoscaler",
      metadata: { name: "h", namespace: "default" },
      spec: {
        scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "web" },
        minReplicas: 1,
        maxReplicas: 3,
        metrics: [
          {
            type: "Resource",
            resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 50 } },
          },
        ],
      },
    };
    const converted = await equivalence.convert(hpa as never, v2, v1);
    expect(converted).toEqual({
      apiVersion: "autoscaling/v1",
      kind: "HorizontalPodAutoscaler",
      metadata: { name: "h", namespace: "default" },
      spec: {
        scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "web" },
        minReplicas: 1,
        maxReplicas: 3,
        targetCPUUtilizationPercentage: 50,
      },
    });
    // The caller's object is left as it was.
    expect(hpa.apiVersion).toBe("autoscaling/v2");
  });

  it("refuses a resource it does not serve with a 500", async () => {
    const { equivalence, find } = setup();
    const configMapsV1 = find("", "v1", "configmaps");
    const missing = { ...configMapsV1, version: "v9" };
    const error = await equivalence
      .convert({ metadata: { name: "c" } }, configMapsV1, missing)
      .catch((e) => e);
    expect(StatusError.isInstance(error)).toBe(true);
    expect((error as StatusError).status.code).toBe(500);
    expect((error as StatusError).message).toBe("Internal error occurred: no conversion from v1 to v9");
  });
});
