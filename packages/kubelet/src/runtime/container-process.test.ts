import { FakeClock } from "@reconcile/clock";
import { describe, expect, it } from "vitest";
import { argvFor } from "./container-process.js";
import type { ContainerConfig, PodSandboxConfig } from "./runtime.js";
import { SimulatedRuntime } from "./simulated-runtime.js";

const sandbox: PodSandboxConfig = {
  podUid: "uid-1",
  name: "job-abc",
  namespace: "default",
  attempt: 0,
  hostNetwork: false,
  labels: {},
  annotations: {},
};

async function run(
  config: Partial<ContainerConfig> & { image: string },
  clock = new FakeClock(Date.UTC(2026, 0, 1)),
  annotations: Record<string, string> = {},
) {
  const runtime = new SimulatedRuntime({ clock });
  const sandboxId = await runtime.runPodSandbox({ ...sandbox, annotations });
  await runtime.pullImage(config.image, { ...sandbox, annotations });
  const id = await runtime.createContainer(sandboxId, { name: "main", attempt: 0, specHash: "h", ...config });
  await runtime.startContainer(id);
  // Let the process's microtasks run.
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  const lines = () => runtime.readLogs(id).map((l) => `${l.stream} ${l.text}`);
  return { runtime, id, lines, status: () => runtime.containerStatus(id)! };
}

describe("argvFor", () => {
  it.each([
    [{ image: "docker.io/library/busybox:latest", command: ["echo"], args: ["hi"] }, ["echo", "hi"]],
    [{ image: "docker.io/library/busybox:latest", args: ["echo", "hi"] }, ["echo", "hi"]],
    [{ image: "docker.io/library/busybox:1.36" }, ["sh"]],
    [{ image: "docker.io/library/alpine:3.20" }, ["/bin/sh"]],
    [{ image: "docker.io/library/nginx:latest" }, undefined],
    [{ image: "registry.example.com/team/app:v1" }, undefined],
  ])("%j runs %j", (spec, argv) => {
    expect(argvFor(spec)).toEqual(argv);
  });
});

describe("a simulated container runs its command", () => {
  it("writes its output to the log as it goes and exits with its status", async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const c = await run(
      { image: "busybox", command: ["sh", "-c", "echo start; sleep 2; echo done >&2; exit 3"] },
      clock,
    );
    expect(c.lines()).toEqual(["stdout start"]);
    expect(c.status().state).toBe("running");
    await clock.advance(2_000);
    expect(c.lines()).toEqual(["stdout start", "stderr done"]);
    expect(c.status()).toMatchObject({ state: "exited", exitCode: 3, reason: "Error" });
    expect(c.runtime.readLogs(c.id).map((l) => l.time)).toEqual([
      Date.UTC(2026, 0, 1),
      Date.UTC(2026, 0, 1) + 2_000,
    ]);
  });

  it("completes with 0 and sees its environment and hostname", async () => {
    const c = await run({
      image: "busybox",
      command: ["sh", "-c", 'echo "$JOB_COMPLETION_INDEX on $(hostname)"'],
      envs: [{ name: "JOB_COMPLETION_INDEX", value: "2" }],
      hostname: "pi-2",
    });
    expect(c.lines()).toEqual(["stdout 2 on pi-2"]);
    expect(c.status()).toMatchObject({ state: "exited", exitCode: 0, reason: "Completed" });
  });

  it("busybox with no command runs sh, which ends at once with no input", async () => {
    const c = await run({ image: "busybox" });
    expect(c.lines()).toEqual([]);
    expect(c.status()).toMatchObject({ state: "exited", exitCode: 0, reason: "Completed" });
  });

  it("an unknown image with no command runs until stopped, as before", async () => {
    const c = await run({ image: "nginx" });
    expect(c.lines()).toEqual([
      "stdout simulated container main started (image docker.io/library/nginx:latest)",
    ]);
    expect(c.status().state).toBe("running");
  });

  it("a program the image lacks is containerd's StartError with exit code 128", async () => {
    const c = await run({ image: "perl", command: ["perl", "-e", "print 1"] });
    expect(c.status()).toMatchObject({
      state: "exited",
      exitCode: 128,
      reason: "StartError",
      message:
        'failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: "perl": executable file not found in $PATH: unknown',
    });
  });

  it("a stop ends a running script: the SIGTERM behaviour decides the code, nothing runs after", async () => {
    const clock = new FakeClock(0);
    const c = await run({ image: "busybox", command: ["sh", "-c", "sleep 10; echo late"] }, clock);
    await c.runtime.stopContainer(c.id, 30);
    expect(c.status()).toMatchObject({ state: "exited", exitCode: 0 });
    await clock.advance(20_000);
    expect(c.lines()).toEqual(["stdout received SIGTERM"]);
  });

  it("the simulation annotations win over the command", async () => {
    const clock = new FakeClock(0);
    const c = await run({ image: "busybox", command: ["sh", "-c", "exit 9"] }, clock, {
      "sim.reconcile.dev/exit-after": "1s",
      "sim.reconcile.dev/exit-code": "4",
    });
    await clock.advance(1_000);
    expect(c.status()).toMatchObject({ state: "exited", exitCode: 4 });
  });

  it("a container with stdin keeps its shell waiting; attach sends it input and sees its output; exit ends the container", async () => {
    const c = await run({ image: "busybox", args: ["sh"], stdin: true, tty: false });
    expect(c.status().state).toBe("running");
    const attached = c.runtime.attach(c.id);
    const seen: string[] = [];
    attached.onOutput((stream, data) => seen.push(`${stream}:${new TextDecoder().decode(data)}`));
    attached.write(new TextEncoder().encode("echo hello from $HOSTNAME\nexit 4\n"));
    expect(await attached.exited).toBe(4);
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual(["stdout:hello from job-abc\n"]);
    expect(c.lines()).toEqual(["stdout hello from job-abc"]);
    expect(c.status()).toMatchObject({ state: "exited", exitCode: 4, reason: "Error" });
  });

  it("with stdinOnce the shell's input closes when the first client detaches, and the container exits; without it the shell waits", async () => {
    const once = await run({ image: "busybox", args: ["sh"], stdin: true, stdinOnce: true });
    const first = once.runtime.attach(once.id);
    first.write(new TextEncoder().encode("echo once\n"));
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    first.kill(); // kubectl run -i ends: it detaches
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(once.lines()).toEqual(["stdout once"]);
    expect(once.status()).toMatchObject({ state: "exited", exitCode: 0, reason: "Completed" });

    const kept = await run({ image: "busybox", args: ["sh"], stdin: true });
    const client = kept.runtime.attach(kept.id);
    client.closeStdin();
    client.kill();
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(kept.status().state).toBe("running");
    const next = kept.runtime.attach(kept.id);
    next.write(new TextEncoder().encode("exit 2\n"));
    expect(await next.exited).toBe(2);
  });

  it("attach to a container without stdin follows its log from now on and sends nothing in", async () => {
    const clock = new FakeClock(0);
    const c = await run({ image: "busybox", command: ["sh", "-c", "echo one; sleep 1; echo two"] }, clock);
    const attached = c.runtime.attach(c.id);
    const seen: string[] = [];
    attached.onOutput((stream, data) => seen.push(`${stream}:${new TextDecoder().decode(data)}`));
    attached.write(new TextEncoder().encode("ignored\n"));
    await clock.advance(1_000);
    expect(await attached.exited).toBe(0);
    expect(seen).toEqual(["stdout:two\n"]);
  });
});
