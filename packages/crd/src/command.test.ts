import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { customResourceDefinitions } from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import { afterEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { runCrdCommand } from "./command.js";
import { defineCustomResource } from "./define.js";
import { k } from "./schema.js";

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function run(args: string[], stdin?: string) {
  let stdout = "";
  let stderr = "";
  const code = await runCrdCommand(args, {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    stdin: stdin === undefined ? undefined : () => stdin,
  });
  return { code, stdout, stderr };
}

const website = defineCustomResource({
  group: "example.com",
  kind: "Website",
  shortNames: ["ws"],
  version: {
    name: "v1",
    spec: k.Object({
      html: k.String({ description: "The page served at /." }),
      replicas: k.Optional(k.Integer({ default: 2 })),
      port: k.Optional(k.IntOrString()),
      tier: k.Optional(k.Enum(["free", "paid"])),
      headers: k.Optional(k.Record(k.String(), k.String())),
      "dns-name": k.Optional(k.String()),
    }),
    status: k.Object({ ready: k.Optional(k.Boolean()) }),
  },
});

describe("reconcile-crd", () => {
  it("types: TypeScript and a descriptor for every served version of the CRDs read", async () => {
    const { code, stdout } = await run(
      ["types", "-"],
      `# from kubectl get crd -o yaml\n---\n${JSON.stringify(website.crd)}\n`,
    );
    expect(code).toBe(0);
    expect(stdout).toBe(`// Generated from CustomResourceDefinitions by reconcile-crd. Do not edit.
import { defineResource, type KubeObject } from "@reconcile/api";

export interface Website extends KubeObject {
  spec: {
    /** The page served at /. */
    html: string;
    replicas?: number;
    port?: number | string;
    tier?: "free" | "paid";
    headers?: { [key: string]: string };
    "dns-name"?: string;
  };
  status?: {
    ready?: boolean;
  };
}

export const websites = defineResource<Website>({
  group: "example.com",
  version: "v1",
  kind: "Website",
  plural: "websites",
  singular: "website",
  namespaced: true,
  shortNames: ["ws"],
  subresources: ["status"],
});
`);
  });

  it("builders: the schemas as k code, from the same sources as types", async () => {
    const { code, stdout } = await run(["builders", "-"], JSON.stringify(website.crd));
    expect(code).toBe(0);
    expect(stdout).toContain('import { k, type Static } from "@reconcile/crd";');
    expect(stdout).toContain("export const WebsiteV1Schema = k.Object({\n  spec: k.Object({");
    expect(stdout).toContain("export type WebsiteV1 = Static<typeof WebsiteV1Schema>;");
  });

  it("emit: the CRDs a module exports, as YAML documents or JSON", async () => {
    const dir = await mkdtemp(join(tmpdir(), "reconcile-crd-"));
    dirs.push(dir);
    const module = join(dir, "kinds.mjs");
    await writeFile(
      module,
      `export const website = ${JSON.stringify({ crd: website.crd, resource: website.resource })};\n`,
    );
    const yaml = await run(["emit", module]);
    expect(yaml.code).toBe(0);
    expect(parse(yaml.stdout)).toEqual(website.crd);
    const json = await run(["emit", module, "--format", "json"]);
    expect(JSON.parse(json.stdout)).toEqual(website.crd);
  });

  it("types --cluster: the CRDs of a kubeconfig's cluster, all or those named", async () => {
    const server = new ApiServer({ customResourceDefinitions: true });
    try {
      await server
        .client()
        .resource(customResourceDefinitions)
        .create(website.crd as never);
      const http = await server.listen();
      const dir = await mkdtemp(join(tmpdir(), "reconcile-crd-"));
      dirs.push(dir);
      await writeFile(join(dir, "kubeconfig"), http.kubeconfig());
      const named = await run([
        "types",
        "--cluster",
        "--kubeconfig",
        join(dir, "kubeconfig"),
        "--name",
        "websites.example.com",
      ]);
      expect(named.code).toBe(0);
      expect(named.stdout).toContain("export interface Website extends KubeObject {");
      const missing = await run([
        "types",
        "--cluster",
        "--kubeconfig",
        join(dir, "kubeconfig"),
        "--name",
        "nope.example.com",
      ]);
      expect(missing).toMatchObject({
        code: 1,
        stderr: "reconcile-crd: the cluster has no CustomResourceDefinition nope.example.com\n",
      });
    } finally {
      await server.close();
    }
  });

  it("says what is wrong with its input", async () => {
    expect(await run(["types", "-"], "kind: ConfigMap\n")).toMatchObject({
      code: 1,
      stderr: "reconcile-crd: standard input holds no CustomResourceDefinition\n",
    });
    const usage = await run(["emit"]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/^usage:\n {2}reconcile-crd emit <module>/);
  });
});
