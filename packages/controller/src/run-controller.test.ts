import { FakeClock } from "@reconcile/clock";
import { CacheSyncTimeoutError } from "@reconcile/informer";
import { RateLimitingQueue } from "@reconcile/workqueue";
import { describe, expect, it } from "vitest";
import type { Logger } from "./logger.js";
import { runController } from "./run-controller.js";

function informer(options: { signal?: boolean } = {}) {
  let synced = false;
  let markSynced!: () => void;
  const done = new Promise<void>((resolve) => {
    markSynced = resolve;
  });
  return {
    hasSynced: () => synced,
    ...(options.signal === false ? {} : { whenSynced: () => done }),
    sync() {
      synced = true;
      markSynced();
    },
  };
}

async function settle(clock: FakeClock): Promise<void> {
  for (let i = 0; i < 5; i++) await clock.flush();
}

function messages(records: string[]): Logger {
  const logger: Logger = {
    debug: () => {},
    info: (_obj, msg) => void records.push(msg ?? ""),
    warn: () => {},
    error: () => {},
    child: () => logger,
  };
  return logger;
}

describe("runController", () => {
  it("syncs nothing until the caches sync, then runs workers until abort, then awaits onStop", async () => {
    const clock = new FakeClock();
    const queue = new RateLimitingQueue<string>({ clock });
    const pods = informer();
    const sets = informer();
    const synced: string[] = [];
    const log: string[] = [];
    let stopped = false;
    const abort = new AbortController();
    queue.add("ns/a");
    const run = runController({
      name: "example",
      signal: abort.signal,
      informers: { pods, sets },
      queue,
      clock,
      workers: 2,
      logger: messages(log),
      sync: async (key) => {
        synced.push(key);
      },
      onStop: async () => {
        await Promise.resolve();
        stopped = true;
      },
    });
    await settle(clock);
    pods.sync();
    await settle(clock);
    expect(synced).toEqual([]);
    sets.sync();
    await settle(clock);
    expect(synced).toEqual(["ns/a"]);
    abort.abort();
    await run;
    expect(stopped).toBe(true);
    expect(queue.shuttingDown()).toBe(true);
    expect(log).toEqual(["Starting controller", "Caches are synced", "Shutting down controller"]);
    expect(clock.pendingTimers()).toEqual([]);
  });

  it("aborted before the caches sync, shuts the queue down and resolves without a sync or a timer left", async () => {
    const clock = new FakeClock();
    const queue = new RateLimitingQueue<string>({ clock });
    const abort = new AbortController();
    let syncs = 0;
    let stopped = false;
    queue.add("ns/a");
    const run = runController({
      name: "example",
      signal: abort.signal,
      informers: { pods: informer(), fake: informer({ signal: false }) },
      queue,
      clock,
      cacheSyncTimeoutMs: 60_000,
      sync: async () => {
        syncs++;
      },
      onStop: () => {
        stopped = true;
      },
    });
    await clock.advance(1000);
    abort.abort();
    await run;
    expect(syncs).toBe(0);
    expect(stopped).toBe(true);
    expect(queue.shuttingDown()).toBe(true);
    expect(clock.pendingTimers()).toEqual([]);
  });

  it("rejects with a CacheSyncTimeoutError after cacheSyncTimeoutMs, having shut the queue down", async () => {
    const clock = new FakeClock();
    const queue = new RateLimitingQueue<string>({ clock });
    const run = runController({
      name: "example",
      signal: new AbortController().signal,
      informers: { pods: informer() },
      queue,
      clock,
      cacheSyncTimeoutMs: 2000,
      sync: async () => {},
    }).catch((error: unknown) => error);
    await clock.advance(2000);
    const error = await run;
    expect(error).toBeInstanceOf(CacheSyncTimeoutError);
    expect((error as Error).message).toBe("caches did not sync within 2000ms: pods");
    expect(queue.shuttingDown()).toBe(true);
  });

  it("passes the stop signal to each sync, so an API call in flight is cut short by the abort", async () => {
    const clock = new FakeClock();
    const queue = new RateLimitingQueue<string>({ clock });
    const pods = informer();
    pods.sync();
    const abort = new AbortController();
    let seen: AbortSignal | undefined;
    queue.add("ns/a");
    const run = runController({
      name: "example",
      signal: abort.signal,
      informers: { pods },
      queue,
      clock,
      sync: (_key, { signal }) => {
        seen = signal;
        // A request that only ends when aborted.
        return new Promise((_resolve, reject) =>
          signal.addEventListener("abort", () => reject(signal.reason), { once: true }),
        );
      },
    });
    await settle(clock);
    expect(seen?.aborted).toBe(false);
    abort.abort();
    await run;
    expect(seen?.aborted).toBe(true);
  });

  it("rejects a worker count that is not a positive integer", async () => {
    await expect(
      runController({
        name: "example",
        signal: new AbortController().signal,
        informers: {},
        queue: new RateLimitingQueue<string>(),
        workers: 0,
        sync: async () => {},
      }),
    ).rejects.toThrow("example: workers must be a positive integer, got 0");
  });
});
