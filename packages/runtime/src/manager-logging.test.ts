import { configMaps } from "@reconcile/api";
import { FakeClock } from "@reconcile/clock";
import { afterEach, describe, expect, it, vi } from "vitest";
import { newControllerManagedBy } from "./builder.js";
import { eventually, startTestEnvironment, type TestEnvironment } from "./envtest/index.js";
import { Manager } from "./manager.js";

/** The JSON lines written to standard error while `body` runs. */
async function stderrLines(body: () => Promise<void>): Promise<Record<string, unknown>[]> {
  const lines: string[] = [];
  const spy = vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  try {
    await body();
  } finally {
    spy.mockRestore();
  }
  return lines.flatMap((text) => text.split("\n").filter(Boolean)).map((line) => JSON.parse(line));
}

describe("Manager logging by default", () => {
  let env: TestEnvironment | undefined;
  afterEach(async () => {
    await env?.stop();
  });

  it("writes reconcile errors, cache sync and the probe address to standard error as JSON lines", async () => {
    const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
    env = await startTestEnvironment({ clock, http: false });
    const records = await stderrLines(async () => {
      const manager = new Manager({ client: env!.client, clock });
      let failed = 0;
      newControllerManagedBy(manager)
        .named("failing")
        .for(configMaps)
        .complete(async () => {
          failed++;
          throw new Error("the backing service is down");
        });
      const endpoints = await manager.listen();
      const stop = new AbortController();
      const running = manager.run({ signal: stop.signal });
      await env!.client
        .resource(configMaps, "default")
        .create({ metadata: { name: "a", namespace: "default" } });
      await eventually(() => failed >= 1, { clock });
      stop.abort();
      await running;
      await endpoints.close();
    });
    const error = records.find((r) => r.msg === "Reconciler error");
    expect(error).toMatchObject({
      level: 50,
      controller: "failing",
      namespace: "default",
      name: "a",
      err: { type: "Error", message: "the backing service is down" },
    });
    expect(error?.reconcileID).toMatch(/^[0-9a-f-]{36}$/);
    expect(records.map((r) => r.msg)).toEqual(
      expect.arrayContaining(["serving metrics and health probes", "Caches are synced"]),
    );
  });

  it("says so when the caches take more than 5 s to sync", async () => {
    const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
    const lines: Record<string, unknown>[] = [];
    // A client whose lists never answer: the caches cannot sync.
    env = await startTestEnvironment({ clock, http: false });
    const client = env.client;
    const stuck = {
      ...client,
      resource: (kind: never, namespace?: string) => ({
        ...client.resource(kind, namespace),
        list: (options?: { signal?: AbortSignal }) =>
          new Promise<never>((_resolve, reject) =>
            options?.signal?.addEventListener("abort", () => reject(new Error("aborted")), { once: true }),
          ),
      }),
    } as typeof client;
    const manager = new Manager({
      client: stuck,
      clock,
      logger: {
        debug: () => {},
        info: (obj, msg) => lines.push({ ...obj, msg }),
        warn: () => {},
        error: () => {},
        child() {
          return this;
        },
      },
    });
    newControllerManagedBy(manager)
      .for(configMaps)
      .complete(async () => {});
    const stop = new AbortController();
    const running = manager.run({ signal: stop.signal });
    await new Promise((resolve) => setImmediate(resolve));
    await clock.advance(4_999);
    expect(lines.filter((l) => l.msg === "Waiting for caches to sync")).toEqual([]);
    await clock.advance(1);
    expect(lines.filter((l) => l.msg === "Waiting for caches to sync")).toEqual([
      { waitedSeconds: 5, msg: "Waiting for caches to sync" },
    ]);
    stop.abort();
    await running.catch(() => {});
  });
});
