import { type Pod, pods } from "@reconcile/api";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";
import { isTrue } from "./parameters.js";
import type { PodLogOptions } from "./pod-connect.js";
import { type ListeningApiServer, listen } from "./server.js";

// Boolean query parameters as apimachinery's Convert_Slice_string_To_bool reads them: what the
// Python client (`watch=True`, `follow=False`) and others send must mean what it means upstream.

const running: { api: ApiServer; http: ListeningApiServer }[] = [];
afterEach(async () => {
  for (const { api, http } of running.splice(0)) {
    await http.close();
    await api.close();
  }
});

describe("isTrue", () => {
  it.each([
    [null, false],
    ["0", false],
    ["false", false],
    ["False", false],
    ["FALSE", false],
    ["true", true],
    ["True", true],
    ["1", true],
    ["yes", true],
    ["", true],
  ] as const)("reads %j as %s", (value, expected) => {
    expect(isTrue(value)).toBe(expected);
  });
});

describe("boolean query parameters over HTTP", () => {
  it("watch=True opens a watch, watch=False lists", async () => {
    const api = new ApiServer();
    const http = await listen(api);
    running.push({ api, http });
    const controller = new AbortController();
    const watch = await fetch(`${http.url}/api/v1/namespaces/default/pods?watch=True`, {
      signal: controller.signal,
    });
    expect(watch.status).toBe(200);
    expect(watch.headers.get("transfer-encoding")).toBe("chunked");
    await api
      .client()
      .resource(pods, "default")
      .create({
        metadata: { name: "p" },
        spec: { containers: [{ name: "c", image: "nginx" }] },
      } as Pod);
    const reader = watch.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(JSON.parse(first.split("\n")[0]!)).toMatchObject({
      type: "ADDED",
      object: { metadata: { name: "p" } },
    });
    controller.abort();
    const list = await fetch(`${http.url}/api/v1/namespaces/default/pods?watch=False`);
    expect(await list.json()).toMatchObject({ kind: "PodList", items: [{ metadata: { name: "p" } }] });
  });

  it("pods/log reads follow=False, previous=FALSE and timestamps=True as upstream does", async () => {
    const calls: PodLogOptions[] = [];
    const api = new ApiServer();
    const http = await listen(api, {
      kubeletConnection: {
        containerLogs(_node, _namespace, _pod, _container, options) {
          calls.push(options);
          return { ok: true, text: "hi\n", follow: undefined };
        },
      },
    });
    running.push({ api, http });
    await api
      .client()
      .resource(pods, "default")
      .create({
        metadata: { name: "web" },
        spec: { nodeName: "node-1", containers: [{ name: "web", image: "nginx" }] },
      } as Pod);
    const answer = await fetch(
      `${http.url}/api/v1/namespaces/default/pods/web/log?follow=False&previous=FALSE&timestamps=True`,
    );
    expect(answer.status).toBe(200);
    expect(await answer.text()).toBe("hi\n");
    expect(calls).toEqual([{ follow: false, previous: false, timestamps: true }]);
  });
});
