// The resource quota controller and the ResourceQuota admission plugin together, on the embedded
// API server and a FakeClock (upstream test/integration/quota and the plugin's admission_test.go).
import { type Pod, pods, resourceQuotas, services } from "@reconcile/api";
import { ApiServer, embeddedAdmissionPlugins } from "@reconcile/apiserver";
import type { Client } from "@reconcile/client";
import { FakeClock } from "@reconcile/clock";
import { SharedInformerFactory } from "@reconcile/informer";
import type { ResourceQuota } from "kubernetes-types/core/v1.js";
import { afterEach, describe, expect, it } from "vitest";
import { ResourceQuotaController } from "./resource-quota-controller.js";

const namespace = "default";
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

function start() {
  const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
  const server = new ApiServer({ clock, admissionPlugins: [...embeddedAdmissionPlugins] });
  const client = server.client();
  const abort = new AbortController();
  const factory = new SharedInformerFactory({ client, clock });
  const controller = ResourceQuotaController.fromInformerFactory(factory, { client, clock });
  factory.start(abort.signal);
  const run = controller.run({ signal: abort.signal });
  cleanups.push(async () => {
    abort.abort();
    await run;
    await factory.shutdown();
    await server.close();
  });
  return { clock, client };
}

async function eventually<T>(
  clock: FakeClock,
  read: () => Promise<T>,
  check: (value: T) => boolean,
): Promise<T> {
  for (let elapsed = 0; elapsed <= 30_000; elapsed += 10) {
    const value = await read();
    if (check(value)) return value;
    await clock.advance(10);
  }
  throw new Error(`condition not reached within 30 s of fake time: ${JSON.stringify(await read())}`);
}

const quota = (client: Client, name = "compute") =>
  client.resource(resourceQuotas, namespace).get(name) as Promise<ResourceQuota>;

function podWith(name: string, cpu?: string, extra: Partial<Pod["spec"]> = {}): Pod {
  const resources = cpu === undefined ? {} : { requests: { cpu }, limits: { cpu } };
  return {
    metadata: { name },
    spec: { containers: [{ name: "c", image: "nginx", resources }], ...extra },
  } as Pod;
}

describe("ResourceQuota: the controller keeps status, admission enforces it", () => {
  it("counts, refuses over the limit with upstream's text, and frees what a deleted pod used", async () => {
    const { clock, client } = start();
    await client.resource(resourceQuotas, namespace).create({
      metadata: { name: "compute" },
      spec: { hard: { pods: "2", "requests.cpu": "1", "count/services": "1" } },
    } as ResourceQuota);
    const counted = await eventually(
      clock,
      () => quota(client),
      (q) => q.status?.used !== undefined,
    );
    expect(counted.status).toEqual({
      hard: { pods: "2", "requests.cpu": "1", "count/services": "1" },
      used: { pods: "0", "requests.cpu": "0", "count/services": "1" }, // default/kubernetes
    });

    await client.resource(pods, namespace).create(podWith("a", "500m"));
    // Admission charged the quota in the same request.
    expect((await quota(client)).status?.used).toEqual({
      pods: "1",
      "requests.cpu": "500m",
      "count/services": "1",
    });

    await expect(client.resource(pods, namespace).create(podWith("b"))).rejects.toMatchObject({
      code: 403,
      message: 'pods "b" is forbidden: failed quota: compute: must specify requests.cpu for: c',
    });
    await expect(client.resource(pods, namespace).create(podWith("c", "600m"))).rejects.toMatchObject({
      code: 403,
      message:
        'pods "c" is forbidden: exceeded quota: compute, requested: requests.cpu=600m, used: requests.cpu=500m, limited: requests.cpu=1',
    });
    await expect(
      client
        .resource(services, namespace)
        .create({ metadata: { name: "s" }, spec: { ports: [{ port: 80 }] } }),
    ).rejects.toMatchObject({
      code: 403,
      message:
        'services "s" is forbidden: exceeded quota: compute, requested: count/services=1, used: count/services=1, limited: count/services=1',
    });
    // A dry run is checked but charges nothing.
    await client.resource(pods, namespace).create(podWith("dry", "100m"), { dryRun: "All" });
    expect((await quota(client)).status?.used?.["requests.cpu"]).toBe("500m");

    await client.resource(pods, namespace).delete("a", { gracePeriodSeconds: 0 });
    const freed = await eventually(
      clock,
      () => quota(client),
      (q) => q.status?.used?.pods === "0",
    );
    expect(freed.status?.used).toEqual({ pods: "0", "requests.cpu": "0", "count/services": "1" });
  });

  it("counts only the pods its scopes select", async () => {
    const { clock, client } = start();
    await client.resource(resourceQuotas, namespace).create({
      metadata: { name: "best-effort" },
      spec: { hard: { pods: "1" }, scopes: ["BestEffort"] },
    } as ResourceQuota);
    await eventually(
      clock,
      () => quota(client, "best-effort"),
      (q) => q.status?.used !== undefined,
    );
    await client.resource(pods, namespace).create(podWith("sized", "100m"));
    await client.resource(pods, namespace).create(podWith("free"));
    await expect(client.resource(pods, namespace).create(podWith("free-2"))).rejects.toMatchObject({
      message:
        'pods "free-2" is forbidden: exceeded quota: best-effort, requested: pods=1, used: pods=1, limited: pods=1',
    });
    // The periodic recount counts the pods its scope selects, whatever the status said before it.
    const charged = await quota(client, "best-effort");
    await client
      .resource(resourceQuotas, namespace)
      .updateStatus({ ...charged, status: { ...charged.status, used: { pods: "7" } } } as never);
    await clock.advance(5 * 60_000);
    const recounted = await eventually(
      clock,
      () => quota(client, "best-effort"),
      (q) => q.status?.used?.pods !== "7",
    );
    expect(recounted.status?.used).toEqual({ pods: "1" });
  });

  it("frees a finished pod's compute resources but keeps counting it as an object", async () => {
    const { clock, client } = start();
    await client.resource(resourceQuotas, namespace).create({
      metadata: { name: "compute" },
      spec: { hard: { pods: "5", "count/pods": "5" } },
    } as ResourceQuota);
    await eventually(
      clock,
      () => quota(client),
      (q) => q.status?.used !== undefined,
    );
    const created = await client.resource(pods, namespace).create(podWith("done"));
    expect((await quota(client)).status?.used).toEqual({ pods: "1", "count/pods": "1" });
    await client.resource(pods, namespace).updateStatus({ ...created, status: { phase: "Succeeded" } });
    const after = await eventually(
      clock,
      () => quota(client),
      (q) => q.status?.used?.pods === "0",
    );
    expect(after.status?.used).toEqual({ pods: "0", "count/pods": "1" });
  });
});
