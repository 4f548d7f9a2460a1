import { type ConfigMap, configMaps, type Secret, secrets } from "@reconcile/api";
import { FakeClock } from "@reconcile/clock";
import { afterEach, describe, expect, it } from "vitest";
import { newControllerManagedBy, TerminalError } from "./builder.js";
import { eventually, startTestEnvironment, type TestEnvironment } from "./envtest/index.js";
import { Manager } from "./manager.js";
import { generationChanged } from "./predicates.js";

describe("ControllerBuilder", () => {
  let env: TestEnvironment;
  let stop: AbortController;
  let running: Promise<void> | undefined;
  const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));

  const start = async (setup: (manager: Manager) => void) => {
    env = await startTestEnvironment({ clock, http: false });
    const manager = new Manager({ client: env.client, clock });
    setup(manager);
    stop = new AbortController();
    running = manager.run({ signal: stop.signal });
    return manager;
  };

  afterEach(async () => {
    stop.abort();
    await running;
    await env.stop();
  });

  it("watches maps another kind's objects to requests, and each reconcile says why it was queued", async () => {
    const seen: string[] = [];
    await start((manager) =>
      newControllerManagedBy(manager)
        .for(configMaps)
        .watches(secrets, (s) => [
          { namespace: s.metadata?.namespace ?? "", name: s.metadata?.labels?.for ?? "" },
        ])
        .complete(async ({ name }, { reason }) => {
          seen.push(`${name}: ${reason}`);
        }),
    );
    await env.client
      .resource(secrets, "default")
      .create({ metadata: { name: "creds", namespace: "default", labels: { for: "app" } } } as Secret);
    await eventually(() => seen.length === 1, { clock });
    await env.client
      .resource(configMaps, "default")
      .create({ metadata: { name: "own", namespace: "default" } });
    await eventually(() => seen.length === 2, { clock });
    expect(seen).toEqual(["app: watched Secret added", "own: ConfigMap added"]);
  });

  it("onlyMetadata watches a kind through the metadata-only cache: its handlers see PartialObjectMetadata", async () => {
    const seen: string[] = [];
    const manager = await start((manager) =>
      newControllerManagedBy(manager)
        .for(configMaps)
        .owns(secrets, { onlyMetadata: true })
        .watches(
          secrets,
          (s) => {
            seen.push(`mapped ${s.kind} ${s.metadata?.name} ${JSON.stringify((s as Secret).data)}`);
            return [];
          },
          { onlyMetadata: true },
        )
        .complete(async ({ name }, { reason }) => {
          seen.push(`${name}: ${reason}`);
        }),
    );
    const owner = await env.client
      .resource(configMaps, "default")
      .create({ metadata: { name: "app", namespace: "default" } });
    await eventually(() => seen.length === 1, { clock });
    await env.client.resource(secrets, "default").create({
      metadata: {
        name: "creds",
        namespace: "default",
        ownerReferences: [
          { apiVersion: "v1", kind: "ConfigMap", name: "app", uid: owner.metadata!.uid!, controller: true },
        ],
      },
      data: { password: Buffer.from("hunter2").toString("base64") },
    } as Secret);
    await eventually(() => seen.length === 3, { clock });
    expect(seen).toEqual([
      "app: ConfigMap added",
      "mapped PartialObjectMetadata creds undefined",
      "app: owned Secret added",
    ]);
    // Secrets were cached as metadata only: no whole-object informer of them was made.
    expect(manager.informers.informers().map(([key]) => key)).toEqual(["configmaps", "metadata:secrets"]);
  });

  it("a predicate drops the events it fails: status-like updates without a new generation", async () => {
    const seen: string[] = [];
    await start((manager) =>
      newControllerManagedBy(manager)
        .for(configMaps)
        .withEventFilter(generationChanged())
        .complete(async ({ name }) => {
          seen.push(name);
        }),
    );
    const cms = env.client.resource(configMaps, "default");
    const cm = await cms.create({ metadata: { name: "a", namespace: "default" } });
    await eventually(() => seen.length === 1, { clock });
    // A label change: ConfigMaps bump no generation on metadata changes.
    await cms.update({ ...cm, metadata: { ...cm.metadata, labels: { x: "y" } } } as ConfigMap);
    await cms.create({ metadata: { name: "b", namespace: "default" } });
    await eventually(() => seen.includes("b"), { clock });
    expect(seen).toEqual(["a", "b"]);
  });

  it("requeueAfterMs reconciles again after that much time; errors retry with backoff; a TerminalError does not", async () => {
    const calls: Record<string, number[]> = { later: [], flaky: [], fatal: [] };
    const manager = await start((m) =>
      newControllerManagedBy(m)
        .for(configMaps)
        .withOptions({ workers: 2 })
        .complete(async ({ name }, { clock: c }) => {
          calls[name]?.push(c.now());
          if (name === "later" && calls.later!.length === 1) return { requeueAfterMs: 30_000 };
          if (name === "flaky" && calls.flaky!.length < 3) throw new Error("not yet");
          if (name === "fatal") throw new TerminalError("bad spec");
        }),
    );
    const t0 = clock.now();
    for (const name of ["later", "flaky", "fatal"]) {
      await env.client.resource(configMaps, "default").create({ metadata: { name, namespace: "default" } });
    }
    await eventually(() => calls.later!.length === 2 && calls.flaky!.length === 3, {
      clock,
      timeoutMs: 60_000,
    });
    expect(calls.later![1]! - calls.later![0]!).toBeGreaterThanOrEqual(30_000);
    expect(calls.fatal).toEqual([calls.fatal![0]]);
    expect(calls.flaky![0]).toBeLessThan(t0 + 1_000);
    const metrics = await manager.registry.metrics();
    expect(metrics).toContain(
      'controller_runtime_reconcile_total{controller="configmap",result="requeue_after"} 1',
    );
    expect(metrics).toContain('controller_runtime_terminal_reconcile_errors_total{controller="configmap"} 1');
    expect(metrics).toContain('controller_runtime_reconcile_errors_total{controller="configmap"} 3');
  });

  it("refuses complete() without for(), and a second for()", async () => {
    env = await startTestEnvironment({ http: false });
    const manager = new Manager({ client: env.client });
    expect(() => newControllerManagedBy(manager).complete(async () => {})).toThrow(
      "controller builder: call for(kind) before complete()",
    );
    expect(() => newControllerManagedBy(manager).for(configMaps).for(secrets)).toThrow(
      "controller builder: for() was already called with ConfigMap",
    );
    stop = new AbortController();
    running = undefined;
  });
});
