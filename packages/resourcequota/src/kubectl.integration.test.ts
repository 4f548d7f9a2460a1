import { resourceQuotas } from "@reconcile/api";
import { closeKubectlClusters, kubectlCluster } from "@reconcile/apiserver/testing";
import { SharedInformerFactory } from "@reconcile/informer";
import { afterEach, describe, expect, it } from "vitest";
import { ResourceQuotaController } from "./resource-quota-controller.js";

// What kubectl shows of quotas, with the controller running on the embedded server.

afterEach(closeKubectlClusters);

async function cluster() {
  const { client, kubectl, defer } = await kubectlCluster({ kubernetesService: false });
  const factory = new SharedInformerFactory({ client });
  const controller = ResourceQuotaController.fromInformerFactory(factory, { client });
  const stop = new AbortController();
  factory.start(stop.signal);
  const running = controller.run({ signal: stop.signal });
  defer(async () => {
    stop.abort();
    await running;
    await factory.shutdown();
  });
  /** Waits (real time, the informers' pace) until the controller has counted `name`. */
  const counted = async (name: string) => {
    for (let i = 0; i < 500; i++) {
      const quota = await client.resource(resourceQuotas, "default").get(name);
      if ((quota as { status?: { used?: unknown } }).status?.used !== undefined) return;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`quota ${name} never counted`);
  };
  return { kubectl, counted };
}

describe("kubectl and ResourceQuotas", () => {
  it("kubectl create quota, describe quota, and a run over it refused as a real cluster refuses it", async () => {
    const { kubectl, counted } = await cluster();
    expect((await kubectl(["create", "quota", "compute", "--hard=pods=1,requests.cpu=1"])).code).toBe(0);
    await counted("compute");
    const run = await kubectl([
      "run",
      "a",
      "--image=nginx",
      "--restart=Never",
      "--overrides",
      '{"spec":{"containers":[{"name":"a","image":"nginx","resources":{"requests":{"cpu":"500m"}}}]}}',
    ]);
    expect(run.stderr).toBe("");
    const second = await kubectl([
      "run",
      "b",
      "--image=nginx",
      "--restart=Never",
      "--overrides",
      '{"spec":{"containers":[{"name":"b","image":"nginx","resources":{"requests":{"cpu":"100m"}}}]}}',
    ]);
    expect(second.code).toBe(1);
    expect(second.stderr).toBe(
      'Error from server (Forbidden): pods "b" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=1, limited: pods=1\n',
    );
    const described = await kubectl(["describe", "quota", "compute"]);
    expect(described.stdout).toBe(
      [
        "Name:         compute",
        "Namespace:    default",
        "Resource      Used  Hard",
        "--------      ----  ----",
        "pods          1     1",
        "requests.cpu  500m  1",
        "",
      ].join("\n"),
    );
    const table = await kubectl([
      "get",
      "quota",
      "compute",
      "--no-headers",
      "-o",
      "custom-columns=REQUEST:.status.used",
    ]);
    expect(table.stdout.trim()).toBe("map[pods:1 requests.cpu:500m]");
  });
});
