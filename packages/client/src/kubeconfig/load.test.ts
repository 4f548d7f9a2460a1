import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import type https from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeConfig as ClientNodeKubeConfig } from "@kubernetes/client-node";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createHttpClient } from "../http/kube-config.js";
import { fromKubeConfig, inClusterConfig, loadKubeConfig } from "./load.js";

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
  vi.useRealTimers();
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "kubeconfig-"));
  dirs.push(dir);
  return dir;
}

async function applied(kubeConfig: { applyToHTTPSOptions(o: https.RequestOptions): Promise<void> }) {
  const options: https.RequestOptions = {};
  await kubeConfig.applyToHTTPSOptions(options);
  return options;
}

const b64 = (text: string) => Buffer.from(text).toString("base64");

describe("loadKubeConfig: client-go's loading rules", () => {
  it("reads the file KUBECONFIG names when given no path", async () => {
    const dir = await tempDir();
    await writeFile(join(dir, "config"), config);
    const client = await createHttpClient({ env: { KUBECONFIG: join(dir, "config") } });
    expect([client.server, client.defaultNamespace]).toEqual(["https://one.example:6443", "apps"]);
    client.close();
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

  it("merges KUBECONFIG's files: the first to name an entry wins it, missing files are skipped", async () => {
    const dir = await tempDir();
    await writeFile(
      join(dir, "a"),
      `clusters: [{name: shared, cluster: {server: "https://from-a:6443"}}]
users: [{name: shared, user: {token: from-a}}]
contexts: [{name: a, context: {cluster: shared, user: shared}}]
`,
    );
    await writeFile(
      join(dir, "b"),
      `clusters:
- {name: shared, cluster: {server: "https://from-b:6443"}}
- {name: only-b, cluster: {server: "https://only-b:6443"}}
users: [{name: shared, user: {token: from-b}}]
contexts: [{name: b, context: {cluster: only-b, user: shared, namespace: nb}}]
current-context: b
`,
    );
    const kubeConfig = await loadKubeConfig({
      env: { KUBECONFIG: [join(dir, "missing"), join(dir, "a"), join(dir, "b"), join(dir, "a")].join(":") },
    });
    expect(kubeConfig.getCurrentContext()).toBe("b");
    expect(kubeConfig.getCurrentCluster()).toMatchObject({ name: "only-b", server: "https://only-b:6443" });
    expect((await applied(kubeConfig)).headers).toEqual({ Authorization: "Bearer from-a" });
    kubeConfig.setCurrentContext("a");
    expect(kubeConfig.getCurrentCluster()?.server).toBe("https://from-a:6443");
  });

  it("falls back to ~/.kube/config, then to the in-cluster configuration, then says what is missing", async () => {
    const home = await tempDir();
    await mkdir(join(home, ".kube"));
    await writeFile(join(home, ".kube", "config"), config);
    expect((await loadKubeConfig({ env: {}, home })).getCurrentContext()).toBe("first");

    const sa = await tempDir();
    await writeFile(join(sa, "token"), "sa-token\n");
    await writeFile(join(sa, "namespace"), "operators");
    const env = { KUBERNETES_SERVICE_HOST: "10.96.0.1", KUBERNETES_SERVICE_PORT: "443" };
    const inCluster = await loadKubeConfig({ env, home: sa, serviceAccountDir: sa });
    expect(inCluster.getCurrentCluster()?.server).toBe("https://10.96.0.1:443");
    expect(inCluster.getContextObject(inCluster.getCurrentContext())?.namespace).toBe("operators");

    await expect(loadKubeConfig({ env: {}, home: sa })).rejects.toThrow(
      "no kubeconfig: KUBECONFIG is not set, ~/.kube/config does not exist, and this is not a pod (KUBERNETES_SERVICE_HOST is not set)",
    );
  });

  it("resolves a file's relative paths against its directory", async () => {
    const dir = await tempDir();
    await mkdir(join(dir, "certs"));
    await writeFile(join(dir, "certs", "ca.crt"), "CA");
    await writeFile(join(dir, "certs", "client.crt"), "CERT");
    await writeFile(join(dir, "certs", "client.key"), "KEY");
    await writeFile(join(dir, "token"), "from-file\n");
    await writeFile(
      join(dir, "config"),
      `clusters: [{name: c, cluster: {server: "https://x:6443", certificate-authority: certs/ca.crt}}]
users: [{name: u, user: {client-certificate: certs/client.crt, client-key: certs/client.key, tokenFile: token, exec: {apiVersion: client.authentication.k8s.io/v1, command: ./bin/plugin, interactiveMode: Never}}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`,
    );
    const kubeConfig = await loadKubeConfig({ path: join(dir, "config") });
    expect(kubeConfig.getCurrentCluster()?.["certificate-authority"]).toBe(join(dir, "certs", "ca.crt"));
    expect(kubeConfig.getCurrentUser()).toMatchObject({
      "client-certificate": join(dir, "certs", "client.crt"),
      "client-key": join(dir, "certs", "client.key"),
      tokenFile: join(dir, "token"),
      exec: { command: join(dir, "bin", "plugin") },
    });
  });
});

describe("KubeConfig.applyToHTTPSOptions", () => {
  it("applies a token, the CA, tls-server-name, insecure-skip-tls-verify and impersonation", async () => {
    const kubeConfig = await loadKubeConfig({
      yaml: `clusters: [{name: c, cluster: {server: "https://x:6443", certificate-authority-data: ${b64("CA")}, tls-server-name: api.internal, insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: abc, as: jane, as-groups: [devs, ops]}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`,
    });
    const options = await applied(kubeConfig);
    expect(options.ca?.toString()).toBe("CA");
    expect(options).toMatchObject({
      servername: "api.internal",
      rejectUnauthorized: false,
      headers: {
        Authorization: "Bearer abc",
        "Impersonate-User": "jane",
        "Impersonate-Group": ["devs", "ops"],
      },
    });
  });

  it("uses basic auth for a username and password", async () => {
    const kubeConfig = await loadKubeConfig({
      yaml: `clusters: [{name: c, cluster: {server: "https://x"}}]
users: [{name: u, user: {username: admin, password: secret}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`,
    });
    expect((await applied(kubeConfig)).auth).toBe("admin:secret");
  });

  it("reads a token file again once a minute, so a rotated token is used", async () => {
    vi.useFakeTimers({ toFake: ["Date"], now: 1_000_000 });
    const sa = await tempDir();
    await writeFile(join(sa, "token"), "first\n");
    await writeFile(join(sa, "ca.crt"), "CA");
    const kubeConfig = inClusterConfig({
      env: { KUBERNETES_SERVICE_HOST: "fd00::1", KUBERNETES_SERVICE_PORT: "6443" },
      serviceAccountDir: sa,
    });
    expect(kubeConfig.getCurrentCluster()?.server).toBe("https://[fd00::1]:6443");
    expect((await applied(kubeConfig)).headers).toEqual({ Authorization: "Bearer first" });
    expect((await applied(kubeConfig)).ca?.toString()).toBe("CA");
    await writeFile(join(sa, "token"), "second\n");
    vi.setSystemTime(1_059_999);
    expect((await applied(kubeConfig)).headers).toEqual({ Authorization: "Bearer first" });
    vi.setSystemTime(1_060_000);
    expect((await applied(kubeConfig)).headers).toEqual({ Authorization: "Bearer second" });
  });

  it("refuses in-cluster configuration outside a pod with client-go's message", () => {
    expect(() => inClusterConfig({ env: {} })).toThrow(
      "unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined",
    );
  });

  it("names an auth-provider user as unsupported and says what to use instead", async () => {
    const kubeConfig = await loadKubeConfig({
      yaml: `clusters: [{name: c, cluster: {server: "https://x"}}]
users: [{name: old, user: {auth-provider: {name: oidc, config: {idp-issuer-url: "https://issuer"}}}}]
contexts: [{name: x, context: {cluster: c, user: old}}]
current-context: x
`,
    });
    await expect(applied(kubeConfig)).rejects.toThrow(
      'the kubeconfig\'s user "old" uses auth-provider "oidc", which is not supported (client-go dropped it too): use an exec credential plugin instead (kubelogin, gke-gcloud-auth-plugin, aws eks get-token)',
    );
  });

  it("reads the shapes kind, kubeadm and minikube write", async () => {
    const dir = await tempDir();
    await writeFile(join(dir, "ca.crt"), "MINIKUBE-CA");
    await writeFile(join(dir, "client.crt"), "MINIKUBE-CERT");
    await writeFile(join(dir, "client.key"), "MINIKUBE-KEY");
    // kind and kubeadm's admin.conf: everything inline.
    const kind = await loadKubeConfig({
      yaml: `apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: ${b64("KIND-CA")}
    server: https://127.0.0.1:38123
  name: kind-kind
contexts:
- context:
    cluster: kind-kind
    user: kind-kind
  name: kind-kind
current-context: kind-kind
kind: Config
preferences: {}
users:
- name: kind-kind
  user:
    client-certificate-data: ${b64("KIND-CERT")}
    client-key-data: ${b64("KIND-KEY")}
`,
    });
    const k = await applied(kind);
    expect([k.ca?.toString(), k.cert?.toString(), k.key?.toString()]).toEqual([
      "KIND-CA",
      "KIND-CERT",
      "KIND-KEY",
    ]);
    // minikube: files, and extensions on every entry.
    const minikube = await loadKubeConfig({
      yaml: `apiVersion: v1
clusters:
- cluster:
    certificate-authority: ${join(dir, "ca.crt")}
    extensions:
    - extension: {last-update: "Fri, 27 Nov 2026 10:00:00 UTC", provider: minikube.sigs.k8s.io, version: v1.34.0}
      name: cluster_info
    server: https://192.168.49.2:8443
  name: minikube
contexts:
- context:
    cluster: minikube
    extensions:
    - extension: {provider: minikube.sigs.k8s.io}
      name: context_info
    namespace: default
    user: minikube
  name: minikube
current-context: minikube
kind: Config
users:
- name: minikube
  user:
    client-certificate: ${join(dir, "client.crt")}
    client-key: ${join(dir, "client.key")}
`,
    });
    const m = await applied(minikube);
    expect([m.ca?.toString(), m.cert?.toString(), m.key?.toString()]).toEqual([
      "MINIKUBE-CA",
      "MINIKUBE-CERT",
      "MINIKUBE-KEY",
    ]);
  });

  it("takes @kubernetes/client-node's KubeConfig as input and applies it with this loader", async () => {
    const kc = new ClientNodeKubeConfig();
    kc.loadFromString(
      config.replace(
        "users: [{name: u, user: {token: t}}]",
        `users: [{name: u, user: {token: t, as: jane}}]`,
      ),
    );
    kc.setCurrentContext("second");
    const kubeConfig = fromKubeConfig(kc);
    expect(kubeConfig.getCurrentCluster()?.server).toBe("http://127.0.0.1:8001");
    expect((await applied(kubeConfig)).headers).toEqual({
      Authorization: "Bearer t",
      "Impersonate-User": "jane",
    });
  });

  it("says which file or document is broken", async () => {
    await expect(loadKubeConfig({ yaml: "clusters: {a: 1}" })).rejects.toThrow(
      "the kubeconfig: clusters must be a list",
    );
    await expect(loadKubeConfig({ yaml: "clusters: [{cluster: {}}]" })).rejects.toThrow(
      "the kubeconfig: clusters[0] has no name",
    );
    await expect(loadKubeConfig({ path: "/nonexistent/kubeconfig" })).rejects.toThrow(
      "cannot read the kubeconfig /nonexistent/kubeconfig: ENOENT",
    );
  });
});
