import { afterEach, describe, expect, it } from "vitest";
import { closeKubectlClusters, kubectlCluster } from "../testing/kubectl.js";

afterEach(closeKubectlClusters);

describe("v1 ComponentStatus", () => {
  it("is served from the start, empty, and lists what serveComponentStatuses reports, as kubectl get cs prints it", async () => {
    const cluster = await kubectlCluster();
    const empty = await cluster.kubectl(["get", "componentstatuses"]);
    expect(empty).toEqual({
      code: 0,
      stdout: "",
      stderr: "Warning: v1 ComponentStatus is deprecated in v1.19+\nNo resources found\n",
    });
    let schedulerUp = true;
    cluster.api.serveComponentStatuses(() => [
      { name: "controller-manager", healthy: true, message: "ok" },
      schedulerUp
        ? { name: "scheduler", healthy: true, message: "ok" }
        : { name: "scheduler", healthy: false, error: "connection refused" },
    ]);
    const listed = await cluster.kubectl(["get", "cs"]);
    expect(listed.stdout).toBe(
      [
        "NAME                 STATUS    MESSAGE   ERROR",
        "controller-manager   Healthy   ok        ",
        "scheduler            Healthy   ok        ",
        "",
      ].join("\n"),
    );
    schedulerUp = false;
    const one = await cluster.kubectl(["get", "cs", "scheduler", "-o", "json"]);
    expect(JSON.parse(one.stdout)).toEqual({
      apiVersion: "v1",
      kind: "ComponentStatus",
      metadata: { name: "scheduler", creationTimestamp: null },
      conditions: [{ type: "Healthy", status: "False", error: "connection refused" }],
    });
    expect((await cluster.kubectl(["get", "cs", "scheduler"])).stdout).toBe(
      "NAME        STATUS      MESSAGE   ERROR\nscheduler   Unhealthy             connection refused\n",
    );
    // Read only, as upstream's.
    const created = await cluster.kubectl(
      ["create", "-f", "-"],
      "apiVersion: v1\nkind: ComponentStatus\nmetadata: {name: etcd-0}\n",
    );
    expect(created.code).toBe(1);
    expect(created.stderr).toContain(
      "the server does not allow this method on the requested resource (POST /api/v1/componentstatuses)",
    );
    // A verb on the object it does not serve has no route either.
    const deleted = await cluster.kubectl(["delete", "cs", "scheduler"]);
    expect(deleted.code).toBe(1);
    expect(deleted.stderr).toContain(
      "the server does not allow this method on the requested resource (DELETE /api/v1/componentstatuses/scheduler)",
    );
    const resources = await cluster.kubectl(["api-resources", "--api-group=", "-o", "wide"]);
    expect(resources.stdout).toMatch(
      /^componentstatuses\s+cs\s+v1\s+false\s+ComponentStatus\s+get,list\s*$/m,
    );
  });
});
