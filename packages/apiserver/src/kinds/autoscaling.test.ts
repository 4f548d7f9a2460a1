import { horizontalPodAutoscalers } from "@reconcile/api";
import type { HorizontalPodAutoscaler } from "kubernetes-types/autoscaling/v2.js";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";
import { closeKubectlClusters, kubectlCluster } from "../testing/index.js";
import { horizontalPodAutoscalersV1 } from "./autoscaling.js";

afterEach(closeKubectlClusters);

const web = {
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", namespace: "default" },
  spec: {
    selector: { matchLabels: { app: "web" } },
    template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "c", image: "nginx" }] } },
  },
};

describe("HorizontalPodAutoscalers", () => {
  it("kubectl autoscale writes autoscaling/v1, stored as v2 with its defaults, and get hpa prints TARGETS", async () => {
    const { kubectl, client } = await kubectlCluster();
    await kubectl(["apply", "-f", "-"], JSON.stringify(web));
    expect(
      await kubectl(["autoscale", "deployment", "web", "--min=2", "--max=5", "--cpu-percent=50"]),
    ).toEqual({
      code: 0,
      stdout: "horizontalpodautoscaler.autoscaling/web autoscaled\n",
      stderr: "",
    });
    const stored = await client.resource(horizontalPodAutoscalers, "default").get("web");
    expect(stored.apiVersion).toBe("autoscaling/v2");
    expect(stored.spec).toEqual({
      scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "web" },
      minReplicas: 2,
      maxReplicas: 5,
      metrics: [
        {
          type: "Resource",
          resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 50 } },
        },
      ],
    });
    expect(stored.metadata?.annotations).toBeUndefined();
    const table = await kubectl(["get", "hpa"]);
    expect(table.stdout.split("\n")[0]!.split(/\s+/)).toEqual([
      "NAME",
      "REFERENCE",
      "TARGETS",
      "MINPODS",
      "MAXPODS",
      "REPLICAS",
      "AGE",
    ]);
    expect(
      table.stdout
        .split("\n")[1]!
        .split(/\s{2,}/)
        .slice(0, 6),
    ).toEqual(["web", "Deployment/web", "cpu: <unknown>/50%", "2", "5", "0"]);
  });

  it("serves a v2 autoscaler at v1 with the other metrics, conditions and behavior in annotations, and back", async () => {
    const { client } = await kubectlCluster();
    const v2 = client.resource(horizontalPodAutoscalers, "default");
    const created = await v2.create({
      metadata: { name: "both", namespace: "default" },
      spec: {
        scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "web" },
        maxReplicas: 10,
        metrics: [
          {
            type: "Resource",
            resource: { name: "memory", target: { type: "AverageValue", averageValue: "100Mi" } },
          },
          {
            type: "Resource",
            resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 60 } },
          },
        ],
        behavior: { scaleDown: { stabilizationWindowSeconds: 60 } },
      },
    } as HorizontalPodAutoscaler);
    // The given behavior is filled in with upstream's defaults.
    expect(created.spec?.behavior).toEqual({
      scaleDown: {
        stabilizationWindowSeconds: 60,
        selectPolicy: "Max",
        policies: [{ type: "Percent", value: 100, periodSeconds: 15 }],
      },
      scaleUp: {
        stabilizationWindowSeconds: 0,
        selectPolicy: "Max",
        policies: [
          { type: "Pods", value: 4, periodSeconds: 15 },
          { type: "Percent", value: 100, periodSeconds: 15 },
        ],
      },
    });
    const v1 = client.resource(horizontalPodAutoscalersV1, "default");
    const asV1 = (await v1.get("both")) as unknown as {
      apiVersion: string;
      metadata: { annotations: Record<string, string> };
      spec: Record<string, unknown>;
    };
    expect(asV1.apiVersion).toBe("autoscaling/v1");
    expect(asV1.spec).toEqual({
      scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "web" },
      minReplicas: 1,
      maxReplicas: 10,
      targetCPUUtilizationPercentage: 60,
    });
    expect(JSON.parse(asV1.metadata.annotations["autoscaling.alpha.kubernetes.io/metrics"]!)).toEqual([
      {
        type: "Resource",
        resource: { name: "memory", target: { type: "AverageValue", averageValue: "100Mi" } },
      },
    ]);
    // A v1 client's update keeps what it could not see.
    asV1.spec.maxReplicas = 12;
    await v1.update(asV1 as never);
    const back = await v2.get("both");
    expect(back.spec?.maxReplicas).toBe(12);
    expect(back.spec?.metrics?.map((m) => m.resource?.name)).toEqual(["cpu", "memory"]);
    expect(back.spec?.behavior?.scaleDown?.stabilizationWindowSeconds).toBe(60);
    expect(back.metadata?.annotations).toBeUndefined();
  });

  it("a v1 write of the CPU target takes the metrics from the v2 manager that set them", async () => {
    const api = new ApiServer();
    try {
      const client = api.client();
      await client.resource(horizontalPodAutoscalers, "default").create(
        {
          metadata: { name: "cpu", namespace: "default" },
          spec: {
            scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "web" },
            maxReplicas: 10,
            metrics: [
              {
                type: "Resource",
                resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 60 } },
              },
            ],
          },
        } as HorizontalPodAutoscaler,
        { fieldManager: "v2-writer" },
      );
      const v1 = client.resource(horizontalPodAutoscalersV1, "default");
      const current = (await v1.get("cpu")) as unknown as { spec: Record<string, unknown> };
      const updated = await v1.update(
        { ...current, spec: { ...current.spec, targetCPUUtilizationPercentage: 70 } } as never,
        { fieldManager: "v1-writer" },
      );
      const entries = updated.metadata?.managedFields ?? [];
      const v2Writer = entries.find((entry) => entry.manager === "v2-writer");
      expect(v2Writer?.apiVersion).toBe("autoscaling/v2");
      expect(Object.keys((v2Writer?.fieldsV1 as { "f:spec"?: object })?.["f:spec"] ?? {})).toEqual([
        "f:maxReplicas",
        "f:minReplicas",
        "f:scaleTargetRef",
      ]);
      expect(entries.find((entry) => entry.manager === "v1-writer")).toMatchObject({
        apiVersion: "autoscaling/v1",
        fieldsV1: { "f:spec": { "f:targetCPUUtilizationPercentage": {} } },
      });
    } finally {
      await api.close();
    }
  });

  it("refuses maxReplicas below minReplicas and a zero CPU target, naming the field", async () => {
    const { kubectl } = await kubectlCluster();
    const hpa = (spec: Record<string, unknown>) =>
      JSON.stringify({
        apiVersion: "autoscaling/v1",
        kind: "HorizontalPodAutoscaler",
        metadata: { name: "web", namespace: "default" },
        spec: { scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "web" }, ...spec },
      });
    const low = await kubectl(["apply", "-f", "-"], hpa({ minReplicas: 3, maxReplicas: 2 }));
    expect(low.stderr).toContain(
      "spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`",
    );
    const zero = await kubectl(
      ["apply", "-f", "-"],
      hpa({ maxReplicas: 2, targetCPUUtilizationPercentage: 0 }),
    );
    expect(zero.stderr).toContain(
      "spec.targetCPUUtilizationPercentage: Invalid value: 0: must be greater than 0",
    );
  });
});
