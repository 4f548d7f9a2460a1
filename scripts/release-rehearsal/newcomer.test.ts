// The newcomer's first test: a controller on @reconcile/runtime, checked
// against envtest on a fake clock, as the runtime README shows.
import { configMaps } from "@reconcile/api";
import { FakeClock } from "@reconcile/clock";
import { Manager, newControllerManagedBy } from "@reconcile/runtime";
import { eventually, startTestEnvironment } from "@reconcile/runtime/envtest";
import { expect, it } from "vitest";

it("labels every ConfigMap it sees", async () => {
  const clock = new FakeClock();
  const env = await startTestEnvironment({ clock });
  const manager = new Manager({ client: env.client, clock });
  newControllerManagedBy(manager)
    .for(configMaps)
    .complete(async (request, { client, get, signal }) => {
      const configMap = get(configMaps, request);
      if (configMap === undefined || configMap.metadata?.labels?.seen === "true") return;
      const labels = { ...configMap.metadata?.labels, seen: "true" };
      await client
        .resource(configMaps, request.namespace)
        .update({ ...configMap, metadata: { ...configMap.metadata, labels } }, { signal });
    });
  const stop = new AbortController();
  const running = manager.run({ signal: stop.signal });
  const client = env.client.resource(configMaps, "default");
  await client.create({ metadata: { name: "a", namespace: "default" } });
  await eventually(async () => (await client.get("a")).metadata?.labels?.seen === "true", { clock });
  expect((await client.get("a")).metadata?.labels).toEqual({ seen: "true" });
  // The Manager's metrics (prom-client's core, bundled into the runtime) count the reconcile.
  expect(await manager.registry.metrics()).toMatch(
    /^controller_runtime_reconcile_total\{controller="configmap",result="success"\} [1-9]/m,
  );
  stop.abort();
  await running;
  await env.stop();
});
