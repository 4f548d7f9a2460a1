import type { ContainerBehaviour } from "./container-behaviour.js";
import { defaultContainerBehaviour } from "./container-behaviour.js";
import { type ExecResult, RuntimeError } from "./runtime.js";
import { builtins } from "./shell/builtins.js";
import { ExitRequest, Shell, type ShellHost } from "./shell/index.js";

// What a simulated container's process runs: its command and args, or its
// image's default command, carried out by the built-in shell (no host access).

/** Default commands of images the runtime knows; any other image runs until it is stopped. */
const imageCommands: Record<string, readonly string[]> = {
  "docker.io/library/busybox": ["sh"],
  "docker.io/library/alpine": ["/bin/sh"],
  "docker.io/library/debian": ["bash"],
  "docker.io/library/ubuntu": ["/bin/bash"],
};

/** The environment every container starts with, before the pod's `env` (the images' usual one). */
const baseEnvironment: readonly [string, string][] = [
  ["PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
  ["HOME", "/root"],
];

export interface ProcessSpec {
  /** The normalised image name (`docker.io/library/busybox:1.36`). */
  image: string;
  command?: readonly string[] | undefined;
  args?: readonly string[] | undefined;
  env?: readonly { name: string; value: string }[] | undefined;
  hostname: string;
}

/**
 * The argv a container runs as Docker composes it (the pod's `command`
 * replaces the entrypoint, its `args` the image's command), or undefined
 * when it runs an image this runtime does not know without a command of its
 * own: such a container runs until it is stopped.
 */
export function argvFor(
  spec: Pick<ProcessSpec, "image" | "command" | "args">,
): readonly string[] | undefined {
  if (spec.command !== undefined && spec.command.length > 0) return [...spec.command, ...(spec.args ?? [])];
  if (spec.args !== undefined && spec.args.length > 0) return spec.args;
  const colon = spec.image.lastIndexOf(":");
  const repository = spec.image.includes("@")
    ? spec.image.slice(0, spec.image.indexOf("@"))
    : colon > spec.image.lastIndexOf("/")
      ? spec.image.slice(0, colon)
      : spec.image;
  return imageCommands[repository];
}

/**
 * Whether the simulation annotations (or the node's defaults) script the
 * process: they win over its command.
 */
export function scriptedByBehaviour(behaviour: Readonly<ContainerBehaviour>): boolean {
  return (
    behaviour.log !== defaultContainerBehaviour.log ||
    behaviour.exitAfterMs !== defaultContainerBehaviour.exitAfterMs ||
    behaviour.exitCode !== defaultContainerBehaviour.exitCode ||
    behaviour.logEveryMs !== defaultContainerBehaviour.logEveryMs
  );
}

/** The message of containerd's StartError when the program is not in the image. */
export function missingProgram(argv: readonly string[]): string | undefined {
  const name = argv[0] ?? "";
  if (builtins.has(name.slice(name.lastIndexOf("/") + 1))) return undefined;
  return `failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: "${name}": executable file not found in $PATH: unknown`;
}

/** The process's variables: the base environment, HOSTNAME, then the pod's `env` in order. */
export function environmentOf(spec: Pick<ProcessSpec, "env" | "hostname">): Map<string, string> {
  const vars = new Map(baseEnvironment);
  vars.set("HOSTNAME", spec.hostname);
  for (const { name, value } of spec.env ?? []) vars.set(name, value);
  return vars;
}

/**
 * Runs `argv` to its end, writing output as it comes; resolves to the exit
 * status (rejects with the signal's reason if the process is killed).
 */
export function runProcess(
  argv: readonly string[],
  spec: ProcessSpec,
  host: ShellHost,
  write: (stream: "stdout" | "stderr", text: string) => void,
  stdin = "",
  binary?: { stdin: Uint8Array; write: (data: Uint8Array) => void },
): Promise<number> {
  const shell = new Shell(host, environmentOf(spec));
  return shell
    .invoke(argv, {
      stdin: { text: stdin, at: 0, bytes: binary?.stdin },
      out: (text) => write("stdout", text),
      err: (text) => write("stderr", text),
      outBytes: binary?.write,
    })
    .catch((error: unknown) => {
      if (error instanceof ExitRequest) return error.code;
      throw error;
    });
}

/**
 * Runs a command to its end and collects what it wrote (exec probes, hooks);
 * rejects with a `Timeout` RuntimeError once `timeoutMs` has passed on the
 * host's clock (0: no limit).
 */
export async function execCollect(
  argv: readonly string[],
  spec: ProcessSpec,
  host: ShellHost,
  timeoutMs = 0,
): Promise<ExecResult> {
  let stdout = "";
  let stderr = "";
  const run = runProcess(argv, spec, host, (stream, text) => {
    if (stream === "stdout") stdout += text;
    else stderr += text;
  }).then((exitCode) => ({ exitCode, stdout, stderr }));
  if (!(timeoutMs > 0)) return run;
  const stop = new AbortController();
  const timeout = host.clock.sleep(timeoutMs, { signal: stop.signal }).then(
    () => {
      throw new RuntimeError("Timeout", `command ${JSON.stringify(argv.join(" "))} timed out`);
    },
    () => new Promise<never>(() => {}),
  );
  try {
    return await Promise.race([run, timeout]);
  } finally {
    stop.abort();
  }
}

/** Splits a stream's writes into lines; `flush` hands on a last line with no newline. */
export class LineSplitter {
  #partial = "";
  constructor(readonly onLine: (text: string) => void) {}

  write(text: string): void {
    const parts = (this.#partial + text).split("\n");
    this.#partial = parts.pop() as string;
    for (const line of parts) this.onLine(line);
  }

  flush(): void {
    if (this.#partial !== "") this.onLine(this.#partial);
    this.#partial = "";
  }
}
