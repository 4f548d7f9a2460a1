import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ApiServer, type ApiServerOptions } from "./api-server.js";
import { listen } from "./http/server.js";

// A server and the real kubectl (v1.32, on the PATH) pointed at it, for end-to-end tests.

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

const cleanups: (() => Promise<void>)[] = [];

/** Closes every cluster made since the last call (an `afterEach`). */
export async function closeKubectlClusters(): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
}

export async function kubectlCluster(options: ApiServerOptions = {}) {
  const api = new ApiServer(options);
  const server = await listen(api);
  const home = await mkdtemp(join(tmpdir(), "reconcile-kubectl-"));
  const kubeconfig = join(home, "kubeconfig");
  await writeFile(kubeconfig, server.kubeconfig());
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, KUBECONFIG: kubeconfig };
  cleanups.push(async () => {
    await server.close();
    await api.close();
    await rm(home, { recursive: true, force: true });
  });
  /** Runs kubectl with `args`, writing `input` (if any) to its stdin. */
  const kubectl = (args: string[], input?: string): Promise<Result> =>
    new Promise((resolve) => {
      const child = execFile(
        "kubectl",
        [...args, "--request-timeout=20s"],
        { env, timeout: 30_000 },
        (error, stdout, stderr) => {
          const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
          resolve({ code, stdout, stderr });
        },
      );
      if (input !== undefined) child.stdin?.end(input);
    });
  const file = async (name: string, content: string) => {
    const path = join(home, name);
    await writeFile(path, content);
    return path;
  };
  return { api, client: api.client(), kubectl, file };
}
