// An operator compiled as CommonJS (`"type": "commonjs"`, module nodenext):
// it requires the packages, reconciles one ConfigMap in an envtest cluster,
// and exits. The release rehearsal runs it compiled and bundled by esbuild.
import { configMaps } from "@reconcile/api";
import { Manager, newControllerManagedBy } from "@reconcile/runtime";
import { eventually, startTestEnvironment } from "@reconcile/runtime/envtest";

async function main(): Promise<void> {
  const env = await startTestEnvironment({ http: false });
  const manager = new Manager({ client: env.client });
  newControllerManagedBy(manager)
    .for(configMaps)
    .complete(async (request, { client, get, signal }) => {
      const configMap = get(configMaps, request);
      if (configMap === undefined || configMap.data?.seen === "yes") return;
      await client
        .resource(configMaps, request.namespace)
        .update({ ...configMap, data: { ...configMap.data, seen: "yes" } }, { signal });
    });
  const stop = new AbortController();
  const running = manager.run({ signal: stop.signal });
  const client = env.client.resource(configMaps, "default");
  await client.create({ metadata: { name: "a", namespace: "default" } });
  await eventually(async () => (await client.get("a")).data?.seen === "yes");
  const metrics = await manager.registry.metrics();
  if (
    !/^controller_runtime_reconcile_total\{controller="configmap",result="success"\} [1-9]/m.test(metrics)
  ) {
    throw new Error(`the reconcile is not counted in the metrics:\n${metrics}`);
  }
  stop.abort();
  await running;
  await env.stop();
  console.log(`reconciled from CommonJS (${typeof require === "function" ? "require" : "import"})`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
