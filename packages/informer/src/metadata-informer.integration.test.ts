import { type ConfigMap, configMaps, type KubeObject, type PartialObjectMetadata } from "@reconcile/api";
import { ApiServer, listen } from "@reconcile/apiserver";
import { type Client, HttpClient, loadKubeConfig } from "@reconcile/client";
import { afterEach, describe, expect, it } from "vitest";
import { SharedInformerFactory } from "./informer-factory.js";

// Metadata-only informers (client-go's metadatainformer): the cache holds
// PartialObjectMetadata, over the wire (the server answers the metadata-only
// form) and in process (the objects are cut down on the way in).

const stops: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (stops.length > 0) await stops.pop()!();
});

async function clients(): Promise<{ api: ApiServer; http: HttpClient; inProcess: Client }> {
  const api = new ApiServer();
  stops.push(() => api.close());
  const listening = await listen(api);
  stops.push(() => listening.close());
  const http = new HttpClient({ kubeConfig: await loadKubeConfig({ yaml: listening.kubeconfig() }) });
  return { api, http, inProcess: api.client() };
}

describe.each(["http", "inProcess"] as const)("forMetadata over %s", (via) => {
  it("caches each object's metadata alone, and hands changes to it to the handlers", async () => {
    const made = await clients();
    const writer = made.api.client().resource(configMaps, "default");
    const a = await writer.create({
      metadata: { name: "a", labels: { app: "x" } },
      data: { big: "x".repeat(10_000) },
    });
    const factory = new SharedInformerFactory({ client: made[via] });
    const informer = factory.forMetadata(configMaps);
    const seen: string[] = [];
    informer.addEventHandler({
      onAdd: (object: PartialObjectMetadata) => seen.push(`add ${object.metadata.name}`),
      onUpdate: (_old: PartialObjectMetadata, object: PartialObjectMetadata) =>
        seen.push(`update ${object.metadata.name} ${JSON.stringify(object.metadata.labels)}`),
      onDelete: (object: PartialObjectMetadata) => seen.push(`delete ${object.metadata?.name}`),
    });
    const stop = new AbortController();
    stops.push(() => factory.shutdown());
    stops.push(() => stop.abort());
    factory.start(stop.signal);
    await factory.waitForCacheSync(stop.signal);

    expect(informer.getStore().getByKey("default/a")).toEqual({
      apiVersion: "meta.k8s.io/v1",
      kind: "PartialObjectMetadata",
      metadata: a.metadata,
    });
    // An informer of its own: the whole-object informer of the same resource is another.
    expect(factory.forResource(configMaps)).not.toBe(informer as unknown as typeof informer);

    await writer.update({ ...a, metadata: { ...a.metadata, labels: { app: "y" } } } as ConfigMap);
    await writer.delete("a");
    await expect
      .poll(() => seen, { timeout: 5000, interval: 5 })
      .toEqual(["add a", 'update a {"app":"y"}', "delete a"]);
    expect(informer.getStore().list()).toEqual([]);
  });
});

it("asks the server for the metadata-only form over the wire", async () => {
  const { api, http } = await clients();
  const made = await api
    .client()
    .resource(configMaps, "default")
    .create({ metadata: { name: "a" }, data: { big: "x".repeat(1000) } });
  const list = await http.resource(configMaps, "default").list({ metadataOnly: true });
  expect(list.kind).toBe("PartialObjectMetadataList");
  expect(list.items as KubeObject[]).toEqual([
    { apiVersion: "meta.k8s.io/v1", kind: "PartialObjectMetadata", metadata: made.metadata },
  ]);
});
