import { deployments } from "@reconcile/api";
import { afterEach, expect, it } from "vitest";
import { closeKubectlClusters, kubectlCluster } from "./index.js";

// The README's example of the published helper, run as it is written there, and the order of cleanups.

afterEach(closeKubectlClusters);

it("kubectl sees the Deployment", async () => {
  const { client, kubectl, defer } = await kubectlCluster();
  defer(() => {});
  await client.resource(deployments, "default").create({
    metadata: { name: "web" },
    spec: {
      selector: { matchLabels: { app: "web" } },
      template: {
        metadata: { labels: { app: "web" } },
        spec: { containers: [{ name: "web", image: "nginx" }] },
      },
    },
  });
  const { stdout } = await kubectl(["get", "deployments", "-o", "name"]);
  expect(stdout).toBe("deployment.apps/web\n");
});

it("runs deferred cleanups while the server still answers, then closes it", async () => {
  const { client, kubectl, defer } = await kubectlCluster();
  const seen: string[] = [];
  defer(async () => {
    seen.push((await client.resource(deployments, "default").list()).kind ?? "list");
  });
  const failed = await kubectl(["get", "nope"]);
  expect(failed.code).toBe(1);
  expect(failed.stderr).toContain(`the server doesn't have a resource type "nope"`);
  await closeKubectlClusters();
  expect(seen).toEqual(["DeploymentList"]);
});
