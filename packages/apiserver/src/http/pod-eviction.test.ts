// pods/{name}/eviction over HTTP (kube-apiserver's EvictionREST) for pods no PodDisruptionBudget selects.
import { type Pod, pods } from "@reconcile/api";
import { FakeClock } from "@reconcile/clock";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";
import { podDefinition } from "../kinds/pod.js";
import { apiResourceList } from "./discovery.js";
import { type ListeningApiServer, listen } from "./server.js";

const running: { api: ApiServer; http: ListeningApiServer }[] = [];
afterEach(async () => {
  for (const { api, http } of running.splice(0)) {
    await http.close();
    await api.close();
  }
});

async function start() {
  const api = new ApiServer({ clock: new FakeClock(Date.parse("2026-01-01T00:00:00Z")) });
  const server = await listen(api);
  running.push({ api, http: server });
  const client = api.client().resource(pods, "default");
  const create = async (name: string, phase: "Pending" | "Running") => {
    const pod = await client.create({
      metadata: { name, namespace: "default" },
      spec: { containers: [{ name: "web", image: "nginx" }], nodeName: "node-1" },
    });
    return client.updateStatus({ ...pod, status: { ...pod.status, phase } } as Pod);
  };
  const evict = async (name: string, body: unknown, query = "") => {
    const response = await fetch(`${server.url}/api/v1/namespaces/default/pods/${name}/eviction${query}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { code: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const eviction = (name: string, deleteOptions?: Record<string, unknown>) => ({
    apiVersion: "policy/v1",
    kind: "Eviction",
    metadata: { name, namespace: "default" },
    ...(deleteOptions ? { deleteOptions } : {}),
  });
  return { client, create, evict, eviction };
}

const success = { kind: "Status", apiVersion: "v1", metadata: {}, status: "Success", code: 201 };

describe("pods/eviction", () => {
  it("marks a running pod DisruptionTarget and deletes it gracefully, answering 201 Success", async () => {
    const { client, create, evict, eviction } = await start();
    await create("web", "Running");
    expect(await evict("web", eviction("web"))).toEqual({ code: 201, body: success });
    const evicted = await client.get("web");
    expect(evicted.metadata?.deletionTimestamp).toBe("2026-01-01T00:00:30Z");
    expect(evicted.status?.conditions).toContainEqual({
      type: "DisruptionTarget",
      status: "True",
      reason: "EvictionByEvictionAPI",
      message: "Eviction API: evicting",
      lastTransitionTime: "2026-01-01T00:00:00Z",
    });
  });

  it("passes the Eviction's deleteOptions on: grace 0 removes the pod at once", async () => {
    const { client, create, evict, eviction } = await start();
    await create("web", "Running");
    expect((await evict("web", eviction("web", { gracePeriodSeconds: 0 }))).code).toBe(201);
    await expect(client.get("web")).rejects.toMatchObject({ code: 404 });
  });

  it("deletes a pending pod without a DisruptionTarget condition", async () => {
    const { client, create, evict, eviction } = await start();
    await create("pending", "Pending");
    expect((await evict("pending", eviction("pending"))).code).toBe(201);
    const evicted = await client.get("pending");
    expect(evicted.metadata?.deletionTimestamp).toBeDefined();
    expect(evicted.status?.conditions ?? []).not.toContainEqual(
      expect.objectContaining({ type: "DisruptionTarget" }),
    );
  });

  it("a dry run changes nothing", async () => {
    const { client, create, evict, eviction } = await start();
    const pod = await create("web", "Running");
    expect((await evict("web", eviction("web", { dryRun: ["All"] }), "?dryRun=All")).code).toBe(201);
    expect(await client.get("web")).toEqual(pod);
  });

  it("answers 400 for a name mismatch, 409 for a stale precondition, 404 for an absent pod", async () => {
    const { create, evict, eviction } = await start();
    await create("web", "Running");
    expect(await evict("web", eviction("other"))).toMatchObject({
      code: 400,
      body: { reason: "BadRequest", message: "name in URL does not match name in Eviction object" },
    });
    expect(
      (await evict("web", eviction("web", { gracePeriodSeconds: 0, preconditions: { uid: "not-its-uid" } })))
        .code,
    ).toBe(409);
    expect(await evict("absent", eviction("absent"))).toMatchObject({
      code: 404,
      body: { reason: "NotFound", message: 'pods "absent" not found' },
    });
  });

  it("discovery lists pods/eviction as policy/v1 Eviction, as kubectl drain requires", () => {
    const list = apiResourceList([podDefinition], "", "v1") as { resources: Record<string, unknown>[] };
    expect(list.resources.find((resource) => resource.name === "pods/eviction")).toEqual({
      name: "pods/eviction",
      singularName: "",
      namespaced: true,
      group: "policy",
      version: "v1",
      kind: "Eviction",
      verbs: ["create"],
    });
  });
});
