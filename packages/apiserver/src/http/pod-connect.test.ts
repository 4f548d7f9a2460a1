import { type Pod, pods } from "@reconcile/api";
import { FakeClock } from "@reconcile/clock";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";
import type { KubeletConnection, PodLogOptions } from "./pod-connect.js";
import { type ListeningApiServer, listen } from "./server.js";

const running: { api: ApiServer; http: ListeningApiServer }[] = [];
afterEach(async () => {
  for (const { api, http } of running.splice(0)) {
    await http.close();
    await api.close();
  }
});

interface LogCall {
  nodeName: string;
  namespace: string;
  podName: string;
  container: string;
  options: PodLogOptions;
}

async function start(connection?: KubeletConnection) {
  const api = new ApiServer({ clock: new FakeClock(Date.parse("2026-01-01T00:00:00Z")) });
  const server = await listen(api, { kubeletConnection: connection });
  running.push({ api, http: server });
  const client = api.client();
  const create = (name: string, spec: Partial<Pod["spec"]> = {}) =>
    client.resource(pods, "default").create({
      metadata: { name, namespace: "default" },
      spec: { containers: [{ name: "web", image: "nginx" }], ...spec },
    });
  const get = async (path: string, method = "GET") => {
    const response = await fetch(server.url + path, { method });
    const text = await response.text();
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(text);
    } catch {}
    return { code: response.status, type: response.headers.get("content-type"), text, body };
  };
  return { create, get };
}

const base = "/api/v1/namespaces/default/pods";

describe("pods/log", () => {
  it("asks the pod's kubelet with the query's options and relays its text as text/plain", async () => {
    const calls: LogCall[] = [];
    const { create, get } = await start({
      containerLogs(nodeName, namespace, podName, container, options) {
        calls.push({ nodeName, namespace, podName, container, options });
        return { ok: true, text: "hello\n", follow: undefined };
      },
    });
    await create("web", { nodeName: "node-1" });
    const answer = await get(
      `${base}/web/log?container=web&previous=true&timestamps=1&tailLines=5&limitBytes=100`,
    );
    expect(answer).toMatchObject({ code: 200, type: "text/plain", text: "hello\n" });
    expect(calls).toEqual([
      {
        nodeName: "node-1",
        namespace: "default",
        podName: "web",
        container: "web",
        options: { previous: true, timestamps: true, tailLines: 5, limitBytes: 100 },
      },
    ]);
  });

  it("streams a followed log until the kubelet ends it", async () => {
    const { create, get } = await start({
      containerLogs: () => ({
        ok: true,
        text: "one\n",
        follow: (write, end) => {
          setTimeout(() => {
            write("two\n");
            end();
          }, 5);
          return () => {};
        },
      }),
    });
    await create("web", { nodeName: "node-1" });
    expect((await get(`${base}/web/log?follow=true`)).text).toBe("one\ntwo\n");
  });

  it("answers an empty 200 for a pod without a node, as kube-apiserver does", async () => {
    const { create, get } = await start();
    await create("web");
    expect(await get(`${base}/web/log`)).toMatchObject({ code: 200, text: "" });
  });

  it("relays the kubelet's 400 and 404 answers with their messages", async () => {
    const { create, get } = await start({
      containerLogs: (_node, _ns, _pod, container) =>
        container === "web"
          ? {
              ok: false,
              code: 400,
              message: 'container "web" in pod "web" is waiting to start: ContainerCreating',
            }
          : { ok: false, code: 404, message: `container "${container}" not found in pod "web"` },
    });
    await create("web", { nodeName: "node-1" });
    expect(await get(`${base}/web/log`)).toMatchObject({
      code: 400,
      body: {
        reason: "BadRequest",
        message: 'container "web" in pod "web" is waiting to start: ContainerCreating',
      },
    });
  });

  it("chooses the container as LogREST does, with its 400s", async () => {
    const { create, get } = await start();
    await create("two", {
      containers: [
        { name: "a", image: "nginx" },
        { name: "b", image: "nginx" },
      ],
      initContainers: [{ name: "init1", image: "busybox" }],
    });
    expect((await get(`${base}/two/log`)).body).toMatchObject({
      code: 400,
      message: "a container name must be specified for pod two, choose one of: [a b init1]",
    });
    expect((await get(`${base}/two/log?container=c`)).body).toMatchObject({
      code: 400,
      message: "container c is not valid for pod two",
    });
  });

  it.each([
    ["sinceSeconds=0", "sinceSeconds: Invalid value: 0: must be greater than 0"],
    ["tailLines=-1", "tailLines: Invalid value: -1: must be greater than or equal to 0"],
    ["limitBytes=0", "limitBytes: Invalid value: 0: must be greater than 0"],
    [
      "sinceSeconds=5&sinceTime=2026-01-01T00:00:00Z",
      "sinceSeconds: Invalid value: 5: at most one of `sinceTime` or `sinceSeconds` may be specified",
    ],
  ])("refuses %s with a 422 naming the field", async (query, message) => {
    const { create, get } = await start();
    await create("web", { nodeName: "node-1" });
    const answer = await get(`${base}/web/log?${query}`);
    expect(answer.code).toBe(422);
    expect(answer.body.message).toContain(message);
  });

  it("answers 404 for a pod that does not exist and 500 when no kubelet answers for the node", async () => {
    const { create, get } = await start({ containerLogs: () => undefined });
    expect((await get(`${base}/nope/log`)).body).toMatchObject({
      code: 404,
      message: 'pods "nope" not found',
    });
    await create("web", { nodeName: "node-9" });
    expect((await get(`${base}/web/log`)).body).toMatchObject({
      code: 500,
      message: expect.stringContaining('no kubelet answers for node "node-9"'),
    });
  });
});

describe("pods/exec, attach, portforward", () => {
  it.each([
    "exec",
    "attach",
    "portforward",
  ])("%s without a connection upgrade is a 400 asking for one", async (action) => {
    const { create, get } = await start();
    await create("web", { nodeName: "node-1" });
    await create("unbound");
    expect((await get(`${base}/web/${action}?command=ls`, "POST")).body).toMatchObject({
      code: 400,
      reason: "BadRequest",
      message: "Upgrade request required",
    });
    expect((await get(`${base}/unbound/${action}`)).body).toMatchObject({
      code: 400,
      message: "pod unbound does not have a host assigned",
    });
  });
});
