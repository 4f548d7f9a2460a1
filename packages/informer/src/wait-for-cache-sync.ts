import { type Clock, realClock } from "@reconcile/clock";

export interface WaitForCacheSyncOptions {
  /** Stops waiting (the result is false). */
  signal: AbortSignal;
  /** Gives up after this long (the result is false); 0 or absent waits forever. */
  timeoutMs?: number | undefined;
  /** How often to check. Default: 100 ms, as client-go. */
  pollIntervalMs?: number | undefined;
  /** Default: `realClock`. */
  clock?: Clock | undefined;
}

/**
 * Resolves true once every `hasSynced` returns true (checked at once, then
 * every 100 ms), or false if the signal aborts or the timeout passes first
 * (client-go's `WaitForCacheSync`, plus the timeout it lacks).
 */
export async function waitForCacheSync(
  signalOrOptions: AbortSignal | WaitForCacheSyncOptions,
  ...hasSynced: (() => boolean)[]
): Promise<boolean> {
  const options: WaitForCacheSyncOptions =
    signalOrOptions instanceof AbortSignal ? { signal: signalOrOptions } : signalOrOptions;
  const clock = options.clock ?? realClock;
  const pollIntervalMs = options.pollIntervalMs ?? 100;
  if (!(pollIntervalMs > 0))
    throw new RangeError(`waitForCacheSync: pollIntervalMs must be positive, got ${pollIntervalMs}`);
  const deadline = options.timeoutMs ? clock.now() + options.timeoutMs : Number.POSITIVE_INFINITY;
  for (;;) {
    if (hasSynced.every((synced) => synced())) return true;
    if (options.signal.aborted) return false;
    const remaining = deadline - clock.now();
    if (remaining <= 0) return false;
    try {
      await clock.sleep(Math.min(pollIntervalMs, remaining), { signal: options.signal });
    } catch {
      return false;
    }
  }
}
