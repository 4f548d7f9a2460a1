import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";
import { listen } from "./server.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function kubectlFor(token?: string) {
  const api = new ApiServer();
  // kubectl sends a bearer token only over HTTPS.
  const server = await listen(api, token === undefined ? {} : { token, tls: true });
  const home = await mkdtemp(join(tmpdir(), "reconcile-auth-"));
  const kubeconfig = join(home, "kubeconfig");
  await writeFile(kubeconfig, server.kubeconfig());
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, KUBECONFIG: kubeconfig };
  cleanups.push(async () => {
    await server.close();
    await api.close();
    await rm(home, { recursive: true, force: true });
  });
  return (args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        "kubectl",
        [...args, "--request-timeout=20s"],
        { env, timeout: 30_000 },
        (error, stdout, stderr) => {
          resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr });
        },
      ).stdin?.end();
    });
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
    const api = new ApiServer();
    const server = await listen(api);
    cleanups.push(async () => {
      await server.close();
      await api.close();
    });
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
