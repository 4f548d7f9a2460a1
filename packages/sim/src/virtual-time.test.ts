import { type ConfigMap, configMaps } from "@reconcile/api";
import { FakeClock } from "@reconcile/clock";
import { Manager, newControllerManagedBy, noopLogger } from "@reconcile/runtime";
import { startTestEnvironment } from "@reconcile/runtime/envtest";
import { describe, expect, it } from "vitest";
import { advanceUntil } from "./index.js";

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
