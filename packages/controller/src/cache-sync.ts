import { type Clock, realClock } from "@reconcile/clock";
import { CacheSyncTimeoutError } from "@reconcile/informer";
import type { ControllerInformer } from "./informer-types.js";

/** What waiting for a cache needs of an informer. */
export type SyncedInformer = Pick<ControllerInformer<unknown>, "hasSynced" | "whenSynced" | "lastWatchError">;

export interface WaitForInformersSyncedOptions {
  /** The informers to wait for, by name (the names appear in a timeout error). Required. */
  informers: Readonly<Record<string, SyncedInformer>>;
  /** Stops waiting; the result is then false. Required. */
  signal: AbortSignal;
  /** Gives up after this long with a `CacheSyncTimeoutError` naming the informers not synced; 0 waits for ever. Default 0. */
  timeoutMs?: number | undefined;
  /** The clock of the timeout and of polling. Default `realClock`. */
  clock?: Clock | undefined;
  /** How often an informer without `whenSynced` is polled. Default 100 ms, as client-go. */
  pollIntervalMs?: number | undefined;
}

/**
 * Resolves true once every informer has synced, or false if `signal` aborts
 * first (client-go's `WaitForNamedCacheSync`, with controller-runtime's
 * `CacheSyncTimeout`). Informers that offer `whenSynced` (every
 * `SharedIndexInformer`) are awaited on that signal: no timer runs for them,
 * so a test on a `FakeClock` nobody advances does not hang. Only an informer
 * without it is polled on `clock`. Every timer is cleared before the promise settles.
 */
export async function waitForInformersSynced(options: WaitForInformersSyncedOptions): Promise<boolean> {
  const { signal } = options;
  const clock = options.clock ?? realClock;
  const timeoutMs = options.timeoutMs ?? 0;
  if (!(timeoutMs >= 0) || !Number.isFinite(timeoutMs)) {
    throw new RangeError(
      `waitForInformersSynced: timeoutMs must be a finite non-negative number, got ${timeoutMs}`,
    );
  }
  const pollIntervalMs = options.pollIntervalMs ?? 100;
  if (!(pollIntervalMs > 0) || !Number.isFinite(pollIntervalMs)) {
    throw new RangeError(
      `waitForInformersSynced: pollIntervalMs must be a positive number, got ${pollIntervalMs}`,
    );
  }
  const informers = Object.entries(options.informers);
  if (informers.every(([, informer]) => informer.hasSynced())) return true;
  if (signal.aborted) return false;

  // Settling for any reason aborts `done`, which ends every poll, timer and listener below.
  const finished = new AbortController();
  const done = AbortSignal.any([signal, finished.signal]);
  const stopped = new Promise<"aborted">((resolve) =>
    done.addEventListener("abort", () => resolve("aborted"), { once: true }),
  );
  const waitOne = async (informer: (typeof informers)[number][1]): Promise<void> => {
    if (informer.hasSynced()) return;
    if (informer.whenSynced !== undefined) {
      await Promise.race([informer.whenSynced(), stopped]);
      return;
    }
    while (!informer.hasSynced() && !done.aborted) {
      try {
        await clock.sleep(pollIntervalMs, { signal: done });
      } catch {
        return;
      }
    }
  };
  const synced = Promise.all(informers.map(([, informer]) => waitOne(informer))).then(
    () => "synced" as const,
  );
  const racers: Promise<"synced" | "aborted" | "timeout">[] = [synced, stopped];
  if (timeoutMs > 0) {
    racers.push(
      clock.sleep(timeoutMs, { signal: done }).then(
        () => "timeout" as const,
        () => "aborted" as const,
      ),
    );
  }
  let outcome: "synced" | "aborted" | "timeout";
  try {
    outcome = await Promise.race(racers);
  } finally {
    finished.abort();
  }
  if (outcome === "timeout") {
    const unsynced = informers
      .filter(([, informer]) => !informer.hasSynced())
      .map(([name, informer]) => ({ informer: name, lastError: informer.lastWatchError?.() }));
    // Synced in the same turn the timer fired: that counts as synced.
    if (unsynced.length === 0) return true;
    throw new CacheSyncTimeoutError(timeoutMs, unsynced);
  }
  return outcome === "synced" && !signal.aborted;
}
