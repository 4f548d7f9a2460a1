import { FakeClock } from "@reconcile/clock";
import { describe, expect, it } from "vitest";
import { behaviourFor, defaultContainerBehaviour, parseDuration } from "./container-behaviour.js";
import type { PodSandboxConfig } from "./runtime.js";
import { normaliseImage, SimulatedRuntime } from "./simulated-runtime.js";

function sandboxConfig(annotations: Record<string, string> = {}, hostNetwork = false): PodSandboxConfig {
  return {
    podUid: "uid-1",
    name: "web",
    namespace: "default",
    attempt: 0,
    hostNetwork,
    labels: {},
    annotations,
  };
}

async function startOne(runtime: SimulatedRuntime, annotations: Record<string, string> = {}) {
  const config = sandboxConfig(annotations);
  const sandboxId = await runtime.runPodSandbox(config);
  await runtime.pullImage("nginx", config);
  const id = await runtime.createContainer(sandboxId, {
    name: "web",
    image: "nginx",
    attempt: 0,
    specHash: "h",
  });
  await runtime.startContainer(id);
  return { sandboxId, id };
}

describe("normaliseImage", () => {
  it.each([
    ["nginx", "docker.io/library/nginx:latest"],
    ["nginx:1.25", "docker.io/library/nginx:1.25"],
    ["bitnami/redis", "docker.io/bitnami/redis:latest"],
    ["registry.k8s.io/pause:3.9", "registry.k8s.io/pause:3.9"],
    ["localhost:5000/app", "localhost:5000/app:latest"],
    ["nginx@sha256:abc", "docker.io/library/nginx@sha256:abc"],
  ])("%s is %s", (image, expected) => {
    expect(normaliseImage(image)).toBe(expected);
  });
});

describe("parseDuration", () => {
  it.each([
    ["500ms", 500],
    ["2s", 2000],
    ["1m30s", 90_000],
    ["1.5s", 1500],
    ["0", 0],
    ["never", Number.POSITIVE_INFINITY],
    ["soon", undefined],
    ["5", undefined],
    ["2s junk", undefined],
  ])("%s is %s", (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });
});

describe("behaviourFor", () => {
  it("reads pod-wide keys, lets a container's own key win and ignores values it cannot parse", () => {
    const annotations = {
      "sim.reconcile.dev/exit-after": "5s",
      "sim.reconcile.dev/exit-after.sidecar": "1s",
      "sim.reconcile.dev/exit-code": "3",
      "sim.reconcile.dev/ready-after": "later",
      "sim.reconcile.dev/termination": "ignore",
    };
    const web = behaviourFor(defaultContainerBehaviour, annotations, "web");
    expect(web).toMatchObject({ exitAfterMs: 5000, exitCode: 3, readyAfterMs: 0, termination: "ignore" });
    expect(behaviourFor(defaultContainerBehaviour, annotations, "sidecar").exitAfterMs).toBe(1000);
  });
});

describe("SimulatedRuntime", () => {
  it("hands out pod IPs from .2 of the pod CIDR, none for host-network pods, and reuses released ones", async () => {
    const runtime = new SimulatedRuntime({ podCIDR: "10.244.3.0/24", clock: new FakeClock() });
    const a = await runtime.runPodSandbox(sandboxConfig());
    const b = await runtime.runPodSandbox(sandboxConfig());
    const host = await runtime.runPodSandbox(sandboxConfig({}, true));
    const ips = () => runtime.listPodSandboxes().map((s) => s.ip);
    expect(ips()).toEqual(["10.244.3.2", "10.244.3.3", undefined]);
    await runtime.removePodSandbox(a);
    expect(runtime.listPodSandboxes().map((s) => s.id)).toEqual([b, host]);
  });

  it("on a dual-stack node gives each pod an address of both families, and frees both", async () => {
    const runtime = new SimulatedRuntime({
      podCIDR: "10.244.3.0/30,fd00:10:244:3::/126",
      clock: new FakeClock(),
    });
    const a = await runtime.runPodSandbox(sandboxConfig());
    expect(runtime.listPodSandboxes().map((s) => [s.ip, s.additionalIPs])).toEqual([
      ["10.244.3.2", ["fd00:10:244:3::2"]],
    ]);
    // A /30 has one address for pods, a /126 two: the IPv4 range is full.
    await expect(runtime.runPodSandbox(sandboxConfig())).rejects.toThrow("the node's pod CIDR is exhausted");
    await runtime.stopPodSandbox(a);
    await runtime.runPodSandbox(sandboxConfig());
    expect(runtime.listPodSandboxes().map((s) => [s.ip, s.additionalIPs])).toEqual([
      ["10.244.3.2", ["fd00:10:244:3::2"]],
      ["10.244.3.2", ["fd00:10:244:3::3"]],
    ]);
    expect(() => new SimulatedRuntime({ podCIDR: "fd00::/48" })).toThrow(
      'SimulatedRuntime: an IPv6 podCIDR must be from /64 to /126, got "fd00::/48"',
    );
  });

  it("gives 64-hex IDs, containerd image names and a stable digest per image", async () => {
    const clock = new FakeClock(1000);
    const runtime = new SimulatedRuntime({ clock, seed: "node-1" });
    const { id } = await startOne(runtime);
    const record = runtime.containerStatus(id)!;
    expect(record.id).toMatch(/^[0-9a-f]{64}$/);
    expect(record.image).toBe("docker.io/library/nginx:latest");
    expect(record.imageRef).toMatch(/^docker\.io\/library\/nginx@sha256:[0-9a-f]{64}$/);
    expect(record).toMatchObject({ state: "running", startedAt: 1000, attempt: 0 });
    const other = new SimulatedRuntime({ clock, seed: "node-2" });
    const second = await startOne(other);
    expect(other.containerStatus(second.id)!.imageRef).toBe(record.imageRef);
    expect(second.id).not.toBe(id);
  });

  it("pulls an image once, after the pull delay, and fails a pull named by pull-error", async () => {
    const clock = new FakeClock();
    const runtime = new SimulatedRuntime({ clock, defaults: { pullDelayMs: 2000 } });
    let done = false;
    const pull = runtime.pullImage("nginx:1.25", sandboxConfig()).then(() => {
      done = true;
    });
    await clock.advance(1999);
    expect(done).toBe(false);
    await clock.advance(1);
    await pull;
    expect(runtime.imageStatus("nginx:1.25")?.repoTags).toEqual(["docker.io/library/nginx:1.25"]);
    await expect(runtime.pullImage("nginx:1.25", sandboxConfig())).resolves.toBeDefined();
    expect(clock.pendingTimers()).toEqual([]);
    await expect(
      runtime.pullImage("nginx:1.25", sandboxConfig({ "sim.reconcile.dev/pull-error": "not found" })),
    ).rejects.toMatchObject({ code: "ImagePull" });
  });

  it("exits a container with its code after exit-after, with Error as the reason for a non-zero code", async () => {
    const clock = new FakeClock();
    const runtime = new SimulatedRuntime({ clock });
    const { id } = await startOne(runtime, {
      "sim.reconcile.dev/exit-after": "3s",
      "sim.reconcile.dev/exit-code": "2",
    });
    await clock.advance(2999);
    expect(runtime.containerStatus(id)?.state).toBe("running");
    await clock.advance(1);
    expect(runtime.containerStatus(id)).toMatchObject({
      state: "exited",
      exitCode: 2,
      reason: "Error",
      finishedAt: 3000,
    });
    expect(runtime.readLogs(id).map((l) => [l.stream, l.text])).toEqual([
      ["stdout", "simulated container web started (image docker.io/library/nginx:latest)"],
      ["stderr", "exiting with code 2"],
    ]);
  });

  it.each([
    ["graceful", {}, 0, "Completed", 0],
    ["default", {}, 143, "Error", 0],
    ["ignore", {}, 137, "Error", 30_000],
    ["graceful", { "sim.reconcile.dev/termination-delay": "5s" }, 0, "Completed", 5000],
    ["graceful", { "sim.reconcile.dev/termination-delay": "1m" }, 137, "Error", 30_000],
  ])("on SIGTERM a %s container %j exits %d (%s) after %d ms", async (mode, extra, code, reason, after) => {
    const clock = new FakeClock();
    const runtime = new SimulatedRuntime({ clock });
    const { id } = await startOne(runtime, { "sim.reconcile.dev/termination": mode, ...extra });
    let stopped = false;
    const stop = runtime.stopContainer(id, 30).then(() => {
      stopped = true;
    });
    if (after > 0) {
      await clock.advance(after - 1);
      expect(stopped).toBe(false);
      await clock.advance(1);
    }
    await stop;
    expect(runtime.containerStatus(id)).toMatchObject({
      state: "exited",
      exitCode: code,
      reason,
      finishedAt: after,
    });
  });

  it("answers probes from ready-after, startup-after and liveness-fail-after", async () => {
    const clock = new FakeClock();
    const runtime = new SimulatedRuntime({ clock });
    const { id } = await startOne(runtime, {
      "sim.reconcile.dev/ready-after": "2s",
      "sim.reconcile.dev/startup-after": "1s",
      "sim.reconcile.dev/liveness-fail-after": "10s",
    });
    expect(await runtime.probe(id, "readiness")).toEqual({
      success: false,
      output: "HTTP probe failed with statuscode: 503",
    });
    expect((await runtime.probe(id, "startup")).success).toBe(false);
    expect((await runtime.probe(id, "liveness")).success).toBe(true);
    await clock.advance(2000);
    expect((await runtime.probe(id, "readiness")).success).toBe(true);
    expect((await runtime.probe(id, "startup")).success).toBe(true);
    await clock.advance(8000);
    expect(await runtime.probe(id, "liveness")).toEqual({
      success: false,
      output: "HTTP probe failed with statuscode: 500",
    });
  });

  it("fails readiness from unready-after for unready-for, then passes again", async () => {
    const clock = new FakeClock();
    const runtime = new SimulatedRuntime({ clock });
    const { id } = await startOne(runtime, {
      "sim.reconcile.dev/unready-after": "5s",
      "sim.reconcile.dev/unready-for": "3s",
    });
    const ready = async () => (await runtime.probe(id, "readiness")).success;
    expect(await ready()).toBe(true);
    await clock.advance(4999);
    expect(await ready()).toBe(true);
    await clock.advance(1);
    expect(await ready()).toBe(false);
    await clock.advance(2999);
    expect(await ready()).toBe(false);
    await clock.advance(1);
    expect(await ready()).toBe(true);
  });

  it("writes the log annotation at start and a tick per log-every, streaming them to followers until exit", async () => {
    const clock = new FakeClock();
    const runtime = new SimulatedRuntime({ clock });
    const { id } = await startOne(runtime, {
      "sim.reconcile.dev/log": "hello\nworld",
      "sim.reconcile.dev/log-every": "1s",
      "sim.reconcile.dev/exit-after": "2500ms",
    });
    const followed: string[] = [];
    let ended = false;
    runtime.followLogs(
      id,
      (line) => followed.push(line.text),
      () => {
        ended = true;
      },
    );
    await clock.advance(3000);
    expect(runtime.readLogs(id).map((l) => `${l.time} ${l.text}`)).toEqual([
      "0 hello",
      "0 world",
      "1000 tick 1",
      "2000 tick 2",
      "2500 exiting with code 0",
    ]);
    expect(followed).toEqual(["tick 1", "tick 2", "exiting with code 0"]);
    expect(ended).toBe(true);
    expect(clock.pendingTimers()).toEqual([]);
  });

  it("reports container lifecycle events to listeners", async () => {
    const clock = new FakeClock();
    const runtime = new SimulatedRuntime({ clock });
    const seen: string[] = [];
    runtime.onEvent((event) => seen.push(event.type));
    const { id } = await startOne(runtime);
    await runtime.stopContainer(id, 2);
    await runtime.removeContainer(id);
    expect(seen).toEqual(["ContainerCreated", "ContainerStarted", "ContainerStopped", "ContainerDeleted"]);
  });
});

describe("SimulatedRuntime.execSync", () => {
  async function withMounts() {
    const clock = new FakeClock(0);
    const runtime = new SimulatedRuntime({ clock });
    runtime.filesystem.writeFile("/host/config/mode", "fast");
    runtime.filesystem.mkdir("/host/scratch");
    const config = sandboxConfig();
    const sandboxId = await runtime.runPodSandbox(config);
    await runtime.pullImage("nginx", config);
    const id = await runtime.createContainer(sandboxId, {
      name: "web",
      image: "nginx",
      attempt: 0,
      specHash: "h",
      mounts: [
        { name: "config", containerPath: "/etc/config", hostPath: "/host/config", readOnly: true },
        { name: "scratch", containerPath: "/scratch", hostPath: "/host/scratch", readOnly: false },
      ],
    });
    await runtime.startContainer(id);
    return { clock, runtime, id };
  }

  it.each([
    [["true"], 0, "", ""],
    [["false"], 1, "", ""],
    [["sh", "-c", "exit 7"], 7, "", ""],
    [["cat", "/etc/config/mode"], 0, "fast", ""],
    [["cat", "/etc/config/nope"], 1, "", "cat: can't open '/etc/config/nope': No such file or directory\n"],
    [["sh", "-c", "echo hi > /scratch/a && cat /scratch/a"], 0, "hi\n", ""],
    [
      ["sh", "-c", "echo x > /etc/config/mode"],
      1,
      "",
      "sh: can't create /etc/config/mode: Read-only file system\n",
    ],
    [["sh", "-c", "false || echo 'fell back'; echo done"], 0, "fell back\ndone\n", ""],
    [["sh", "-c", "test -f /etc/config/mode && echo yes"], 0, "yes\n", ""],
    [["[", "-d", "/scratch", "]"], 0, "", ""],
    [["ls", "/etc/config"], 0, "mode\n", ""],
    [["sh", "-c", "touch /tmp/healthy; ls /tmp"], 0, "healthy\n", ""],
    [["/bin/curl", "localhost"], 127, "", "sh: /bin/curl: not found\n"],
  ])("%j exits %d", async (command, exitCode, stdout, stderr) => {
    const { runtime, id } = await withMounts();
    expect(await runtime.execSync(id, command, 0)).toEqual({ exitCode, stdout, stderr });
  });

  it("writes outside mounts to the container's own layer, writes inside them to the node", async () => {
    const { runtime, id } = await withMounts();
    await runtime.execSync(id, ["sh", "-c", "echo a > /tmp/x; echo b > /scratch/y"], 0);
    expect(runtime.readFile(id, "/tmp/x")).toBe("a\n");
    expect(runtime.filesystem.exists("/tmp/x")).toBe(false);
    expect(new TextDecoder().decode(runtime.filesystem.readFile("/host/scratch/y"))).toBe("b\n");
  });

  it("sleeps on the clock and times out with the CRI client's text", async () => {
    const { clock, runtime, id } = await withMounts();
    const slow = runtime.execSync(id, ["sleep", "5"], 1000);
    const outcome = slow.then(
      () => "done",
      (error: Error) => error.message,
    );
    await clock.advance(1000);
    expect(await outcome).toBe('command "sleep 5" timed out');
    const quick = runtime.execSync(id, ["sleep", "1"], 2000);
    await clock.advance(1000);
    expect(await quick).toEqual({ exitCode: 0, stdout: "", stderr: "" });
  });

  it("refuses a container that is not running", async () => {
    const { runtime, id } = await withMounts();
    await runtime.stopContainer(id, 0);
    await expect(runtime.execSync(id, ["true"], 0)).rejects.toThrow("is not running");
  });
});
