import { configMaps } from "@reconcile/api";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";
import type { ListeningApiServer } from "./server.js";

// Metadata-only reads, as client-go's metadata client asks for them
// (k8s.io/client-go/metadata: the Accept headers below are its own) and as
// kube-apiserver's response transformer answers them.

const servers: ApiServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

async function start(): Promise<{ api: ApiServer; http: ListeningApiServer }> {
  const api = new ApiServer();
  servers.push(api);
  return { api, http: await api.listen() };
}

const path = "/api/v1/namespaces/default/configmaps";
const asList =
  "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
const asObject =
  "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";

describe("PartialObjectMetadata", () => {
  it("answers a get, a list and a watch with the objects' metadata alone", async () => {
    const { api, http } = await start();
    const client = api.client().resource(configMaps, "default");
    const a = await client.create({
      metadata: { name: "a", labels: { app: "x" } },
      data: { big: "x".repeat(1000) },
    });

    const got = await fetch(`${http.url}${path}/a`, { headers: { accept: asObject } });
    expect(got.headers.get("content-type")).toBe(
      "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io",
    );
    expect(await got.json()).toEqual({
      kind: "PartialObjectMetadata",
      apiVersion: "meta.k8s.io/v1",
      metadata: a.metadata,
    });

    const listed = await fetch(`${http.url}${path}`, { headers: { accept: asList } });
    expect(listed.headers.get("content-type")).toBe(
      "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io",
    );
    const list = (await listed.json()) as { metadata: { resourceVersion: string } };
    expect(list).toEqual({
      kind: "PartialObjectMetadataList",
      apiVersion: "meta.k8s.io/v1",
      metadata: { resourceVersion: expect.any(String) },
      items: [{ kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata: a.metadata }],
    });

    const stop = new AbortController();
    const watched = await fetch(
      `${http.url}${path}?watch=true&resourceVersion=${list.metadata.resourceVersion}`,
      {
        headers: { accept: asObject },
        signal: stop.signal,
      },
    );
    expect(watched.headers.get("content-type")).toBe(
      "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io",
    );
    const b = await client.create({ metadata: { name: "b" }, data: { k: "v" } });
    const reader = watched.body!.getReader();
    let text = "";
    while (!text.includes("\n")) text += new TextDecoder().decode((await reader.read()).value);
    expect(JSON.parse(text.slice(0, text.indexOf("\n")))).toEqual({
      type: "ADDED",
      object: { kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata: b.metadata },
    });
    stop.abort();
  });

  it("speaks v1beta1 too, and answers a list asked of one object (and the other way round) with a 406", async () => {
    const { api, http } = await start();
    await api
      .client()
      .resource(configMaps, "default")
      .create({ metadata: { name: "a" } });
    const beta = await fetch(`${http.url}${path}/a`, {
      headers: { accept: "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1" },
    });
    expect(((await beta.json()) as { apiVersion: string }).apiVersion).toBe("meta.k8s.io/v1beta1");

    const wrongGet = await fetch(`${http.url}${path}/a`, {
      headers: { accept: "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1" },
    });
    expect(wrongGet.status).toBe(406);
    expect(await wrongGet.json()).toMatchObject({
      reason: "NotAcceptable",
      message: "you requested PartialObjectMetadataList, but the requested object is not a list (ConfigMap)",
    });
    const wrongList = await fetch(`${http.url}${path}`, {
      headers: { accept: "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1" },
    });
    expect(wrongList.status).toBe(406);
    expect(((await wrongList.json()) as { message: string }).message).toBe(
      "you requested PartialObjectMetadata, but the requested object is a list (ConfigMapList)",
    );
    // An unknown version is not this form: the whole objects, as application/json.
    const unknown = await fetch(`${http.url}${path}/a`, {
      headers: { accept: "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v9,application/json" },
    });
    expect(((await unknown.json()) as { kind: string }).kind).toBe("ConfigMap");
  });
});
