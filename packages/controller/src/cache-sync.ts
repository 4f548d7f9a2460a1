import { type WaitForNamedCacheSyncOptions, waitForNamedCacheSync } from "@reconcile/informer";
import type { ControllerInformer } from "./informer-types.js";

/** What waiting for a cache needs of an informer. */
export type SyncedInformer = Pick<ControllerInformer<unknown>, "hasSynced" | "whenSynced" | "lastWatchError">;

export interface WaitForInformersSyncedOptions extends Omit<WaitForNamedCacheSyncOptions, "informers"> {
  /** The informers to wait for, by name (the names appear in a timeout error). Required. */
  informers: Readonly<Record<string, SyncedInformer>>;
}

/**
 * Resolves true once every informer has synced, false if `signal` aborts
 * first, and rejects with a `CacheSyncTimeoutError` naming the laggards after
 * `timeoutMs` (client-go's `WaitForNamedCacheSync`, with controller-runtime's
 * `CacheSyncTimeout`). It is `@reconcile/informer`'s `waitForNamedCacheSync`,
 * typed for controller informers: informers are awaited on `whenSynced` with
 * no timer, and one without it is polled on the real timers, so a `FakeClock`
 * nobody advances never holds it up.
 */
export function waitForInformersSynced(options: WaitForInformersSyncedOptions): Promise<boolean> {
  return waitForNamedCacheSync(options);
}
