// The kubelet server's answers (nodes/{name}/proxy/…) on a simulated node, on a FakeClock.
import { type Pod, pods } from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import { FakeClock } from "@reconcile/clock";
import { afterEach, describe, expect, it } from "vitest";
import { goFloat } from "./kubelet-server.js";
import { NodeSimulator } from "./node-simulator.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function advance(clock: FakeClock, ms: number): Promise<void> {
  for (let done = 0; done < ms; done += 100) {
    await clock.advance(Math.min(100, ms - done));
    for (let i = 0; i < 20; i++) await clock.flush();
  }
}

/** One node running `web` (two containers, 250m and 100m, 64Mi and 32Mi), 10 s after it started. */
async function start() {
  const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
  const server = new ApiServer({ clock });
  const client = server.client();
  const simulator = new NodeSimulator({ client, nodes: 1, clock, random: () => 0 });
  const abort = new AbortController();
  const running = simulator.run({ signal: abort.signal });
  cleanups.push(async () => {
    abort.abort();
    await running;
    await server.close();
  });
  const pod: Pod = {
    metadata: {
      name: "web",
      namespace: "default",
      annotations: {
        "sim.reconcile.dev/cpu-usage.app": "250m",
        "sim.reconcile.dev/cpu-usage.side": "100m",
        "sim.reconcile.dev/memory-usage.app": "64Mi",
        "sim.reconcile.dev/memory-usage.side": "32Mi",
      },
    },
    spec: {
      nodeName: "node-1",
      containers: [
        { name: "app", image: "nginx:1.27" },
        { name: "side", image: "busybox", command: ["sleep", "3600"] },
      ],
    },
  };
  await client.resource(pods, "default").create(pod);
  await advance(clock, 10_000);
  const ask = (path: string, method = "GET") =>
    simulator.kubeletConnection().nodeProxy("node-1", method, path)!;
  return { clock, ask, simulator, client };
}

describe("the kubelet server", () => {
  it("answers /healthz, /pods and /configz, and Go's 404 for anything else", async () => {
    const { ask } = await start();
    expect(ask("/healthz")).toMatchObject({ status: 200, body: "ok" });
    const listed = JSON.parse(ask("/pods").body);
    expect([listed.kind, listed.items.map((p: Pod) => p.metadata?.name)]).toEqual(["PodList", ["web"]]);
    const config = JSON.parse(ask("/configz").body).kubeletconfig;
    expect([config.kind, config.syncFrequency, config.maxPods, config.port]).toEqual([
      "KubeletConfiguration",
      "1m0s",
      110,
      10250,
    ]);
    expect(ask("/spec/")).toEqual({
      status: 404,
      headers: { "Content-Type": "text/plain; charset=utf-8", "X-Content-Type-Options": "nosniff" },
      body: "404 page not found\n",
    });
    expect(ask("/healthz", "POST").status).toBe(405);
  });

  it("reports the node's and its pods' usage in the Summary API", async () => {
    const { ask } = await start();
    const summary = JSON.parse(ask("/stats/summary").body);
    expect(summary.node.nodeName).toBe("node-1");
    const web = summary.pods[0];
    expect(web.podRef.name).toBe("web");
    expect(
      web.containers.map((c: { name: string; cpu: { usageNanoCores: number } }) => [
        c.name,
        c.cpu.usageNanoCores,
      ]),
    ).toEqual([
      ["app", 250_000_000],
      ["side", 100_000_000],
    ]);
    expect([web.cpu.usageNanoCores, web.memory.workingSetBytes]).toEqual([350_000_000, 96 * 1024 * 1024]);
    // The node: its own 50m and 256Mi, and the pod's.
    expect([summary.node.cpu.usageNanoCores, summary.node.memory.workingSetBytes]).toEqual([
      400_000_000,
      (256 + 96) * 1024 * 1024,
    ]);
    const started = Date.parse(web.startTime);
    const seconds = (Date.parse(web.cpu.time) - started) / 1000;
    expect(web.cpu.usageCoreNanoSeconds).toBe(Math.round(350_000_000 * seconds));
  });

  it("writes the resource metrics metrics-server scrapes, in Prometheus' text format", async () => {
    const { ask } = await start();
    const answer = ask("/metrics/resource");
    expect(answer.headers["Content-Type"]).toBe("text/plain; version=0.0.4; charset=utf-8");
    const samples = answer.body.split("\n").filter((line) => line !== "" && !line.startsWith("#"));
    const value = (name: string) => samples.find((line) => line.startsWith(name))?.split(" ")[1];
    expect(value('container_memory_working_set_bytes{container="app",namespace="default",pod="web"}')).toBe(
      "6.7108864e+07",
    );
    expect(value('pod_memory_working_set_bytes{namespace="default",pod="web"}')).toBe("1.00663296e+08");
    expect(value("resource_scrape_error")).toBe("0");
    expect(
      answer.body
        .split("\n")
        .filter((line) => line.startsWith("# TYPE"))
        .map((l) => l.split(" ")[2]),
    ).toEqual([
      "container_cpu_usage_seconds_total",
      "container_memory_working_set_bytes",
      "container_start_time_seconds",
      "node_cpu_usage_seconds_total",
      "node_memory_working_set_bytes",
      "pod_cpu_usage_seconds_total",
      "pod_memory_working_set_bytes",
      "resource_scrape_error",
    ]);
  });

  it("answers nothing for a node it does not run", async () => {
    const { simulator } = await start();
    expect(simulator.kubeletConnection().nodeProxy("node-9", "GET", "/healthz")).toBeUndefined();
  });
});

describe("goFloat", () => {
  it("writes numbers as Go's strconv.FormatFloat(v, 'g', -1, 64)", () => {
    const cases: [number, string][] = [
      [0, "0"],
      [1, "1"],
      [123456, "123456"],
      [1234567, "1.234567e+06"],
      [4194304, "4.194304e+06"],
      [0.5, "0.5"],
      [0.0001, "0.0001"],
      [0.00001, "1e-05"],
      [-2.5e-7, "-2.5e-07"],
      [1.5e21, "1.5e+21"],
      [Number.POSITIVE_INFINITY, "+Inf"],
      [Number.NaN, "NaN"],
    ];
    for (const [value, text] of cases) expect([value, goFloat(value)]).toEqual([value, text]);
  });
});
