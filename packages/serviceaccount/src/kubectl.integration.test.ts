import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serviceAccounts } from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import { SharedInformerFactory } from "@reconcile/informer";
import { afterEach, describe, expect, it } from "vitest";
import { ServiceAccountsController } from "./serviceaccounts-controller.js";

// `kubectl get sa` against the embedded server with the ServiceAccounts controller running.

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function cluster() {
  const api = new ApiServer({ kubernetesService: false });
  const server = await api.listen();
  const home = await mkdtemp(join(tmpdir(), "reconcile-serviceaccount-"));
  const kubeconfig = join(home, "kubeconfig");
  await writeFile(kubeconfig, server.kubeconfig());
  const client = api.client();
  const factory = new SharedInformerFactory({ client });
  const controller = ServiceAccountsController.fromInformerFactory(factory, { client });
  const stop = new AbortController();
  factory.start(stop.signal);
  const running = controller.run({ signal: stop.signal });
  cleanups.push(async () => {
    stop.abort();
    await running;
    await factory.shutdown();
    await api.close();
    await rm(home, { recursive: true, force: true });
  });
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, KUBECONFIG: kubeconfig };
  const kubectl = (args: string[]): Promise<{ code: number; stdout: string; stderr: string }> =>
    new Promise((resolve) => {
      execFile(
        "kubectl",
        [...args, "--request-timeout=20s"],
        { env, timeout: 30_000 },
        (error, stdout, stderr) =>
          resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr }),
      );
    });
  /** Waits (real time, the informers' pace) until `namespace/default` exists. */
  const defaultIn = async (namespace: string) => {
    for (let i = 0; i < 500; i++) {
      const names = (await client.resource(serviceAccounts, namespace).list()).items.map(
        (sa) => sa.metadata?.name,
      );
      if (names.includes("default")) return;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`no default ServiceAccount in ${namespace}`);
  };
  return { kubectl, defaultIn };
}

describe("kubectl against the ServiceAccounts controller", () => {
  it("kubectl get sa -A lists default in every namespace, a new one included, and a deleted one returns", async () => {
    const { kubectl, defaultIn } = await cluster();
    expect((await kubectl(["create", "namespace", "team"])).code).toBe(0);
    for (const namespace of ["default", "kube-node-lease", "kube-public", "kube-system", "team"])
      await defaultIn(namespace);
    const listed = await kubectl([
      "get",
      "sa",
      "-A",
      "--no-headers",
      "-o",
      "custom-columns=NS:.metadata.namespace,NAME:.metadata.name",
    ]);
    expect(
      listed.stdout
        .split("\n")
        .filter(Boolean)
        .map((line) => line.split(/\s+/).join("/")),
    ).toEqual([
      "default/default",
      "kube-node-lease/default",
      "kube-public/default",
      "kube-system/default",
      "team/default",
    ]);
    const before = await kubectl(["get", "sa", "default", "-n", "team", "-o", "jsonpath={.metadata.uid}"]);
    expect((await kubectl(["delete", "sa", "default", "-n", "team"])).stdout).toBe(
      'serviceaccount "default" deleted\n',
    );
    await defaultIn("team");
    const after = await kubectl(["get", "sa", "default", "-n", "team", "-o", "jsonpath={.metadata.uid}"]);
    expect(after.stdout).not.toBe("");
    expect(after.stdout).not.toBe(before.stdout);
  });
});
