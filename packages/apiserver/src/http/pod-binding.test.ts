// pods/{name}/binding over HTTP, with kube-apiserver's answers (BindingREST, ValidatePodBinding).
import { type Pod, pods } from "@reconcile/api";
import { FakeClock } from "@reconcile/clock";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";
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
  const client = api.client();
  const create = (name: string, spec: Partial<Pod["spec"]> = {}) =>
    client.resource(pods, "default").create({
      metadata: { name, namespace: "default" },
      spec: { containers: [{ name: "web", image: "nginx" }], ...spec },
    });
  const post = async (name: string, body: unknown, method = "POST", query = "") => {
    const response = await fetch(`${server.url}/api/v1/namespaces/default/pods/${name}/binding${query}`, {
      method,
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { code: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const binding = (name: string, node: string, extra: Record<string, unknown> = {}) => ({
    apiVersion: "v1",
    kind: "Binding",
    metadata: { name, namespace: "default", ...extra },
    target: { kind: "Node", name: node },
  });
  return { client, create, post, binding };
}

describe("pods/binding", () => {
  it("sets spec.nodeName, merges annotations and PodScheduled=True in one write, answering 201 Success", async () => {
    const { client, create, post, binding } = await start();
    const pod = await create("web");
    const answer = await post(
      "web",
      binding("web", "node-1", { uid: pod.metadata?.uid, annotations: { "example.com/by": "test" } }),
    );
    expect(answer).toEqual({
      code: 201,
      body: { kind: "Status", apiVersion: "v1", metadata: {}, status: "Success", code: 201 },
    });
    const bound = await client.resource(pods, "default").get("web");
    expect(bound.spec?.nodeName).toBe("node-1");
    expect(bound.metadata?.annotations).toEqual({ "example.com/by": "test" });
    expect(bound.status?.conditions).toEqual([
      { type: "PodScheduled", status: "True", lastTransitionTime: "2026-01-01T00:00:00Z" },
    ]);
    expect(Number(bound.metadata?.resourceVersion)).toBe(Number(pod.metadata?.resourceVersion) + 1);
  });

  it("refuses a second binding, a pod being deleted, a gated pod and a stale uid with 409", async () => {
    const { client, create, post, binding } = await start();
    await create("bound", { nodeName: "node-1" });
    expect(await post("bound", binding("bound", "node-2"))).toMatchObject({
      code: 409,
      body: {
        reason: "Conflict",
        message:
          'Operation cannot be fulfilled on pods/binding "bound": pod bound is already assigned to node "node-1"',
      },
    });
    await create("gated", { schedulingGates: [{ name: "example.com/wait" }] });
    expect((await post("gated", binding("gated", "node-1"))).body.message).toBe(
      'Operation cannot be fulfilled on pods/binding "gated": pod gated has non-empty .spec.schedulingGates',
    );
    await create("other");
    expect(await post("other", binding("other", "node-1", { uid: "not-its-uid" }))).toMatchObject({
      code: 409,
    });
    await create("going", { nodeName: "" });
    await client
      .resource(pods, "default")
      .patch("going", { metadata: { finalizers: ["example.com/hold"] } }, { type: "merge" });
    await client.resource(pods, "default").delete("going");
    expect((await post("going", binding("going", "node-1"))).body.message).toBe(
      'Operation cannot be fulfilled on pods/binding "going": pod going is being deleted, cannot be assigned to a host',
    );
  });

  it("answers 400 for a name other than the URL's, 422 for a bad target, 404 for no pod, 405 for GET", async () => {
    const { create, post, binding } = await start();
    await create("web");
    expect(await post("web", binding("other", "node-1"))).toMatchObject({
      code: 400,
      body: { message: "name in URL does not match name in Binding object" },
    });
    expect(await post("web", { ...binding("web", ""), target: { kind: "Pod", name: "" } })).toMatchObject({
      code: 422,
      body: {
        message:
          'Binding "web" is invalid: [target.kind: Unsupported value: "Pod": supported values: "Node", "<empty>", target.name: Required value]',
      },
    });
    expect(await post("ghost", binding("ghost", "node-1"))).toMatchObject({ code: 404 });
    const response = await post("web", undefined, "PUT");
    expect(response.code).toBe(405);
  });

  it("with dryRun=All checks everything and writes nothing", async () => {
    const { client, create, post, binding } = await start();
    await create("web");
    expect((await post("web", binding("web", "node-1"), "POST", "?dryRun=All")).code).toBe(201);
    expect((await client.resource(pods, "default").get("web")).spec?.nodeName).toBeUndefined();
  });
});

describe("a pod created with scheduling gates", () => {
  it("gets PodScheduled=False with reason SchedulingGated, as kube-apiserver sets it (its zero times as null)", async () => {
    const { create } = await start();
    const gated = await create("gated", { schedulingGates: [{ name: "example.com/wait" }] });
    expect(gated.status?.conditions).toEqual([
      {
        type: "PodScheduled",
        status: "False",
        reason: "SchedulingGated",
        message: "Scheduling is blocked due to non-empty scheduling gates",
        lastProbeTime: null,
        lastTransitionTime: null,
      },
    ]);
    expect((await create("free")).status?.conditions).toBeUndefined();
  });
});

describe("the bindings collection", () => {
  it("binds the Binding's own pod, as pods/{name}/binding does, and serves create only", async () => {
    const { client, create, binding } = await start();
    const { url } = running[0]!.http;
    await create("web");
    const bind = async (body: unknown) => {
      const response = await fetch(`${url}/api/v1/namespaces/default/bindings`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      return { code: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    expect(await bind(binding("web", "node-1"))).toEqual({
      code: 201,
      body: { kind: "Status", apiVersion: "v1", metadata: {}, status: "Success", code: 201 },
    });
    expect((await client.resource(pods, "default").get("web")).spec?.nodeName).toBe("node-1");
    const again = await bind(binding("web", "node-2"));
    expect([again.code, again.body.message]).toEqual([
      409,
      'Operation cannot be fulfilled on pods/binding "web": pod web is already assigned to node "node-1"',
    ]);
    const missing = await bind(binding("ghost", "node-1"));
    expect([missing.code, missing.body.message]).toEqual([404, 'pods "ghost" not found']);
    const listed = await fetch(`${url}/api/v1/namespaces/default/bindings`);
    expect(listed.status).toBe(405);
    const discovery = (await (await fetch(`${url}/api/v1`)).json()) as {
      resources: { name: string; verbs: string[]; kind: string; namespaced: boolean }[];
    };
    expect(discovery.resources.find((r) => r.name === "bindings")).toMatchObject({
      kind: "Binding",
      namespaced: true,
      verbs: ["create"],
    });
  });
});
