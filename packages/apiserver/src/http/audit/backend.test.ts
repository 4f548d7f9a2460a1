import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FakeClock } from "@reconcile/clock";
import { afterEach, describe, expect, it } from "vitest";
import { auditLogBackend, auditWebhookBackend } from "./backend.js";
import type { AuditEvent } from "./event.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A webhook that records each EventList it is sent (and its Authorization), answering `codes` in turn, then 200. */
async function collector(codes: number[] = []) {
  const received: { authorization: string | undefined; kind: string; ids: string[] }[] = [];
  const server = http.createServer((request, response) => {
    let body = "";
    request.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
    request.on("end", () => {
      const list = JSON.parse(body) as { kind: string; apiVersion: string; items: AuditEvent[] };
      received.push({
        authorization: request.headers.authorization,
        kind: `${list.apiVersion}/${list.kind}`,
        ids: list.items.map((e) => e.auditID),
      });
      response.statusCode = codes.shift() ?? 200;
      response.end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/audit`;
  const kubeconfig = [
    "apiVersion: v1",
    "kind: Config",
    "clusters: [{name: sink, cluster: {server: '" + url + "'}}]",
    "users: [{name: apiserver, user: {token: sink-token}}]",
    "contexts: [{name: default, context: {cluster: sink, user: apiserver}}]",
    "current-context: default",
  ].join("\n");
  return { received, kubeconfig };
}

function event(id: string): AuditEvent {
  return {
    kind: "Event",
    apiVersion: "audit.k8s.io/v1",
    level: "Metadata",
    auditID: id,
    stage: "ResponseComplete",
    requestURI: "/version",
    verb: "get",
    user: {},
    requestReceivedTimestamp: "2026-01-01T00:00:00.000000Z",
    stageTimestamp: "2026-01-01T00:00:00.000000Z",
  };
}

describe("auditWebhookBackend (kube-apiserver's --audit-webhook-config-file, batch mode)", () => {
  it("sends full batches at once and the rest after the batch wait, as EventLists with the kubeconfig's credentials", async () => {
    const { received, kubeconfig } = await collector();
    const clock = new FakeClock(0);
    const backend = auditWebhookBackend({ kubeconfig, batchMaxSize: 3, batchMaxWaitMs: 5_000, clock });
    for (const id of ["a", "b", "c", "d"]) backend.process(event(id));
    await expect.poll(() => received.length).toBe(1);
    expect(received[0]).toEqual({
      authorization: "Bearer sink-token",
      kind: "audit.k8s.io/v1/EventList",
      ids: ["a", "b", "c"],
    });
    // "d" waits for the rest of its batch, until the wait is over.
    await expect.poll(() => clock.pendingTimers()).toEqual([{ at: 5_000, in: 5_000 }]);
    expect(received).toHaveLength(1);
    await clock.advance(5_000);
    await expect.poll(() => received.map((r) => r.ids)).toEqual([["a", "b", "c"], ["d"]]);
    await backend.close?.();
  });

  it("retries a failed batch with backoff, and drops (and reports) one that keeps failing", async () => {
    const { received, kubeconfig } = await collector([500, 503, 500, 500, 500]);
    const clock = new FakeClock(0);
    const dropped: string[] = [];
    const backend = auditWebhookBackend({
      kubeconfig,
      batchMaxSize: 1,
      initialBackoffMs: 1_000,
      attempts: 3,
      clock,
      onError: (error, events) => dropped.push(`${events}: ${error.message}`),
    });
    backend.process(event("first"));
    // Each failure waits for its backoff (1 s, then 1.5 s) before the next attempt.
    const retried = async (count: number, backoff: number) => {
      await expect.poll(() => received.length).toBe(count);
      await expect.poll(() => clock.pendingTimers().map((timer) => timer.in)).toEqual([backoff]);
      await clock.advance(backoff);
    };
    await retried(1, 1_000);
    await retried(2, 1_500);
    // The third attempt is answered 500 too (the first two were 500 and 503): dropped.
    await expect.poll(() => dropped).toEqual(["1: the webhook answered 500"]);
    backend.process(event("second"));
    // Its first two attempts meet the last two 500s; the third is answered 200.
    await retried(4, 1_000);
    await retried(5, 1_500);
    await expect
      .poll(() => received.map((r) => r.ids[0]))
      .toEqual(["first", "first", "first", "second", "second", "second"]);
    expect(dropped).toEqual(["1: the webhook answered 500"]);
    await backend.close?.();
  });

  it("sends what it holds when closed, and drops events past its buffer", async () => {
    const { received, kubeconfig } = await collector();
    const dropped: number[] = [];
    const backend = auditWebhookBackend({
      kubeconfig,
      bufferSize: 2,
      clock: new FakeClock(0),
      onError: (_error, events) => dropped.push(events),
    });
    for (const id of ["a", "b", "c"]) backend.process(event(id));
    expect(dropped).toEqual([1]);
    await backend.close?.();
    expect(received.map((r) => r.ids)).toEqual([["a", "b"]]);
    backend.process(event("late"));
    expect(received).toHaveLength(1);
  });
});

describe("auditLogBackend's rotation (kube-apiserver's --audit-log-maxsize, -maxbackup, -maxage)", () => {
  it("renames a file that would pass its size to <name>-<UTC time>.log, and keeps the newest maxBackups", async () => {
    const dir = mkdtempSync(join(tmpdir(), "audit-rotate-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, "audit.log");
    const clock = new FakeClock(Date.parse("2026-11-30T17:00:00.000Z"));
    const lineBytes = Buffer.byteLength(`${JSON.stringify(event("a"))}\n`);
    // Room for two events per file.
    const backend = auditLogBackend(path, {
      maxSizeMB: (2.5 * lineBytes) / (1024 * 1024),
      maxBackups: 2,
      clock,
    });
    for (const id of ["a", "b", "c", "d", "e", "f", "g"]) {
      backend.process(event(id));
      clock.setTime(clock.now() + 1_000);
    }
    await backend.close?.();
    const ids = (file: string) =>
      readFileSync(join(dir, file), "utf8")
        .trimEnd()
        .split("\n")
        .map((line) => (JSON.parse(line) as AuditEvent).auditID);
    // Rotations came at c (17:00:02), e (17:00:04) and g (17:00:06); the oldest backup was pruned.
    expect(readdirSync(dir).sort()).toEqual([
      "audit-2026-11-30T17-00-04.000.log",
      "audit-2026-11-30T17-00-06.000.log",
      "audit.log",
    ]);
    expect(ids("audit-2026-11-30T17-00-04.000.log")).toEqual(["c", "d"]);
    expect(ids("audit-2026-11-30T17-00-06.000.log")).toEqual(["e", "f"]);
    expect(ids("audit.log")).toEqual(["g"]);
  });

  it("removes rotated files older than maxAgeDays, and appends to a file that is already there", async () => {
    const dir = mkdtempSync(join(tmpdir(), "audit-age-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, "audit.log");
    writeFileSync(join(dir, "audit-2026-11-01T00-00-00.000.log"), "old\n");
    writeFileSync(join(dir, "audit-2026-11-29T00-00-00.000.log"), "recent\n");
    writeFileSync(join(dir, "other.log"), "not ours\n");
    writeFileSync(path, `${JSON.stringify(event("before"))}\n`);
    const clock = new FakeClock(Date.parse("2026-11-30T12:00:00.000Z"));
    const backend = auditLogBackend(path, { maxSizeMB: 1e-9, maxAgeDays: 7, clock });
    backend.process(event("after"));
    await backend.close?.();
    expect(readdirSync(dir).sort()).toEqual([
      "audit-2026-11-29T00-00-00.000.log",
      "audit-2026-11-30T12-00-00.000.log",
      "audit.log",
      "other.log",
    ]);
    expect(readFileSync(join(dir, "audit-2026-11-30T12-00-00.000.log"), "utf8")).toContain(
      '"auditID":"before"',
    );
    expect(readFileSync(path, "utf8")).toContain('"auditID":"after"');
  });
});
