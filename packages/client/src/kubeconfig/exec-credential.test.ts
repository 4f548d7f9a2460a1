import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import type https from "node:https";
import { type AddressInfo, connect, createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { configMaps, isUnauthorized } from "@reconcile/api";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { HttpClient } from "../http/http-client.js";
import { parseCredential } from "./exec-credential.js";
import { loadKubeConfig } from "./load.js";

// A stand-in for aws, gke-gcloud-auth-plugin and kubelogin: it counts its runs
// in $RUNS, and its token names its arguments, the run, the cluster it was told
// of and whether it may be interactive. $EXPIRES sets expirationTimestamp.
const plugin = `#!/usr/bin/env node
const fs = require("node:fs");
const info = JSON.parse(process.env.KUBERNETES_EXEC_INFO);
const runs = Number(fs.existsSync(process.env.RUNS) ? fs.readFileSync(process.env.RUNS, "utf8") : 0) + 1;
fs.writeFileSync(process.env.RUNS, String(runs));
if (process.env.FAIL) process.exit(3);
const status = { token: [process.argv.slice(2).join(" "), runs, info.spec.cluster?.server ?? "-", info.spec.interactive].join("|") };
if (process.env.EXPIRES) status.expirationTimestamp = process.env.EXPIRES;
process.stdout.write(JSON.stringify({ apiVersion: info.apiVersion, kind: "ExecCredential", status }));
`;

let dir: string;
const previousPath = process.env.PATH;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "exec-plugin-"));
  for (const name of ["aws", "gke-gcloud-auth-plugin", "kubelogin"]) {
    await writeFile(join(dir, name), plugin);
    await chmod(join(dir, name), 0o755);
  }
  process.env.PATH = `${dir}:${previousPath}`;
});
afterAll(async () => {
  process.env.PATH = previousPath;
  await rm(dir, { recursive: true, force: true });
});

let runsFile = 0;
function kubeconfig(exec: string, server = "https://eks.example:443"): { yaml: string; runs: string } {
  const runs = join(dir, `runs-${++runsFile}`);
  return {
    runs,
    yaml: `clusters: [{name: c, cluster: {server: "${server}", certificate-authority-data: ${Buffer.from("CA").toString("base64")}}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
users:
- name: u
  user:
    exec:
${exec
  .trim()
  .split("\n")
  .map((line) => `      ${line}`)
  .join("\n")}
      env: [{name: RUNS, value: "${runs}"}]
`,
  };
}

async function authorization(kubeConfig: { applyToHTTPSOptions(o: https.RequestOptions): Promise<void> }) {
  const options: https.RequestOptions = {};
  await kubeConfig.applyToHTTPSOptions(options);
  return (options.headers as Record<string, string>).Authorization;
}

const quiet = { stdinIsTerminal: false, stderr: "ignore" as const };

describe("exec credential plugins", () => {
  it("runs EKS's aws eks get-token once and keeps its token until it expires", async () => {
    const { yaml, runs } = kubeconfig(`apiVersion: client.authentication.k8s.io/v1beta1
command: aws
args: [--region, eu-west-1, eks, get-token, --cluster-name, prod]`);
    let now = Date.parse("2026-11-28T10:00:00Z");
    const kubeConfig = await loadKubeConfig({ yaml, exec: { ...quiet, now: () => now } });
    process.env.EXPIRES = "2026-11-28T10:14:00Z";
    try {
      const [a, b] = await Promise.all([authorization(kubeConfig), authorization(kubeConfig)]);
      expect(a).toBe("Bearer --region eu-west-1 eks get-token --cluster-name prod|1|-|false");
      expect(b).toBe(a);
      now = Date.parse("2026-11-28T10:13:59Z");
      expect(await authorization(kubeConfig)).toBe(a);
      now = Date.parse("2026-11-28T10:14:00Z");
      expect(await authorization(kubeConfig)).toMatch(/\|2\|/);
      expect(await readFile(runs, "utf8")).toBe("2");
    } finally {
      delete process.env.EXPIRES;
    }
  });

  it("tells GKE's plugin the cluster when provideClusterInfo is set, and shows its installHint when missing", async () => {
    const gke = kubeconfig(
      `apiVersion: client.authentication.k8s.io/v1beta1
command: gke-gcloud-auth-plugin
provideClusterInfo: true
interactiveMode: IfAvailable
installHint: Install gke-gcloud-auth-plugin for use with kubectl by following https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-access-for-kubectl#install_plugin`,
      "https://34.1.2.3",
    );
    const kubeConfig = await loadKubeConfig({ yaml: gke.yaml, exec: { ...quiet, stdinIsTerminal: true } });
    expect(await authorization(kubeConfig)).toBe("Bearer |1|https://34.1.2.3|true");

    const missing = await loadKubeConfig({
      yaml: gke.yaml.replace("command: gke-gcloud-auth-plugin", "command: gke-gcloud-auth-plugin-absent"),
      exec: quiet,
    });
    await expect(authorization(missing)).rejects.toThrow(
      "exec: executable gke-gcloud-auth-plugin-absent not found\n\nInstall gke-gcloud-auth-plugin for use with kubectl by following https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-access-for-kubectl#install_plugin",
    );
  });

  it("runs AKS's kubelogin under v1, never interactive when interactiveMode is Never", async () => {
    const { yaml } = kubeconfig(`apiVersion: client.authentication.k8s.io/v1
command: kubelogin
args: [get-token, --login, azurecli, --server-id, 6dae42f8-4368-4678-94ff-3960e28e3630]
interactiveMode: Never`);
    const kubeConfig = await loadKubeConfig({ yaml, exec: { ...quiet, stdinIsTerminal: true } });
    expect(await authorization(kubeConfig)).toBe(
      "Bearer get-token --login azurecli --server-id 6dae42f8-4368-4678-94ff-3960e28e3630|1|-|false",
    );
  });

  it("fails with client-go's messages for a failed plugin, Always without a terminal, and a wrong apiVersion", async () => {
    const failing = kubeconfig(`apiVersion: client.authentication.k8s.io/v1
command: aws
interactiveMode: Never`);
    // The plugin inherits this process's environment.
    process.env.FAIL = "1";
    try {
      await expect(authorization(await loadKubeConfig({ yaml: failing.yaml, exec: quiet }))).rejects.toThrow(
        "exec: executable aws failed with exit code 3",
      );
    } finally {
      delete process.env.FAIL;
    }
    const always = kubeconfig(`apiVersion: client.authentication.k8s.io/v1
command: aws
interactiveMode: Always`);
    await expect(authorization(await loadKubeConfig({ yaml: always.yaml, exec: quiet }))).rejects.toThrow(
      "exec plugin cannot support interactive mode: standard input is not a terminal",
    );
    const alpha = kubeconfig(`apiVersion: client.authentication.k8s.io/v1alpha1
command: aws`);
    await expect(authorization(await loadKubeConfig({ yaml: alpha.yaml, exec: quiet }))).rejects.toThrow(
      'exec plugin: invalid apiVersion "client.authentication.k8s.io/v1alpha1"',
    );
  });

  it("checks what the plugin printed", () => {
    const v1 = "client.authentication.k8s.io/v1";
    const out = (status: unknown, apiVersion = v1) =>
      JSON.stringify({ kind: "ExecCredential", apiVersion, status });
    expect(() => parseCredential(out({ token: "t" }, "client.authentication.k8s.io/v1beta1"), v1)).toThrow(
      "exec plugin is configured to use API version client.authentication.k8s.io/v1, plugin returned version client.authentication.k8s.io/v1beta1",
    );
    expect(() => parseCredential(out(undefined), v1)).toThrow("exec plugin didn't return a status field");
    expect(() => parseCredential(out({}), v1)).toThrow("exec plugin didn't return a token or cert/key pair");
    expect(() => parseCredential(out({ clientCertificateData: "c" }), v1)).toThrow(
      "exec plugin returned only certificate or key, not both",
    );
    expect(parseCredential(out({ clientCertificateData: "c", clientKeyData: "k" }), v1)).toEqual({
      token: undefined,
      clientCertificateData: "c",
      clientKeyData: "k",
      expiresAt: undefined,
    });
  });

  it("asks the plugin again after the server answers 401", async () => {
    const tokens: string[] = [];
    const server = http.createServer((req, res) => {
      tokens.push(String(req.headers.authorization));
      const ok = tokens.length > 1;
      res.writeHead(ok ? 200 : 401, { "content-type": "application/json" });
      res.end(
        JSON.stringify(
          ok
            ? { metadata: { name: "a" } }
            : { kind: "Status", apiVersion: "v1", status: "Failure", reason: "Unauthorized", code: 401 },
        ),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const { yaml } = kubeconfig(
        `apiVersion: client.authentication.k8s.io/v1
command: aws
interactiveMode: Never`,
        url,
      );
      const client = new HttpClient({
        kubeConfig: await loadKubeConfig({ yaml, exec: quiet }),
        maxRetries: 0,
      });
      const first = await client
        .resource(configMaps, "default")
        .get("a")
        .catch((e: unknown) => e);
      expect(isUnauthorized(first)).toBe(true);
      expect((await client.resource(configMaps, "default").get("a")).metadata?.name).toBe("a");
      expect(tokens).toEqual(["Bearer |1|-|false", "Bearer |2|-|false"]);
      client.close();
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe("proxy-url", () => {
  let target: http.Server;
  let proxy: Server;
  const connects: string[] = [];
  afterEach(async () => {
    target.closeAllConnections();
    await new Promise((resolve) => target.close(resolve));
    await new Promise((resolve) => proxy.close(resolve));
  });

  it("reaches the server through an HTTP CONNECT proxy, with the URL's credentials", async () => {
    target = http.createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ metadata: { name: "through-proxy" } }));
    });
    await new Promise<void>((resolve) => target.listen(0, "127.0.0.1", resolve));
    proxy = createServer((socket) => {
      socket.once("data", (head) => {
        const [requestLine, ...lines] = head.toString("latin1").split("\r\n");
        const auth = lines.find((line) => line.toLowerCase().startsWith("proxy-authorization:")) ?? "";
        connects.push(`${requestLine} ${auth}`);
        const [, hostPort] = (requestLine ?? "").split(" ");
        const [host, port] = (hostPort ?? "").split(":");
        const upstream = connect(Number(port), host, () => {
          socket.write("HTTP/1.1 200 Connection established\r\n\r\n");
          socket.pipe(upstream).pipe(socket);
        });
        upstream.on("error", () => socket.destroy());
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    const targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
    const proxyUrl = `http://user:p%40ss@127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    const kubeConfig = await loadKubeConfig({
      yaml: `clusters: [{name: c, cluster: {server: "${targetUrl}", proxy-url: "${proxyUrl}"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`,
    });
    const client = new HttpClient({ kubeConfig });
    expect((await client.resource(configMaps, "default").get("a")).metadata?.name).toBe("through-proxy");
    client.close();
    expect(connects).toEqual([
      `CONNECT ${targetUrl.slice(7)} HTTP/1.1 Proxy-Authorization: Basic ${Buffer.from("user:p@ss").toString("base64")}`,
    ]);
  });
});
