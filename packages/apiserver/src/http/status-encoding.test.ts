import { afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";
import { type ListeningApiServer, listen } from "./server.js";

// Response bodies as Go's encoding/json writes them: Status fields in the struct's order,
// omitempty fields left out, a newline after every value. Clients compare these bytes.

const running: { api: ApiServer; http: ListeningApiServer }[] = [];
afterEach(async () => {
  for (const { api, http } of running.splice(0)) {
    await http.close();
    await api.close();
  }
});

async function start() {
  const api = new ApiServer();
  const http = await listen(api);
  running.push({ api, http });
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(http.url + path, {
      method,
      headers: { "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { code: response.status, text: await response.text() };
  };
  return { call };
}

describe("Status and other bodies on the wire", () => {
  it("writes a 409 AlreadyExists byte for byte as kube-apiserver does", async () => {
    const { call } = await start();
    const configMap = { metadata: { name: "cm" }, data: { a: "1" } };
    await call("POST", "/api/v1/namespaces/default/configmaps", configMap);
    const again = await call("POST", "/api/v1/namespaces/default/configmaps", configMap);
    expect(again.code).toBe(409);
    expect(again.text).toBe(
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \\"cm\\" already exists","reason":"AlreadyExists","details":{"name":"cm","kind":"configmaps"},"code":409}\n',
    );
  });

  it("keeps an apps group in the details and writes a 404 for an unknown path with empty details", async () => {
    const { call } = await start();
    const missing = await call("GET", "/apis/apps/v1/namespaces/default/deployments/web");
    expect(missing.text).toBe(
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"deployments.apps \\"web\\" not found","reason":"NotFound","details":{"name":"web","group":"apps","kind":"deployments"},"code":404}\n',
    );
    const unknown = await call("GET", "/apis/nope.example.com/v1/things");
    expect(unknown.text).toBe(
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server could not find the requested resource","reason":"NotFound","details":{},"code":404}\n',
    );
  });

  it("ends objects and lists with a newline", async () => {
    const { call } = await start();
    const ns = await call("GET", "/api/v1/namespaces/default");
    expect(ns.text.endsWith("}\n")).toBe(true);
    expect(JSON.parse(ns.text).metadata.name).toBe("default");
    const list = await call("GET", "/api/v1/namespaces");
    expect(list.text.endsWith("]}\n")).toBe(true);
    expect(JSON.parse(list.text).kind).toBe("NamespaceList");
  });
});
