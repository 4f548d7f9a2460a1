import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ReconcileError } from "@reconcile/api";
import { afterEach, describe, expect, it } from "vitest";
import { createHttpClient, importClientNode, loadKubeConfig } from "./kube-config.js";

const config = `apiVersion: v1
kind: Config
clusters:
- {name: one, cluster: {server: "https://one.example:6443"}}
- {name: two, cluster: {server: "http://127.0.0.1:8001"}}
users: [{name: u, user: {token: t}}]
contexts:
- {name: first, context: {cluster: one, user: u, namespace: apps}}
- {name: second, context: {cluster: two, user: u}}
current-context: first
`;

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe("loadKubeConfig and createHttpClient", () => {
  it("reads the file KUBECONFIG names when given no path", async () => {
    const dir = await mkdtemp(join(tmpdir(), "kubeconfig-"));
    dirs.push(dir);
    const path = join(dir, "config");
    await writeFile(path, config);
    const previous = process.env.KUBECONFIG;
    process.env.KUBECONFIG = path;
    try {
      const client = await createHttpClient();
      expect([client.server, client.defaultNamespace]).toEqual(["https://one.example:6443", "apps"]);
      client.close();
    } finally {
      if (previous === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = previous;
    }
  });

  it("switches to the context asked for; its namespace defaults to default", async () => {
    const client = await createHttpClient({ yaml: config, context: "second" });
    expect([client.server, client.defaultNamespace]).toEqual(["http://127.0.0.1:8001", "default"]);
    client.close();
  });

  it("names the contexts there are when asked for one that is not", async () => {
    await expect(loadKubeConfig({ yaml: config, context: "third" })).rejects.toThrow(
      'the kubeconfig has no context "third" (it has first, second)',
    );
  });

  it("without @kubernetes/client-node installed, names the package to install", async () => {
    const notFound = Object.assign(
      new Error(
        "Cannot find package '@kubernetes/client-node' imported from /app/node_modules/@reconcile/client/dist/index.js",
      ),
      { code: "ERR_MODULE_NOT_FOUND" },
    );
    const error = await importClientNode(() => Promise.reject(notFound)).catch((e: unknown) => e);
    expect(ReconcileError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({
      code: "client.missing-peer-dependency",
      message:
        "loading a kubeconfig needs @kubernetes/client-node, an optional peer dependency of @reconcile/client that is not installed: run `npm install @kubernetes/client-node`",
      cause: notFound,
    });
  });

  it("passes on other failures to load it as they are", async () => {
    const broken = Object.assign(new Error("Cannot find package 'ws' imported from client-node"), {
      code: "ERR_MODULE_NOT_FOUND",
    });
    await expect(importClientNode(() => Promise.reject(broken))).rejects.toBe(broken);
  });
});
