// Static pods from a URL (the http source), served by a local HTTP server,
// on the embedded API server and a FakeClock.
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { type Pod, pods } from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import { FakeClock } from "@reconcile/clock";
import { afterEach, describe, expect, it } from "vitest";
import { Kubelet } from "./kubelet.js";
import { maxManifestBytes, readStaticPodsFromURL } from "./static-pod-url.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

/** A server that answers every GET with `reply` as it is at the time, and keeps the requests' headers. */
async function manifestServer(initial: { status: number; body: string }) {
  const state = { reply: initial, requests: [] as IncomingHttpHeaders[] };
  const server = createServer((request, response) => {
    state.requests.push(request.headers);
    response.writeHead(state.reply.status, { "content-type": "application/yaml" });
    response.end(state.reply.body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/manifests`;
  return { url, state };
}

const pod = (name: string) =>
  [
    "apiVersion: v1",
    "kind: Pod",
    "metadata:",
    `  name: ${name}`,
    "spec:",
    "  containers:",
    `  - {name: ${name}, image: "nginx:1.27"}`,
  ].join("\n");

const podList = (...names: string[]) =>
  JSON.stringify({
    apiVersion: "v1",
    kind: "PodList",
    items: names.map((name) => ({
      metadata: { name, namespace: "kube-system" },
      spec: { containers: [{ name, image: "nginx:1.27" }] },
    })),
  });

describe("static pods from a URL", () => {
  it("reads one pod or a PodList, YAML or JSON, and answers what it cannot use as upstream does", async () => {
    const { url, state } = await manifestServer({ status: 200, body: pod("web") });
    const one = await readStaticPodsFromURL({ url, nodeName: "node-1", headers: { "X-Token": ["a", "b"] } });
    expect(state.requests[0]?.["x-token"]).toBe("a, b");
    expect(one.kind).toBe("pods");
    const [web] = one.kind === "pods" ? one.pods : [];
    expect(web?.metadata).toMatchObject({
      name: "web-node-1",
      namespace: "default",
      annotations: { "kubernetes.io/config.source": "http" },
    });
    // Only a file's pods get the toleration of every NoExecute taint.
    expect(web?.spec?.tolerations).toBeUndefined();
    expect(web?.spec?.nodeName).toBe("node-1");
    expect(await readStaticPodsFromURL({ url, nodeName: "node-1", last: one.body })).toEqual({
      kind: "unchanged",
    });

    state.reply = { status: 200, body: podList("a", "b") };
    const list = await readStaticPodsFromURL({ url, nodeName: "node-1" });
    expect(list.kind === "pods" ? list.pods.map((p) => p.metadata?.name) : list).toEqual([
      "a-node-1",
      "b-node-1",
    ]);

    state.reply = { status: 200, body: "kind: Service\nmetadata: {name: x}" };
    expect(await readStaticPodsFromURL({ url, nodeName: "node-1" })).toMatchObject({
      kind: "error",
      message: `${url}: received 'kind: Service\nmetadata: {name: x}', but couldn't parse as single (invalid pod: kind "Service") or multiple pods (invalid pods List: kind "Service")`,
    });
    state.reply = { status: 200, body: "kind: Pod\nmetadata: {name: x}\nspec: {}" };
    expect(await readStaticPodsFromURL({ url, nodeName: "node-1" })).toMatchObject({
      kind: "error",
      message: "spec.containers: Required value",
    });
    state.reply = { status: 404, body: "no such manifest" };
    expect(await readStaticPodsFromURL({ url, nodeName: "node-1" })).toEqual({
      kind: "error",
      message: `${url}: 404 Not Found`,
    });
    // A port nothing listens on.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const nowhere = `http://127.0.0.1:${port}/none`;
    const refused = await readStaticPodsFromURL({ url: nowhere, nodeName: "node-1" });
    expect(refused.kind).toBe("error");
    expect(refused.kind === "error" ? refused.message : "").toMatch(
      new RegExp(`^http://127\\.0\\.0\\.1:${port}/none: fetch failed: .*ECONNREFUSED`),
    );
    expect(
      await readStaticPodsFromURL({ url, nodeName: "node-1", headers: { "bad header": ["x"] } }),
    ).toMatchObject({ kind: "error", message: expect.stringContaining("is an invalid header name") });
    state.reply = { status: 200, body: `# ${"x".repeat(maxManifestBytes)}` };
    expect(await readStaticPodsFromURL({ url, nodeName: "node-1" })).toEqual({
      kind: "error",
      message: `${url}: the read limit is reached`,
    });
    state.reply = { status: 200, body: "" };
    expect(await readStaticPodsFromURL({ url, nodeName: "node-1" })).toEqual({
      kind: "empty",
      message: `zero-length data received from ${url}`,
      body: "",
    });
  });

  it("runs what the URL serves, keeps it through a failed read, and stops what leaves it", async () => {
    const { url, state } = await manifestServer({ status: 200, body: podList("a", "b") });
    const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
    const server = new ApiServer({ clock });
    cleanups.push(() => server.close());
    const client = server.client();
    const kubelet = new Kubelet({ nodeName: "node-1", client, clock, random: () => 0, staticPodURL: url });
    const abort = new AbortController();
    const running = kubelet.run({ signal: abort.signal });
    cleanups.push(async () => {
      abort.abort();
      await running;
    });
    const names = () =>
      kubelet
        .getPods()
        .map((p) => p.metadata?.name)
        .sort();
    /** Moves the clock on by 100 ms (each read is real I/O, so this also yields to it). */
    const step = async () => {
      for (let i = 0; i < 20; i++) await clock.flush();
      await new Promise((resolve) => setImmediate(resolve));
      await clock.advance(100);
    };
    const until = async (done: () => boolean | Promise<boolean>, limitMs: number, what: string) => {
      for (let elapsed = 0; !(await done()); elapsed += 100) {
        if (elapsed > limitMs)
          throw new Error(`${what} not within ${limitMs} ms: pods ${JSON.stringify(names())}`);
        await step();
      }
    };
    const podsAre = (expected: string[]) => () => JSON.stringify(names()) === JSON.stringify(expected);
    await until(podsAre(["a-node-1", "b-node-1"]), 5_000, "both pods");
    const mirrors = client.resource(pods, "kube-system");
    await until(async () => (await mirrors.list()).items.length === 2, 5_000, "both mirror pods");
    const mirror = (await mirrors.get("a-node-1")) as Pod;
    expect(mirror.metadata?.annotations?.["kubernetes.io/config.source"]).toBe("http");

    // A failed read changes nothing; the next good one does.
    state.reply = { status: 500, body: "" };
    const reads = state.requests.length;
    // Two reads: the source reads one after the other, so the first one's answer has been taken.
    await until(() => state.requests.length > reads + 1, 45_000, "two reads");
    expect(names()).toEqual(["a-node-1", "b-node-1"]);

    state.reply = { status: 200, body: podList("b") };
    await until(podsAre(["b-node-1"]), 25_000, "pod a gone");
    state.reply = { status: 200, body: "" };
    await until(podsAre([]), 25_000, "every pod gone");
    abort.abort();
    await running;
  });
});
