import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { deployments } from "@reconcile/api";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServer, type ApiServerOptions } from "../api-server.js";
import { listen } from "../http/server.js";

// End-to-end: the real kubectl (v1.32, on the PATH) against the built-in kinds' schemas —
// strict field validation as kubectl asks for it, and `kubectl explain`.

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

export async function kubectlCluster(options: ApiServerOptions = {}) {
  const api = new ApiServer(options);
  const server = await listen(api);
  const home = await mkdtemp(join(tmpdir(), "reconcile-kubectl-schemas-"));
  const kubeconfig = join(home, "kubeconfig");
  await writeFile(kubeconfig, server.kubeconfig());
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, KUBECONFIG: kubeconfig };
  cleanups.push(async () => {
    await server.close();
    await api.close();
    await rm(home, { recursive: true, force: true });
  });
  const kubectl = (args: string[]): Promise<Result> =>
    new Promise((resolve) => {
      execFile(
        "kubectl",
        [...args, "--request-timeout=20s"],
        { env, timeout: 30_000 },
        (error, stdout, stderr) => {
          const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
          resolve({ code, stdout, stderr });
        },
      );
    });
  const file = async (name: string, content: string) => {
    const path = join(home, name);
    await writeFile(path, content);
    return path;
  };
  return { api, client: api.client(), kubectl, file };
}

const misspelt = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
spec:
  replicass: 2
  selector:
    matchLabels: { app: web }
  template:
    metadata:
      labels: { app: web }
    spec:
      containers:
        - name: web
          image: nginx
`;

describe("kubectl and strict field validation", () => {
  it("kubectl create -f with a misspelt field fails as on a real cluster, and nothing is created", async () => {
    const { client, kubectl, file } = await kubectlCluster();
    const path = await file("deploy.yaml", misspelt);
    const result = await kubectl(["create", "-f", path]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `Error from server (BadRequest): error when creating "${path}": Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.replicass"\n`,
    );
    await expect(client.resource(deployments, "default").get("web")).rejects.toThrow(/not found/);
  });

  it("--validate=warn creates the object without the field and prints the server's warning", async () => {
    const { client, kubectl, file } = await kubectlCluster();
    const result = await kubectl(["create", "--validate=warn", "-f", await file("deploy.yaml", misspelt)]);
    expect(result).toEqual({
      code: 0,
      stdout: "deployment.apps/web created\n",
      stderr: 'Warning: unknown field "spec.replicass"\n',
    });
    const stored = await client.resource(deployments, "default").get("web");
    expect(stored.spec?.replicas).toBe(1);
    expect(stored.spec).not.toHaveProperty("replicass");
  });

  it("kubectl apply refuses the field on create and on the patch that changes a live object", async () => {
    const { kubectl, file } = await kubectlCluster();
    const good = await file("good.yaml", misspelt.replace("replicass", "replicas"));
    expect((await kubectl(["apply", "-f", good])).stdout).toBe("deployment.apps/web created\n");
    const bad = await file("bad.yaml", misspelt.replace("replicass: 2", "replicass: 3"));
    const result = await kubectl(["apply", "-f", bad]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^The request is invalid: patch: Invalid value: ".*": strict decoding error: unknown field "spec.replicass"\n$/,
    );
  });
});

describe("kubectl explain", () => {
  it("explains a built-in field from Kubernetes' own schema", async () => {
    const { kubectl } = await kubectlCluster();
    const result = await kubectl(["explain", "deployment.spec.replicas"]);
    expect(result).toEqual({
      code: 0,
      stderr: "",
      stdout: `GROUP:      apps
KIND:       Deployment
VERSION:    v1

FIELD: replicas <integer>


DESCRIPTION:
    Number of desired pods. This is a pointer to distinguish between explicit
    zero and not specified. Defaults to 1.
    

`,
    });
  });

  it("lists a kind's fields with their types, and refuses a field the kind does not have", async () => {
    const { kubectl } = await kubectlCluster();
    const result = await kubectl(["explain", "pods.spec.containers"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("FIELD: containers <[]Container>");
    expect(result.stdout).toMatch(/\n {2}image\t<string>\n/);
    expect(result.stdout).toMatch(/\n {2}name\t<string> -required-\n/);
    const missing = await kubectl(["explain", "deployment.spec.replicass"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe('error: field "replicass" does not exist\n');
  });
});
