import { getControllerOf, isPodActive, type Pod, pods, type ReplicaSet, replicaSets } from "@reconcile/api";
import { describe, expect, it } from "vitest";
import { type SimCluster, simulate, story } from "./index.js";

const labels = { app: "web" };
const web: ReplicaSet = {
  apiVersion: "apps/v1",
  kind: "ReplicaSet",
  metadata: { name: "web", namespace: "default" },
  spec: {
    replicas: 3,
    selector: { matchLabels: labels },
    template: { metadata: { labels }, spec: { containers: [{ name: "app", image: "nginx" }] } },
  },
};

async function activeOwned(cluster: SimCluster): Promise<number> {
  const [rs] = await cluster.list(replicaSets, "default");
  const all = await cluster.list(pods, "default");
  return all.filter((p) => isPodActive(p as Pod) && getControllerOf(p)?.uid === rs?.metadata?.uid).length;
}

describe("a ReplicaSet of 3 under the built-in controller", () => {
  it("runs", async () => {
    const result = await simulate({
      seed: 1,
      builtins: ["replicaset"],
      setup: async (cluster) => {
        await cluster.client.resource(replicaSets, "default").create(web);
      },
      invariants: {
        "never more than 3 active pods": async (cluster) => {
          const n = await activeOwned(cluster);
          if (n > 3) return `${n} active pods`;
        },
      },
      eventually: {
        "exactly 3 pods": async (cluster) => {
          const n = await activeOwned(cluster);
          if (n !== 3) return `${n} active pods`;
        },
      },
    });
    console.log(
      result.ok,
      result.violation,
      result.faults.length,
      result.traceLength,
      result.elapsedMs,
      result.traceHash,
    );
    console.log(story(result.trace, { lines: 200, events: true }));
    expect(result.ok).toBe(true);
  });
});
