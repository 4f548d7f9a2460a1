import { configMaps, pods, services } from "@reconcile/api";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";
import { call, closeCrdServers, establishSchemalessCRD, startCrdServer } from "../crd/crd.test-util.js";
import { goOrderer } from "../registry/go-order.js";
import { listen } from "./server.js";

// Objects on the wire in the order kube-apiserver writes their members in:
// each Go struct's fields in declaration order, each map's keys sorted,
// whatever order the client wrote them in.

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function served() {
  const api = new ApiServer();
  const server = await listen(api);
  cleanups.push(async () => {
    await server.close();
    await api.close();
  });
  const client = api.client();
  // Written with every member in an order kube-apiserver never writes.
  await client.resource(configMaps, "default").create({
    data: { b: "1", a: "2" },
    metadata: { labels: { z: "1", x: "y" }, name: "cm" },
    kind: "ConfigMap",
    apiVersion: "v1",
  } as never);
  await client.resource(services, "default").create({
    spec: { ports: [{ targetPort: 8080, port: 80 }], selector: { b: "2", a: "1" } },
    metadata: { name: "web" },
  } as never);
  const get = async (path: string) => (await fetch(`${server.url}${path}`)).text();
  /** The first line a streamed answer (a watch) sends; the stream is then left. */
  const firstLine = async (path: string) => {
    const controller = new AbortController();
    const reader = (await fetch(`${server.url}${path}`, { signal: controller.signal })).body!.getReader();
    let text = "";
    while (!text.includes("\n")) text += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    return text.slice(0, text.indexOf("\n"));
  };
  return { api, get, firstLine };
}

/** The members of each object in `value` (a JSON text parsed: members in the text's order). */
const keysOf = (value: unknown) => Object.keys(value as object);

describe("the members of a built-in object on the wire", () => {
  it("come in the Go structs' order and a map's keys sorted, as kube-apiserver writes them", async () => {
    const { get } = await served();
    const text = await get("/api/v1/namespaces/default/configmaps/cm");
    const configMap = JSON.parse(text);
    expect(keysOf(configMap)).toEqual(["kind", "apiVersion", "metadata", "data"]);
    expect(keysOf(configMap.metadata)).toEqual([
      "name",
      "namespace",
      "uid",
      "resourceVersion",
      "creationTimestamp",
      "labels",
      "managedFields",
    ]);
    expect(text).toContain('"labels":{"x":"y","z":"1"}');
    expect(text).toMatch(/"data":\{"a":"2","b":"1"\}\}\n$/);
    expect(keysOf(configMap.metadata.managedFields[0])).toEqual([
      "manager",
      "operation",
      "apiVersion",
      "time",
      "fieldsType",
      "fieldsV1",
    ]);

    const service = JSON.parse(await get("/api/v1/namespaces/default/services/web"));
    expect(keysOf(service.spec)).toEqual([
      "ports",
      "selector",
      "clusterIP",
      "clusterIPs",
      "type",
      "sessionAffinity",
      "ipFamilies",
      "ipFamilyPolicy",
      "internalTrafficPolicy",
    ]);
    expect(keysOf(service.spec.ports[0])).toEqual(["protocol", "port", "targetPort"]);
    expect(keysOf(service.spec.selector)).toEqual(["a", "b"]);
  });

  it("in a list's envelope and items, and in a watch's events", async () => {
    const { get, firstLine } = await served();
    const list = JSON.parse(await get("/api/v1/namespaces/default/configmaps"));
    expect(keysOf(list)).toEqual(["kind", "apiVersion", "metadata", "items"]);
    // A typed list's items carry no kind or apiVersion, as kube-apiserver writes them.
    expect(keysOf(list.items[0])).toEqual(["metadata", "data"]);
    expect(keysOf(list.items[0].metadata).slice(0, 3)).toEqual(["name", "namespace", "uid"]);
    const event = JSON.parse(await firstLine("/api/v1/namespaces/default/configmaps?watch=true"));
    expect(keysOf(event)).toEqual(["type", "object"]);
    expect(keysOf(event.object)).toEqual(["kind", "apiVersion", "metadata", "data"]);
  });

  it("in a write's answer", async () => {
    const { api } = await served();
    const server = await listen(api);
    cleanups.push(() => server.close());
    const answer = await fetch(`${server.url}/api/v1/namespaces/default/pods`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        spec: { containers: [{ image: "nginx", name: "c" }] },
        metadata: { name: "p" },
        apiVersion: "v1",
        kind: "Pod",
      }),
    });
    const pod = (await answer.json()) as { spec: { containers: object[] } };
    expect(keysOf(pod)).toEqual(["kind", "apiVersion", "metadata", "spec", "status"]);
    expect(keysOf(pod.spec.containers[0])).toEqual([
      "name",
      "image",
      "resources",
      "terminationMessagePath",
      "terminationMessagePolicy",
      "imagePullPolicy",
    ]);
    // What is stored, and what in-process clients get, is left as written.
    const stored = await api.client().resource(pods, "default").get("p");
    expect(keysOf(stored)[0]).toBe("apiVersion");
  });
});

describe("the members of a custom resource on the wire", () => {
  it("come with every object's keys sorted, as kube-apiserver encodes unstructured objects", async () => {
    const { api, http } = await startCrdServer();
    cleanups.push(closeCrdServers);
    await establishSchemalessCRD(api, {
      group: "stable.example.com",
      plural: "crontabs",
      singular: "crontab",
      kind: "CronTab",
    });
    const path = "/apis/stable.example.com/v1/namespaces/default/crontabs";
    const created = await call(http, "POST", path, {
      spec: { schedule: "* * * * */5", image: "cron", nested: { z: 1, a: [{ y: 1, b: 2 }] } },
      metadata: { name: "tab", labels: { z: "1", a: "2" } },
      kind: "CronTab",
      apiVersion: "stable.example.com/v1",
    });
    expect(created.code).toBe(201);
    for (const tab of [created.body, (await call(http, "GET", `${path}/tab`)).body]) {
      expect(keysOf(tab)).toEqual(["apiVersion", "kind", "metadata", "spec"]);
      expect(keysOf(tab.metadata)).toEqual([
        "creationTimestamp",
        "generation",
        "labels",
        "managedFields",
        "name",
        "namespace",
        "resourceVersion",
        "uid",
      ]);
      expect(keysOf(tab.spec)).toEqual(["image", "nested", "schedule"]);
      expect(keysOf(tab.spec.nested)).toEqual(["a", "z"]);
      expect(keysOf(tab.spec.nested.a[0])).toEqual(["b", "y"]);
    }
    const list = (await call(http, "GET", path)).body;
    expect(keysOf(list.items[0])).toEqual(["apiVersion", "kind", "metadata", "spec"]);
  });
});

describe("goOrderer", () => {
  const order = goOrderer("io.k8s.api.core.v1.ConfigMap")!;

  it("hands back an object already in order, and each part in order, as it is", () => {
    const metadata = { name: "a", labels: { a: "1", b: "2" } };
    const configMap = { kind: "ConfigMap", apiVersion: "v1", metadata, data: { x: "1" } };
    expect(order(configMap)).toBe(configMap);
    const reordered = order({ data: { x: "1" }, metadata, kind: "ConfigMap", apiVersion: "v1" }) as {
      metadata: unknown;
    };
    expect(keysOf(reordered)).toEqual(["kind", "apiVersion", "metadata", "data"]);
    expect(reordered.metadata).toBe(metadata);
  });

  it("puts members the struct does not declare last, in their order, and changes nothing in place", () => {
    const labels = Object.freeze({ b: "2", a: "1" });
    const metadata = Object.freeze({ labels, name: "a" });
    const object = Object.freeze({ extra: 1, metadata, kind: "ConfigMap", other: 2 });
    const ordered = order(object) as { metadata: { labels: object } };
    expect(keysOf(ordered)).toEqual(["kind", "metadata", "extra", "other"]);
    expect(keysOf(ordered.metadata)).toEqual(["name", "labels"]);
    expect(keysOf(ordered.metadata.labels)).toEqual(["a", "b"]);
    expect(keysOf(object)).toEqual(["extra", "metadata", "kind", "other"]);
  });
});
