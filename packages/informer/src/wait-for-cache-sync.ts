import { errorMessage, ReconcileError } from "@reconcile/api";
import { type Clock, realClock } from "@reconcile/clock";

/**
 * What can be waited for: a `hasSynced` function, or an informer. An informer
 * with `whenSynced` (every `SharedIndexInformer`) is awaited on it, with no
 * timer; one with only `hasSynced` is polled. `lastWatchError`, where there is
 * one, is named in a timeout error.
 */
export type CacheSyncSource =
  | (() => boolean)
  | { hasSynced(): boolean; whenSynced?(): Promise<void>; lastWatchError?(): unknown };

export interface WaitForCacheSyncOptions {
  /** Stops waiting (the result is false). Required. */
  signal: AbortSignal;
  /** Gives up after this long on `clock`; 0 or absent waits until the signal aborts. Default 0. */
  timeoutMs?: number | undefined;
  /**
   * How often a source without `whenSynced` is checked, in ms. Default 100, as client-go.
   * Polls run on the real timers, not on `clock`: see {@link waitForNamedCacheSync}.
   */
  pollIntervalMs?: number | undefined;
  /** The clock of the timeout. Default `realClock`. */
  clock?: Clock | undefined;
}

export interface WaitForNamedCacheSyncOptions extends WaitForCacheSyncOptions {
  /** What to wait for, by name; the names appear in a {@link CacheSyncTimeoutError}. Required. */
  informers: Readonly<Record<string, CacheSyncSource>>;
}

const cacheSyncTimeoutMarker = Symbol.for("reconcile.cache-sync-timeout-error");

/** Informers did not sync in time; names each one and the last error it met. */
export class CacheSyncTimeoutError extends ReconcileError {
  readonly [cacheSyncTimeoutMarker] = true;
  readonly unsynced: readonly { informer: string; lastError: unknown }[];
  constructor(timeoutMs: number, unsynced: readonly { informer: string; lastError: unknown }[]) {
    const names = unsynced
      .map(({ informer, lastError }) =>
        lastError === undefined ? informer : `${informer} (last error: ${errorMessage(lastError)})`,
      )
      .join(", ");
    super("informer.cache-sync-timeout", `caches did not sync within ${timeoutMs}ms: ${names}`);
    this.name = "CacheSyncTimeoutError";
    this.unsynced = unsynced;
  }

  static override isInstance(error: unknown): error is CacheSyncTimeoutError {
    return ReconcileError.hasMarker(error, cacheSyncTimeoutMarker);
  }
}

/**
 * The one cache-sync waiter (client-go's `WaitForNamedCacheSync`, with
 * controller-runtime's `CacheSyncTimeout`): resolves true once every source
 * has synced, false if `signal` aborts first, and rejects with
 * {@link CacheSyncTimeoutError} naming the laggards after `timeoutMs`.
 *
 * Time in tests: informers are awaited on `whenSynced`, so nothing here waits
 * on a timer for them; the timeout runs on the injected `clock` (advance a
 * `FakeClock` to fire it); and `hasSynced` functions are polled on the real
 * timers whatever the clock, because a poll is not time the code under test
 * can observe — so a `FakeClock` that nobody advances never holds a wait up.
 * Every timer and listener is cleared before the promise settles.
 */
export async function waitForNamedCacheSync(options: WaitForNamedCacheSyncOptions): Promise<boolean> {
  const { signal } = options;
  const clock = options.clock ?? realClock;
  const timeoutMs = options.timeoutMs ?? 0;
  if (!(timeoutMs >= 0) || !Number.isFinite(timeoutMs)) {
    throw new RangeError(
      `waitForCacheSync: timeoutMs must be a finite non-negative number, got ${timeoutMs}`,
    );
  }
  const pollIntervalMs = options.pollIntervalMs ?? 100;
  if (!(pollIntervalMs > 0) || !Number.isFinite(pollIntervalMs)) {
    throw new RangeError(`waitForCacheSync: pollIntervalMs must be a positive number, got ${pollIntervalMs}`);
  }
  const sources = Object.entries(options.informers);
  const synced = (source: CacheSyncSource) => (typeof source === "function" ? source() : source.hasSynced());
  if (sources.every(([, source]) => synced(source))) return true;
  if (signal.aborted) return false;

  // Settling for any reason aborts `done`, which ends every poll, timer and listener below.
  const finished = new AbortController();
  const done = AbortSignal.any([signal, finished.signal]);
  const stopped = new Promise<"aborted">((resolve) =>
    done.addEventListener("abort", () => resolve("aborted"), { once: true }),
  );
  const waitOne = async (source: CacheSyncSource): Promise<void> => {
    if (typeof source !== "function" && source.whenSynced !== undefined) {
      await Promise.race([source.whenSynced(), stopped]);
      return;
    }
    while (!synced(source) && !done.aborted) {
      try {
        await realClock.sleep(pollIntervalMs, { signal: done });
      } catch {
        return;
      }
    }
  };
  const racers: Promise<"synced" | "aborted" | "timeout">[] = [
    Promise.all(sources.map(([, source]) => waitOne(source))).then(() => "synced" as const),
    stopped,
  ];
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
    const unsynced = sources
      .filter(([, source]) => !synced(source))
      .map(([name, source]) => ({
        informer: name,
        lastError: typeof source === "function" ? undefined : source.lastWatchError?.(),
      }));
    // Synced in the same turn the timer fired: that counts as synced.
    if (unsynced.length === 0) return true;
    throw new CacheSyncTimeoutError(timeoutMs, unsynced);
  }
  return outcome === "synced" && !signal.aborted;
}

/**
 * client-go's `WaitForCacheSync`: resolves true once every source has synced,
 * false if the signal aborts or the timeout passes first (it never rejects on
 * a timeout; {@link waitForNamedCacheSync} does, naming the laggards). Waits
 * as {@link waitForNamedCacheSync} does, so a `FakeClock` nobody advances
 * never holds it up.
 */
export async function waitForCacheSync(
  signalOrOptions: AbortSignal | WaitForCacheSyncOptions,
  ...sources: CacheSyncSource[]
): Promise<boolean> {
  const options: WaitForCacheSyncOptions = isAbortSignal(signalOrOptions)
    ? { signal: signalOrOptions }
    : signalOrOptions;
  const informers = Object.fromEntries(sources.map((source, index) => [String(index), source]));
  try {
    return await waitForNamedCacheSync({ ...options, informers });
  } catch (error) {
    if (CacheSyncTimeoutError.isInstance(error)) return false;
    throw error;
  }
}

// Duck-typed rather than `instanceof`, so a signal from another realm (or a polyfill) is one too.
function isAbortSignal(value: unknown): value is AbortSignal {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as AbortSignal).aborted === "boolean" &&
    typeof (value as AbortSignal).addEventListener === "function" &&
    !("signal" in value)
  );
}
