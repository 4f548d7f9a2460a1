import { builtinResources, defineResource, type KubeObject, pods } from "@reconcile/api";
import { HttpClient, loadKubeConfig } from "@reconcile/client";
import { FakeClock } from "@reconcile/clock";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";
import { type ListeningApiServer, listen } from "./server.js";

const widgets = defineResource({
  group: "example.com",
  version: "v1",
  kind: "Widget",
  plural: "widgets",
  namespaced: true,
});

const running: { api: ApiServer; server: ListeningApiServer; client: HttpClient }[] = [];
afterEach(async () => {
  for (const { api, server, client } of running.splice(0)) {
    client.close();
    await server.close();
    await api.close();
  }
});

/** A server with the built-in kinds and one kind Kubernetes does not define, holding two pods and a widget. */
async function start() {
  const api = new ApiServer({
    clock: new FakeClock(Date.parse("2026-01-01T00:00:00Z")),
    resources: [...builtinResources, widgets],
  });
  const server = await listen(api);
  const client = new HttpClient({
    kubeConfig: await loadKubeConfig({ yaml: server.kubeconfig() }),
    qps: Number.POSITIVE_INFINITY,
  });
  running.push({ api, server, client });
  const inProcess = api.client();
  for (const name of ["a", "b"]) {
    await inProcess.resource(pods, "default").create({
      metadata: { name },
      spec: { containers: [{ name: "c", image: "nginx" }] },
    });
  }
  await inProcess.resource(widgets, "default").create({ metadata: { name: "w" } });
  return { url: server.url, client };
}

async function getJson(url: string, method = "GET", accept = "application/json") {
  const response = await fetch(url, { method, headers: { accept } });
  return { code: response.status, body: (await response.json()) as Record<string, unknown> };
}

const typeMetaOf = (items: unknown) =>
  (items as Record<string, unknown>[]).map((item) => [item.apiVersion, item.kind]);

describe("list encoding", () => {
  it("writes the items of a built-in kind without kind and apiVersion; the list carries them", async () => {
    const { url } = await start();
    const { code, body } = await getJson(`${url}/api/v1/namespaces/default/pods`);
    expect(code).toBe(200);
    expect([body.apiVersion, body.kind]).toEqual(["v1", "PodList"]);
    expect(typeMetaOf(body.items)).toEqual([
      [undefined, undefined],
      [undefined, undefined],
    ]);
    expect((body.items as KubeObject[]).map((pod) => Object.keys(pod))).toEqual([
      ["metadata", "spec", "status"],
      ["metadata", "spec", "status"],
    ]);
  });

  it("writes the items of a custom kind with kind and apiVersion, as unstructured lists are", async () => {
    const { url } = await start();
    const { body } = await getJson(`${url}/apis/example.com/v1/namespaces/default/widgets`);
    expect([body.apiVersion, body.kind]).toEqual(["example.com/v1", "WidgetList"]);
    expect(typeMetaOf(body.items)).toEqual([["example.com/v1", "Widget"]]);
  });

  it("keeps kind and apiVersion on a single object, on a Table's objects and on the items a deletecollection answers with", async () => {
    const { url } = await start();
    const pod = await getJson(`${url}/api/v1/namespaces/default/pods/a`);
    expect([pod.body.apiVersion, pod.body.kind]).toEqual(["v1", "Pod"]);
    const table = await getJson(
      `${url}/api/v1/namespaces/default/pods?includeObject=Object`,
      "GET",
      "application/json;as=Table;v=v1;g=meta.k8s.io",
    );
    expect(
      (table.body.rows as { object: KubeObject }[]).map((row) => [row.object.apiVersion, row.object.kind]),
    ).toEqual([
      ["v1", "Pod"],
      ["v1", "Pod"],
    ]);
    const deleted = await getJson(`${url}/api/v1/namespaces/default/pods`, "DELETE");
    expect([deleted.code, deleted.body.kind]).toEqual([200, "PodList"]);
    expect(typeMetaOf(deleted.body.items)).toEqual([
      [undefined, undefined],
      [undefined, undefined],
    ]);
  });

  it("HttpClient gives the items of a list or deletecollection the list's kind without List, and its apiVersion", async () => {
    const { client } = await start();
    const listed = await client.resource(pods, "default").list();
    expect(listed.items.map((pod) => [pod.apiVersion, pod.kind, pod.metadata?.name])).toEqual([
      ["v1", "Pod", "a"],
      ["v1", "Pod", "b"],
    ]);
    const listedWidgets = await client.resource(widgets, "default").list();
    expect(typeMetaOf(listedWidgets.items)).toEqual([["example.com/v1", "Widget"]]);
    const deleted = await client.resource(pods, "default").deleteCollection();
    expect(typeMetaOf(deleted.items)).toEqual([
      ["v1", "Pod"],
      ["v1", "Pod"],
    ]);
  });
});
