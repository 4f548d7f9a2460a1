import { describe, expect, it } from "vitest";
import type { Pod } from "./index.js";
import { quotaUsage } from "./quota.js";

const pods = { group: "", plural: "pods" };

function pod(containers: Record<string, Record<string, string>>[]): Pod {
  return {
    metadata: { name: "p", namespace: "default" },
    spec: { containers: containers.map((resources, i) => ({ name: `c${i}`, image: "x", resources })) },
  };
}

/** The usage as a plain record, quantities in their canonical text. */
function usage(p: Pod, only?: string[]): Record<string, string> {
  return Object.fromEntries([...quotaUsage(pods, p, 0, only)].map(([name, q]) => [name, q.toString()]));
}

describe("quotaUsage", () => {
  const web = pod([
    { requests: { cpu: "250m", memory: "64Mi" }, limits: { cpu: "500m" } },
    { requests: { cpu: "250m" }, limits: { memory: "128Mi" } },
  ]);

  it("sums a pod's containers into upstream's compute resources and counts it", () => {
    expect(usage(web)).toEqual({
      "count/pods": "1",
      pods: "1",
      cpu: "500m",
      "requests.cpu": "500m",
      memory: "64Mi",
      "requests.memory": "64Mi",
      "limits.cpu": "500m",
      "limits.memory": "128Mi",
    });
  });

  it("counts only, when the resources asked about are counts", () => {
    expect(usage(web, ["pods"])).toEqual({ "count/pods": "1", pods: "1" });
    expect(usage(web, ["count/pods", "pods"])).toEqual({ "count/pods": "1", pods: "1" });
    // One compute resource asked about: the totals are summed.
    expect(usage(web, ["pods", "requests.cpu"])).toMatchObject({ pods: "1", "requests.cpu": "500m" });
  });

  it("does not count a finished pod's compute resources", () => {
    const done = { ...web, status: { phase: "Succeeded" } };
    expect(usage(done)).toEqual({ "count/pods": "1" });
  });
});
