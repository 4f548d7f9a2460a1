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
}

export interface CommandIO {
  stdin: Input;
  out: (text: string) => void;
  err: (text: string) => void;
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
