import { configMaps, type Deployment, deployments, events, services } from "@reconcile/api";
import { FakeClock } from "@reconcile/clock";
import { findCondition, Manager } from "@reconcile/runtime";
import { eventually, startTestEnvironment, type TestEnvironment } from "@reconcile/runtime/envtest";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { finalizer, setupWebsiteController } from "./operator.js";
import { type Website, websiteCRD, websites } from "./website.js";

describe("the Website operator", () => {
  let env: TestEnvironment;
  let clock: FakeClock;
  let manager: Manager;
  let stop: AbortController;
  let running: Promise<void>;

  beforeEach(async () => {
    clock = new FakeClock(Date.parse("2026-03-01T12:00:00Z"));
    env = await startTestEnvironment({ crds: [websiteCRD], clock, http: false });
    manager = new Manager({
      client: env.client,
      clock,
      leaderElection: { name: "website-operator", identity: "operator-a" },
    });
    setupWebsiteController(manager);
    stop = new AbortController();
    running = manager.run({ signal: stop.signal });
  });

  afterEach(async () => {
    stop.abort();
    await running;
    await env.stop();
  });

  const sites = () => env.client.resource(websites, "default");
  const site = (): Website => ({
    apiVersion: "example.reconcile.dev/v1",
    kind: "Website",
    metadata: { name: "blog", namespace: "default" },
    spec: { page: "<h1>hello</h1>", replicas: 3 },
  });
  const settle = (check: () => Promise<boolean>) =>
    eventually(check, { clock, timeoutMs: 30_000, stepMs: 50 });

  it("creates the page, the Deployment and the Service, controlled by the Website, and reports Ready=False until available", async () => {
    const created = await sites().create(site());
    await settle(async () => (await sites().get("blog")).status?.observedGeneration === 1);
    const website = await sites().get("blog");
    expect(website.metadata?.finalizers).toEqual([finalizer]);
    expect(findCondition(website.status?.conditions, "Ready")).toMatchObject({
      status: "False",
      reason: "Progressing",
      message: "0/3 replicas available",
      observedGeneration: 1,
      lastTransitionTime: "2026-03-01T12:00:00Z",
    });
    const owner = {
      apiVersion: "example.reconcile.dev/v1",
      kind: "Website",
      name: "blog",
      uid: created.metadata?.uid,
      controller: true,
      blockOwnerDeletion: true,
    };
    const page = await env.client.resource(configMaps, "default").get("blog-content");
    expect(page.data).toEqual({ "index.html": "<h1>hello</h1>" });
    expect(page.metadata?.ownerReferences).toEqual([owner]);
    const deployment = await env.client.resource(deployments, "default").get("blog");
    expect(deployment.spec?.replicas).toBe(3);
    expect(deployment.spec?.template.spec?.volumes).toEqual([
      // The API server's default file mode (0644) is filled in.
      { name: "content", configMap: { name: "blog-content", defaultMode: 420 } },
    ]);
    expect(deployment.metadata?.ownerReferences).toEqual([owner]);
    const service = await env.client.resource(services, "default").get("blog");
    expect(service.spec?.ports).toEqual([{ name: "http", port: 80, targetPort: "http", protocol: "TCP" }]);
    expect(service.spec?.selector).toEqual({ app: "website", "example.reconcile.dev/website": "blog" });
    expect(service.metadata?.ownerReferences).toEqual([owner]);
  });

  it("turns Ready=True when the Deployment's replicas are available (owns: a child's status requeues the Website)", async () => {
    await sites().create(site());
    await settle(async () => (await sites().get("blog")).status?.observedGeneration === 1);
    const d = await env.client.resource(deployments, "default").get("blog");
    await clock.advance(60_000);
    await env.client
      .resource(deployments, "default")
      .updateStatus({ ...d, status: { replicas: 3, readyReplicas: 3, availableReplicas: 3 } } as Deployment);
    await settle(
      async () => findCondition((await sites().get("blog")).status?.conditions, "Ready")?.status === "True",
    );
    const ready = findCondition((await sites().get("blog")).status?.conditions, "Ready");
    expect(ready).toEqual({
      type: "Ready",
      status: "True",
      reason: "Available",
      message: "3/3 replicas available",
      observedGeneration: 1,
      lastTransitionTime: ready?.lastTransitionTime,
    });
    expect(Date.parse(ready!.lastTransitionTime!)).toBeGreaterThanOrEqual(Date.parse("2026-03-01T12:01:00Z"));
  });

  it("follows a spec change to the page and records observedGeneration 2", async () => {
    await sites().create(site());
    await settle(async () => (await sites().get("blog")).status?.observedGeneration === 1);
    const current = await sites().get("blog");
    await sites().update({ ...current, spec: { ...current.spec, page: "<h1>v2</h1>" } });
    await settle(async () => (await sites().get("blog")).status?.observedGeneration === 2);
    expect((await env.client.resource(configMaps, "default").get("blog-content")).data).toEqual({
      "index.html": "<h1>v2</h1>",
    });
  });

  it("on delete runs the cleanup (an Event), removes its finalizer, and the children go with the Website", async () => {
    await sites().create(site());
    await settle(async () => (await sites().get("blog")).status?.observedGeneration === 1);
    await sites().delete("blog");
    await settle(async () => (await sites().list()).items.length === 0);
    await env.apiServer.flush();
    await settle(async () => (await env.client.resource(configMaps, "default").list()).items.length === 0);
    expect((await env.client.resource(deployments, "default").list()).items).toEqual([]);
    const serviceNames = (await env.client.resource(services, "default").list()).items.map(
      (s) => s.metadata?.name,
    );
    expect(serviceNames).not.toContain("blog");
    await settle(async () =>
      (await env.client.resource(events, "default").list()).items.some((e) => e.reason === "Deleted"),
    );
  });

  it("leads on its Lease and serves the reconcile metrics with controller-runtime's names", async () => {
    await sites().create(site());
    await settle(async () => (await sites().get("blog")).status?.observedGeneration === 1);
    expect(manager.isLeader()).toBe(true);
    expect(manager.leader()).toBe("operator-a");
    const metrics = await manager.registry.metrics();
    expect(metrics).toMatch(
      /controller_runtime_reconcile_total\{controller="website",result="success"\} [1-9]/,
    );
    expect(metrics).toContain('controller_runtime_max_concurrent_reconciles{controller="website"} 2');
    expect(metrics).toMatch(/workqueue_adds_total\{name="website"\} [1-9]/);
    expect(metrics).toContain('leader_election_master_status{name="website-operator"} 1');
  });
});
