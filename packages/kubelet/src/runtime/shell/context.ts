import type { Clock } from "@reconcile/clock";
import type { NodeFilesystem } from "../../node-filesystem.js";

// What the simulated containers' shell runs against: the container's files,
// clock and hostname, and the streams of each command.

/** A container path resolved to the filesystem that holds it. */
export interface ResolvedPath {
  filesystem: NodeFilesystem;
  path: string;
  readOnly: boolean;
}

/** Where a shell runs: the container's files, clock, hostname and lifetime. */
export interface ShellHost {
  clock: Clock;
  resolve: (path: string) => ResolvedPath;
  hostname: string;
  /** Aborted when the container's process is killed: the script stops at its next step. */
  signal?: AbortSignal | undefined;
}

/** Standard input as the commands of a script consume it. */
export interface Input {
  text: string;
  at: number;
  /** The same input as bytes, when it came from a client as bytes (for `tar`); consumed with `text`. */
  bytes?: Uint8Array | undefined;
}

export interface CommandIO {
  stdin: Input;
  out: (text: string) => void;
  err: (text: string) => void;
  /** Writes bytes to standard output as they are (for `tar`); where absent, programs write text. */
  outBytes?: ((data: Uint8Array) => void) | undefined;
}

/** `exit N`, or a failure under `set -e`: unwinds to the script's top. */
export class ExitRequest {
  constructor(readonly code: number) {}
}

/** Waits `ms` on the host's clock (`Infinity`: until the process is killed). */
export async function sleepOn(host: ShellHost, ms: number): Promise<void> {
  const { signal, clock } = host;
  signal?.throwIfAborted();
  if (ms === Number.POSITIVE_INFINITY) {
    await new Promise<void>((_, reject) => {
      signal?.addEventListener("abort", () => reject(signal.reason), { once: true });
    });
    return;
  }
  await clock.sleep(ms, signal === undefined ? undefined : { signal });
}

/** What a program sees of the shell that runs it. */
export interface ShellState {
  readonly host: ShellHost;
  readonly vars: Map<string, string>;
  cwd: string;
  readonly status: number;
  errexit: boolean;
  /** A path as the container sees it, from the working directory. */
  absolute(path: string): string;
  resolve(path: string): ResolvedPath;
  /** Runs another command line (`env X=1 cmd`). */
  invoke(argv: readonly string[], io: CommandIO): Promise<number>;
  /** A child shell running a script (`sh -c`). */
  child(): ShellState & { runScript(script: string, io: CommandIO): Promise<number> };
}

/** A program of the shell: its arguments, streams and shell; its exit status. */
export type Program = (args: string[], io: CommandIO, shell: ShellState) => number | Promise<number>;
