// Workqueue benchmarks (issue 2 section 6). Each workload is defined so that
// another implementation (client-go's Go workqueue, for one) can run the same:
//
// (a) one worker: add 100,000 distinct keys `ns/name-i`, then get → done until
//     the queue is empty. Reports items/s.
// (b) one producer adds random keys from a 10,000-key space (`ns/name-i`) in
//     bursts of 100, yielding between bursts; 16 async workers loop get → done.
//     Runs for 2 s. Reports completed items/s in that window, and how many adds
//     were deduplicated (collapsed into an item that was already waiting).
// (c) addRateLimited of 100,000 distinct keys on a rate-limiting queue whose
//     limiter is the per-item exponential one (5 ms base, 1000 s cap). Reports
//     ns per call.
// (d) addAfter of 100,000 distinct keys with random delays in [0, 10 ms) on the
//     real clock, one worker looping get → done. Reports ms from the first
//     addAfter until every item has been gotten and done.
//
// Keys are built before the clock starts (then a full GC, when the runtime
// exposes it, so the garbage of setting up is not collected inside the timed
// part); every run gets fresh strings so their hashes are computed inside the
// timed part, as they would be for keys arriving from an informer. 5 measured
// runs after 1 warm-up, median reported.
import os from "node:os";
import { measure, median, writeResults } from "../../../tools/bench/index.js";
import { DelayingQueue, ItemExponentialFailureRateLimiter, Queue, RateLimitingQueue } from "../src/index.js";

const distinctKeys = 100_000;
const keySpace = 10_000;
const workersB = 16;
const burstB = 100;
const durationB = 2_000;

function makeKeys(count: number): string[] {
  // Template literals build new strings on every call, so each run hashes its keys afresh.
  const keys = new Array<string>(count);
  for (let i = 0; i < count; i++) keys[i] = `ns/name-${i}`;
  return keys;
}

/** Process CPU time in ms (user + system), a second view that the machine's other load inflates less. */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** CPU-time-based figures per workload, every run including the warm-up. */
const cpuBased = { a: [] as number[], b: [] as number[], c: [] as number[], d: [] as number[] };

/** Collects the garbage of setting up, when run with --expose-gc (as `pnpm bench` does). */
function collectGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

async function workloadA(): Promise<number> {
  const keys = makeKeys(distinctKeys);
  const queue = new Queue<string>();
  collectGarbage();
  const cpuStart = cpuMs();
  const start = performance.now();
  for (let i = 0; i < keys.length; i++) queue.add(keys[i]!);
  while (queue.len() > 0) {
    const { item } = await queue.get();
    queue.done(item!);
  }
  const elapsed = performance.now() - start;
  cpuBased.a.push(Math.round(distinctKeys / ((cpuMs() - cpuStart) / 1000)));
  queue.shutDown();
  return Math.round(distinctKeys / (elapsed / 1000));
}

/**
 * The floor under (a), with no queue at all: per key one `Map.set` of a small
 * record, then per key an `await` of an already-resolved promise, a `Map.get`
 * and a `Map.delete` — the least any map-based queue whose `get` returns a
 * promise does per item.
 */
async function floorA(): Promise<number> {
  const keys = makeKeys(distinctKeys);
  const states = new Map<string, { item: string; flags: number }>();
  const order: { item: string; flags: number }[] = [];
  collectGarbage();
  const start = performance.now();
  for (let i = 0; i < keys.length; i++) {
    const state = { item: keys[i]!, flags: 1 };
    states.set(state.item, state);
    order.push(state);
  }
  for (let i = 0; i < order.length; i++) {
    const state = await Promise.resolve(order[i]!);
    if (states.get(state.item) === state) states.delete(state.item);
  }
  return Math.round(distinctKeys / ((performance.now() - start) / 1000));
}

const dedupB: number[] = [];

async function workloadB(): Promise<number> {
  const keys = makeKeys(keySpace);
  const queue = new Queue<string>();
  let completed = 0;
  let inWindow = true;
  let completedInWindow = 0;
  const worker = async () => {
    for (;;) {
      const result = await queue.get();
      if (result.shutdown) return;
      queue.done(result.item);
      completed++;
    }
  };
  const workers: Promise<void>[] = [];
  for (let i = 0; i < workersB; i++) workers.push(worker());
  let adds = 0;
  collectGarbage();
  const cpuStart = cpuMs();
  let cpuInWindow = 0;
  const start = performance.now();
  const deadline = start + durationB;
  while (inWindow) {
    for (let i = 0; i < burstB; i++) queue.add(keys[(Math.random() * keySpace) | 0]!);
    adds += burstB;
    await undefined;
    if (performance.now() >= deadline) {
      inWindow = false;
      completedInWindow = completed;
      cpuInWindow = cpuMs() - cpuStart;
    }
  }
  const elapsed = performance.now() - start;
  queue.shutDown();
  await Promise.all(workers);
  // Every add that was not collapsed into a waiting item is processed exactly once.
  dedupB.push(adds - completed);
  cpuBased.b.push(Math.round(completedInWindow / (cpuInWindow / 1000)));
  return Math.round(completedInWindow / (elapsed / 1000));
}

async function workloadC(): Promise<number> {
  const keys = makeKeys(distinctKeys);
  const queue = new RateLimitingQueue<string>({
    rateLimiter: new ItemExponentialFailureRateLimiter({ baseDelayMs: 5, maxDelayMs: 1_000_000 }),
  });
  collectGarbage();
  const cpuStart = cpuMs();
  const start = performance.now();
  for (let i = 0; i < keys.length; i++) queue.addRateLimited(keys[i]!);
  const elapsed = performance.now() - start;
  cpuBased.c.push(((cpuMs() - cpuStart) * 1e6) / distinctKeys);
  queue.shutDown();
  return (elapsed * 1e6) / distinctKeys;
}

async function workloadD(): Promise<number> {
  const keys = makeKeys(distinctKeys);
  const delays = keys.map(() => Math.random() * 10);
  const queue = new DelayingQueue<string>();
  let completed = 0;
  collectGarbage();
  const cpuStart = cpuMs();
  const start = performance.now();
  const worker = (async () => {
    while (completed < distinctKeys) {
      const { item } = await queue.get();
      queue.done(item!);
      completed++;
    }
  })();
  for (let i = 0; i < keys.length; i++) queue.addAfter(keys[i]!, delays[i]!);
  await worker;
  const elapsed = performance.now() - start;
  cpuBased.d.push(cpuMs() - cpuStart);
  queue.shutDown();
  return elapsed;
}

const loadAverageBefore = os.loadavg();
const measurements = [
  await measure(
    {
      name: "a: add 100k distinct keys, then get+done (1 worker)",
      unit: "items/s",
      higherIsBetter: true,
      target: 3e6,
    },
    workloadA,
  ),
  await measure(
    {
      name: "a-floor: Map set, then await + Map get + delete per key, no queue",
      unit: "items/s",
      higherIsBetter: true,
    },
    floorA,
  ),
  await measure(
    {
      name: "b: 1 producer, 16 workers, 10k-key space, 2 s",
      unit: "items/s",
      higherIsBetter: true,
      target: 2e6,
    },
    workloadB,
  ),
  await measure(
    {
      name: "c: addRateLimited of 100k distinct keys (exponential limiter)",
      unit: "ns/call",
      higherIsBetter: false,
      target: 500,
    },
    workloadC,
  ),
  await measure(
    {
      name: "d: addAfter of 100k keys, delays in [0, 10 ms), until all done",
      unit: "ms",
      higherIsBetter: false,
      target: 120,
    },
    workloadD,
  ),
];
const cpuMedian = (runs: number[]) => median(runs.slice(1));
const cpuView = (runs: number[]) => ({ cpuTimeBased: { runs: runs.slice(1), median: cpuMedian(runs) } });
console.log(`b: adds deduplicated per run (after warm-up): ${dedupB.slice(1).join(", ")}`);
const [a, aFloor, b, c, d] = measurements;
for (const [name, runs] of Object.entries(cpuBased))
  console.log(`${name}: CPU-time-based median ${cpuMedian(runs)}`);
writeResults(
  "workqueue",
  [
    { ...a!, extra: cpuView(cpuBased.a) },
    aFloor!,
    { ...b!, extra: { addsDeduplicated: dedupB.slice(1), ...cpuView(cpuBased.b) } },
    { ...c!, extra: cpuView(cpuBased.c) },
    { ...d!, extra: cpuView(cpuBased.d) },
  ],
  {
    command: "pnpm bench workqueue",
    // The machine is shared: the load average says how much else ran at the same time.
    loadAverage: { before: loadAverageBefore, after: os.loadavg() },
  },
);
