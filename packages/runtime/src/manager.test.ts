import { configMaps } from "@reconcile/api";
import { FakeClock } from "@reconcile/clock";
import type { ControllerView } from "@reconcile/controller";
import { afterEach, describe, expect, it } from "vitest";
import { newControllerManagedBy } from "./builder.js";
import { eventually, startTestEnvironment, type TestEnvironment } from "./envtest/index.js";
import { Manager } from "./manager.js";

describe("Manager", () => {
  let env: TestEnvironment | undefined;
  afterEach(async () => {
    await env?.stop();
    env = undefined;
  });

  it("runs the controllers of the leader only; a standby takes over when the leader stops", async () => {
    const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
    env = await startTestEnvironment({ clock, http: false });
    const seen: Record<string, string[]> = { a: [], b: [] };
    const start = (identity: "a" | "b") => {
      const manager = new Manager({
        client: env!.client,
        clock,
        leaderElection: {
          name: "mirror",
          identity,
          leaseDurationMs: 15_000,
          renewDeadlineMs: 10_000,
          retryPeriodMs: 2_000,
        },
      });
      newControllerManagedBy(manager)
        .for(configMaps)
        .complete(async ({ name }) => {
          seen[identity]!.push(name);
        });
      const stop = new AbortController();
      return { manager, stop, running: manager.run({ signal: stop.signal }) };
    };
    const a = start("a");
    await eventually(() => a.manager.isLeader(), { clock });
    const b = start("b");
    await env.client
      .resource(configMaps, "default")
      .create({ metadata: { name: "one", namespace: "default" } });
    await eventually(() => seen.a!.includes("one"), { clock });
    await clock.advance(5_000);
    expect(b.manager.isLeader()).toBe(false);
    expect(seen.b).toEqual([]);
    a.stop.abort();
    await a.running; // releases the Lease on a clean stop
    await eventually(() => b.manager.isLeader(), { clock, timeoutMs: 30_000 });
    await eventually(() => seen.b!.includes("one"), { clock });
    b.stop.abort();
    await b.running;
  });

  it("serves /healthz, /readyz (informer-sync) and /metrics", async () => {
    env = await startTestEnvironment({ http: false });
    const manager = new Manager({ client: env.client });
    newControllerManagedBy(manager)
      .for(configMaps)
      .complete(async () => {});
    manager.addHealthzCheck("custom", () => undefined);
    const endpoints = await manager.listen();
    const get = async (path: string) => {
      const response = await fetch(`${endpoints.url}${path}`);
      return { status: response.status, body: await response.text() };
    };
    try {
      expect(await get("/readyz?verbose")).toEqual({
        status: 500,
        body: "[-]informer-sync failed: reason withheld\nreadyz check failed\n",
      });
      const stop = new AbortController();
      const running = manager.run({ signal: stop.signal });
      await eventually(async () => (await get("/readyz")).status === 200);
      expect(await get("/healthz?verbose")).toEqual({
        status: 200,
        body: "[+]custom ok\nhealthz check passed\n",
      });
      expect(await get("/healthz/nope")).toEqual({ status: 404, body: "404 page not found\n" });
      const metrics = await get("/metrics");
      expect(metrics.body).toContain(
        'controller_runtime_max_concurrent_reconciles{controller="configmap"} 1',
      );
      expect(metrics.body).toContain("# TYPE controller_runtime_reconcile_time_seconds histogram");
      stop.abort();
      await running;
    } finally {
      await endpoints.close();
    }
  });

  it("serves /debug/machinery: the election, each informer's cache and each controller's queue and reconciles", async () => {
    env = await startTestEnvironment({ http: false });
    const manager = new Manager({
      client: env.client,
      leaderElection: {
        name: "machinery",
        identity: "one",
        leaseDurationMs: 15_000,
        renewDeadlineMs: 10_000,
        retryPeriodMs: 2_000,
      },
    });
    newControllerManagedBy(manager)
      .for(configMaps)
      .complete(async () => {});
    await env.client
      .resource(configMaps, "default")
      .create({ metadata: { name: "a", namespace: "default" } });
    const endpoints = await manager.listen();
    const stop = new AbortController();
    const running = manager.run({ signal: stop.signal });
    try {
      const machinery = async () => {
        const response = await fetch(`${endpoints.url}/debug/machinery`);
        expect(response.headers.get("content-type")).toBe("application/json");
        return (await response.json()) as {
          component: string;
          // Every source as a controller's view; the others' fields are read through its index signature.
          sources: { kind: string; name: string; state: ControllerView }[];
        };
      };
      await eventually(async () => {
        const body = await machinery();
        const controller = body.sources.find((s) => s.kind === "controller");
        return controller?.state.reconciles.recent.some((r) => r.key === "default/a") === true;
      });
      const body = await machinery();
      expect(body.component).toBe("one");
      const byKind = (kind: string) => body.sources.filter((s) => s.kind === kind);
      expect(byKind("manager")).toEqual([
        {
          kind: "manager",
          name: "one",
          state: {
            leaderElection: { lease: "default/machinery", leading: true, holder: "one" },
            cachesSynced: true,
            runnables: ["configmap"],
          },
        },
      ]);
      const [informer] = byKind("informer");
      expect(informer!.name).toBe("configmaps");
      expect(informer!.state.synced).toBe(true);
      expect(informer!.state.backlog).toEqual({ deltas: 0, notifications: 0 });
      // The default namespace's kube-root-ca.crt may or may not exist: at least the one created.
      expect(informer!.state.cached).toBeGreaterThanOrEqual(1);
      const [controller] = byKind("controller");
      expect(controller!.name).toBe("configmap");
      expect(controller!.state.running).toBe(true);
      expect(controller!.state.queues[0]!.name).toBe("configmap");
      const reconcile = controller!.state.reconciles.recent.find((r) => r.key === "default/a");
      expect(reconcile).toMatchObject({ controller: "configmap", outcome: "success" });
    } finally {
      stop.abort();
      await running;
      await endpoints.close();
    }
  });

  it("a failing runnable stops the others and run rejects with its error", async () => {
    env = await startTestEnvironment({ http: false });
    const manager = new Manager({ client: env.client });
    let stoppedCleanly = false;
    manager.add({
      name: "steady",
      run: ({ signal }) =>
        new Promise<void>((resolve) =>
          signal.addEventListener("abort", () => {
            stoppedCleanly = true;
            resolve();
          }),
        ),
    });
    manager.add({
      name: "broken",
      needLeaderElection: false,
      run: async () => Promise.reject(new Error("boom")),
    });
    await expect(manager.run({ signal: new AbortController().signal })).rejects.toThrow("boom");
    expect(stoppedCleanly).toBe(true);
  });
});

describe("startTestEnvironment", () => {
  it("serves the CRD's kind in process and over HTTP, with the real clock, and reports it Established", async () => {
    const env = await startTestEnvironment({
      authorization: false,
      crds: [
        {
          apiVersion: "apiextensions.k8s.io/v1",
          kind: "CustomResourceDefinition",
          metadata: { name: "gadgets.example.com" },
          spec: {
            group: "example.com",
            scope: "Namespaced",
            names: { kind: "Gadget", plural: "gadgets" },
            versions: [
              {
                name: "v1",
                served: true,
                storage: true,
                subresources: { status: {} },
                schema: {
                  openAPIV3Schema: {
                    type: "object",
                    properties: { spec: { type: "object", properties: { x: { type: "integer" } } } },
                  },
                },
              },
            ],
          },
        },
      ],
    });
    try {
      expect(env.crds[0]?.status?.conditions?.map((c) => [c.type, c.status])).toEqual([
        ["NamesAccepted", "True"],
        ["Established", "True"],
      ]);
      expect(env.kubeconfig()).toContain(`server: "${env.url}"`);
      const created = await fetch(`${env.url}/apis/example.com/v1/namespaces/default/gadgets`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          apiVersion: "example.com/v1",
          kind: "Gadget",
          metadata: { name: "g" },
          spec: { x: 1 },
        }),
      });
      expect([created.status, created.status === 201 ? "" : await created.text()]).toEqual([201, ""]);
      const listed = await fetch(`${env.url}/apis/example.com/v1/namespaces/default/gadgets`);
      expect(
        ((await listed.json()) as { items: { metadata: { name: string } }[] }).items.map(
          (g: { metadata: { name: string } }) => g.metadata.name,
        ),
      ).toEqual(["g"]);
    } finally {
      await env.stop();
    }
  });

  it("rejects an incomplete CRD naming the field", async () => {
    await expect(
      startTestEnvironment({
        crds: [
          {
            apiVersion: "apiextensions.k8s.io/v1",
            kind: "CustomResourceDefinition",
            metadata: { name: "x.example.com" },
            spec: {
              group: "example.com",
              scope: "Namespaced",
              names: { kind: "X", plural: "" },
              versions: [],
            },
          },
        ],
      }),
    ).rejects.toThrow(
      "CustomResourceDefinition x.example.com: spec.names.kind and spec.names.plural are required",
    );
  });
});
