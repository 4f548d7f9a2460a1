import { afterEach, describe, expect, it } from "vitest";
import { closeKubectlClusters, kubectlCluster } from "../testing/index.js";

afterEach(closeKubectlClusters);

/** kubectl against a server that takes `token` (over HTTPS, where kubectl sends it), or any request. */
async function kubectlFor(token?: string) {
  const { kubectl } = await kubectlCluster({}, token === undefined ? {} : { token, tls: true });
  return (args: string[]) => kubectl(args);
}

describe("kubectl auth", () => {
  it("can-i answers yes, with the reason that there is no authorization layer", async () => {
    const kubectl = await kubectlFor("t0ken");
    expect(await kubectl(["auth", "can-i", "delete", "pods"])).toEqual({
      code: 0,
      stdout: "yes\n",
      stderr: "",
    });
    const verbose = await kubectl([
      "auth",
      "can-i",
      "create",
      "deployments.apps",
      "-n",
      "kube-system",
      "-v=0",
    ]);
    expect(verbose.stdout).toBe("yes\n");
  });

  it("whoami names the token's user and its groups", async () => {
    const kubectl = await kubectlFor("t0ken");
    const result = await kubectl(["auth", "whoami", "-o", "json"]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      kind: "SelfSubjectReview",
      apiVersion: "authentication.k8s.io/v1",
      metadata: { creationTimestamp: null },
      status: {
        userInfo: { username: "reconcile-admin", groups: ["system:masters", "system:authenticated"] },
      },
    });
  });

  it("echoes a JSON review's spec and says why it is allowed", async () => {
    const server = await kubectlCluster();
    const spec = { resourceAttributes: { verb: "get", resource: "pods", namespace: "default" } };
    const response = await fetch(`${server.url}/apis/authorization.k8s.io/v1/selfsubjectaccessreviews`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ apiVersion: "authorization.k8s.io/v1", kind: "SelfSubjectAccessReview", spec }),
    });
    expect(response.status).toBe(201);
    expect(await response.json()).toEqual({
      kind: "SelfSubjectAccessReview",
      apiVersion: "authorization.k8s.io/v1",
      metadata: { creationTimestamp: null },
      spec,
      status: {
        allowed: true,
        reason: "this server has no authorization layer: every authenticated request is allowed",
      },
    });
  });
});
