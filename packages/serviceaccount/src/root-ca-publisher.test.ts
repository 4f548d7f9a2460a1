import { type ConfigMap, configMaps, type Namespace, namespaces } from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import { FakeClock } from "@reconcile/clock";
import { FakeInformer } from "@reconcile/informer/testing";
import { describe, expect, it } from "vitest";
import { RootCACertPublisher, rootCADescription } from "./root-ca-publisher.js";

const rootCA = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

async function setup() {
  const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
  const server = new ApiServer({ clock, kubernetesService: false });
  const client = server.client();
  const namespaceInformer = new FakeInformer<Namespace>();
  const configMapInformer = new FakeInformer<ConfigMap>();
  const publisher = new RootCACertPublisher({ client, rootCA, namespaceInformer, configMapInformer, clock });
  const published = () => client.resource(configMaps, "team").get("kube-root-ca.crt");
  await client.resource(namespaces).create({ metadata: { name: "team" } });
  namespaceInformer.add(await client.resource(namespaces).get("team"));
  return { client, configMapInformer, namespaceInformer, publisher, published };
}

describe("RootCACertPublisher", () => {
  it("publishes kube-root-ca.crt with the CA and upstream's description in a new namespace", async () => {
    const { publisher, published } = await setup();
    await publisher.syncNamespace("team");
    const configMap = await published();
    expect(configMap.data).toEqual({ "ca.crt": rootCA });
    expect(configMap.metadata?.annotations).toEqual({ "kubernetes.io/description": rootCADescription });
  });

  it("puts the data back when it is changed, keeping other annotations, and leaves a correct one alone", async () => {
    const { client, configMapInformer, publisher, published } = await setup();
    await publisher.syncNamespace("team");
    const changed = await client.resource(configMaps, "team").update({
      ...(await published()),
      data: { "ca.crt": "forged", extra: "x" },
      metadata: { ...(await published()).metadata, annotations: { team: "a" } },
    });
    configMapInformer.add(changed);
    await publisher.syncNamespace("team");
    const restored = await published();
    expect(restored.data).toEqual({ "ca.crt": rootCA });
    expect(restored.metadata?.annotations).toEqual({
      team: "a",
      "kubernetes.io/description": rootCADescription,
    });
    configMapInformer.update(restored);
    await publisher.syncNamespace("team");
    expect((await published()).metadata?.resourceVersion).toBe(restored.metadata?.resourceVersion);
  });

  it("makes it again once deleted, and nothing in a namespace being deleted", async () => {
    const { client, configMapInformer, namespaceInformer, publisher, published } = await setup();
    await publisher.syncNamespace("team");
    const first = await published();
    configMapInformer.add(first);
    await client.resource(configMaps, "team").delete("kube-root-ca.crt");
    configMapInformer.delete(first);
    await publisher.syncNamespace("team");
    expect((await published()).metadata?.uid).not.toBe(first.metadata?.uid);

    await client.resource(namespaces).create({ metadata: { name: "leaving" } });
    await client.resource(namespaces).delete("leaving");
    namespaceInformer.add(await client.resource(namespaces).get("leaving"));
    await publisher.syncNamespace("leaving");
    expect((await client.resource(configMaps, "leaving").list()).items).toEqual([]);
  });
});
