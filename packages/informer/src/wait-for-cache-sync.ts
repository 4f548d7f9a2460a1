import { type Clock, realClock } from "@reconcile/clock";

export interface WaitForCacheSyncOptions {
  /** Stops waiting (the result is false). */
  signal: AbortSignal;
  /** Gives up after this long (the result is false); 0 or absent waits forever. */
  timeoutMs?: number | undefined;
  /** How often to check a plain `hasSynced` function. Default: 100 ms, as client-go. */
  pollIntervalMs?: number | undefined;
  /** Default: `realClock`. */
  clock?: Clock | undefined;
}

/** What can be waited for: a `hasSynced` function, or an informer (whose `whenSynced` is awaited instead of polled). */
export type CacheSyncSource = (() => boolean) | { hasSynced(): boolean; whenSynced?(): Promise<void> };

/**
 * Resolves true once every source has synced, or false if the signal aborts
 * or the timeout passes first (client-go's `WaitForCacheSync`, plus the
 * timeout it lacks). Informers (anything with `whenSynced`, such as
 * `SharedIndexInformer`) are awaited on that signal; plain functions are
 * checked at once, then every 100 ms on `clock`. Timers are cleared before
 * the promise settles.
 */
export async function waitForCacheSync(
  signalOrOptions: AbortSignal | WaitForCacheSyncOptions,
  ...sources: CacheSyncSource[]
): Promise<boolean> {
  const options: WaitForCacheSyncOptions =
    signalOrOptions instanceof AbortSignal ? { signal: signalOrOptions } : signalOrOptions;
  const clock = options.clock ?? realClock;
  const pollIntervalMs = options.pollIntervalMs ?? 100;
  if (!(pollIntervalMs > 0))
    throw new RangeError(`waitForCacheSync: pollIntervalMs must be positive, got ${pollIntervalMs}`);
  const informers: { hasSynced(): boolean; whenSynced(): Promise<void> }[] = [];
  const functions: (() => boolean)[] = [];
  for (const source of sources) {
    if (typeof source === "function") functions.push(source);
    else if (source.whenSynced !== undefined) informers.push(source as (typeof informers)[number]);
    else functions.push(() => source.hasSynced());
  }
  const deadline = options.timeoutMs ? clock.now() + options.timeoutMs : Number.POSITIVE_INFINITY;
  const { signal } = options;
  if (informers.some((informer) => !informer.hasSynced())) {
    if (signal.aborted) return false;
    // One wait on every informer's synced signal, the abort and the deadline; settling clears the rest.
    const finished = new AbortController();
    const done = AbortSignal.any([signal, finished.signal]);
    const waits: Promise<unknown>[] = [
      Promise.all(informers.map((informer) => informer.whenSynced())),
      new Promise<void>((resolve) => done.addEventListener("abort", () => resolve(), { once: true })),
    ];
    if (Number.isFinite(deadline)) {
      waits.push(clock.sleep(Math.max(0, deadline - clock.now()), { signal: done }).catch(() => {}));
    }
    try {
      await Promise.race(waits);
    } finally {
      finished.abort();
    }
    if (informers.some((informer) => !informer.hasSynced())) return false;
  }
  // Plain functions are polled.
  for (;;) {
    if (functions.every((synced) => synced())) return true;
    if (signal.aborted) return false;
    const remaining = deadline - clock.now();
    if (remaining <= 0) return false;
    try {
      await clock.sleep(Math.min(pollIntervalMs, remaining), { signal });
    } catch {
      return false;
    }
  }
}
