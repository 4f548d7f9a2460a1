// Container lifecycle on the embedded API server and a FakeClock: postStart
// and preStop hooks (exec, httpGet, sleep), sidecar init containers, and
// probe timeouts and grace periods.
import { type Event, events, type Pod, pods } from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import type { Client } from "@reconcile/client";
import { FakeClock } from "@reconcile/clock";
import type { Container, PodSpec } from "kubernetes-types/core/v1.js";
import { afterEach, describe, expect, it } from "vitest";
import { Kubelet } from "./kubelet.js";
import type { ContainerRecord } from "./runtime/runtime.js";
import type { SimulatedRuntime } from "./runtime/simulated-runtime.js";

const start = Date.parse("2026-01-01T00:00:00Z");

interface Node1 {
  clock: FakeClock;
  client: Client;
  runtime: SimulatedRuntime;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function startNode(): Promise<Node1> {
  const clock = new FakeClock(start);
  const server = new ApiServer({ clock });
  cleanups.push(() => server.close());
  const client = server.client();
  const kubelet = new Kubelet({ nodeName: "node-1", client, clock, random: () => 0 });
  const abort = new AbortController();
  const running = kubelet.run({ signal: abort.signal });
  cleanups.push(async () => {
    abort.abort();
    await running;
  });
  await clock.advance(0);
  await settle(clock);
  return { clock, client, runtime: kubelet.runtime as SimulatedRuntime };
}

async function settle(clock: FakeClock): Promise<void> {
  for (let i = 0; i < 20; i++) await clock.flush();
}

async function advance(clock: FakeClock, ms: number): Promise<void> {
  for (let done = 0; done < ms; done += 100) {
    await clock.advance(Math.min(100, ms - done));
    await settle(clock);
  }
}

function pod(
  name: string,
  containers: Container[],
  extra: { annotations?: Record<string, string>; spec?: Partial<PodSpec> } = {},
): Pod {
  return {
    metadata: {
      name,
      namespace: "default",
      ...(extra.annotations ? { annotations: extra.annotations } : {}),
    },
    spec: { nodeName: "node-1", containers, ...extra.spec },
  };
}

async function getPod(client: Client, name: string): Promise<Pod> {
  return client.resource(pods, "default").get(name);
}

async function eventsOf(client: Client, name: string): Promise<string[]> {
  const list = await client.resource(events, "default").list();
  return list.items
    .filter((e: Event) => e.involvedObject.name === name)
    .sort((a, b) => (a.metadata?.name ?? "").localeCompare(b.metadata?.name ?? ""))
    .map((e) => `${e.type} ${e.reason} ${e.message}${(e.count ?? 1) > 1 ? ` (x${e.count})` : ""}`);
}

/** Every instance of a container, oldest first. */
function instances(runtime: SimulatedRuntime, uid: string | undefined, name: string): ContainerRecord[] {
  return runtime
    .listContainers({ podUid: uid })
    .filter((c) => c.name === name)
    .sort((a, b) => a.createdAt - b.createdAt);
}

/**
 * Follows a container from now on, past its removal: each log line as
 * `<seconds after start>s <text>`, and the record it exited with.
 */
function watch(runtime: SimulatedRuntime, id: string): { lines: string[]; exited?: ContainerRecord } {
  const watched: { lines: string[]; exited?: ContainerRecord } = { lines: [] };
  const format = (line: { time: number; text: string }) => `${(line.time - start) / 1000}s ${line.text}`;
  watched.lines.push(...runtime.readLogs(id).map(format));
  runtime.followLogs(
    id,
    (line) => watched.lines.push(format(line)),
    () => {
      const record = runtime.containerStatus(id);
      if (record !== undefined) watched.exited = record;
    },
  );
  return watched;
}

const web = (extra: Partial<Container> = {}): Container => ({ name: "web", image: "nginx:1.25", ...extra });

describe("postStart", () => {
  it("keeps the container out of Running until its hook completes", async () => {
    const { client, clock, runtime } = await startNode();
    await client
      .resource(pods, "default")
      .create(
        pod("hook", [web({ lifecycle: { postStart: { exec: { command: ["sh", "-c", "sleep 5"] } } } })]),
      );
    await advance(clock, 3000);
    let current = await getPod(client, "hook");
    expect(instances(runtime, current.metadata?.uid, "web").map((c) => c.state)).toEqual(["running"]);
    expect(current.status?.phase).toBe("Pending");
    expect(current.status?.containerStatuses?.[0]?.state).toEqual({
      waiting: { reason: "ContainerCreating" },
    });
    // The hook ends at 5 s; the sync after it sees the container at the next relist (6 s).
    await advance(clock, 3000);
    current = await getPod(client, "hook");
    expect(current.status?.phase).toBe("Running");
    expect(current.status?.containerStatuses?.[0]?.state?.running).toBeDefined();
    expect(await eventsOf(client, "hook")).not.toContainEqual(expect.stringContaining("FailedPostStartHook"));
  });

  it("kills the container when the hook fails: FailedPostStartHook, Killing, PostStartHookError, then back-off", async () => {
    const { client, clock } = await startNode();
    const created = await client
      .resource(pods, "default")
      .create(
        pod("hook", [web({ lifecycle: { postStart: { exec: { command: ["sh", "-c", "exit 3"] } } } })]),
      );
    const uid = created.metadata?.uid;
    await advance(clock, 500);
    let status = (await getPod(client, "hook")).status?.containerStatuses?.[0];
    // The first failure is restarted at once; the second meets the 10 s back-off.
    expect(status?.restartCount).toBe(1);
    expect(status?.state?.waiting).toEqual({
      reason: "PostStartHookError",
      message: `Exec lifecycle hook ([sh -c exit 3]) for Container "web" in Pod "hook_default(${uid})" failed - error: command 'sh -c exit 3' exited with 3: , message: ""`,
    });
    expect(status?.lastState?.terminated).toMatchObject({ exitCode: 0, reason: "Completed" });
    let seen = await eventsOf(client, "hook");
    expect(seen).toContain("Warning FailedPostStartHook PostStartHook failed (x2)");
    expect(seen).toContain("Normal Killing FailedPostStartHook (x2)");
    await advance(clock, 10_000);
    status = (await getPod(client, "hook")).status?.containerStatuses?.[0];
    expect(status?.restartCount).toBe(2);
    seen = await eventsOf(client, "hook");
    expect(seen).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^Warning BackOff Back-off restarting failed container web in pod hook_default\\(${uid}\\)`,
        ),
      ),
    );
    expect(seen).toContain("Warning FailedPostStartHook PostStartHook failed (x3)");
  });

  it("names the failed hook as upstream does in the container's waiting message", async () => {
    const { client, clock } = await startNode();
    const created = await client.resource(pods, "default").create(
      pod(
        "hook",
        [
          web({
            ports: [{ name: "admin", containerPort: 8080 }],
            lifecycle: { postStart: { httpGet: { path: "/started", port: "admin" } } },
          }),
        ],
        {
          annotations: {
            "sim.reconcile.dev/http-refused": "true",
            "sim.reconcile.dev/termination": "default",
          },
          spec: { restartPolicy: "OnFailure" },
        },
      ),
    );
    await advance(clock, 100);
    const status = (await getPod(client, "hook")).status;
    expect(status?.containerStatuses?.[0]?.state?.waiting).toEqual({
      reason: "PostStartHookError",
      message: `HTTP lifecycle hook (/started) for Container "web" in Pod "hook_default(${created.metadata?.uid})" failed - error: Get "http://10.244.0.2:8080/started": dial tcp 10.244.0.2:8080: connect: connection refused`,
    });
    expect(status?.containerStatuses?.[0]?.lastState?.terminated).toMatchObject({
      exitCode: 143,
      reason: "Error",
    });
  });

  it("fails a pod that never restarts once its killed container exits non-zero", async () => {
    const { client, clock } = await startNode();
    await client.resource(pods, "default").create(
      pod("hook", [web({ lifecycle: { postStart: { exec: { command: ["false"] } } } })], {
        annotations: { "sim.reconcile.dev/termination": "default" },
        spec: { restartPolicy: "Never" },
      }),
    );
    await advance(clock, 500);
    const status = (await getPod(client, "hook")).status;
    expect(status?.phase).toBe("Failed");
    expect(status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({
      exitCode: 143,
      reason: "Error",
    });
    expect(status?.containerStatuses?.[0]?.restartCount).toBe(0);
  });

  it("reports an exec hook's failure with its command, exit code and output", async () => {
    const { client, clock } = await startNode();
    const created = await client.resource(pods, "default").create(
      pod("hook", [web({ lifecycle: { postStart: { exec: { command: ["cat", "/etc/missing"] } } } })], {
        annotations: { "sim.reconcile.dev/termination": "default" },
        spec: { restartPolicy: "OnFailure" },
      }),
    );
    await advance(clock, 100);
    const waiting = (await getPod(client, "hook")).status?.containerStatuses?.[0]?.state?.waiting;
    expect(waiting).toEqual({
      reason: "PostStartHookError",
      message: `Exec lifecycle hook ([cat /etc/missing]) for Container "web" in Pod "hook_default(${created.metadata?.uid})" failed - error: command 'cat /etc/missing' exited with 1: cat: can't open '/etc/missing': No such file or directory\n, message: "cat: can't open '/etc/missing': No such file or directory\\n"`,
    });
  });
});

describe("preStop", () => {
  it("runs before SIGTERM and its time counts against the grace period", async () => {
    const { client, clock, runtime } = await startNode();
    const created = await client.resource(pods, "default").create(
      pod("stop", [web({ lifecycle: { preStop: { exec: { command: ["sleep", "4"] } } } })], {
        annotations: { "sim.reconcile.dev/log": "up" },
        spec: { terminationGracePeriodSeconds: 30 },
      }),
    );
    await advance(clock, 1000);
    const [container] = instances(runtime, created.metadata?.uid, "web");
    const watched = watch(runtime, container?.id ?? "");
    await client.resource(pods, "default").delete("stop");
    await advance(clock, 5000);
    // Deleted at 1 s: the hook sleeps 4 s, then SIGTERM.
    expect(watched.lines).toEqual(["0s up", "5s received SIGTERM"]);
    await expect(getPod(client, "stop")).rejects.toThrow('pods "stop" not found');
  });

  it("is cut off at the grace period, and the container still gets 2 s after SIGTERM", async () => {
    const { client, clock, runtime } = await startNode();
    const created = await client.resource(pods, "default").create(
      pod("stop", [web({ lifecycle: { preStop: { sleep: { seconds: 60 } } } })], {
        annotations: { "sim.reconcile.dev/log": "up", "sim.reconcile.dev/termination": "ignore" },
        spec: { terminationGracePeriodSeconds: 5 },
      }),
    );
    await advance(clock, 1000);
    const [container] = instances(runtime, created.metadata?.uid, "web");
    const watched = watch(runtime, container?.id ?? "");
    await client.resource(pods, "default").delete("stop");
    await advance(clock, 8000);
    // Deleted at 1 s: the hook has the whole 5 s grace period, SIGTERM at 6 s, SIGKILL 2 s later.
    expect(watched.lines).toEqual(["0s up", "6s received SIGTERM"]);
    expect(watched.exited).toMatchObject({ state: "exited", exitCode: 137, finishedAt: start + 8000 });
  });

  it("records FailedPreStopHook when the hook fails, and stops the container anyway", async () => {
    const { client, clock } = await startNode();
    await client
      .resource(pods, "default")
      .create(pod("stop", [web({ lifecycle: { preStop: { exec: { command: ["false"] } } } })]));
    await advance(clock, 1000);
    await client.resource(pods, "default").delete("stop");
    await advance(clock, 1000);
    expect(await eventsOf(client, "stop")).toEqual(
      expect.arrayContaining([
        "Normal Killing Stopping container web",
        "Warning FailedPreStopHook PreStopHook failed",
      ]),
    );
    await expect(getPod(client, "stop")).rejects.toThrow('pods "stop" not found');
  });
});

describe("sidecar containers", () => {
  const sidecarPod = (extra: { annotations?: Record<string, string>; spec?: Partial<PodSpec> } = {}) =>
    pod("side", [web({ readinessProbe: { httpGet: { path: "/", port: 80 }, periodSeconds: 1 } })], {
      ...extra,
      annotations: {
        "sim.reconcile.dev/log": "up",
        "sim.reconcile.dev/exit-after.setup": "1s",
        "sim.reconcile.dev/startup-after.proxy": "2s",
        ...extra.annotations,
      },
      spec: {
        initContainers: [
          { name: "setup", image: "busybox:1.36" },
          { name: "logger", image: "fluent-bit:3.0", restartPolicy: "Always" },
          {
            name: "proxy",
            image: "envoy:1.30",
            restartPolicy: "Always",
            startupProbe: { httpGet: { path: "/ready", port: 9901 }, periodSeconds: 1, failureThreshold: 10 },
          },
        ],
        ...extra.spec,
      },
    });

  it("start in order after the init containers before them, keep running, and gate the main containers on their startup probes", async () => {
    const { client, clock, runtime } = await startNode();
    const created = await client.resource(pods, "default").create(sidecarPod());
    const uid = created.metadata?.uid;
    await advance(clock, 6000);
    const started = (name: string) =>
      ((instances(runtime, uid, name)[0]?.startedAt ?? Number.NaN) - start) / 1000;
    // setup runs 1 s; logger then starts; proxy right after; web once proxy's startup probe passes (2 s).
    expect([started("setup"), started("logger"), started("proxy"), started("web")]).toEqual([0, 1, 1, 3]);
    const status = (await getPod(client, "side")).status;
    expect(status?.phase).toBe("Running");
    expect(
      status?.initContainerStatuses?.map((s) => [s.name, Object.keys(s.state ?? {})[0], s.started, s.ready]),
    ).toEqual([
      ["setup", "terminated", false, true],
      ["logger", "running", true, true],
      ["proxy", "running", true, true],
    ]);
    expect(status?.conditions?.map((c) => [c.type, c.status])).toEqual([
      ["PodReadyToStartContainers", "True"],
      ["Initialized", "True"],
      ["Ready", "True"],
      ["ContainersReady", "True"],
      ["PodScheduled", "True"],
    ]);
  });

  it("restart a sidecar that exits, whatever the pod's restartPolicy, and count its readiness", async () => {
    const { client, clock, runtime } = await startNode();
    const created = await client.resource(pods, "default").create(
      sidecarPod({
        annotations: {
          "sim.reconcile.dev/exit-after.logger": "5s",
          "sim.reconcile.dev/exit-code.logger": "1",
        },
        spec: { restartPolicy: "Never" },
      }),
    );
    await advance(clock, 7000);
    const status = (await getPod(client, "side")).status;
    expect(status?.phase).toBe("Running");
    const logger = status?.initContainerStatuses?.find((s) => s.name === "logger");
    expect(logger?.restartCount).toBe(1);
    expect(logger?.lastState?.terminated).toMatchObject({ exitCode: 1, reason: "Error" });
    expect(instances(runtime, created.metadata?.uid, "web")).toHaveLength(1);
  });

  it("keep probing a sidecar after it restarts, in a pod that never restarts its containers", async () => {
    const { client, clock } = await startNode();
    await client.resource(pods, "default").create(
      pod("side", [web()], {
        annotations: {
          "sim.reconcile.dev/exit-after.proxy": "3s",
          "sim.reconcile.dev/exit-code.proxy": "1",
        },
        spec: {
          restartPolicy: "Never",
          initContainers: [
            {
              name: "proxy",
              image: "envoy:1.30",
              restartPolicy: "Always",
              readinessProbe: { httpGet: { path: "/ready", port: 9901 }, periodSeconds: 1 },
            },
          ],
        },
      }),
    );
    // Exits at 3 s (restarted at once) and at 6 s (restarted after the 10 s back-off, at 16 s);
    // in between its status shows it terminated while the prober keeps running.
    await advance(clock, 18_000);
    const status = (await getPod(client, "side")).status;
    expect(status?.initContainerStatuses?.[0]).toMatchObject({ name: "proxy", restartCount: 2, ready: true });
    expect(status?.conditions?.find((c) => c.type === "Ready")?.status).toBe("True");
  });

  it("hold the pod's readiness: Ready names an unready sidecar", async () => {
    const { client, clock } = await startNode();
    await client.resource(pods, "default").create(
      pod("side", [web()], {
        annotations: { "sim.reconcile.dev/ready-after.proxy": "4s" },
        spec: {
          initContainers: [
            {
              name: "proxy",
              image: "envoy:1.30",
              restartPolicy: "Always",
              readinessProbe: { httpGet: { path: "/ready", port: 9901 }, periodSeconds: 1 },
            },
          ],
        },
      }),
    );
    await advance(clock, 2000);
    expect((await getPod(client, "side")).status?.conditions?.find((c) => c.type === "Ready")).toMatchObject({
      status: "False",
      reason: "ContainersNotReady",
      message: "containers with unready status: [proxy]",
    });
    await advance(clock, 3000);
    expect((await getPod(client, "side")).status?.conditions?.find((c) => c.type === "Ready")?.status).toBe(
      "True",
    );
  });

  it("stop after the main containers on deletion, the last sidecar first", async () => {
    const { client, clock, runtime } = await startNode();
    const created = await client.resource(pods, "default").create(
      sidecarPod({
        annotations: {
          "sim.reconcile.dev/termination-delay.web": "3s",
          "sim.reconcile.dev/termination-delay.proxy": "2s",
        },
      }),
    );
    const uid = created.metadata?.uid;
    await advance(clock, 6000);
    const watched = ["web", "proxy", "logger"].map((name) =>
      watch(runtime, instances(runtime, uid, name)[0]?.id ?? ""),
    );
    await client.resource(pods, "default").delete("side");
    await advance(clock, 8000);
    // Deleted at 6 s: web stops within 3 s, then proxy (2 s), then logger.
    expect(watched.map((w) => w.lines.find((line) => line.endsWith("received SIGTERM")))).toEqual([
      "6s received SIGTERM",
      "9s received SIGTERM",
      "11s received SIGTERM",
    ]);
    await expect(getPod(client, "side")).rejects.toThrow('pods "side" not found');
  });

  it("do not keep a finished pod alive: once the main containers succeed the sidecars are stopped and the pod Succeeds", async () => {
    const { client, clock } = await startNode();
    await client.resource(pods, "default").create(
      pod("job", [web()], {
        annotations: { "sim.reconcile.dev/exit-after.web": "2s" },
        spec: {
          restartPolicy: "Never",
          initContainers: [{ name: "logger", image: "fluent-bit:3.0", restartPolicy: "Always" }],
        },
      }),
    );
    await advance(clock, 4000);
    const status = (await getPod(client, "job")).status;
    expect(status?.phase).toBe("Succeeded");
    expect(status?.initContainerStatuses?.[0]?.state?.terminated).toBeDefined();
    expect(status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({
      exitCode: 0,
      reason: "Completed",
    });
  });
});

describe("probe timeouts and grace periods", () => {
  it("fails a probe whose handler outlives timeoutSeconds, with the HTTP client's timeout text", async () => {
    const { client, clock } = await startNode();
    await client.resource(pods, "default").create(
      pod(
        "slow",
        [
          web({
            readinessProbe: {
              httpGet: { path: "/healthz", port: 8080 },
              periodSeconds: 2,
              timeoutSeconds: 1,
            },
          }),
        ],
        { annotations: { "sim.reconcile.dev/probe-delay": "1500ms" } },
      ),
    );
    await advance(clock, 5000);
    const status = (await getPod(client, "slow")).status;
    expect(status?.conditions?.find((c) => c.type === "Ready")?.status).toBe("False");
    expect(await eventsOf(client, "slow")).toContainEqual(
      expect.stringMatching(
        /^Warning Unhealthy Readiness probe failed: Get "http:\/\/10\.244\.0\.2:8080\/healthz": context deadline exceeded \(Client\.Timeout exceeded while awaiting headers\)/,
      ),
    );
  });

  it("passes the same probe when timeoutSeconds leaves it time", async () => {
    const { client, clock } = await startNode();
    await client.resource(pods, "default").create(
      pod(
        "slow",
        [
          web({
            readinessProbe: {
              httpGet: { path: "/healthz", port: 8080 },
              periodSeconds: 2,
              timeoutSeconds: 2,
            },
          }),
        ],
        { annotations: { "sim.reconcile.dev/probe-delay": "1500ms" } },
      ),
    );
    await advance(clock, 3000);
    expect((await getPod(client, "slow")).status?.conditions?.find((c) => c.type === "Ready")?.status).toBe(
      "True",
    );
  });

  it("restarts a container whose exec liveness probe times out, within the probe's own grace period", async () => {
    const { client, clock, runtime } = await startNode();
    const created = await client.resource(pods, "default").create(
      pod(
        "stuck",
        [
          web({
            livenessProbe: {
              exec: { command: ["cat", "/tmp/healthy"] },
              periodSeconds: 1,
              timeoutSeconds: 1,
              failureThreshold: 2,
              terminationGracePeriodSeconds: 3,
            },
          }),
        ],
        {
          annotations: {
            "sim.reconcile.dev/log": "up",
            "sim.reconcile.dev/probe-delay": "5s",
            "sim.reconcile.dev/termination": "ignore",
          },
          spec: { terminationGracePeriodSeconds: 60 },
        },
      ),
    );
    await advance(clock, 100);
    const [first] = instances(runtime, created.metadata?.uid, "web");
    const watched = watch(runtime, first?.id ?? "");
    await advance(clock, 5000);
    // Probed at 0 s and 1 s, each failing at its 1 s timeout: killed at 2 s with the probe's 3 s
    // grace period (not the pod's 60 s), SIGKILL at 5 s.
    expect(watched.lines).toEqual(["0s up", "2s received SIGTERM"]);
    expect(watched.exited).toMatchObject({ exitCode: 137, finishedAt: start + 5000 });
    const seen = await eventsOf(client, "stuck");
    expect(seen).toContain(
      'Warning Unhealthy Liveness probe failed: command "cat /tmp/healthy" timed out (x2)',
    );
    expect(seen).toContain("Normal Killing Container web failed liveness probe, will be restarted");
  });
});
