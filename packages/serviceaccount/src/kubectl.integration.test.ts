import { serviceAccounts } from "@reconcile/api";
import { closeKubectlClusters, kubectlCluster } from "@reconcile/apiserver/testing";
import { SharedInformerFactory } from "@reconcile/informer";
import { afterEach, describe, expect, it } from "vitest";
import { ServiceAccountsController } from "./serviceaccounts-controller.js";

// `kubectl get sa` against the embedded server with the ServiceAccounts controller running.

afterEach(closeKubectlClusters);

async function cluster() {
  const { client, kubectl, defer } = await kubectlCluster({ kubernetesService: false });
  const factory = new SharedInformerFactory({ client });
  const controller = ServiceAccountsController.fromInformerFactory(factory, { client });
  const stop = new AbortController();
  factory.start(stop.signal);
  const running = controller.run({ signal: stop.signal });
  defer(async () => {
    stop.abort();
    await running;
    await factory.shutdown();
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
