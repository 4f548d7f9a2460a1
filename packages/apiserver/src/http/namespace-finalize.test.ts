import { afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";

const running: ApiServer[] = [];
afterEach(async () => {
  for (const api of running.splice(0)) await api.close();
});

async function start() {
  const api = new ApiServer({ kubernetesService: false });
  running.push(api);
  const http = await api.listen({ tls: false });
  const call = async (method: string, path: string, body?: unknown) => {
    const init: RequestInit = { method, headers: { "content-type": "application/json" } };
    if (body !== undefined) init.body = JSON.stringify(body);
    const response = await fetch(http.url + path, init);
    const text = await response.text();
    // biome-ignore lint/suspicious/noExplicitAny: JSON answers read loosely, asserted exactly
    return { code: response.status, body: (text ? JSON.parse(text) : {}) as any };
  };
  return { api, call };
}

describe("namespaces/{name}/finalize over HTTP", () => {
  it("is listed in discovery with the update verb only", async () => {
    const { call } = await start();
    const { body } = await call("GET", "/api/v1");
    expect(body.resources.find((r: { name: string }) => r.name === "namespaces/finalize")).toEqual({
      name: "namespaces/finalize",
      singularName: "",
      namespaced: false,
      kind: "Namespace",
      verbs: ["update"],
    });
  });

  it("PUT writes spec.finalizers; a Terminating namespace with none left is removed; other verbs are 405", async () => {
    const { call } = await start();
    expect((await call("POST", "/api/v1/namespaces", { metadata: { name: "team" } })).code).toBe(201);
    const deleted = await call("DELETE", "/api/v1/namespaces/team");
    expect(deleted.code).toBe(200);
    expect(deleted.body.status.phase).toBe("Terminating");
    expect((await call("GET", "/api/v1/namespaces/team/finalize")).code).toBe(405);
    expect((await call("PATCH", "/api/v1/namespaces/team/finalize", {})).code).toBe(405);
    const current = (await call("GET", "/api/v1/namespaces/team")).body;
    const finalized = await call("PUT", "/api/v1/namespaces/team/finalize", {
      ...current,
      spec: { finalizers: [] },
    });
    expect(finalized.code).toBe(200);
    expect((await call("GET", "/api/v1/namespaces/team")).code).toBe(404);
    expect((await call("PUT", "/api/v1/namespaces/default/pods/web/finalize", {})).code).toBe(404);
  });
});
