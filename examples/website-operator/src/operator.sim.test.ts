// The Website operator under every fault, on virtual time: the same `setupWebsiteController`
// that `main.ts` runs, unchanged, in a simulated cluster with the Deployment and ReplicaSet
// controllers and pods that become Ready. Each seed is a different run; a failure prints the
// seed and the shrunk faults that replay it.
import { configMaps, customResourceDefinitions, deployments, services } from "@reconcile/api";
import { findCondition } from "@reconcile/runtime";
import { expectNoViolation, explore, managerComponent, readyKubelet, type SimCluster } from "@reconcile/sim";
import { describe, expect, it } from "vitest";
import { setupWebsiteController } from "./operator.js";
import { type Website, websiteCRD, websites } from "./website.js";

const blog = (page: string): Website => ({
  apiVersion: "example.reconcile.dev/v1",
  kind: "Website",
  metadata: { name: "blog", namespace: "default" },
  spec: { page, replicas: 2 },
});

async function children(cluster: SimCluster, kind: typeof configMaps | typeof deployments | typeof services) {
  return (await cluster.list(kind as typeof configMaps, "default")).filter(
    (o) => o.metadata?.labels?.["example.reconcile.dev/website"] === "blog",
  );
}

describe("the Website operator under every fault", () => {
  it("converges on every seed: children made, the page current, Ready with the generation observed", async () => {
    const report = explore({
      seeds: 30,
      builtins: ["deployment", "replicaset"],
      controllers: [
        managerComponent("website-operator", (manager) => setupWebsiteController(manager)),
        readyKubelet(),
      ],
      setup: async (cluster) => {
        await cluster.client.resource(customResourceDefinitions).create(websiteCRD);
      },
      scenario: async (cluster) => {
        await cluster.sleep(1_000);
        const sites = cluster.client.resource(websites, "default");
        await sites.create(blog("<h1>v1</h1>"));
        await cluster.sleep(8_000);
        const current = await sites.get("blog");
        await sites.update({ ...current, spec: { ...current.spec, page: "<h1>v2</h1>" } });
      },
      invariants: {
        "a Website has at most one of each child": async (cluster) => {
          for (const kind of [configMaps, deployments, services]) {
            const n = (await children(cluster, kind)).length;
            if (n > 1) return `${n} ${kind.plural}`;
          }
        },
      },
      eventually: {
        "the Website is served as written": async (cluster) => {
          const [site] = await cluster.list(websites, "default");
          if (site === undefined) return "the Website is gone";
          const [content] = await children(cluster, configMaps);
          if (content?.data?.["index.html"] !== "<h1>v2</h1>")
            return `the page is ${content?.data?.["index.html"]}`;
          if ((await children(cluster, deployments)).length !== 1) return "no Deployment";
          if ((await children(cluster, services)).length !== 1) return "no Service";
          if (site.status?.observedGeneration !== site.metadata?.generation)
            return "the generation is not observed";
          const ready = findCondition(site.status?.conditions ?? [], "Ready");
          if (ready?.status !== "True") return `Ready is ${ready?.status}: ${ready?.message}`;
        },
      },
    });
    await expectNoViolation(report);
    expect((await report).runs).toBe(30);
  });
});
