import { createWriteStream, type WriteStream } from "node:fs";
import type { AuditBackend } from "./event.js";

/**
 * kube-apiserver's log backend (`--audit-log-path`, format `json`): one
 * event per line, appended to the file at `path`, or written to stdout for
 * `-`. Lines are written in the order the events happen; a write error is
 * reported once on stderr and later events are dropped, as the request
 * itself never waits on the log.
 */
export function auditLogBackend(path: string): AuditBackend {
  if (path === "-") return { process: (event) => void process.stdout.write(`${JSON.stringify(event)}\n`) };
  let stream: WriteStream | undefined = createWriteStream(path, { flags: "a", mode: 0o600 });
  stream.on("error", (error) => {
    process.stderr.write(`audit log ${path}: ${error.message}; audit events are no longer written\n`);
    stream = undefined;
  });
  return {
    process(event) {
      stream?.write(`${JSON.stringify(event)}\n`);
    },
    close() {
      const open = stream;
      stream = undefined;
      if (open === undefined) return Promise.resolve();
      return new Promise<void>((resolve) => open.end(resolve));
    },
  };
}
