import { configMaps, namespaces } from "@reconcile/api";
import { closeKubectlClusters, kubectlCluster } from "@reconcile/apiserver/testing";
import { FakeClock } from "@reconcile/clock";
import { SharedInformerFactory } from "@reconcile/informer";
import { afterEach, describe, expect, it } from "vitest";
import { NamespaceController } from "./namespace-controller.js";

// `kubectl delete namespace` against the embedded server with the namespace controller running:
// the namespace shows Terminating while an object held by a finalizer keeps it, then is gone.

afterEach(closeKubectlClusters);

async function cluster() {
  const { client, kubectl, defer } = await kubectlCluster({ kubernetesService: false });
  const factory = new SharedInformerFactory({ client });
  // The controller's 5 s wait before acting on a deletion, and its requeues, run on a fake clock.
  const clock = new FakeClock(Date.now());
  const controller = NamespaceController.fromInformerFactory(factory, { client, clock });
  const stop = new AbortController();
  factory.start(stop.signal);
  const running = controller.run({ signal: stop.signal });
  defer(async () => {
    stop.abort();
    await running;
    await factory.shutdown();
  });
  /** Advances the controller's clock until `condition` holds (at most 60 fake seconds). */
  const until = async (condition: () => Promise<boolean>) => {
    for (let i = 0; i < 600; i++) {
      if (await condition()) return;
      await clock.advance(100);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    throw new Error("condition not met within 60 s of fake time");
  };
  return { client, kubectl, until };
}

describe("kubectl against the namespace lifecycle", () => {
  it("kubectl delete ns: Terminating while content drains, then gone", async () => {
    const { client, kubectl, until } = await cluster();
    expect((await kubectl(["create", "namespace", "team"])).stdout).toBe("namespace/team created\n");
    const yaml = await kubectl(["get", "ns", "team", "-o", "jsonpath={.spec.finalizers}"]);
    expect(yaml.stdout).toBe('["kubernetes"]');
    await client
      .resource(configMaps, "team")
      .create({ metadata: { name: "held", finalizers: ["example.com/hold"] }, data: { a: "1" } });
    await client.resource(configMaps, "team").create({ metadata: { name: "free" } });

    const deleted = await kubectl(["delete", "namespace", "team", "--wait=false"]);
    expect(deleted).toMatchObject({ code: 0, stdout: 'namespace "team" deleted\n' });
    const listed = await kubectl(["get", "ns", "team", "--no-headers"]);
    expect(listed.stdout).toMatch(/^team\s+Terminating\s+\S+\n$/);

    // The controller deletes what it can; the held ConfigMap stays, named in the conditions.
    await until(async () => (await client.resource(configMaps, "team").list()).items.length === 1);
    await until(async () =>
      ((await client.resource(namespaces).get("team")).status?.conditions ?? []).some(
        (c) => c.type === "NamespaceFinalizersRemaining" && c.status === "True",
      ),
    );
    const described = await kubectl(["describe", "ns", "team"]);
    expect(described.stdout).toMatch(/\nStatus:\s+Terminating\n/);
    expect(described.stdout).toMatch(
      /NamespaceFinalizersRemaining\s+True\s+.*SomeFinalizersRemain\s+Some content in the namespace has finalizers remaining: example.com\/hold in 1 resource instances/,
    );
    const created = await kubectl(["create", "configmap", "late", "-n", "team"]);
    expect(created.code).not.toBe(0);
    expect(created.stderr).toContain(
      'configmaps "late" is forbidden: unable to create new content in namespace team because it is being terminated',
    );

    const held = await client.resource(configMaps, "team").get("held");
    await client
      .resource(configMaps, "team")
      .update({ ...held, metadata: { ...held.metadata, finalizers: [] } });
    await until(
      async () => !(await client.resource(namespaces).list()).items.some((n) => n.metadata?.name === "team"),
    );
    const gone = await kubectl(["get", "ns", "team"]);
    expect(gone.stderr).toContain('namespaces "team" not found');
  });

  it("kubectl delete ns default is refused", async () => {
    const { kubectl } = await cluster();
    const refused = await kubectl(["delete", "namespace", "default"]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('namespaces "default" is forbidden: this namespace may not be deleted');
    expect((await kubectl(["get", "ns", "--no-headers", "-o", "name"])).stdout).toBe(
      "namespace/default\nnamespace/kube-node-lease\nnamespace/kube-public\nnamespace/kube-system\n",
    );
  });
});
