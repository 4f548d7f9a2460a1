// End to end: the real kubectl (on the PATH) against the embedded API server
// over HTTP, with two simulated nodes running pods. kubectl sees nodes, pod
// IPs and nodes, the kubelet's events and container logs as on a cluster.
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Pod, pods } from "@reconcile/api";
import { ApiServer, listen } from "@reconcile/apiserver";
import { FakeClock } from "@reconcile/clock";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NodeSimulator } from "./node-simulator.js";

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

let kubectl: (args: string[]) => Promise<Result>;
let stop: () => Promise<void>;

beforeAll(async () => {
  // Cluster time is a FakeClock moved by the setup below; kubectl runs in real time against it.
  const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
  const api = new ApiServer({ clock });
  const client = api.client();
  const nodes = new NodeSimulator({ client, nodes: 2, clock, random: () => 0 });
  const abort = new AbortController();
  const running = nodes.run({ signal: abort.signal });
  const server = await listen(api, { kubeletConnection: nodes.kubeletConnection() });
  const home = await mkdtemp(join(tmpdir(), "reconcile-kubelet-kubectl-"));
  const kubeconfig = join(home, "kubeconfig");
  await writeFile(kubeconfig, server.kubeconfig());
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, KUBECONFIG: kubeconfig };
  kubectl = (args) =>
    new Promise((resolve) => {
      execFile(
        "kubectl",
        ["--request-timeout=20s", ...args],
        { env, timeout: 30_000 },
        (error, stdout, stderr) => {
          resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr });
        },
      );
    });
  stop = async () => {
    abort.abort();
    await running;
    await server.close();
    await api.close();
    await rm(home, { recursive: true, force: true });
  };
  const create = (name: string, nodeName: string, annotations: Record<string, string> = {}) =>
    client.resource(pods, "default").create({
      metadata: { name, namespace: "default", annotations },
      spec: { nodeName, containers: [{ name: "web", image: "nginx:1.27" }] },
    } satisfies Pod);
  await create("web-a", "node-1", { "sim.reconcile.dev/log": "listening on :80\nready" });
  await create("web-b", "node-2");
  await create("crash", "node-2", {
    "sim.reconcile.dev/exit-after": "0",
    "sim.reconcile.dev/exit-code": "1",
    "sim.reconcile.dev/log": "boom",
  });
  // Move cluster time until both web pods run and the crashing one has restarted.
  for (let i = 0; i < 100; i++) {
    await clock.advance(100);
    for (let j = 0; j < 20; j++) await clock.flush();
    const list = await client.resource(pods, "default").list();
    const byName = new Map(list.items.map((p) => [p.metadata?.name, p]));
    const running = ["web-a", "web-b"].every((n) => byName.get(n)?.status?.phase === "Running");
    const restarted = (byName.get("crash")?.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1;
    if (running && restarted) break;
  }
}, 30_000);

afterAll(async () => {
  await stop?.();
});

describe("kubectl against simulated nodes", () => {
  it("get nodes -o wide lists both nodes Ready with their IPs, versions and runtime", async () => {
    const { stdout, code } = await kubectl(["get", "nodes", "-o", "wide", "--no-headers"]);
    expect(code).toBe(0);
    const rows = stdout
      .trim()
      .split("\n")
      .map((line) => line.split(/\s{2,}/));
    expect(rows.map((r) => [r[0], r[1], r[2], r[4], r[5], r[9]])).toEqual([
      ["node-1", "Ready", "<none>", "v1.32.0", "10.0.0.2", "containerd://1.7.13-sim"],
      ["node-2", "Ready", "<none>", "v1.32.0", "10.0.0.3", "containerd://1.7.13-sim"],
    ]);
  });

  it("get pods -o wide shows each pod's IP from its node's pod CIDR and its node", async () => {
    const { stdout } = await kubectl(["get", "pods", "web-a", "web-b", "-o", "wide", "--no-headers"]);
    const rows = stdout
      .trim()
      .split("\n")
      .map((line) => line.split(/\s+/));
    expect(rows.map((r) => [r[0], r[1], r[2], r[5], r[6]])).toEqual([
      ["web-a", "1/1", "Running", "10.244.0.2", "node-1"],
      ["web-b", "1/1", "Running", "10.244.1.2", "node-2"],
    ]);
  });

  it("describe pod lists the kubelet's events", async () => {
    const { stdout } = await kubectl(["describe", "pod", "web-a"]);
    const events = stdout.slice(stdout.indexOf("Events:"));
    expect(events).toMatch(/Normal\s+Pulling\s+\S+\s+kubelet\s+Pulling image "nginx:1.27"/);
    expect(events).toMatch(/Normal\s+Pulled\s+\S+\s+kubelet\s+Successfully pulled image "nginx:1.27"/);
    expect(events).toMatch(/Normal\s+Created\s+\S+\s+kubelet\s+Created container web/);
    expect(events).toMatch(/Normal\s+Started\s+\S+\s+kubelet\s+Started container web/);
    expect(stdout).toMatch(/Node:\s+node-1\/10\.0\.0\.2/);
    expect(stdout).toMatch(/IP:\s+10\.244\.0\.2/);
  });

  it("logs prints the container's output; --previous the crashed instance's", async () => {
    expect(await kubectl(["logs", "web-a"])).toMatchObject({ code: 0, stdout: "listening on :80\nready\n" });
    expect(await kubectl(["logs", "web-a", "--tail=1"])).toMatchObject({ stdout: "ready\n" });
    expect((await kubectl(["logs", "crash", "--previous"])).stdout).toBe("boom\nexiting with code 1\n");
  });

  it("exec runs a command in the container over WebSocket: output, exit code, stdin, and clear refusals", async () => {
    expect(await kubectl(["exec", "web-a", "--", "ls", "/"])).toMatchObject({
      code: 0,
      stdout: "bin\ndev\netc\nhome\nproc\nroot\nsys\ntmp\nusr\nvar\n",
    });
    expect(await kubectl(["exec", "web-a", "--", "cat", "/etc/hostname"])).toMatchObject({
      stdout: "web-a\n",
    });
    const failed = await kubectl(["exec", "web-a", "--", "sh", "-c", "echo out; echo err >&2; exit 3"]);
    expect(failed).toEqual({
      code: 3,
      stdout: "out\n",
      stderr: "err\ncommand terminated with exit code 3\n",
    });
    const missing = await kubectl(["exec", "web-a", "--", "nosuch"]);
    expect(missing).toEqual({
      code: 127,
      stdout: "",
      stderr: "sh: nosuch: not found\ncommand terminated with exit code 127\n",
    });
    const wrong = await kubectl(["exec", "web-a", "-c", "nope", "--", "true"]);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toBe("Error from server (BadRequest): container nope is not valid for pod web-a\n");
  });
});
