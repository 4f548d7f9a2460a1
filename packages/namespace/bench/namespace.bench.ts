// Namespace controller benchmark, on the embedded API server through its
// in-process client: one namespace holding N objects (half ConfigMaps, a
// quarter Secrets, a quarter unbound pods, which go without grace) is
// deleted, and one controller pass (`syncNamespace`) empties it across every
// discovered kind and finalizes it away. The duration is real time.
//
// N = 1,000 and 10,000. Each run starts a fresh server; 3 measured runs after
// 1 warm-up; medians reported.
import { configMaps, type Namespace, namespaces, pods, secrets } from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import { FakeClock } from "@reconcile/clock";
import { FakeInformer } from "@reconcile/informer/testing";
import { type Measurement, measure, writeResults } from "../../../tools/bench/index.js";
import { NamespaceController } from "../src/index.js";

async function run(objects: number): Promise<number> {
  const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
  const server = new ApiServer({ clock, kubernetesService: false });
  const client = server.client();
  await client.resource(namespaces).create({ metadata: { name: "team" } });
  for (let i = 0; i < objects; i++) {
    const name = `object-${i}`;
    if (i % 4 < 2)
      await client.resource(configMaps, "team").create({ metadata: { name }, data: { i: `${i}` } });
    else if (i % 4 === 2) await client.resource(secrets, "team").create({ metadata: { name } });
    else
      await client
        .resource(pods, "team")
        .create({ metadata: { name }, spec: { containers: [{ name: "c", image: "nginx" }] } });
  }
  await client.resource(namespaces).delete("team");
  const informer = new FakeInformer<Namespace>({ objects: [await client.resource(namespaces).get("team")] });
  const controller = new NamespaceController({ client, namespaceInformer: informer, clock });
  const started = performance.now();
  await controller.syncNamespace("team");
  const elapsed = performance.now() - started;
  const left = (await client.resource(namespaces).list()).items.some((ns) => ns.metadata?.name === "team");
  if (left) throw new Error("the namespace was not removed in one pass");
  controller.queue.shutDown();
  await server.close();
  return elapsed;
}

const results: Measurement[] = [];
for (const objects of [1_000, 10_000]) {
  results.push(
    await measure(
      {
        name: `one pass empties and finalizes a namespace of ${objects} objects`,
        unit: "ms",
        higherIsBetter: false,
        runs: 3,
      },
      () => run(objects),
    ),
  );
}
writeResults("namespace", results);
