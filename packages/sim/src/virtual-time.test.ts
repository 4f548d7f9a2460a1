import { type ConfigMap, configMaps } from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import { FakeClock } from "@reconcile/clock";
import { Manager, newControllerManagedBy, noopLogger } from "@reconcile/runtime";
import { startTestEnvironment } from "@reconcile/runtime/envtest";
import { describe, expect, it } from "vitest";
import { advanceUntil, defaultFaultRates, faultyClient } from "./index.js";

describe("advanceUntil on an envtest environment", () => {
  it("runs a controller's hour-long requeues on virtual time, and says how much of it passed", async () => {
    const clock = new FakeClock(Date.parse("2026-05-01T00:00:00Z"));
    const env = await startTestEnvironment({ clock, http: false });
    const manager = new Manager({ client: env.client, clock, logger: noopLogger });
    // Records the hours since the ConfigMap was made, up to 3, and asks to look again on the hour.
    newControllerManagedBy(manager)
      .for(configMaps)
      .complete(async (request, { client, get, signal, clock: now }) => {
        const cm = get(configMaps, request);
        if (cm === undefined) return;
        const age = now.now() - Date.parse(cm.metadata!.creationTimestamp!);
        const hours = Math.min(3, Math.floor(age / 3_600_000));
        if (cm.data?.hours !== String(hours)) {
          await client
            .resource(configMaps, request.namespace)
            .patch(request.name, { data: { hours: String(hours) } }, { type: "merge", signal });
        }
        return hours < 3 ? { requeueAfterMs: (hours + 1) * 3_600_000 - age } : undefined;
      });
    const stop = new AbortController();
    const running = manager.run({ signal: stop.signal });
    try {
      const cms = env.client.resource(configMaps, "default");
      await cms.create({ metadata: { name: "counter" } } as ConfigMap);
      const took = await advanceUntil(clock, async () => (await cms.get("counter")).data?.hours === "3", {
        timeoutMs: 4 * 3_600_000,
      });
      expect(took).toBe(3 * 3_600_000);
      await expect(
        advanceUntil(clock, async () => (await cms.get("counter")).data?.hours === "4", {
          timeoutMs: 3_600_000,
          description: "a fourth count",
        }),
      ).rejects.toThrow(
        /^advanceUntil: a fourth count (still does not hold after 3600000 ms of virtual time|does not hold and no timer is left)/,
      );
    } finally {
      stop.abort();
      await running;
      await env.stop();
    }
  });
});

describe("faultyClient on an envtest environment", () => {
  /** An operator that copies each ConfigMap once, on the client it is given. */
  async function copyAll(seed: number) {
    const clock = new FakeClock(Date.parse("2026-05-01T00:00:00Z"));
    const env = await startTestEnvironment({ clock, http: false });
    const faulty = faultyClient(env.client, {
      seed,
      clock,
      name: "copier",
      faults: { ...defaultFaultRates, serverError: 0.2, conflict: 0.2, lostResponse: 0.2 },
    });
    const manager = new Manager({ client: faulty.client, clock, logger: noopLogger });
    newControllerManagedBy(manager)
      .for(configMaps)
      .complete(async (request, { client, get, signal }) => {
        const cm = get(configMaps, request);
        if (cm === undefined || request.name.startsWith("copy-")) return;
        await client
          .resource(configMaps, request.namespace)
          .create({ metadata: { name: `copy-${request.name}` }, data: { ...cm.data } }, { signal })
          .catch((error: { status?: { code?: number } }) => {
            if (error.status?.code !== 409) throw error;
          });
      });
    const stop = new AbortController();
    const running = manager.run({ signal: stop.signal });
    try {
      const cms = env.client.resource(configMaps, "default");
      for (const name of ["a", "b", "c", "d"])
        await cms.create({ metadata: { name }, data: { k: name } } as ConfigMap);
      const copies = async () =>
        (await cms.list()).items.filter((c) => c.metadata?.name?.startsWith("copy-")).length;
      await advanceUntil(clock, async () => (await copies()) === 4, { timeoutMs: 600_000 });
      return { faults: faulty.faults.map((f) => `${f.kind} ${f.point}#${f.index}`), story: faulty.story(5) };
    } finally {
      stop.abort();
      await running;
      await env.stop();
    }
  }

  it("strikes the operator's calls from a seed, the same faults for the same seed, and it still converges", async () => {
    const first = await copyAll(7);
    const again = await copyAll(7);
    expect(first.faults.length).toBeGreaterThan(0);
    expect(again.faults).toEqual(first.faults);
    expect(
      first.faults.every((f) =>
        /^(serverError|unavailable|tooManyRequests|conflict|timeout|lostResponse|watchCut|watchDelay) /.test(
          f,
        ),
      ),
    ).toBe(true);
    expect(first.story).toMatch(/copier/);
  });

  it("keeps the faults a lone client cannot meet out of a plan", async () => {
    const server = new ApiServer();
    const faulty = faultyClient(server.client(), {
      seed: 1,
      faults: {
        plan: [
          { kind: "crashAfterWrite", component: "client", point: "call", index: 0 },
          { kind: "serverError", component: "client", point: "call", index: 1 },
        ],
      },
    });
    const cms = faulty.client.resource(configMaps, "default");
    await cms.create({ metadata: { name: "x" } } as ConfigMap);
    await expect(cms.get("x")).rejects.toThrow("etcdserver: leader changed");
    expect(faulty.faults).toEqual([{ kind: "serverError", component: "client", point: "call", index: 1 }]);
    await server.close();
  });
});
