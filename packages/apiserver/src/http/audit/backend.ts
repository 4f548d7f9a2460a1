import {
  createWriteStream,
  openSync,
  readdirSync,
  renameSync,
  statSync,
  unlinkSync,
  type WriteStream,
} from "node:fs";
import * as http from "node:http";
import * as https from "node:https";
import { join, parse as parsePath } from "node:path";
import { loadKubeConfig } from "@reconcile/client";
import { type Clock, realClock, type TimerHandle } from "@reconcile/clock";
import type { AuditBackend, AuditEvent } from "./event.js";

/** How {@link auditLogBackend} rotates its file (kube-apiserver's `--audit-log-max*`, lumberjack's rules). */
export interface AuditLogOptions {
  /** Past this size the file is rotated. Default 100 (lumberjack's default, which kube-apiserver keeps). */
  maxSizeMB?: number | undefined;
  /** Rotated files kept at most, newest first; 0 keeps all. Default 0. */
  maxBackups?: number | undefined;
  /** Rotated files older than this are removed; 0 keeps them. Default 0. */
  maxAgeDays?: number | undefined;
  /** Rotated files are named with its time. Default `realClock`. */
  clock?: Clock | undefined;
}

/**
 * kube-apiserver's log backend (`--audit-log-path`, format `json`): one
 * event per line, appended to the file at `path`, or written to stdout for
 * `-`. Lines are written in the order the events happen. A file that would
 * grow past `maxSizeMB` is first renamed `<name>-<UTC time>.<ext>`
 * (`audit-2026-11-30T17-11-27.123.log`, as lumberjack names it) and a new one
 * begun; `maxBackups` and `maxAgeDays` prune the renamed ones. A write error
 * is reported once on stderr and later events are dropped, as the request
 * itself never waits on the log.
 */
export function auditLogBackend(path: string, options: AuditLogOptions = {}): AuditBackend {
  if (path === "-") return { process: (event) => void process.stdout.write(`${JSON.stringify(event)}\n`) };
  const maxBytes = (options.maxSizeMB ?? 100) * 1024 * 1024;
  const clock = options.clock ?? realClock;
  let failed = false;
  const open = (): WriteStream | undefined => {
    if (failed) return undefined;
    // Opened at once, so the file is there to be renamed even before the stream has written to it.
    let fd: number;
    try {
      fd = openSync(path, "a", 0o600);
    } catch (error) {
      process.stderr.write(
        `audit log ${path}: ${(error as Error).message}; audit events are no longer written\n`,
      );
      failed = true;
      return undefined;
    }
    const opened = createWriteStream(path, { fd });
    opened.on("error", (error) => {
      // A rotated-out stream's late error concerns a file no longer written.
      if (stream !== opened) return;
      process.stderr.write(`audit log ${path}: ${error.message}; audit events are no longer written\n`);
      failed = true;
      stream = undefined;
    });
    return opened;
  };
  let stream = open();
  let size = existingSize(path);
  return {
    process(event) {
      if (stream === undefined) return;
      const line = `${JSON.stringify(event)}\n`;
      const bytes = Buffer.byteLength(line);
      if (size > 0 && size + bytes > maxBytes) {
        try {
          renameSync(path, backupName(path, clock.now()));
          pruneBackups(path, options.maxBackups ?? 0, options.maxAgeDays ?? 0, clock.now());
        } catch (error) {
          process.stderr.write(`audit log ${path}: rotation failed: ${(error as Error).message}\n`);
        }
        // The old stream finishes its writes into the renamed file.
        stream.end();
        stream = open();
        size = 0;
      }
      stream?.write(line);
      size += bytes;
    },
    close() {
      const closing = stream;
      stream = undefined;
      if (closing === undefined) return Promise.resolve();
      return new Promise<void>((resolve) => closing.end(resolve));
    },
  };
}

function existingSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** `dir/audit.log` rotated at `ms`: `dir/audit-2026-11-30T17-11-27.123.log` (lumberjack's UTC backup name). */
function backupName(path: string, ms: number): string {
  const { dir, name, ext } = parsePath(path);
  const stamp = new Date(ms).toISOString().slice(0, 23).replaceAll(":", "-");
  return join(dir, `${name}-${stamp}${ext}`);
}

/** Removes rotated files past `maxBackups` (newest kept) or older than `maxAgeDays`. */
function pruneBackups(path: string, maxBackups: number, maxAgeDays: number, now: number): void {
  if (maxBackups <= 0 && maxAgeDays <= 0) return;
  const { dir, name, ext } = parsePath(path);
  const prefix = `${name}-`;
  const backups = readdirSync(dir)
    .flatMap((file) => {
      if (!file.startsWith(prefix) || !file.endsWith(ext)) return [];
      // lumberjack's stamp, 2026-11-30T17-11-27.123, back to an ISO time.
      const stamp = /^(\d{4}-\d{2}-\d{2}T\d{2})-(\d{2})-(\d{2}\.\d{3})$/.exec(
        file.slice(prefix.length, file.length - ext.length),
      );
      const at = stamp === null ? Number.NaN : Date.parse(`${stamp[1]}:${stamp[2]}:${stamp[3]}Z`);
      return Number.isNaN(at) ? [] : [{ file, at }];
    })
    .sort((x, y) => y.at - x.at);
  backups.forEach(({ file, at }, i) => {
    const tooMany = maxBackups > 0 && i >= maxBackups;
    const tooOld = maxAgeDays > 0 && now - at > maxAgeDays * 24 * 60 * 60 * 1000;
    if (tooMany || tooOld) unlinkSync(join(dir, file));
  });
}

/** How {@link auditWebhookBackend} batches and retries (kube-apiserver's `--audit-webhook-batch-*` defaults). */
export interface AuditWebhookOptions {
  /**
   * Where events go: a kubeconfig (YAML text, or `{ path }` of a file) whose
   * current cluster is the webhook's URL and CA and whose user its
   * credentials, as `--audit-webhook-config-file` holds.
   */
  kubeconfig: string | { path: string };
  /** Events sent in one request at most. Default 400. */
  batchMaxSize?: number | undefined;
  /** How long the first event of a batch waits for the rest. Default 30,000 ms. */
  batchMaxWaitMs?: number | undefined;
  /** Events held at most while batches are sent; past it new events are dropped. Default 10,000. */
  bufferSize?: number | undefined;
  /** The wait before the first retry of a failed batch; each next one waits 1.5 times longer. Default 10,000 ms. */
  initialBackoffMs?: number | undefined;
  /** Attempts per batch before it is dropped. Default 5. */
  attempts?: number | undefined;
  /** Batch waits and backoffs are measured on it. Default `realClock`. */
  clock?: Clock | undefined;
  /** Where a dropped batch is reported. Default: a line on stderr. */
  onError?: ((error: Error, events: number) => void) | undefined;
}

/**
 * kube-apiserver's webhook backend in batch mode (`--audit-webhook-config-file`):
 * events are buffered and POSTed to the kubeconfig's server as an
 * `audit.k8s.io/v1` EventList, `batchMaxSize` at a time or after
 * `batchMaxWaitMs`, one request at a time; a batch that fails (no answer, or
 * a status of 400 and above) is retried with exponential backoff, then
 * dropped and reported. `close()` sends what is buffered.
 */
export function auditWebhookBackend(options: AuditWebhookOptions): AuditBackend {
  const clock = options.clock ?? realClock;
  const batchMaxSize = options.batchMaxSize ?? 400;
  const batchMaxWaitMs = options.batchMaxWaitMs ?? 30_000;
  const bufferSize = options.bufferSize ?? 10_000;
  const initialBackoffMs = options.initialBackoffMs ?? 10_000;
  const attempts = options.attempts ?? 5;
  const report =
    options.onError ??
    ((error: Error, events: number) =>
      process.stderr.write(
        `Error in audit plugin 'webhook' affecting ${events} audit events: ${error.message}\n`,
      ));
  const config = loadKubeConfig(
    typeof options.kubeconfig === "string" ? { yaml: options.kubeconfig } : { path: options.kubeconfig.path },
  );
  // Reported once rather than per request; the events go with it.
  config.catch(() => undefined);
  const buffer: AuditEvent[] = [];
  let timer: TimerHandle | undefined;
  let sending: Promise<void> | undefined;
  let closed = false;

  const post = async (events: AuditEvent[]): Promise<void> => {
    const kubeConfig = await config;
    const server = kubeConfig.getCurrentCluster()?.server;
    if (!server) throw new Error("the audit webhook kubeconfig names no server");
    const url = new URL(server);
    const body = JSON.stringify({
      kind: "EventList",
      apiVersion: "audit.k8s.io/v1",
      metadata: {},
      items: events,
    });
    const request: https.RequestOptions = {
      method: "POST",
      headers: { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) },
    };
    await kubeConfig.applyToHTTPSOptions(request);
    await new Promise<void>((resolve, reject) => {
      const call = (url.protocol === "https:" ? https.request : http.request)(url, request, (answer) => {
        answer.resume();
        answer.on("end", () =>
          (answer.statusCode ?? 0) >= 400
            ? reject(new Error(`the webhook answered ${answer.statusCode}`))
            : resolve(),
        );
      });
      call.setTimeout(30_000, () => call.destroy(new Error("the webhook did not answer in 30s")));
      call.on("error", reject);
      call.end(body);
    });
  };

  const sendBatch = async (events: AuditEvent[]): Promise<void> => {
    let wait = initialBackoffMs;
    for (let attempt = 1; ; attempt++) {
      try {
        await post(events);
        return;
      } catch (error) {
        if (attempt >= attempts || closed) {
          report(error instanceof Error ? error : new Error(String(error)), events.length);
          return;
        }
      }
      await new Promise<void>((resolve) => clock.setTimeout(resolve, wait));
      wait *= 1.5;
    }
  };

  /** Sends batches while enough events are buffered (all of them with `everything`), one request at a time. */
  const drain = (everything: boolean): Promise<void> => {
    if (sending !== undefined) return sending;
    if (timer !== undefined) {
      clock.clearTimeout(timer);
      timer = undefined;
    }
    sending = (async () => {
      while (buffer.length >= batchMaxSize || (everything && buffer.length > 0)) {
        await sendBatch(buffer.splice(0, batchMaxSize));
      }
    })().finally(() => {
      sending = undefined;
      if (buffer.length >= batchMaxSize) void drain(false);
      else if (buffer.length > 0 && !closed) schedule();
    });
    return sending;
  };

  const schedule = () => {
    timer ??= clock.setTimeout(() => {
      timer = undefined;
      void drain(true);
    }, batchMaxWaitMs);
  };

  return {
    process(event) {
      if (closed) return;
      if (buffer.length >= bufferSize) {
        report(new Error("the audit buffer is full"), 1);
        return;
      }
      buffer.push(event);
      if (buffer.length >= batchMaxSize) void drain(false);
      else if (sending === undefined) schedule();
    },
    async close() {
      closed = true;
      if (timer !== undefined) clock.clearTimeout(timer);
      timer = undefined;
      while (sending !== undefined) await sending;
      await drain(true);
    },
  };
}
