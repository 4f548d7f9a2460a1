import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ApiServer, type ApiServerOptions } from "../api-server.js";
import { type ListeningApiServer, type ListenOptions, listen } from "../http/server.js";

/** What one kubectl run ended with. */
export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** A server on a free loopback port and the real `kubectl` pointed at it. */
export interface KubectlCluster {
  api: ApiServer;
  client: ReturnType<ApiServer["client"]>;
  /** Runs kubectl with `args` (plus `--request-timeout=20s`), writing `input` (if any) to its stdin. */
  kubectl(args: string[], input?: string): Promise<KubectlResult>;
  /**
   * Starts a long-running kubectl (`get -w`, `logs -f`) and collects its
   * standard output; it is killed when the cluster closes.
   */
  background(args: string[]): { readonly stdout: string };
  /** Writes a file in the cluster's temporary home and returns its path (for `kubectl apply -f`). */
  file(name: string, content: string): Promise<string>;
  /** The kubeconfig kubectl uses. */
  kubeconfig: string;
  /** The server's URL (`https://127.0.0.1:<port>` with TLS). */
  url: string;
  /** The listener (its kubeconfigs, client certificates). */
  server: ListeningApiServer;
  /** Runs `cleanup` when the cluster closes, before the server stops (a controller's shutdown). */
  defer(cleanup: () => Promise<void> | void): void;
}

const cleanups: (() => Promise<void> | void)[] = [];

/**
 * Starts an {@link ApiServer} with `options`, serves it on 127.0.0.1 and
 * writes a kubeconfig for the real `kubectl` (which must be on the PATH), in
 * a temporary home of its own. {@link closeKubectlClusters} closes every
 * cluster made since its last call; call it after each test. `serve`
 * configures the listener (`{ tls: true, token }` for a bearer token, which
 * kubectl sends only over HTTPS).
 */
export async function kubectlCluster(
  options: ApiServerOptions = {},
  serve: ListenOptions = {},
): Promise<KubectlCluster> {
  const api = new ApiServer(options);
  const server = await listen(api, serve);
  const home = await mkdtemp(join(tmpdir(), "reconcile-kubectl-"));
  const kubeconfig = join(home, "kubeconfig");
  await writeFile(kubeconfig, server.kubeconfig());
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, KUBECONFIG: kubeconfig };
  const children: ChildProcess[] = [];
  cleanups.push(async () => {
    for (const child of children) child.kill();
    await server.close();
    await api.close();
    await rm(home, { recursive: true, force: true });
  });
  const kubectl = (args: string[], input?: string): Promise<KubectlResult> =>
    new Promise((resolve) => {
      const child = execFile(
        "kubectl",
        ["--request-timeout=20s", ...args],
        { env, timeout: 30_000 },
        (error, stdout, stderr) => {
          const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
          resolve({ code, stdout, stderr });
        },
      );
      child.stdin?.end(input);
    });
  const background = (args: string[]) => {
    const child = spawn("kubectl", args, { env });
    children.push(child);
    let stdout = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    return {
      get stdout() {
        return stdout;
      },
    };
  };
  const file = async (name: string, content: string) => {
    const path = join(home, name);
    await writeFile(path, content);
    return path;
  };
  const defer = (cleanup: () => Promise<void> | void) => {
    cleanups.push(cleanup);
  };
  return { api, client: api.client(), kubectl, background, file, kubeconfig, url: server.url, server, defer };
}

/** Closes every cluster made since the last call, newest first (an `afterEach`). */
export async function closeKubectlClusters(): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
}
