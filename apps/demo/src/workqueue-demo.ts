// The workqueue at work, on the real clock: a hot key collapses into one
// sync, a failing key is retried with per-item exponential backoff, and
// shutDownWithDrain waits for the sync in flight before the workers exit.
// Exits non-zero if anything did not happen as client-go's queue promises.
import { ItemExponentialFailureRateLimiter, RateLimitingQueue } from "@reconcile/workqueue";

const started = Date.now();
const at = () => `${String(Date.now() - started).padStart(5)} ms`;
const log = (message: string) => console.log(`${at()}  ${message}`);

export async function runWorkqueueDemo(): Promise<boolean> {
  const queue = new RateLimitingQueue<string>({
    rateLimiter: new ItemExponentialFailureRateLimiter<string>({ baseDelayMs: 50, maxDelayMs: 1_000 }),
  });
  const syncs = new Map<string, number>();
  const retryDelays: number[] = [];
  const flakyAttempts: number[] = [];
  let drained = false;

  async function sync(key: string): Promise<void> {
    const count = (syncs.get(key) ?? 0) + 1;
    syncs.set(key, count);
    if (key === "default/flaky") flakyAttempts.push(Date.now());
    if (key === "default/flaky" && count <= 4) throw new Error(`attempt ${count} failed`);
    if (key === "default/slow") await new Promise((resolve) => setTimeout(resolve, 300));
  }

  async function worker(id: number): Promise<void> {
    for (;;) {
      const { item: key, shutdown } = await queue.get();
      if (shutdown) return;
      try {
        await sync(key);
        log(`worker ${id}: synced ${key}${key === "default/slow" ? " (took 300 ms)" : ""}`);
        queue.forget(key);
      } catch (error) {
        const delay = 50 * 2 ** queue.numRequeues(key);
        retryDelays.push(delay);
        log(`worker ${id}: ${key}: ${(error as Error).message}; retrying in ${delay} ms`);
        queue.addRateLimited(key);
      } finally {
        queue.done(key);
      }
    }
  }

  console.log("1. dedup: 1,000 adds of one hot key while it waits collapse into one item");
  for (let i = 0; i < 1_000; i++) queue.add("default/hot");
  queue.add("default/other");
  log(`queue length after 1,001 adds: ${queue.len()}`);
  const lengthAfterBurst = queue.len();

  console.log(
    "2. retry: default/flaky fails four times; the rate limiter spaces the retries 50, 100, 200, 400 ms",
  );
  queue.add("default/flaky");
  const workers = [worker(1), worker(2)];
  await new Promise((resolve) => setTimeout(resolve, 900));

  console.log("3. shutdown: shutDownWithDrain waits for the sync in flight, then the workers exit");
  queue.add("default/slow");
  await new Promise((resolve) => setTimeout(resolve, 20));
  log("shutDownWithDrain() called");
  await queue.shutDownWithDrain();
  drained = syncs.get("default/slow") === 1;
  log(`drained; default/slow finished first: ${drained}`);
  await Promise.all(workers);
  log("both workers exited");

  queue.add("default/late");
  const lengthAfterLateAdd = queue.len();
  const gaps = flakyAttempts.slice(1).map((time, i) => time - flakyAttempts[i]!);
  const checks: [string, boolean][] = [
    ["the hot key was queued once", lengthAfterBurst === 2 && syncs.get("default/hot") === 1],
    ["default/flaky synced 5 times (4 failures, then success)", syncs.get("default/flaky") === 5],
    ["retry delays were 50, 100, 200, 400 ms", retryDelays.join(",") === "50,100,200,400"],
    [
      `retries waited at least their delay (gaps: ${gaps.join(", ")} ms)`,
      gaps.length === 4 && gaps.every((gap, i) => gap >= retryDelays[i]! - 2),
    ],
    ["shutDownWithDrain waited for the slow sync", drained],
    ["adds after shutdown are dropped", lengthAfterLateAdd === 0],
  ];
  console.log();
  for (const [what, ok] of checks) console.log(`${ok ? "ok  " : "FAIL"} ${what}`);
  return checks.every(([, ok]) => ok);
}
